"""TaintToleration Filter and Score (upstream taint_toleration_test.go).

Rows that need TaintTolerationComparisonOperators (alpha in v1.35, off by
default) are ported with their default-gate outcome: a Gt/Lt toleration
tolerates nothing (TestTaintTolerationFilterWithFeatureGate's disabled rows
state exactly that).
"""

import pytest
from builders import handle_at, make_node, make_pod, node_info, run_filter, run_score, taint, verdict
from builders import toleration as tol

from kschedx.plugins.tainttoleration import TaintToleration

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

UNTOLERATED = ("UnschedulableAndUnresolvable", ["node(s) had untolerated taint(s)"])
OK = ("Success", [])


FILTER_CASES = [
    ("no tolerations, NoSchedule taint", [], [taint("dedicated", "user1", "NoSchedule")], UNTOLERATED),
    ("toleration matches dedicated user1", [tol("dedicated", "user1", "NoSchedule")],
     [taint("dedicated", "user1", "NoSchedule")], OK),
    ("Equal toleration for user2 on user1 node", [tol("dedicated", "user2", "NoSchedule", "Equal")],
     [taint("dedicated", "user1", "NoSchedule")], UNTOLERATED),
    ("Exists toleration tolerates any value", [tol("foo", effect="NoSchedule", operator="Exists")],
     [taint("foo", "bar", "NoSchedule")], OK),
    ("all taints tolerated", [tol("dedicated", "user2", "NoSchedule", "Equal"), tol("foo", effect="NoSchedule", operator="Exists")],
     [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")], OK),
    ("key and value match but effect differs", [tol("foo", "bar", "PreferNoSchedule", "Equal")],
     [taint("foo", "bar", "NoSchedule")], UNTOLERATED),
    ("empty toleration effect matches every effect", [tol("foo", "bar", operator="Equal")],
     [taint("foo", "bar", "NoSchedule")], OK),
    ("PreferNoSchedule taint never filters", [tol("dedicated", "user2", "NoSchedule", "Equal")],
     [taint("dedicated", "user1", "PreferNoSchedule")], OK),
    ("no toleration, only PreferNoSchedule", [], [taint("dedicated", "user1", "PreferNoSchedule")], OK),
    ("NoExecute taint filters too", [], [taint("k", "v", "NoExecute")], UNTOLERATED),
    ("empty key with Exists tolerates everything", [{"operator": "Exists"}],
     [taint("a", "1", "NoSchedule"), taint("b", "2", "NoExecute")], OK),
    # TaintTolerationComparisonOperators is off by default in v1.35.
    ("Gt toleration with the gate off", [tol("node.kubernetes.io/sla", "750", "NoSchedule", "Gt")],
     [taint("node.kubernetes.io/sla", "950", "NoSchedule")], UNTOLERATED),
    ("Lt toleration with the gate off", [tol("node.kubernetes.io/sla", "950", "NoSchedule", "Lt")],
     [taint("node.kubernetes.io/sla", "800", "NoSchedule")], UNTOLERATED),
    ("mixed Equal and Gt, gate off, only Equal honored", [tol("dedicated", "user1", "NoSchedule", "Equal"),
                                                          tol("node.kubernetes.io/sla", "750", "NoSchedule", "Gt")],
     [taint("dedicated", "user1", "NoSchedule")], OK),
    ("mixed, Gt needed but ignored with the gate off", [tol("dedicated", "user1", "NoSchedule", "Equal"),
                                                        tol("node.kubernetes.io/sla", "750", "NoSchedule", "Gt")],
     [taint("dedicated", "user1", "NoSchedule"), taint("node.kubernetes.io/sla", "950", "NoSchedule")], UNTOLERATED),
]


@pytest.mark.parametrize("name, tolerations, taints, expected", FILTER_CASES, ids=[c[0] for c in FILTER_CASES])
def test_filter(name, tolerations, taints, expected):
    _, st = run_filter(TaintToleration(handle_at(VERSION)), make_pod(tolerations=tolerations), node_info(make_node("nodeA", taints=taints)))
    assert verdict(st) == expected


def test_filter_details_name_the_first_untolerated_taint():
    taints = [taint("a", "1", "PreferNoSchedule"), taint("b", "2", "NoSchedule"), taint("c", "3", "NoExecute")]
    _, st = run_filter(TaintToleration(handle_at(VERSION)), make_pod(), node_info(make_node("n", taints=taints)))
    assert st.details == {"taint": {"key": "b", "value": "2", "effect": "NoSchedule"}}


SCORE_CASES = [
    ("tolerated taint scores higher than intolerable one", [tol("foo", "bar", "PreferNoSchedule", "Equal")],
     {"nodeA": [taint("foo", "bar", "PreferNoSchedule")], "nodeB": [taint("foo", "blah", "PreferNoSchedule")]},
     [("nodeA", 100), ("nodeB", 0)]),
    ("the number of tolerated taints does not matter",
     [tol("cpu-type", "arm64", "PreferNoSchedule", "Equal"), tol("disk-type", "ssd", "PreferNoSchedule", "Equal")],
     {"nodeA": [], "nodeB": [taint("cpu-type", "arm64", "PreferNoSchedule")],
      "nodeC": [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")]},
     [("nodeA", 100), ("nodeB", 100), ("nodeC", 100)]),
    ("more intolerable taints, lower score", [tol("foo", "bar", "PreferNoSchedule", "Equal")],
     {"nodeA": [], "nodeB": [taint("cpu-type", "arm64", "PreferNoSchedule")],
      "nodeC": [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")]},
     [("nodeA", 100), ("nodeB", 50), ("nodeC", 0)]),
    ("only PreferNoSchedule taints and tolerations count",
     [tol("cpu-type", "arm64", "NoSchedule", "Equal"), tol("disk-type", "ssd", "NoSchedule", "Equal")],
     {"nodeA": [], "nodeB": [taint("cpu-type", "arm64", "NoSchedule")],
      "nodeC": [taint("cpu-type", "arm64", "PreferNoSchedule"), taint("disk-type", "ssd", "PreferNoSchedule")]},
     [("nodeA", 100), ("nodeB", 100), ("nodeC", 0)]),
    ("no taints and tolerations, prefers the untainted node", [],
     {"nodeA": [], "nodeB": [taint("cpu-type", "arm64", "PreferNoSchedule")]},
     [("nodeA", 100), ("nodeB", 0)]),
    ("toleration without effect counts for PreferNoSchedule", [tol("foo", "bar", operator="Equal")],
     {"nodeA": [taint("foo", "bar", "PreferNoSchedule")], "nodeB": [taint("x", "y", "PreferNoSchedule")]},
     [("nodeA", 100), ("nodeB", 0)]),
    # Gate off: a Gt toleration tolerates no taint, so both nodes count one.
    ("Gt toleration with the gate off", [tol("node.kubernetes.io/sla", "950", "PreferNoSchedule", "Gt")],
     {"nodeA": [taint("node.kubernetes.io/sla", "800", "PreferNoSchedule")],
      "nodeB": [taint("node.kubernetes.io/sla", "999", "PreferNoSchedule")]},
     [("nodeA", 0), ("nodeB", 0)]),
]


@pytest.mark.parametrize("name, tolerations, nodes, expected", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_score(name, tolerations, nodes, expected):
    infos = [node_info(make_node(n, taints=t)) for n, t in nodes.items()]
    assert run_score(TaintToleration(handle_at(VERSION)), make_pod(tolerations=tolerations), infos) == expected
