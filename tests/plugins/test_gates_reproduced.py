"""Gates kschedx used to accept and ignore, now read where the scheduler
reads them, at every version:

- TaintTolerationComparisonOperators: k8s.io/api core/v1 toleration_test.go
  TestCompareNumericValues (v0.37.2), taint_toleration_test.go
  TestTaintTolerationFilter / TestTaintTolerationFilterWithFeatureGate /
  TestTaintTolerationScore's numeric rows (v1.37.2), NodeUnschedulable and
  PodTopologySpread's nodeTaintsPolicy: Honor;
- MatchLabelKeysInPodTopologySpread: off, matchLabelKeys are ignored
  (podtopologyspread/common.go filterTopologySpreadConstraints);
- PodLevelResources: off, spec.resources is ignored by NodeResourcesFit, by
  the cache's accounting and by NodeResourcesBalancedAllocation;
- VolumeAttributesClass (settable in 1.35 only): off, a claim naming a class
  is an error and a PV with one never matches.
"""

from __future__ import annotations

import pytest

from builders import handle_at, make_node, make_pod, node_info, run_filter, run_score, taint, verdict
from builders import toleration as tol
from kschedx.api.taints import toleration_tolerates_taint
from kschedx.features import Features
from kschedx.plugins.podtopologyspread.common import filter_constraints
from kschedx.plugins.tainttoleration import TaintToleration

VERSIONS = ("1.35", "1.36", "1.37")
UNTOLERATED = ("UnschedulableAndUnresolvable", ["node(s) had untolerated taint(s)"])
OK = ("Success", [])


def gate(version, on: bool, name="TaintTolerationComparisonOperators"):
    from types import SimpleNamespace

    return SimpleNamespace(features=Features(version, {name: on}), snapshot=None, cluster=None)


@pytest.mark.parametrize("toleration, taint_value, op, want", [
    ("100", "200", "Gt", True), ("200", "100", "Gt", False), ("100", "100", "Gt", False),
    ("-100", "-50", "Gt", True), ("-50", "-100", "Gt", False), ("0", "1", "Gt", True),
    ("9223372036854775806", "9223372036854775807", "Gt", True),
    ("200", "100", "Lt", True), ("100", "200", "Lt", False), ("100", "100", "Lt", False),
    ("-50", "-100", "Lt", True), ("-100", "-50", "Lt", False), ("0", "-1", "Lt", True),
    ("abc", "100", "Gt", False), ("", "100", "Gt", False), ("0100", "200", "Gt", False), ("+100", "200", "Gt", False),
    ("100.5", "200", "Gt", False), ("-", "100", "Gt", False), ("100", "xyz", "Gt", False), ("100", "", "Gt", False),
    ("100", "0200", "Gt", False), ("100", "+200", "Lt", False), ("100", " 200 ", "Lt", False),
    ("0", "0", "Gt", False), ("0", "0", "Lt", False),
    ("0", "9223372036854775807", "Gt", True), ("0", "-9223372036854775808", "Lt", True),
])
def test_compare_numeric_values(toleration, taint_value, op, want):
    t = {"key": "k", "operator": op, "value": toleration}
    assert toleration_tolerates_taint(t, {"key": "k", "value": taint_value}, comparison_operators=True) is want
    # Without the gate Lt / Gt tolerate nothing.
    assert toleration_tolerates_taint(t, {"key": "k", "value": taint_value}) is False


FILTER_CASES = [
    ("Gt toleration, taint value lower than threshold", "Gt", "950", "800", False),
    ("Gt toleration, taint value higher than threshold", "Gt", "750", "950", True),
    ("Lt toleration, taint value higher than threshold", "Lt", "800", "950", False),
    ("Lt toleration, taint value lower than threshold", "Lt", "950", "800", True),
    ("Gt toleration, non-numeric taint value", "Gt", "950", "high", False),
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name, op, value, taint_value, tolerated", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_taint_toleration_filter_with_the_gate(version, name, op, value, taint_value, tolerated):
    pod = make_pod(tolerations=[tol("node.kubernetes.io/sla", value, "NoSchedule", op)])
    node = node_info(make_node("nodeA", taints=[taint("node.kubernetes.io/sla", taint_value, "NoSchedule")]))
    _, on = run_filter(TaintToleration(gate(version, True)), pod, node)
    _, off = run_filter(TaintToleration(gate(version, False)), pod, node)
    assert verdict(on) == (OK if tolerated else UNTOLERATED)
    assert verdict(off) == UNTOLERATED


@pytest.mark.parametrize("version", VERSIONS)
def test_mixed_tolerations_with_the_gate_off_honour_only_equal(version):
    pod = make_pod(tolerations=[tol("dedicated", "user1", "NoSchedule", "Equal"),
                                tol("node.kubernetes.io/sla", "750", "NoSchedule", "Gt")])
    only_equal = node_info(make_node("nodeA", taints=[taint("dedicated", "user1", "NoSchedule")]))
    both = node_info(make_node("nodeA", taints=[taint("dedicated", "user1", "NoSchedule"),
                                                taint("node.kubernetes.io/sla", "950", "NoSchedule")]))
    pl = TaintToleration(gate(version, False))
    assert verdict(run_filter(pl, pod, only_equal)[1]) == OK
    assert verdict(run_filter(pl, pod, both)[1]) == UNTOLERATED
    assert verdict(run_filter(TaintToleration(gate(version, True)), pod, both)[1]) == OK


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("op, value, a, b", [("Gt", "950", "800", "999"), ("Lt", "800", "950", "700")])
def test_taint_toleration_score_with_the_gate(version, op, value, a, b):
    pod = make_pod(tolerations=[tol("node.kubernetes.io/sla", value, "PreferNoSchedule", op)])
    nodes = [node_info(make_node("nodeA", taints=[taint("node.kubernetes.io/sla", a, "PreferNoSchedule")])),
             node_info(make_node("nodeB", taints=[taint("node.kubernetes.io/sla", b, "PreferNoSchedule")]))]
    assert run_score(TaintToleration(gate(version, True)), pod, nodes) == [("nodeA", 0), ("nodeB", 100)]
    # Off: neither taint is tolerated, both nodes alike.
    assert run_score(TaintToleration(gate(version, False)), pod, nodes) == [("nodeA", 0), ("nodeB", 0)]


@pytest.mark.parametrize("version", VERSIONS)
def test_spread_constraints_carry_the_gates(version):
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                  "labelSelector": {"matchLabels": {"app": "w"}}, "matchLabelKeys": ["rev"],
                  "nodeTaintsPolicy": "Honor"}
    on = filter_constraints([constraint], {"app": "w", "rev": "2"}, "DoNotSchedule", match_label_keys=True,
                            comparison_operators=True)[0]
    off = filter_constraints([constraint], {"app": "w", "rev": "2"}, "DoNotSchedule", match_label_keys=False)[0]
    assert on.selector.matches({"app": "w", "rev": "2"}) and not on.selector.matches({"app": "w", "rev": "1"})
    assert off.selector.matches({"app": "w", "rev": "1"})  # matchLabelKeys ignored
    assert on.comparison_operators and not off.comparison_operators
    # nodeTaintsPolicy: Honor, with a Gt toleration: the node counts only with the gate.
    from kschedx.state.types import PodInfo

    pi = PodInfo(make_pod(tolerations=[tol("gen", "3", "NoSchedule", "Gt")]))
    ni = node_info(make_node("n", taints=[taint("gen", "5", "NoSchedule")]))

    class Everywhere:
        @staticmethod
        def matches(_ni):
            return True

    assert on.match_node_inclusion_policies(pi, ni, Everywhere)
    assert not off.match_node_inclusion_policies(pi, ni, Everywhere)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_plugins_read_the_gates_of_their_version(version):
    from kschedx.plugins.nodeunschedulable import NodeUnschedulable
    from kschedx.plugins.podtopologyspread.plugin import PodTopologySpread

    on = gate(version, True)
    assert NodeUnschedulable(on).comparison_operators and TaintToleration(on).comparison_operators
    assert PodTopologySpread(on).comparison_operators
    assert PodTopologySpread(handle_at(version)).match_label_keys


# -- PodLevelResources -------------------------------------------------------------------------------
def _pod_level(cpu="1"):
    p = make_pod(containers=[{"name": "c", "image": "x", "resources": {"requests": {"cpu": "200m"}}}])
    p["spec"]["resources"] = {"requests": {"cpu": cpu}}
    return p


# PodLevelResources off needs its dependents off (featuregate dependencies).
OFF = {"1.35": {"PodLevelResources": False},
       "1.36": {"PodLevelResources": False, "InPlacePodLevelResourcesVerticalScaling": False},
       "1.37": {"PodLevelResources": False, "InPlacePodLevelResourcesVerticalScaling": False,
                "PodLevelResourcesFixDefaulting": False, "PodLevelResourcesFixKubeletQOSClass": False}}


@pytest.mark.parametrize("version", VERSIONS)
def test_pod_level_requests_count_only_with_the_gate(version):
    from kschedx.api.resources import RequestOptions, pod_requests
    from kschedx.plugins.noderesources.fit import compute_pod_resource_request
    from kschedx.state.types import PodInfo, request_options

    on, off = Features(version), Features(version, OFF[version])
    assert request_options(on).pod_level_resources and not request_options(off).pod_level_resources
    # The cache's accounting (PodInfo.CalculateResource).
    assert PodInfo(_pod_level(), options=request_options(on)).resource.milli_cpu == 1000
    assert PodInfo(_pod_level(), options=request_options(off)).resource.milli_cpu == 200
    # NodeResourcesFit's request.
    assert compute_pod_resource_request(PodInfo(_pod_level()), True).milli_cpu == 1000
    assert compute_pod_resource_request(PodInfo(_pod_level()), False).milli_cpu == 200
    assert pod_requests(_pod_level(), options=RequestOptions(False))["cpu"] == 200


# -- VolumeAttributesClass (1.35) ---------------------------------------------------------------------
def test_volume_attributes_class_off_in_1_35():
    from builders import framework, pv, pvc, storage_class
    from builders import pod_info as pending
    from builders import volume_pod as pod
    from kschedx.framework.cycle_state import CycleState

    claim = pvc("c-gold", sc="wait-sc", request="1Gi")
    claim["spec"]["volumeAttributesClassName"] = "gold"
    volume = pv("pv-gold", "wait-sc", capacity="10Gi", modes=["ReadWriteOnce"], status={"phase": "Available"})
    volume["spec"]["volumeAttributesClassName"] = "gold"
    plain_claim = pvc("c-plain", sc="wait-sc", request="1Gi")

    def filter_of(features, claim_name):
        fw = framework(make_node("n1"), storage_class("wait-sc", provisioner=""), claim, plain_claim, volume,
                       pod("p", claims=[claim_name]), features=features)
        pl = fw.profile.by_name["VolumeBinding"]
        state = CycleState()
        pi = pending(fw, "p")
        pl.pre_filter(state, pi, fw.snapshot.node_infos)
        return verdict(pl.filter(state, pi, fw.snapshot.node_infos[0]))

    off = Features("1.35", {"VolumeAttributesClass": False})
    assert filter_of(Features("1.35"), "c-gold") == OK
    assert filter_of(off, "c-gold") == ("Error", ["unsupported volumeAttributesClassName is set on claim "
                                                  "default/c-gold when the feature-gate VolumeAttributesClass is "
                                                  "disabled"])
    # A PV with a class never matches a claim without one, gate or not.
    assert filter_of(off, "c-plain")[0] == "UnschedulableAndUnresolvable"
