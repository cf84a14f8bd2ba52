"""result/json_text.ShapeEncoder writes what encode (and json.dumps) write,
for values of one shape and of any other: random dicts of the shapes score
explanations have (leaves, dicts of leaves), and of shapes it leaves to
encode (lists, empty dicts, deeper nesting, non-str keys)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedx.result.json_text import ShapeEncoder, encode

LEAF = st.one_of(st.text(max_size=8), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                 st.booleans(), st.none())
KEYS = st.sampled_from(["cpu", "memory", "strategy", "weights", "ratio", "\u00e9t\u00e9", 'q"t'])
FLAT = st.dictionaries(KEYS, LEAF, max_size=4)
SHAPED = st.dictionaries(KEYS, st.one_of(LEAF, FLAT), max_size=5)
ANY = st.recursive(LEAF, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                 st.dictionaries(KEYS, inner, max_size=3)), max_leaves=8)


def dumps(value, nl):
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", nl)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(SHAPED, ANY), min_size=1, max_size=8), st.sampled_from(["\n", "\n        "]))
def test_shape_encoder_writes_what_encode_writes(values, nl):
    enc = ShapeEncoder(nl)
    for v in values + values:  # each shape met again, with its template made
        assert enc(v) == encode(v, nl) == dumps(v, nl)


def test_one_shape_many_values_and_a_key_order_apart():
    enc = ShapeEncoder("\n    ")
    a = {"strategy": "LeastAllocated", "requestedAfter": {"cpu": 100, "memory": 2048}, "ok": True}
    b = {"strategy": "x", "requestedAfter": {"memory": 1, "cpu": 2}, "ok": None}  # nested keys in another order
    c = {"strategy": 1.5, "requestedAfter": {"cpu": [1]}, "ok": False}  # a list where a leaf was
    for v in (a, b, c, a):
        assert enc(v) == dumps(v, "\n    ")
