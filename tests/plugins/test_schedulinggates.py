"""SchedulingGates PreEnqueue (upstream scheduling_gates_test.go TestPreEnqueue)."""

from builders import make_pod, verdict

from kschedx.plugins.schedulinggates import SchedulingGates
from kschedx.state.types import PodInfo


def test_pod_without_gates_passes():
    assert SchedulingGates(None).pre_enqueue(PodInfo(make_pod("p"))) is None


def test_pod_with_gates_waits_listing_them_in_order():
    st = SchedulingGates(None).pre_enqueue(PodInfo(make_pod("p", scheduling_gates=["foo", "bar"])))
    assert verdict(st) == ("UnschedulableAndUnresolvable", ["waiting for scheduling gates: [foo bar]"])


def test_empty_gate_list_passes():
    assert SchedulingGates(None).pre_enqueue(PodInfo(make_pod("p", scheduling_gates=[]))) is None


def test_gated_pod_is_reported_gated_by_the_framework():
    from builders import framework_for, make_node

    fw = framework_for([make_node("n1", cpu=1, memory="1Gi", pods=10)])
    res = fw.schedule(PodInfo(make_pod("p", scheduling_gates=["example.com/wait"])))
    assert res.status == "Gated"
    assert res.message == "waiting for scheduling gates: [example.com/wait]"
    assert res.gate.plugin == "SchedulingGates"
    assert res.nodes == []
