"""verdict_per_combination (plugins/helper/combinations.py): the verdict of
each node, asked once per combination of label values, of its first node."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kschedx.plugins.helper.combinations import verdict_per_combination

ABSENT = object()
label_values = st.dictionaries(st.sampled_from(["zone", "rack", "other"]), st.sampled_from(["a", "b", None]),
                               max_size=3)


class Node:
    def __init__(self, i, labels):
        self.i, self.labels = i, labels


@given(st.lists(label_values, max_size=30), st.lists(st.sampled_from(["zone", "rack"]), max_size=2, unique=True),
       st.booleans())
def test_one_verdict_per_combination(all_labels, keys, absent_differs):
    nodes = [Node(i, labels) for i, labels in enumerate(all_labels)]
    missing = ABSENT if absent_differs else None
    asked = []

    def verdict_of(ni):
        asked.append(ni.i)
        return tuple(ni.labels.get(k, missing) for k in keys)

    got = verdict_per_combination(nodes, [ni.labels for ni in nodes], keys, verdict_of, missing)
    assert got == [tuple(ni.labels.get(k, missing) for k in keys) for ni in nodes]
    # Asked once per combination, of its first node, in node order.
    first = {}
    for ni in nodes:
        first.setdefault(got[ni.i], ni.i)
    assert asked == sorted(first.values())
    # Nodes of one combination share the very object.
    assert all(got[ni.i] is got[first[got[ni.i]]] for ni in nodes)
