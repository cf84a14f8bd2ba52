"""SchedulingGates PreEnqueue (upstream scheduling_gates_test.go TestPreEnqueue)."""

from builders import handle_at, make_pod, verdict

from kschedx.plugins.schedulinggates import SchedulingGates
from kschedx.state.types import PodInfo

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"


def test_pod_without_gates_passes():
    assert SchedulingGates(handle_at(VERSION)).pre_enqueue(PodInfo(make_pod("p"))) is None


def test_pod_with_gates_waits_listing_them_in_order():
    st = SchedulingGates(handle_at(VERSION)).pre_enqueue(PodInfo(make_pod("p", scheduling_gates=["foo", "bar"])))
    assert verdict(st) == ("UnschedulableAndUnresolvable", ["waiting for scheduling gates: [foo bar]"])


def test_empty_gate_list_passes():
    assert SchedulingGates(handle_at(VERSION)).pre_enqueue(PodInfo(make_pod("p", scheduling_gates=[]))) is None


def test_gated_pod_is_reported_gated_by_the_framework():
    from builders import framework_for, make_node

    fw = framework_for([make_node("n1", cpu=1, memory="1Gi", pods=10)], version=VERSION)
    res = fw.schedule(PodInfo(make_pod("p", scheduling_gates=["example.com/wait"])))
    assert res.status == "Gated"
    assert res.message == "waiting for scheduling gates: [example.com/wait]"
    assert res.gate.plugin == "SchedulingGates"
    assert res.nodes == []
