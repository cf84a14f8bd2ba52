"""FastSafeLoader gives exactly what PyYAML's safe loader gives: the same
objects (aliases shared alike), the same errors, for plain documents and for
everything the fast path hands back to PyYAML (tags, merge keys, numbers,
timestamps, complex keys, recursion)."""

from __future__ import annotations

import datetime
import io

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedx.sources.yaml_loader import FastSafeLoader

REFERENCE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str, loader):
    try:
        return "ok", list(yaml.load_all(io.StringIO(text), Loader=loader))
    except Exception as exc:  # noqa: BLE001 - PyYAML raises ValueError too (a bad !!int)
        return "error", f"{type(exc).__name__}: {exc}"


def assert_same(text: str):
    expected = load(text, REFERENCE)
    actual = load(text, FastSafeLoader)
    # repr: exact (order, types, nan) and safe on recursive structures.
    assert repr(actual) == repr(expected)
    return actual[1]


CASES = {
    "plain": "apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {app: web}}\nspec:\n  containers: [{name: c}]\n",
    "scalars": "a: 1\nb: -0x1F\nc: 0o17\nd: 1_000\ne: 1:30\nf: 1.5e3\ng: .inf\nh: -.Inf\ni: .nan\nj: yes\nk: Off\n"
               "l: ~\nm: null\nn:\no: ''\np: '1'\nq: \"true\"\nr: 2024-01-01T00:00:00Z\ns: 2024-01-01\nt: 0\n",
    "explicit tags": "a: !!str 123\nb: !!int '5'\nc: !!float '1'\nd: !!binary aGVsbG8=\ne: !!set {x, y}\n"
                     "f: !!omap [{a: 1}, {b: 2}]\ng: !!pairs [{a: 1}]\nh: !!null ''\ni: !!bool 'yes'\n",
    "merge keys": "base: &b {x: 1, y: 2}\nother: &o {z: 3}\nm:\n  <<: *b\n  y: 9\nn:\n  <<: [*b, *o]\n  w: 0\n",
    "value key": "a:\n  =: 1\n",
    "complex keys": "? [a, b]\n: 1\n",
    "mapping key": "? {a: 1}\n: 1\n",
    "int keys": "1: one\ntrue: yes\nnull: nothing\n1.5: half\n",
    "duplicate keys": "a: 1\na: 2\n",
    "unknown tag": "a: !foo bar\n",
    "bad int": "a: !!int abc\n",
    "bad timestamp": "a: !!timestamp nope\n",
    "recursive sequence": "a: &x [1, *x]\n",
    "recursive mapping": "a: &x {b: *x}\n",
    "undefined alias": "a: *nope\n",
    "multi documents": "a: 1\n---\n- x\n- y\n---\n\n---\nplain\n",
    "scalar document": "just text\n",
    "nested flow": "a: [[1, [2, {b: [3]}]], {c: d}]\n",
    "unicode": "naïve: ünïcode\n\"quoted key\": 'single'\n",
    "block scalars": "a: |\n  line1\n  line2\nb: >\n  folded\n  text\n",
}


@pytest.mark.parametrize("name", CASES)
def test_same_result_as_pyyaml(name):
    assert_same(CASES[name])


def test_aliases_are_the_same_object():
    (doc,) = assert_same("a: &x {k: [1]}\nb: *x\nc: &y [1]\nd: *y\n")
    assert doc["a"] is doc["b"] and doc["c"] is doc["d"]


def test_recursive_structures_refer_to_themselves():
    (doc,) = assert_same("a: &x {b: *x}\n")
    assert doc["a"]["b"] is doc["a"]


# --- generated documents -------------------------------------------------------------
SCALARS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["yes", "No", "on", "~", "null", "1_0", "0x1f", "1:2:3", "2024-01-01", ".5", "-.inf", "=", "<<"]),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.datetimes(timezones=st.just(datetime.timezone.utc)),
)
DATA = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6) | st.integers(), children,
                                                                      max_size=4),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DATA, st.sampled_from([None, False, True]))
def test_generated_documents(data, flow):
    assert_same(yaml.dump(data, default_flow_style=flow, allow_unicode=True))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="ab:-[]{}&*!<=?,#'\" \n01.~", max_size=40))
def test_arbitrary_text(text):
    assert_same(text)
