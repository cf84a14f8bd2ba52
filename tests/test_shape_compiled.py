"""The compiled shape check (shape._compiled) gives the tree walk's verdict
(shape._valid_fields) on any document: documents grown from each kind's own
fields, their values mostly of the right type and sometimes of any JSON
type (or a YAML timestamp), with unknown fields and nulls."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings, strategies as st

from kschedx.sources import shape

_ANY = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=3),
                 st.just(datetime.datetime(2025, 1, 1)), st.just({}), st.just([]),
                 st.sampled_from(["500m", "2Gi", "-1", "1x", "Always", "NoSchedule", "TCP", "Exists"]))
_RIGHT = {str: st.sampled_from(["a", "500m", "Always", "NoSchedule", "TCP", "Exists", "1x"]),
          int: st.integers(-2, 3), bool: st.booleans(), dict: st.just({}), list: st.just([])}


@st.composite
def _documents(draw, tree: shape._Tree):
    """A value for a place of shape `tree`: one time in 16 anything, else a
    mapping with some of its fields, a list, a map, or a leaf of its type."""
    if draw(st.integers(0, 15)) == 0:
        return draw(_ANY)
    if tree.keys or tree.required:
        doc = {}
        for key, sub in tree.keys.items():
            if draw(st.integers(0, 3)) == 0:
                doc[key] = draw(_documents(sub))
        if draw(st.booleans()):
            doc["unknownField"] = draw(_ANY)
        return doc
    if tree.items is not None:
        return [draw(_documents(tree.items)) for _ in range(draw(st.integers(0, 2)))]
    if tree.values is not None:
        return {k: draw(_documents(tree.values)) for k in draw(st.lists(st.sampled_from(["a", "cpu"]), max_size=2))}
    types = [t for t in (tree.types or ()) if t in _RIGHT]
    return draw(st.one_of(*[_RIGHT[t] for t in types])) if types else draw(_ANY)


TREES = {name: shape._tree(name) for name in ("Pod", "Node", "PersistentVolumeClaim", "ResourceClaim",
                                              "ResourceSlice", "Unknown")}
TREES["Pod without spec"] = shape._POD_WITHOUT_SPEC
_STRATEGIES = {name: _documents(tree) for name, tree in TREES.items()}
_COMPILED = {name: shape._compiled(tree) for name, tree in TREES.items()}


@pytest.mark.parametrize("name", sorted(TREES))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_compiled_check_agrees_with_the_walk(name, data):
    doc = data.draw(_STRATEGIES[name])
    assert _COMPILED[name](doc) == shape._valid_fields(doc, TREES[name])


def test_the_pod_check_is_the_compiled_one():
    good = {"metadata": {"name": "p", "labels": {"a": "b"}}, "status": {"phase": "Running"}}
    bad = {"metadata": {"name": "p", "labels": {"a": 1}}, "status": {"phase": "Running"}}
    assert shape.pod_shape_but_spec_valid(good) and not shape.pod_shape_but_spec_valid(bad)
    assert shape._pod_but_spec_valid is not None
