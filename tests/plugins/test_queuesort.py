"""PrioritySort Less (upstream priority_sort_test.go TestLess) and the queue
order kschedx derives from it (fixture-format.md: priority, then
creationTimestamp, then fixture order)."""

import pytest
from builders import handle_at, make_pod

from kschedx.framework.queue import queue_order
from kschedx.plugins.queuesort import PrioritySort
from kschedx.state.types import PodInfo

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

T1 = "2025-01-01T00:00:00Z"
T2 = "2025-01-01T00:00:01Z"


def pi(priority, created=None, name="p"):
    return PodInfo(make_pod(name, priority=priority, created=created))


@pytest.mark.parametrize(
    "p1, p2, expected",
    [
        pytest.param(pi(10), pi(100), False, id="p1.priority less than p2.priority"),
        pytest.param(pi(100), pi(10), True, id="p1.priority greater than p2.priority"),
        pytest.param(pi(100, T1), pi(100, T2), True, id="equal priority, p1 added earlier"),
        pytest.param(pi(100, T2), pi(100, T1), False, id="equal priority, p2 added earlier"),
    ],
)
def test_less(p1, p2, expected):
    assert PrioritySort(handle_at(VERSION)).less(p1, p2) is expected


def test_pod_without_timestamp_counts_as_queued_now():
    sort = PrioritySort(handle_at(VERSION))
    assert sort.less(pi(5, T1), pi(5, None)) is True
    assert sort.less(pi(5, None), pi(5, T1)) is False
    assert sort.less(pi(5, None), pi(5, None)) is False


def test_queue_order_priority_then_time_then_input_order():
    pods = [
        pi(0, None, "late-no-ts"),
        pi(0, T2, "b"),
        pi(10, T2, "high"),
        pi(0, T1, "a"),
        pi(0, T1, "a2"),
        pi(-5, T1, "negative"),
    ]
    assert [p.name for p in queue_order(pods)] == ["high", "a", "a2", "b", "late-no-ts", "negative"]


def test_queue_order_agrees_with_less():
    pods = [pi(p, t, f"{p}-{t}") for p in (0, 1) for t in (None, T1, T2)]
    ordered = queue_order(pods)
    sort = PrioritySort(handle_at(VERSION))
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            assert not sort.less(b, a)
