"""DefaultPreemption and the preemption Evaluator: the facts of upstream's
default_preemption_test.go and preemption_test.go tables (v1.35), ported
case by case. Extender and PodGroup cases are left out (kschedx has neither).
"""

from __future__ import annotations

import importlib.util

import pytest

from kschedx.framework.preemption import (
    Budget,
    Candidate,
    aggregate_errors,
    budgets_from_cluster,
    more_important_pod,
    split_by_pdb_violation,
)
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.fit_error import fit_error_message
from kschedx.framework.interface import Plugin
from kschedx.framework.interface import NodeToStatus
from kschedx.framework.records import PodResult
from kschedx.framework.status import Code, Status
from kschedx.api.labels import selector_from_set
from kschedx.plugins.defaultpreemption import DefaultPreemption, validate_args
from kschedx.state.types import PodInfo
from builders import (
    HIGH, LARGE, LOW, MEDIUM, MID, NEG, NODE_RES, ONE_POD, SMALL, VERY_HIGH, VERY_LARGE, epoch, framework, pdb,
    pod_info,
)
from builders import preemption_node as node
from builders import preemption_pod as pod

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

U = Code.UNSCHEDULABLE
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


class Env:
    """A cluster, its snapshot and a default-profile framework whose nominator
    holds the pending pods' nominations; `plugin` is its DefaultPreemption."""

    def __init__(self, objects, tie_break="name", seed=None, version=VERSION):
        self.fw = framework(*objects, tie_break=tie_break, seed=seed, version=version)
        self.cluster = self.fw.cluster
        self.snapshot = self.fw.snapshot
        for p in self.cluster.pending_pods():
            nom = (p.get("status") or {}).get("nominatedNodeName")
            if nom:
                self.fw.nominator.add(PodInfo(p), nom)
        self.plugin = self.fw.profile.by_name["DefaultPreemption"]

    def pod_info(self, name, ns="default") -> PodInfo:
        return pod_info(self.fw, name, ns)

    def pre_filter(self, pi) -> CycleState:
        state = CycleState()
        _, st, _ = self.fw.run_pre_filter_plugins(state, pi, PodResult(pi))
        assert st is None or st.is_success(), st
        return state

    def node_to_status(self, explicit: dict, absent=Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
        return NodeToStatus({n: Status(c) for n, c in explicit.items()},
                            Status(absent) if absent is not None else None, self.snapshot)

    def add_filter_first(self, plugin):
        self.fw.profile.filter.insert(0, plugin)

    def add_pre_filter(self, plugin):
        self.fw.profile.pre_filter.append(plugin)


# -- upstream's fake plugins (framework/testing) -------------------------------------------------
class CountingFilter(Plugin):
    """tf.FakeFilterPlugin: counts Filter calls, returns a fixed code."""

    name = "FakeFilter"

    def __init__(self, code=Code.SUCCESS):
        super().__init__(None)
        self.code = code
        self.calls = 0

    def filter(self, state, pod_info, node_info):
        self.calls += 1
        return None if self.code == Code.SUCCESS else Status(self.code)


class FalseFilter(Plugin):
    name = "FalseFilter"

    def __init__(self):
        super().__init__(None)

    def filter(self, state, pod_info, node_info):
        return Status(Code.UNSCHEDULABLE, "injecting failure for pod test-pod")


class MatchFilter(Plugin):
    """Passes only the node named like the pod."""

    name = "MatchFilter"

    def __init__(self):
        super().__init__(None)

    def filter(self, state, pod_info, node_info):
        return None if node_info.name == pod_info.name else Status(Code.UNSCHEDULABLE, "node name mismatch")


class ErroringExtensions(Plugin):
    """The upstream TestPlugin: AddPod / RemovePod fail on nodes labelled error=true."""

    name = "test-plugin"

    def __init__(self):
        super().__init__(None)

    def pre_filter(self, state, pod_info, nodes):
        return None, None

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_info, to_add, node_info):
        if node_info.labels.get("error") == "true":
            return Status.as_error(f"failed to add pod: {pod_info.name}")
        return None

    def remove_pod(self, state, pod_info, to_remove, node_info):
        if node_info.labels.get("error") == "true":
            return Status.as_error(f"failed to remove pod: {pod_info.name}")
        return None


def _has_plugin(module):
    return importlib.util.find_spec(f"kschedx.plugins.{module}") is not None


# -- TestPostFilter ---------------------------------------------------------------------------
POST_FILTER_CASES = [
    dict(
        name="pod with higher priority can be made schedulable",
        pod=pod("p", priority=HIGH),
        pods=[pod("p1", node="node1")],
        nodes=[node("node1", ONE_POD)],
        statuses={"node1": U},
        want_node="node1", want_code=Code.SUCCESS, want_msg="",
    ),
    dict(
        name="pod with tied priority is still unschedulable",
        pod=pod("p"),
        pods=[pod("p1", node="node1")],
        nodes=[node("node1", ONE_POD)],
        statuses={"node1": U},
        want_node="", want_code=U,
        want_msg="preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
    ),
    dict(
        name="preemption should respect filteredNodesStatuses",
        pod=pod("p", priority=HIGH),
        pods=[pod("p1", node="node1")],
        nodes=[node("node1", ONE_POD)],
        statuses={"node1": UU},
        want_node="", want_code=U,
        want_msg="preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    dict(
        name="preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
        pod=pod("p", priority=HIGH),
        pods=[pod("p1", node="node1")],
        nodes=[node("node1", ONE_POD)],
        statuses={},
        want_node="", want_code=U,
        want_msg="preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
    ),
    dict(
        name="pod can be made schedulable on one node",
        pod=pod("p", priority=MID),
        pods=[pod("p1", priority=HIGH, node="node1"), pod("p2", priority=LOW, node="node2")],
        nodes=[node("node1", ONE_POD), node("node2", ONE_POD)],
        statuses={"node1": U, "node2": U},
        want_node="node2", want_code=Code.SUCCESS, want_msg="",
    ),
    dict(
        name="pod can be made schedulable on minHighestPriority node",
        pod=pod("p", priority=VERY_HIGH),
        pods=[
            pod("p1", priority=HIGH, node="node1", labels={"violating": "no"}),
            pod("p2", priority=LOW, node="node1", labels={"violating": "yes"}),
            pod("p3", priority=MID, node="node2", labels={"violating": "yes"}),
        ],
        pdbs=[pdb("violating-pdb", {"violating": "yes"}, allowed=0),
              pdb("non-violating-pdb", {"violating": "no"}, allowed=2**31 - 1)],
        nodes=[node("node1", ONE_POD), node("node2", ONE_POD)],
        statuses={"node1": U, "node2": U},
        want_node="node2", want_code=Code.SUCCESS, want_msg="",
    ),
    dict(
        name="no candidate nodes found, no enough resource after removing low priority pods",
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[pod("p1", node="node1"), pod("p2", node="node2")],
        nodes=[node("node1", NODE_RES), node("node2", NODE_RES)],
        statuses={"node1": U, "node2": U},
        want_node="", want_code=U,
        want_msg="preemption: 0/2 nodes are available: 2 Insufficient cpu.",
    ),
    dict(
        name="no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[pod("p1", node="node1", priority=HIGH), pod("p2", node="node2"), pod("p3", node="node3", priority=HIGH)],
        nodes=[node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
        statuses={"node1": U, "node2": U, "node3": U},
        want_node="", want_code=U,
        want_msg="preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
    ),
    dict(
        name="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have enough CPU resource",
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[pod("p1", node="node1"), pod("p2", node="node2")],
        nodes=[node(f"node{i}", NODE_RES) for i in range(1, 5)],
        statuses={"node1": U, "node2": U, "node4": UU},
        want_node="", want_code=U,
        want_msg="preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
    ),
    dict(
        name="only one node but failed with TestPlugin",
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[pod("p1", node="node1")],
        nodes=[node("node1", LARGE, labels={"error": "true"})],
        statuses={"node1": U},
        test_plugin=True,
        want_node=None, want_code=Code.ERROR,
        want_msg='preemption: running RemovePod on PreFilter plugin "test-plugin": failed to remove pod: p',
    ),
    dict(
        name="one failed with TestPlugin and the other pass",
        pod=pod("p", priority=HIGH, req=LARGE),
        pods=[pod("p1", node="node1"), pod("p2", node="node2", req=MEDIUM)],
        nodes=[node("node1", LARGE, labels={"error": "true"}), node("node2", LARGE)],
        statuses={"node1": U, "node2": U},
        test_plugin=True,
        want_node="node2", want_code=Code.SUCCESS, want_msg="",
    ),
]


@pytest.mark.parametrize("case", POST_FILTER_CASES, ids=[c["name"] for c in POST_FILTER_CASES])
def test_post_filter(case):
    env = Env([*case["nodes"], *case["pods"], *case.get("pdbs", ()), case["pod"]])
    if case.get("test_plugin"):
        env.add_pre_filter(ErroringExtensions())
    pi = env.pod_info("p")
    state = env.pre_filter(pi)
    result, status = env.plugin.post_filter(state, pi, env.node_to_status(case["statuses"]))
    assert status.code == case["want_code"]
    assert status.message() == case["want_msg"]
    if case["want_node"] is None:
        assert result is None
    else:
        assert result is not None and result.nominated_node == case["want_node"]


# -- TestDryRunPreemption -----------------------------------------------------------------------
def _dry_run(env, pi, budgets=None, offset=0, num=None):
    state = env.pre_filter(pi)
    nodes = env.snapshot.node_infos
    if num is None:
        num = env.plugin.calculate_num_candidates(len(nodes))
    run = env.plugin.evaluator.dry_run_preemption(state, pi, nodes, budgets or [], offset, num)
    return {c.name: (sorted(v.name for v in c.victims), c.num_pdb_violations) for c in run.candidates}


TWO_NODES = [node("node1"), node("node2")]

DRY_RUN_CASES = [
    dict(name="a pod that does not fit on any node", extra=FalseFilter,
         nodes=TWO_NODES, pod=pod("p", priority=HIGH),
         pods=[pod("p1", node="node1", priority=MID), pod("p2", node="node2", priority=MID)],
         want={}, calls=2),
    dict(name="a pod that fits with no preemption", fake=U,
         nodes=TWO_NODES, pod=pod("p", priority=HIGH),
         pods=[pod("p1", node="node1", priority=MID), pod("p2", node="node2", priority=MID)],
         want={}, calls=2),
    dict(name="a pod that fits on one node with no preemption", extra=MatchFilter, fake=U,
         nodes=TWO_NODES, pod=pod("node1", priority=HIGH),
         pods=[pod("p1", node="node1", priority=MID), pod("p2", node="node2", priority=MID)],
         want={}, calls=2),
    dict(name="a pod that fits on both nodes when lower priority pods are preempted",
         nodes=TWO_NODES, pod=pod("p", priority=HIGH, req=LARGE),
         pods=[pod("p1", node="node1", priority=MID, req=LARGE), pod("p2", node="node2", priority=MID, req=LARGE)],
         want={"node1": (["p1"], 0), "node2": (["p2"], 0)}, calls=4),
    dict(name="a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
         nodes=TWO_NODES, pod=pod("p", priority=LOW, req=LARGE),
         pods=[pod("p1", node="node1", priority=MID, req=LARGE), pod("p2", node="node2", priority=MID, req=LARGE)],
         want={}, calls=0),
    dict(name="medium priority pod is preempted, but lower priority one stays as it is small",
         nodes=TWO_NODES, pod=pod("p", priority=HIGH, req=LARGE),
         pods=[pod("p1.1", node="node1", priority=LOW, req=SMALL), pod("p1.2", node="node1", priority=MID, req=LARGE),
               pod("p2", node="node2", priority=MID, req=LARGE)],
         want={"node1": (["p1.2"], 0), "node2": (["p2"], 0)}, calls=5),
    dict(name="mixed priority pods are preempted",
         nodes=TWO_NODES, pod=pod("p", priority=HIGH, req=LARGE),
         pods=[pod("p1.1", node="node1", priority=MID, req=SMALL), pod("p1.2", node="node1", priority=LOW, req=SMALL),
               pod("p1.3", node="node1", priority=MID, req=MEDIUM), pod("p1.4", node="node1", priority=HIGH, req=SMALL),
               pod("p2", node="node2", priority=HIGH, req=LARGE)],
         want={"node1": (["p1.2", "p1.3"], 0)}, calls=4),
    dict(name="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
         nodes=TWO_NODES, pod=pod("p", priority=HIGH, req=LARGE),
         pods=[pod("p1.1", node="node1", priority=LOW, req=SMALL, start=epoch(5)),
               pod("p1.2", node="node1", priority=LOW, req=SMALL, start=epoch(4)),
               pod("p1.3", node="node1", priority=MID, req=MEDIUM, start=epoch(3)),
               pod("p1.4", node="node1", priority=HIGH, req=SMALL, start=epoch(2)),
               pod("p2", node="node2", priority=HIGH, req=LARGE, start=epoch(1))],
         want={"node1": (["p1.1", "p1.3"], 0)}, calls=4),
    dict(name="get Unschedulable in the preemption phase when the filter plugins filtering the nodes", fake=U,
         nodes=TWO_NODES, pod=pod("p", priority=HIGH, req=LARGE),
         pods=[pod("p1", node="node1", priority=MID, req=LARGE), pod("p2", node="node2", priority=MID, req=LARGE)],
         want={}, calls=2),
    dict(name="preemption with violation of same pdb",
         nodes=[node("node1")], pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[pod("p1.1", node="node1", priority=MID, req=MEDIUM, labels={"app": "foo"}),
               pod("p1.2", node="node1", priority=MID, req=MEDIUM, labels={"app": "foo"})],
         pdbs=[pdb("pdb", {"app": "foo"}, allowed=1)],
         want={"node1": (["p1.1", "p1.2"], 1)}, calls=3),
    dict(name="preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to DisruptedPods",
         nodes=[node("node1")], pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[pod("p1.1", node="node1", priority=MID, req=MEDIUM, labels={"app": "foo"}),
               pod("p1.2", node="node1", priority=MID, req=MEDIUM, labels={"app": "foo"})],
         pdbs=[pdb("pdb", {"app": "foo"}, allowed=1, disrupted=["p2"])],
         want={"node1": (["p1.1", "p1.2"], 1)}, calls=3),
    dict(name="preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to DisruptedPods",
         nodes=[node("node1")], pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[pod("p1.1", node="node1", priority=MID, req=MEDIUM, labels={"app": "foo"}),
               pod("p1.2", node="node1", priority=MID, req=MEDIUM, labels={"app": "foo"})],
         pdbs=[pdb("pdb", {"app": "foo"}, allowed=1, disrupted=["p1.2"])],
         want={"node1": (["p1.1", "p1.2"], 0)}, calls=3),
    dict(name="preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to DisruptedPods is treated as 'nonViolating'",
         nodes=[node("node1")], pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[pod("p1.1", node="node1", priority=MID, req=MEDIUM, labels={"app": "foo"}),
               pod("p1.2", node="node1", priority=MID, req=MEDIUM, labels={"app": "foo"}),
               pod("p1.3", node="node1", priority=MID, req=MEDIUM, labels={"app": "foo"})],
         pdbs=[pdb("pdb", {"app": "foo"}, allowed=1, disrupted=["p1.3"])],
         want={"node1": (["p1.1", "p1.2", "p1.3"], 1)}, calls=4),
]


@pytest.mark.parametrize("case", DRY_RUN_CASES, ids=[c["name"] for c in DRY_RUN_CASES])
def test_dry_run_preemption(case):
    env = Env([*case["nodes"], *case["pods"], *case.get("pdbs", ()), case["pod"]])
    counter = CountingFilter(case.get("fake", Code.SUCCESS))
    if case.get("extra"):
        env.fw.profile.filter.insert(0, case["extra"]())
    env.add_filter_first(counter)
    budgets = budgets_from_cluster(env.cluster)
    got = _dry_run(env, env.pod_info(case["pod"]["metadata"]["name"]), budgets)
    assert got == case["want"]
    assert counter.calls == case["calls"]


FIVE_NODES = [node(f"node{i}") for i in range(1, 6)]


def _five_node_env(priorities, labels=None, pdbs=()):
    pods = [pod(f"p{i}", node=f"node{i}", priority=prio, req=LARGE, labels=(labels or {}).get(i))
            for i, prio in enumerate(priorities, 1)]
    return Env([*FIVE_NODES, *pods, *pdbs])


def test_dry_run_all_nodes_possible_args_limit_to_two():
    # cycle 0 => offset 4 => node5 (yes), node1 (yes)
    env = _five_node_env([MID] * 5)
    env.plugin.min_candidate_nodes_percentage, env.plugin.min_candidate_nodes_absolute = 40, 1
    counter = CountingFilter()
    env.add_filter_first(counter)
    pi = PodInfo(pod("p", priority=HIGH, req=LARGE))
    assert _dry_run(env, pi, offset=4) == {"node1": (["p1"], 0), "node5": (["p5"], 0)}
    assert counter.calls == 4


def test_dry_run_some_nodes_not_possible_args_limit_to_two():
    # offset 4 => node5 (no), node1 (yes), node2 (no), node3 (yes)
    env = _five_node_env([MID, VERY_HIGH, MID, MID, VERY_HIGH])
    env.plugin.min_candidate_nodes_percentage, env.plugin.min_candidate_nodes_absolute = 40, 1
    counter = CountingFilter()
    env.add_filter_first(counter)
    pi = PodInfo(pod("p", priority=HIGH, req=LARGE))
    assert _dry_run(env, pi, offset=4) == {"node1": (["p1"], 0), "node3": (["p3"], 0)}
    assert counter.calls == 4


def test_dry_run_offset_across_cycles_and_wrap_around():
    env = _five_node_env([MID] * 5)
    env.plugin.min_candidate_nodes_percentage, env.plugin.min_candidate_nodes_absolute = 40, 1
    # Upstream's seeded rand.Int31n(5) gives 4, 1, 3.
    want = [
        {"node1": (["p1"], 0), "node5": (["p5"], 0)},
        {"node2": (["p2"], 0), "node3": (["p3"], 0)},
        {"node4": (["p4"], 0), "node5": (["p5"], 0)},
    ]
    for i, (offset, expected) in enumerate(zip((4, 1, 3), want)):
        pi = PodInfo(pod(f"tp{i + 1}", priority=HIGH, req=LARGE))
        assert _dry_run(env, pi, offset=offset) == expected


def test_dry_run_looks_past_num_candidates_until_non_pdb_violating_node():
    # offset 4 => node5 (yes, pdb), node1 (yes, pdb), node2 (yes, pdb: list full,
    # dropped), node3 (yes): three candidates although two were asked for.
    foo = {"app": "foo"}
    env = _five_node_env([MID] * 5, labels={1: foo, 2: foo, 5: foo}, pdbs=[pdb("pdb", foo, allowed=0)])
    env.plugin.min_candidate_nodes_percentage, env.plugin.min_candidate_nodes_absolute = 40, 2
    counter = CountingFilter()
    env.add_filter_first(counter)
    pi = PodInfo(pod("p", priority=HIGH, req=LARGE))
    got = _dry_run(env, pi, budgets_from_cluster(env.cluster), offset=4)
    assert got == {"node1": (["p1"], 1), "node3": (["p3"], 0), "node5": (["p5"], 1)}
    assert counter.calls == 8


@pytest.mark.skipif(not _has_plugin("interpodaffinity"), reason="InterPodAffinity is not on this branch")
def test_dry_run_pod_with_anti_affinity_is_preempted():
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}, "topologyKey": "hostname"}]}}
    nodes = [node("node1", labels={"hostname": "node1"}), node("node2", labels={"hostname": "node2"})]
    env = Env([*nodes,
               pod("p1.1", node="node1", priority=LOW, req=SMALL, labels={"foo": ""}, affinity=anti),
               pod("p1.2", node="node1", priority=MID, req=SMALL),
               pod("p1.3", node="node1", priority=HIGH, req=SMALL),
               pod("p2", node="node2", priority=HIGH, req=SMALL)])
    pi = PodInfo(pod("p", priority=HIGH, req=SMALL, labels={"foo": ""}))
    assert _dry_run(env, pi) == {"node1": (["p1.1"], 0)}


def _spread_env(pods):
    nodes = [node("node-a", labels={"hostname": "node-a", "zone": "zone1"}),
             node("node-b", labels={"hostname": "node-b", "zone": "zone1"}),
             node("node-x", labels={"hostname": "node-x", "zone": "zone2"})]
    return Env([*nodes, *pods])


_SPREAD = [
    {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
     "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}
    for key in ("zone", "hostname")
]


@pytest.mark.skipif(not _has_plugin("podtopologyspread"), reason="PodTopologySpread is not on this branch")
def test_dry_run_preemption_to_resolve_pod_topology_spread_filter_failure():
    foo = {"foo": ""}
    env = _spread_env([pod("pod-a1", node="node-a", labels=foo, priority=MID),
                       pod("pod-a2", node="node-a", labels=foo, priority=LOW),
                       pod("pod-b1", node="node-b", labels=foo, priority=LOW),
                       pod("pod-x1", node="node-x", labels=foo, priority=HIGH),
                       pod("pod-x2", node="node-x", labels=foo, priority=HIGH)])
    pi = PodInfo(pod("p", priority=HIGH, labels=foo, spread=_SPREAD))
    assert _dry_run(env, pi) == {"node-a": (["pod-a2"], 0), "node-b": (["pod-b1"], 0)}


# -- TestSelectBestCandidate -------------------------------------------------------------------
def _p(name, n, prio, req, start=epoch(0)):
    return pod(name, node=n, priority=prio, req=req, start=start)


SELECT_CASES = [
    dict(name="a pod that fits on both nodes when lower priority pods are preempted", nodes=2,
         pod=pod("p", priority=HIGH, req=LARGE),
         pods=[_p("p1", "node1", MID, LARGE), _p("p2", "node2", MID, LARGE)],
         want={"node1", "node2"}),
    dict(name="node with min highest priority pod is picked", nodes=3,
         pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[_p("p1.1", "node1", MID, MEDIUM), _p("p1.2", "node1", MID, LARGE),
               _p("p2.1", "node2", MID, MEDIUM), _p("p2.2", "node2", LOW, MEDIUM),
               _p("p3.1", "node3", LOW, MEDIUM), _p("p3.2", "node3", LOW, MEDIUM)],
         want={"node3"}),
    dict(name="when highest priorities are the same, minimum sum of priorities is picked", nodes=3,
         pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[_p("p1.1", "node1", MID, MEDIUM), _p("p1.2", "node1", MID, LARGE),
               _p("p2.1", "node2", MID, LARGE), _p("p2.2", "node2", LOW, MEDIUM),
               _p("p3.1", "node3", MID, MEDIUM), _p("p3.2", "node3", MID, MEDIUM)],
         want={"node2"}),
    dict(name="when highest priority and sum are the same, minimum number of pods is picked", nodes=3,
         pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[_p("p1.1", "node1", MID, SMALL), _p("p1.2", "node1", NEG, SMALL),
               _p("p1.3", "node1", MID, SMALL), _p("p1.4", "node1", NEG, SMALL),
               _p("p2.1", "node2", MID, LARGE), _p("p2.2", "node2", NEG, MEDIUM),
               _p("p3.1", "node3", MID, MEDIUM), _p("p3.2", "node3", NEG, SMALL), _p("p3.3", "node3", LOW, SMALL)],
         want={"node2"}),
    dict(name="sum of adjusted priorities is considered", nodes=3,
         pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[_p("p1.1", "node1", MID, SMALL), _p("p1.2", "node1", NEG, SMALL), _p("p1.3", "node1", NEG, SMALL),
               _p("p2.1", "node2", MID, LARGE), _p("p2.2", "node2", NEG, MEDIUM),
               _p("p3.1", "node3", MID, MEDIUM), _p("p3.2", "node3", NEG, SMALL), _p("p3.3", "node3", LOW, SMALL)],
         want={"node2"}),
    dict(name="non-overlapping lowest high priority, sum priorities, and number of pods", nodes=4,
         pod=pod("p", priority=VERY_HIGH, req=VERY_LARGE),
         pods=[_p("p1.1", "node1", MID, SMALL), _p("p1.2", "node1", LOW, SMALL), _p("p1.3", "node1", LOW, SMALL),
               _p("p2.1", "node2", HIGH, LARGE),
               _p("p3.1", "node3", MID, MEDIUM), _p("p3.2", "node3", LOW, SMALL), _p("p3.3", "node3", LOW, SMALL),
               _p("p3.4", "node3", LOW, MEDIUM),
               _p("p4.1", "node4", MID, MEDIUM), _p("p4.2", "node4", MID, SMALL), _p("p4.3", "node4", MID, SMALL),
               _p("p4.4", "node4", NEG, SMALL)],
         want={"node1"}),
    dict(name="same priority, same number of victims, different start time for each node's pod", nodes=3,
         pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[_p("p1.1", "node1", MID, MEDIUM, epoch(2)), _p("p1.2", "node1", MID, MEDIUM, epoch(2)),
               _p("p2.1", "node2", MID, MEDIUM, epoch(3)), _p("p2.2", "node2", MID, MEDIUM, epoch(3)),
               _p("p3.1", "node3", MID, MEDIUM, epoch(1)), _p("p3.2", "node3", MID, MEDIUM, epoch(1))],
         want={"node2"}),
    dict(name="same priority, same number of victims, different start time for all pods", nodes=3,
         pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[_p("p1.1", "node1", MID, MEDIUM, epoch(4)), _p("p1.2", "node1", MID, MEDIUM, epoch(2)),
               _p("p2.1", "node2", MID, MEDIUM, epoch(5)), _p("p2.2", "node2", MID, MEDIUM, epoch(1)),
               _p("p3.1", "node3", MID, MEDIUM, epoch(3)), _p("p3.2", "node3", MID, MEDIUM, epoch(6))],
         want={"node3"}),
    dict(name="different priority, same number of victims, different start time for all pods", nodes=3,
         pod=pod("p", priority=HIGH, req=VERY_LARGE),
         pods=[_p("p1.1", "node1", LOW, MEDIUM, epoch(4)), _p("p1.2", "node1", MID, MEDIUM, epoch(2)),
               _p("p2.1", "node2", MID, MEDIUM, epoch(6)), _p("p2.2", "node2", LOW, MEDIUM, epoch(1)),
               _p("p3.1", "node3", LOW, MEDIUM, epoch(3)), _p("p3.2", "node3", MID, MEDIUM, epoch(5))],
         want={"node2"}),
]


@pytest.mark.parametrize("case", SELECT_CASES, ids=[c["name"] for c in SELECT_CASES])
def test_select_best_candidate(case):
    env = Env([*(node(f"node{i}") for i in range(1, case["nodes"] + 1)), *case["pods"]])
    pi = PodInfo(case["pod"])
    state = env.pre_filter(pi)
    ev = env.plugin.evaluator
    nodes = env.snapshot.node_infos
    run = ev.dry_run_preemption(state, pi, nodes, [], 0, env.plugin.calculate_num_candidates(len(nodes)))
    best = ev.select_candidate(run.candidates)
    assert best is not None and best.name in case["want"]


# -- TestPodEligibleToPreemptOthers -----------------------------------------------------------
ELIGIBLE_CASES = [
    dict(name="Pod with nominated node",
         pod=pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
         pods=[pod("p1", priority=LOW, node="node1", terminating=True)], nodes=["node1"],
         status=Status(UU, "node(s) had untolerated taint(s)"), want=True),
    dict(name="Pod without nominated node", pod=pod("p_without_nominated_node", priority=HIGH),
         pods=[], nodes=[], status=None, want=True),
    dict(name="Pod with 'PreemptNever' preemption policy",
         pod=pod("p_with_preempt_never_policy", priority=HIGH, policy="Never"),
         pods=[], nodes=[], status=None, want=False),
    dict(name="preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
         pod=pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
         pods=[pod("p1", priority=LOW, node="node1", terminating=True, disruption=True)], nodes=["node1"],
         status=None, want=False),
    dict(name="non-victim Pods terminating",
         pod=pod("p_with_nominated_node", priority=HIGH, nominated="node1"),
         pods=[pod("p1", priority=LOW, node="node1", terminating=True)], nodes=["node1"],
         status=None, want=True),
]


@pytest.mark.parametrize("case", ELIGIBLE_CASES, ids=[c["name"] for c in ELIGIBLE_CASES])
def test_pod_eligible_to_preempt_others(case):
    env = Env([*(node(n) for n in case["nodes"]), *case["pods"]])
    got, _ = env.plugin.pod_eligible_to_preempt_others(PodInfo(case["pod"]), case["status"])
    assert got == case["want"]


def test_not_eligible_messages():
    env = Env([node("node1"), pod("p1", priority=LOW, node="node1", terminating=True, disruption=True)])
    assert env.plugin.pod_eligible_to_preempt_others(PodInfo(pod("p", priority=HIGH, policy="Never")), None) == (
        False, "not eligible due to preemptionPolicy=Never.")
    assert env.plugin.pod_eligible_to_preempt_others(PodInfo(pod("p", priority=HIGH, nominated="node1")), None) == (
        False, "not eligible due to a terminating pod on the nominated node.")


# -- TestPreempt ---------------------------------------------------------------------------------
PREEMPT_CASES = [
    dict(name="basic preemption logic", pod=pod("p", priority=HIGH, req=VERY_LARGE, policy="PreemptLowerPriority"),
         want_node="node1", want_victims=["p1.1", "p1.2"]),
    dict(name="no preempting in pod", pod=pod("p", priority=HIGH, req=VERY_LARGE, policy="Never"),
         want_node=None, want_victims=[]),
    dict(name="PreemptionPolicy is nil", pod=pod("p", priority=HIGH, req=VERY_LARGE),
         want_node="node1", want_victims=["p1.1", "p1.2"]),
]


@pytest.mark.parametrize("case", PREEMPT_CASES, ids=[c["name"] for c in PREEMPT_CASES])
def test_preempt(case):
    env = Env([node("node1"), node("node2"), node("node3"),
               pod("p1.1", node="node1", priority=LOW, req=SMALL), pod("p1.2", node="node1", priority=LOW, req=SMALL),
               pod("p2.1", node="node2", priority=HIGH, req=LARGE), pod("p3.1", node="node3", priority=MID, req=MEDIUM),
               case["pod"]])
    pi = env.pod_info("p")
    state = env.pre_filter(pi)
    result, status = env.plugin.evaluator.preempt(state, pi, env.node_to_status(
        {"node1": U, "node2": U, "node3": U}))
    assert status.is_success() or status.is_rejected()
    if case["want_node"] is None:
        assert result is None
    else:
        assert result.nominated_node == case["want_node"]
        assert sorted(v.name for v in result.details["victimPodInfos"]) == case["want_victims"]


@pytest.mark.skipif(not _has_plugin("podtopologyspread"), reason="PodTopologySpread is not on this branch")
def test_preempt_for_topology_spread_constraints():
    foo = {"foo": ""}
    env = _spread_env([pod("p-a1", node="node-a", labels=foo, priority=HIGH),
                       pod("p-a2", node="node-a", labels=foo, priority=HIGH),
                       pod("p-b1", node="node-b", labels=foo, priority=LOW),
                       pod("p-x1", node="node-x", labels=foo, priority=HIGH),
                       pod("p-x2", node="node-x", labels=foo, priority=HIGH),
                       pod("p", priority=HIGH, labels=foo, spread=_SPREAD)])
    pi = env.pod_info("p")
    state = env.pre_filter(pi)
    result, status = env.plugin.evaluator.preempt(state, pi, env.node_to_status(
        {"node-a": U, "node-b": U, "node-x": U}))
    assert status.is_success()
    assert result.nominated_node == "node-b"
    assert [v.name for v in result.details["victimPodInfos"]] == ["p-b1"]


# -- nodes where preemption might help (NodesForStatusCode) ------------------------------------
HELP_CASES = [
    dict(name="No node should be attempted",
         statuses={"node1": UU, "node2": UU, "node3": UU, "node4": UU}, want=set()),
    dict(name="ErrReasonAffinityNotMatch should be tried",
         statuses={"node1": U, "node2": UU, "node3": UU}, absent=U, want={"node1", "node4"}),
    dict(name="Mix of failed predicates works fine",
         statuses={"node1": UU, "node2": U}, absent=U, want={"node2", "node3", "node4"}),
    dict(name="UnschedulableAndUnresolvable status should be skipped but Unschedulable should be tried",
         statuses={"node2": UU, "node3": U, "node4": UU}, absent=U, want={"node1", "node3"}),
    dict(name="Absent nodes are UnschedulableAndUnresolvable by default",
         statuses={"node3": U}, absent=UU, want={"node3"}),
]


@pytest.mark.parametrize("case", HELP_CASES, ids=[c["name"] for c in HELP_CASES])
def test_nodes_where_preemption_might_help(case):
    env = Env([node(f"node{i}") for i in range(1, 5)])
    m = env.node_to_status(case["statuses"], absent=case.get("absent", UU))
    assert {ni.name for ni in m.nodes_for_status_code(U)} == case["want"]


# -- arguments, messages, orderings ----------------------------------------------------------
@pytest.mark.parametrize("num_nodes,pct,absolute,want", [
    (10, 10, 100, 10), (1000, 10, 100, 100), (5000, 10, 100, 500), (1000, 40, 100, 400), (5, 40, 1, 2),
    (5, 40, 2, 2), (0, 10, 100, 0), (100, 0, 1, 1),
    # TestDryRunPreemption's two-node rows with the default args: every node.
    (2, 10, 100, 2),
    # The default args examine every potential node up to 100 of them, then 100 up to 1,000.
    (100, 10, 100, 100), (101, 10, 100, 100), (999, 10, 100, 100), (1001, 10, 100, 100),
    # The example: 7 * 50 / 100 = 3.
    (7, 50, 2, 3), (5000, 50, 2, 2500),
])
def test_calculate_num_candidates(num_nodes, pct, absolute, want):
    env = Env([node("n")])
    pl = DefaultPreemption(env.fw, {"minCandidateNodesPercentage": pct, "minCandidateNodesAbsolute": absolute})
    assert pl.calculate_num_candidates(num_nodes) == want


@pytest.mark.parametrize("args,error", [
    ({"minCandidateNodesPercentage": 101},
     "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"),
    ({"minCandidateNodesPercentage": -1}, "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"),
    ({"minCandidateNodesAbsolute": -1}, "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute, "
     "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage]"),
])
def test_args_validation(args, error):
    with pytest.raises(ValueError) as exc:
        validate_args(args)
    assert str(exc.value) == 'initializing plugin "DefaultPreemption": ' + error


def test_default_args():
    assert validate_args({}) == {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}


def test_offset_is_zero_with_tie_break_name_and_seeded_otherwise():
    env = Env([node("n")])
    assert env.plugin.get_offset_and_num_candidates(50) == (0, 50)
    a = Env([node("n")], tie_break="random", seed=7).plugin.get_offset_and_num_candidates(5000)
    b = Env([node("n")], tie_break="random", seed=7).plugin.get_offset_and_num_candidates(5000)
    assert a == b and a[1] == 500 and 0 <= a[0] < 5000


def test_more_important_pod_orders_by_priority_then_start_time():
    old = PodInfo(pod("old", priority=MID, start=epoch(1)))
    new = PodInfo(pod("new", priority=MID, start=epoch(2)))
    unstarted = PodInfo(pod("unstarted", priority=MID))
    high = PodInfo(pod("high", priority=HIGH, start=epoch(9)))
    assert more_important_pod(high, old) and not more_important_pod(old, high)
    assert more_important_pod(old, new) and not more_important_pod(new, old)
    # No start time: started now, after everyone else; tied among themselves.
    assert more_important_pod(new, unstarted)
    assert not more_important_pod(unstarted, PodInfo(pod("other", priority=MID)))


def test_pdb_split_counts_budget_per_pod_in_order():
    pods = [PodInfo(pod(f"p{i}", labels={"app": "a"})) for i in range(3)] + [PodInfo(pod("x"))]
    budgets = [Budget("default/b", "default", selector_from_set({"app": "a"}), 1, frozenset())]
    violating, non_violating = split_by_pdb_violation(pods, budgets)
    assert [p.name for p in violating] == ["p1", "p2"]
    assert [p.name for p in non_violating] == ["p0", "x"]


def test_pdb_with_empty_or_missing_selector_matches_nothing():
    env = Env([{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "all"},
                "spec": {"selector": {}}},
               {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "none"}, "spec": {}},
               node("n")])
    budgets = budgets_from_cluster(env.cluster)
    violating, _ = split_by_pdb_violation([PodInfo(pod("p", labels={"a": "b"}))], budgets)
    assert violating == []


def test_pdb_in_other_namespace_does_not_count():
    budgets = budgets_from_cluster(Env([pdb("b", {"app": "a"}, ns="other"), node("n")]).cluster)
    violating, _ = split_by_pdb_violation([PodInfo(pod("p", labels={"app": "a"}))], budgets)
    assert violating == []


def test_fit_error_message_counts_and_sorts_reasons():
    statuses = {"a": Status(U, "Insufficient cpu"), "b": Status(U, "Insufficient cpu"),
                "c": Status(UU, "No preemption victims found for incoming pod")}
    absent = Status(UU, "Preemption is not helpful for scheduling")
    assert fit_error_message(13, statuses, absent) == (
        "0/13 nodes are available: 1 No preemption victims found for incoming pod, "
        "10 Preemption is not helpful for scheduling, 2 Insufficient cpu.")
    assert fit_error_message(0, {}, absent) == "0/0 nodes are available:"


def test_aggregate_errors_like_utilerrors():
    assert aggregate_errors(["a"]) == "a"
    assert aggregate_errors(["a", "a"]) == "a"
    assert aggregate_errors(["a", "b", "a"]) == "[a, b]"


def test_candidate_priority_sum_adds_maxint32_plus_one():
    # Two victims of priority -100 weigh more than one of the same priority.
    one = Candidate("n1", [PodInfo(pod("a", priority=NEG))], 0)
    two = Candidate("n2", [PodInfo(pod("b", priority=NEG)), PodInfo(pod("c", priority=NEG))], 0)
    assert one.scores()[2] > two.scores()[2]


def test_pick_one_node_reports_why_candidates_lost():
    env = Env([node(f"node{i}") for i in range(1, 4)])
    ev = env.plugin.evaluator
    a = Candidate("node1", [PodInfo(pod("a", priority=MID))], 1)
    b = Candidate("node2", [PodInfo(pod("b", priority=MID))], 0)
    c = Candidate("node3", [PodInfo(pod("c", priority=LOW))], 0)
    assert ev.select_candidate([a, b, c]) is c
    assert a.lost_on == "fewest PDB violations"
    assert b.lost_on == "lowest highest-victim priority"


def test_exactly_tied_candidates_pick_smallest_name():
    env = Env([node("n")])
    ev = env.plugin.evaluator
    cands = [Candidate(n, [PodInfo(pod(f"v-{n}", priority=LOW, start=epoch(1)))], 0) for n in ("b", "a", "c")]
    assert ev.select_candidate(cands).name == "a"


def test_lower_priority_nominated_pods_lose_their_nomination():
    env = Env([node("node1", ONE_POD), pod("p1", node="node1", priority=LOW),
               pod("nominee", priority=MID, nominated="node1"), pod("p", priority=HIGH)])
    pi = env.pod_info("p")
    state = env.pre_filter(pi)
    result, status = env.plugin.post_filter(state, pi, env.node_to_status({"node1": U}))
    assert status.is_success()
    assert result.details["clearedNominations"] == ["default/nominee"]


def test_post_filter_details_explain_the_choice():
    env = Env([node("node1", ONE_POD), node("node2", ONE_POD),
               pod("p1", node="node1", priority=MID), pod("p2", node="node2", priority=LOW), pod("p", priority=HIGH)])
    pi = env.pod_info("p")
    state = env.pre_filter(pi)
    result, status = env.plugin.post_filter(state, pi, env.node_to_status({"node1": U, "node2": U}))
    d = result.details
    assert d["victims"] == [{"pod": "default/p2", "priority": LOW, "node": "node2"}]
    assert d["sampling"] == {"potentialNodes": 2, "offset": 0, "numCandidates": 2, "evaluatedNodes": 2}
    by_node = {c["node"]: c for c in d["candidates"]}
    assert by_node["node2"]["selected"] and by_node["node1"]["lostOn"] == "lowest highest-victim priority"


def test_victims_are_reprieved_most_important_first_pdb_violating_first():
    # Two low pods fit back one at a time: the PDB-protected one is tried first.
    env = Env([node("node1", {"cpu": "300m", "memory": "1000"}),
               pod("free", node="node1", priority=LOW, req=SMALL, start=epoch(1)),
               pod("guarded", node="node1", priority=LOW, req=SMALL, start=epoch(2), labels={"app": "g"}),
               pdb("g", {"app": "g"}, allowed=0),
               pod("p", priority=HIGH, req=MEDIUM)])
    pi = env.pod_info("p")
    state = env.pre_filter(pi)
    result, status = env.plugin.post_filter(state, pi, env.node_to_status({"node1": U}))
    assert status.is_success()
    assert [v["pod"] for v in result.details["victims"]] == ["default/free"]
    assert result.details["pdbViolations"] == 0


# -- the candidate search: what other examination orders could nominate ------------------------
# (framework/preemption_search.py; tests/test_preemption_search.py checks the arithmetic)
def _preempt_five(priorities, pct, absolute, offset, labels=None, pdbs=(), search=True):
    """TestDryRunPreemption's five-node env through Preempt, the offset of
    upstream's seeded random source fed in; potential nodes in name order, as
    that test sorts them. Returns (details, filter calls)."""
    env = _five_node_env(priorities, labels=labels, pdbs=pdbs)
    env.plugin.min_candidate_nodes_percentage, env.plugin.min_candidate_nodes_absolute = pct, absolute
    env.plugin.offset_override = lambda n: offset
    env.fw.preemption_search = search
    counter = CountingFilter()
    env.add_filter_first(counter)
    pi = PodInfo(pod("p", priority=HIGH, req=LARGE))
    state = env.pre_filter(pi)
    result, status = env.plugin.evaluator.preempt(state, pi, env.node_to_status({f"node{i}": U for i in range(1, 6)}))
    assert status.is_success(), status
    return result.nominated_node, result.details, counter.calls


def _alternatives(details) -> dict:
    return {a["nominatedNode"]: (a["share"], a["chosen"]) for a in details.get("alternatives", ())}


def test_search_u1_all_nodes_possible_limits_to_two():
    nominated, d, calls = _preempt_five([MID] * 5, 40, 1, offset=4)
    # The walk from offset 4 finds node5 and node1 (upstream's row); equal: the smallest name.
    assert {c["node"] for c in d["candidates"]} == {"node1", "node5"} and nominated == "node1"
    assert d["sampling"] == {"potentialNodes": 5, "offset": 4, "numCandidates": 2, "evaluatedNodes": 2}
    assert d["search"] == {"potentialNodes": 5, "candidatesWanted": 2, "nodesWithVictims": 5, "couldDiffer": True,
                           "outcomes": 5}
    assert _alternatives(d) == {"node1": (0.2, True), **{f"node{i}": (0.2, False) for i in range(2, 6)}}
    # One dry run per node (two Filter calls each: all victims removed, one reprieve),
    # where kube-scheduler's walk made 4 calls.
    assert calls == 10


def test_search_off_dry_runs_only_the_walk():
    # Runs that never report the search (capacity, fix checks) keep upstream's count.
    nominated, d, calls = _preempt_five([MID] * 5, 40, 1, offset=4, search=False)
    assert nominated == "node1" and calls == 4
    assert "search" not in d and "alternatives" not in d and "nodePreemption" not in d


def test_search_u2_some_nodes_not_possible():
    nominated, d, _ = _preempt_five([MID, VERY_HIGH, MID, MID, VERY_HIGH], 40, 1, offset=4)
    assert {c["node"] for c in d["candidates"]} == {"node1", "node3"} and nominated == "node1"
    assert d["search"]["nodesWithVictims"] == 3 and d["search"]["outcomes"] == 3
    assert _alternatives(d) == {"node1": (0.333333, True), "node3": (0.333333, False), "node4": (0.333333, False)}
    # node2 and node5 run pods of a higher priority: no victims, no record.
    assert set(d["nodePreemption"]) == {"node1", "node3", "node4"}


def test_search_u3_violating_candidates_never_nominated():
    foo = {"app": "foo"}
    nominated, d, _ = _preempt_five([MID] * 5, 40, 2, offset=4, labels={1: foo, 2: foo, 5: foo},
                                    pdbs=[pdb("pdb", foo, allowed=0)])
    # Upstream's walk: node5, node1, node2 (dropped: the violating list is full), node3.
    assert {c["node"] for c in d["candidates"]} == {"node1", "node3", "node5"} and nominated == "node3"
    assert _alternatives(d) == {"node3": (0.5, True), "node4": (0.5, False)}
    assert d["nodePreemption"]["node1"] == {"numVictims": 1, "pdbViolations": 1, "couldBeNominated": False,
                                            "share": 0.0}
    assert d["nodePreemption"]["node4"] == {"numVictims": 1, "pdbViolations": 0, "couldBeNominated": True,
                                            "share": 0.5}


def test_search_every_node_examined_nothing_extra():
    # The default args on five nodes: every potential node is examined by the walk
    # itself, one dry run each, and the one best candidate cannot differ.
    nominated, d, calls = _preempt_five([MID, LOW, MID, MID, MID], 10, 100, offset=0)
    assert nominated == "node2" and calls == 10
    assert d["search"] == {"potentialNodes": 5, "candidatesWanted": 5, "nodesWithVictims": 5, "couldDiffer": False,
                           "outcomes": 1}
    assert "alternatives" not in d
    assert d["nodePreemption"]["node2"]["couldBeNominated"] and not d["nodePreemption"]["node1"]["couldBeNominated"]


def test_search_when_no_node_has_victims():
    env = _five_node_env([VERY_HIGH] * 5)
    pi = PodInfo(pod("p", priority=HIGH, req=LARGE))
    result, status = env.plugin.evaluator.preempt(env.pre_filter(pi), pi,
                                                  env.node_to_status({f"node{i}": U for i in range(1, 6)}))
    assert status.code == U and result.nominated_node == ""
    assert result.details["search"] == {"potentialNodes": 5, "candidatesWanted": 5, "nodesWithVictims": 0,
                                        "couldDiffer": False, "outcomes": 0}


def _zoned_env(offset, pct=10, absolute=1):
    """Four equal nodes in two zones, read a1, a2, b1, b2: node-tree order
    interleaves the zones (a1, b1, a2, b2)."""
    nodes = [node(n, labels={"kubernetes.io/hostname": n, "topology.kubernetes.io/zone": n[0]})
             for n in ("a1", "a2", "b1", "b2")]
    pods = [pod(f"p-{n}", node=n, priority=MID, req=LARGE) for n in ("a1", "a2", "b1", "b2")]
    env = Env([*nodes, *pods, pod("p", priority=HIGH, req=LARGE)])
    env.plugin.min_candidate_nodes_percentage, env.plugin.min_candidate_nodes_absolute = pct, absolute
    env.plugin.offset_override = lambda n: offset
    return env


def test_potential_nodes_in_node_tree_order():
    env = _zoned_env(0)
    m = NodeToStatus({}, Status(U), env.snapshot, env.fw.sampling.order(env.snapshot))
    assert [ni.name for ni in m.nodes_for_status_code(U)] == ["a1", "b1", "a2", "b2"]
    # Without an order, the snapshot's list (by name), as upstream's tests sort it.
    assert [ni.name for ni in env.node_to_status({}, absent=U).nodes_for_status_code(U)] == ["a1", "a2", "b1", "b2"]


@pytest.mark.parametrize("offset,want", [(0, "a1"), (1, "b1"), (2, "a2"), (3, "b2")])
def test_the_walk_from_an_offset_goes_in_node_tree_order(offset, want):
    # One candidate wanted (10% of 4, at least 1): the first node from the offset.
    env = _zoned_env(offset)
    r = env.fw.schedule(env.pod_info("p"))
    pre = r.preemption
    assert pre["nominatedNode"] == want
    assert pre["sampling"] == {"potentialNodes": 4, "offset": offset, "numCandidates": 1, "evaluatedNodes": 1}
    assert pre["search"]["couldDiffer"] and pre["search"]["outcomes"] == 4
    assert [(a["nominatedNode"], a["share"], a["chosen"]) for a in pre["alternatives"]] == [
        (n, 0.25, n == want) for n in ("a1", "b1", "a2", "b2")]  # equal shares: node-tree order
    # Every candidate's record says it can be nominated.
    assert {nr.name: nr.preemption["couldBeNominated"] for nr in r.nodes} == dict.fromkeys(["a1", "a2", "b1", "b2"], True)
    # The document keeps the per-node part out of `preemption`.
    assert "nodePreemption" not in pre
