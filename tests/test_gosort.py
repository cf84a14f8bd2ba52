"""sort_slice reproduces Go's sort.Slice: a correct sort whatever the input,
stable up to 12 elements (insertion sort), and deterministic."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedx.framework.gosort import sort_slice


def _less(a, b):
    return a[0] < b[0]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=6), max_size=200))
def test_sorts_any_input(keys):
    items = [(k, i) for i, k in enumerate(keys)]
    got = list(items)
    sort_slice(got, _less)
    assert [k for k, _ in got] == sorted(keys)
    assert sorted(got) == sorted(items)


@given(st.lists(st.integers(min_value=0, max_value=3), max_size=12))
def test_stable_up_to_twelve_elements(keys):
    items = [(k, i) for i, k in enumerate(keys)]
    got = list(items)
    sort_slice(got, _less)
    assert got == sorted(items, key=lambda x: x[0])


def test_deterministic_for_equal_elements():
    items = [(i % 3, i) for i in range(100)]
    a, b = list(items), list(items)
    sort_slice(a, _less)
    sort_slice(b, _less)
    assert a == b


def test_large_descending_and_patterned_inputs():
    for data in (list(range(500, 0, -1)), [i % 7 for i in range(300)], [0] * 64 + [1] * 64):
        items = [(k, i) for i, k in enumerate(data)]
        sort_slice(items, _less)
        assert [k for k, _ in items] == sorted(data)
