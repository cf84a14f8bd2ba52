"""NodeDeclaredFeatures (upstream nodedeclaredfeatures_test.go TestPreFilter /
TestFilter, with the registry's real features in place of the mock ones;
component-helpers featureset_test.go for TryMap), for v1.36 and v1.35 and
with the gate either way."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from builders import make_node, make_pod, node_info, verdict
from builders.pods import container

from kschedx.features import Features
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.runtime import Framework
from kschedx.plugins.nodedeclaredfeatures import (
    ERR_REASON,
    REGISTRY_V136,
    STATE_KEY,
    NodeDeclaredFeatures,
    try_map,
)
from kschedx.state.cluster import ClusterState
from kschedx.state.snapshot import build_snapshot
from kschedx.state.types import PodInfo

RESTART = "RestartAllContainersOnContainerExits"
USERNS = "UserNamespacesHostNetworkSupport"
V136 = Features("1.36")
V135 = Features("1.35")
V135_ON = Features("1.35", {"NodeDeclaredFeatures": True})
# Turning it off on 1.36 needs its dependents off too (featuregate dependencies).
V136_OFF = Features("1.36", {"NodeDeclaredFeatures": False, "ExtendWebSocketsToKubelet": False,
                             "InPlacePodLevelResourcesVerticalScaling": False,
                             "InPlacePodVerticalScalingInitContainers": False,
                             "RestartAllContainersOnContainerExits": False})


def plugin(features) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(SimpleNamespace(features=features))


def restart_all_pod(name="test-pod", **spec):
    c = container()
    c["restartPolicyRules"] = [{"action": "RestartAllContainers",
                                "exitCodes": {"operator": "In", "values": [42]}}]
    return make_pod(name, containers=[c], **spec)


def declaring(name, *features):
    node = make_node(name, cpu="4", memory="8Gi", pods="110")
    if features:
        node["status"]["declaredFeatures"] = list(features)
    return node


def pre_filter(pl, pod):
    state = CycleState()
    _, st = pl.pre_filter(state, PodInfo(pod), [])
    return state, st


# -- TestPreFilter ------------------------------------------------------------------------
@pytest.mark.parametrize("features, pod, want_code, want_reqs", [
    pytest.param(V136_OFF, restart_all_pod(), "Skip", None, id="plugin disabled"),
    pytest.param(V135, restart_all_pod(), "Skip", None, id="plugin disabled (1.35 default)"),
    pytest.param(V136, restart_all_pod(), "Success", (RESTART,), id="pod with feature requirements"),
    pytest.param(V136, restart_all_pod(hostNetwork=True, hostUsers=False), "Success", (RESTART, USERNS),
                 id="pod with multiple feature requirements"),
    pytest.param(V136, make_pod("test-pod"), "Skip", None, id="pod with no requirements"),
    pytest.param(V136, make_pod("test-pod", hostNetwork=True, hostUsers=True), "Skip", None,
                 id="host network with host users: no requirement"),
    pytest.param(V135_ON, restart_all_pod(hostNetwork=True, hostUsers=False), "Success", (RESTART,),
                 id="1.35 registry does not know UserNamespacesHostNetworkSupport"),
])
def test_pre_filter(features, pod, want_code, want_reqs):
    state, st = pre_filter(plugin(features), pod)
    assert verdict(st)[0] == want_code
    assert state.read(STATE_KEY) == want_reqs


def test_init_container_rule_counts():
    c = container("init")
    c["restartPolicyRules"] = [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}]
    state, st = pre_filter(plugin(V136), make_pod("p", init_containers=[c]))
    assert st is None and state.read(STATE_KEY) == (RESTART,)


# -- TestFilter ---------------------------------------------------------------------------
def run_filter(pl, reqs, node):
    state = CycleState()
    if reqs is not None:
        state.write(STATE_KEY, tuple(reqs))
    return pl.filter(state, PodInfo(make_pod("test-pod")), node_info(node))


UU = "UnschedulableAndUnresolvable"


@pytest.mark.parametrize("reqs, node, want", [
    pytest.param([RESTART], declaring("node-1", RESTART, USERNS), ("Success", []), id="node matches requirements"),
    pytest.param([RESTART], declaring("node-1", USERNS), (UU, [ERR_REASON]), id="node does not match requirements"),
    pytest.param([RESTART, USERNS], declaring("node-multi", "ExtendWebSocketsToKubelet", RESTART, USERNS),
                 ("Success", []), id="node with multiple features, pod requires subset"),
    pytest.param([RESTART], declaring("node-1"), (UU, [ERR_REASON]), id="node has no declared features"),
    pytest.param([RESTART, USERNS], declaring("node-1", RESTART), (UU, [ERR_REASON]),
                 id="node with some but not all required features"),
])
def test_filter(reqs, node, want):
    assert verdict(run_filter(plugin(V136), reqs, node)) == want


def test_filter_disabled_always_passes():
    assert run_filter(plugin(V136_OFF), None, declaring("node-1")) is None


def test_filter_without_pre_filter_state_is_an_error():
    st = run_filter(plugin(V136), None, declaring("node-1"))
    assert st.code.label == "Error"
    assert st.message() == 'error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found'


def test_v135_reason_names_the_missing_features():
    st = run_filter(plugin(V135_ON), [RESTART], declaring("node-1", "SomethingElse"))
    assert verdict(st) == (UU, ["node declared features check failed - unsatisfied requirements: "
                                "RestartAllContainersOnContainerExits"])


# -- TryMap (featureset_test.go) ------------------------------------------------------------
@pytest.mark.parametrize("declared, want", [
    pytest.param([], set(), id="empty"),
    pytest.param([RESTART, USERNS], {RESTART, USERNS}, id="sorted known"),
    pytest.param(["AUnknown", RESTART, "Unknown", USERNS, "ZZZ"], {RESTART, USERNS}, id="unknown names dropped"),
    # The walk assumes a sorted list: USERNS first moves the registry past RESTART.
    pytest.param([USERNS, RESTART], {USERNS}, id="unsorted list loses a known name"),
])
def test_try_map(declared, want):
    assert try_map(declared, REGISTRY_V136) == want


def test_unsorted_declared_features_v136_vs_v135():
    """v1.35 reads the list as a set; v1.36 maps it with the merge walk."""
    node = declaring("node-1", USERNS, RESTART)
    assert run_filter(plugin(V136), [RESTART], node) is not None
    assert run_filter(plugin(V135_ON), [RESTART], node) is None


# -- in a profile ---------------------------------------------------------------------------
def _schedule(features):
    cluster = ClusterState(nodes=[declaring("a-plain"), declaring("b-declares", RESTART)], pods=[])
    fw = Framework(build_snapshot(cluster, features), tie_break="name")
    return fw, fw.schedule(PodInfo(restart_all_pod()))


def test_gate_changes_the_verdict_and_the_plugin_set():
    fw, r = _schedule(V136)
    assert "NodeDeclaredFeatures" in fw.profile.by_name
    assert r.selected_node == "b-declares"
    fw, r = _schedule(V135)
    assert "NodeDeclaredFeatures" not in fw.profile.by_name
    assert r.selected_node == "a-plain"
    fw, r = _schedule(V135_ON)
    assert "NodeDeclaredFeatures" in fw.profile.by_name
    assert r.selected_node == "b-declares"
