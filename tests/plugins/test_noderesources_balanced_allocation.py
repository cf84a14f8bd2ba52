"""NodeResourcesBalancedAllocation (upstream balanced_allocation_test.go,
TestNodeResourcesBalancedAllocation): the v1.35 table (the balance with the
pod) and the v1.36 one (the improvement in balance, kubernetes/kubernetes
#135573). The DRAExtendedResource rows are the DynamicResources tests'."""

import pytest
from builders import container, framework_for, make_node, make_pod, req_containers, run_score, sidecar

from kschedx.features import default_features
from kschedx.plugins.noderesources.balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balanced_resource_scorer,
    improvement_score,
)

V135 = default_features("1.35")
V136 = default_features("1.36")

GPU = "nvidia.com/gpu"
DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
WITH_GPU = DEFAULT + [{"name": GPU, "weight": 1}]


def node(name, milli_cpu, memory, **scalar):
    return make_node(name, cpu=f"{milli_cpu}m", memory=memory, allocatable={k: str(v) for k, v in scalar.items()})


def spec_pod(containers, node_name=None):
    return make_pod(containers=req_containers(*containers), node=node_name)


CPU_AND_MEMORY = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}]
CPU_ONLY = [{"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"}]
CPU_MEM_GPU = [{"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"}]


def cpu_only(n="node1"):
    return spec_pod(CPU_ONLY, n)


def cpu_and_memory(n="node2"):
    return spec_pod(CPU_AND_MEMORY, n)


CASES = [
    ("differently sized nodes", cpu_and_memory(None), [node("node1", 4000, 10000), node("node2", 6000, 10000)], [],
     DEFAULT, [("node1", 87), ("node2", 100)]),
    ("pods scheduled with resources", cpu_and_memory(None), [node("node1", 10000, 20000), node("node2", 10000, 20000)],
     [cpu_only(), cpu_and_memory()], DEFAULT, [("node1", 82), ("node2", 95)]),
    ("pods scheduled, differently sized nodes", cpu_and_memory(None),
     [node("node1", 10000, 20000), node("node2", 10000, 50000)], [cpu_only(), cpu_and_memory()], DEFAULT,
     [("node1", 82), ("node2", 80)]),
    ("requested resources at node capacity", cpu_only(None), [node("node1", 6000, 10000), node("node2", 6000, 10000)],
     [cpu_only(), cpu_and_memory()], DEFAULT, [("node1", 50), ("node2", 75)]),
    ("include scalar resource on a node", make_pod(containers=[container(requests={"memory": "0", GPU: "1"})]),
     [node("node1", 3500, 40000, **{GPU: 8}), node("node2", 3500, 40000, **{GPU: 8})],
     [cpu_and_memory(), spec_pod(CPU_MEM_GPU, "node1")], WITH_GPU, [("node1", 70), ("node2", 65)]),
    ("node without the scalar resource skips it", cpu_and_memory(None),
     [node("node1", 3500, 40000, **{GPU: 8}), node("node2", 3500, 40000)], [], WITH_GPU, [("node1", 63), ("node2", 63)]),
]


MEMORY_ONLY = [{"memory": "2000"}, {"memory": "3000"}]

# The v1.36 table: (without the pod -> with it) per node in the comments.
CASES_136 = [
    ("differently sized nodes", cpu_and_memory(None), [node("node1", 4000, 10000), node("node2", 6000, 10000)], [],
     DEFAULT, [("node1", 68), ("node2", 75)]),  # 100 -> 87, 100 -> 100
    ("pods scheduled with resources", cpu_and_memory(None), [node("node1", 10000, 20000), node("node2", 10000, 20000)],
     [cpu_only(), cpu_and_memory()], DEFAULT, [("node1", 73), ("node2", 74)]),  # 85 -> 82, 97 -> 95
    ("pods scheduled, differently sized nodes", cpu_and_memory(None),
     [node("node1", 10000, 20000), node("node2", 10000, 50000)], [cpu_only(), cpu_and_memory()], DEFAULT,
     [("node1", 73), ("node2", 70)]),  # 85 -> 82, 90 -> 80
    ("nodes to reach min and max score", spec_pod(MEMORY_ONLY), [node("node1", 3000, 5000), node("node2", 3000, 5000)],
     [cpu_only()], DEFAULT, [("node1", 100), ("node2", 50)]),  # 50 -> 100, 100 -> 50
    ("requested resources at node capacity", cpu_only(None), [node("node1", 6000, 10000), node("node2", 6000, 10000)],
     [cpu_only(), cpu_and_memory()], DEFAULT, [("node1", 62), ("node2", 62)]),  # 75 -> 50, 100 -> 75
    ("include scalar resource on a node", make_pod(containers=[container(requests={"memory": "0", GPU: "1"})]),
     [node("node1", 3500, 40000, **{GPU: 8}), node("node2", 3500, 40000, **{GPU: 8})],
     [cpu_and_memory(), spec_pod(CPU_MEM_GPU, "node1")], WITH_GPU,
     [("node1", 75), ("node2", 76)]),  # 69 -> 70, 62 -> 65
    ("node without the scalar resource skips it", cpu_and_memory(None),
     [node("node1", 3500, 40000, **{GPU: 8}), node("node2", 3500, 40000)], [], WITH_GPU,
     [("node1", 56), ("node2", 56)]),  # 100 -> 63
]


@pytest.mark.parametrize("features, name, pod, nodes, pods, resources, expected",
                         [(V135, *c) for c in CASES] + [(V136, *c) for c in CASES_136],
                         ids=[f"1.35-{c[0]}" for c in CASES] + [f"1.36-{c[0]}" for c in CASES_136])
@pytest.mark.parametrize("with_prescore", [True, False], ids=["prescore", "no-prescore"])
def test_balanced_allocation(features, name, pod, nodes, pods, resources, expected, with_prescore):
    fw = framework_for(nodes, pods, features=features)
    infos = [fw.snapshot.get(n["metadata"]["name"]) for n in nodes]
    pl = NodeResourcesBalancedAllocation(fw, {"resources": resources})
    assert run_score(pl, pod, infos, pre_score=with_prescore) == expected
    # The batch path (score_all, and the node columns when they serve) agrees.
    if with_prescore and [r["name"] for r in resources] == ["cpu", "memory"]:
        from kschedx.framework.cycle_state import CycleState

        state = CycleState()
        from kschedx.state.types import PodInfo

        pi = PodInfo(pod)
        pl.pre_score(state, pi, infos)
        assert list(zip([n.name for n in infos], pl.score_all(state, pi, infos))) == expected


@pytest.mark.parametrize("with_pod, without_pod, score", [
    (100, 100, 75), (87, 100, 68), (100, 50, 100), (50, 100, 50), (82, 85, 73), (95, 97, 74), (63, 100, 56),
])
def test_improvement_score(with_pod, without_pod, score):
    assert improvement_score(with_pod, without_pod) == score


def test_score_details_show_both_balances_from_1_36():
    nodes = [node("node1", 10000, 20000)]
    fw = framework_for(nodes, [cpu_only()], features=V136)
    from kschedx.framework.cycle_state import CycleState
    from kschedx.state.types import PodInfo

    pl = NodeResourcesBalancedAllocation(fw)
    pi = PodInfo(cpu_and_memory(None))
    state = CycleState()
    pl.pre_score(state, pi, fw.snapshot.node_infos)
    details = pl.score_details(state, pi, fw.snapshot.get("node1"))
    assert details == {"fractions": {"cpu": "6000/10000", "memory": "5000/20000"},
                       "fractionsWithoutPod": {"cpu": "3000/10000", "memory": "0/20000"},
                       "balanceWithPod": 82, "balanceWithoutPod": 85}
    fw135 = framework_for(nodes, [cpu_only()], features=V135)
    pl135 = NodeResourcesBalancedAllocation(fw135)
    assert pl135.score_details(state, pi, fw135.snapshot.get("node1")) == {
        "fractions": {"cpu": "6000/10000", "memory": "5000/20000"}}


@pytest.mark.parametrize("features", [V135, V136], ids=["1.35", "1.36"])
def test_best_effort_pod_skips_at_prescore(features):
    fw = framework_for([node("node1", 4000, 10000), node("node2", 4000, 10000)], features=features)
    infos = list(fw.snapshot.node_infos)
    pl = NodeResourcesBalancedAllocation(fw)
    assert run_score(pl, make_pod(containers=[container()]), infos) == "Skip"
    # Without PreScore, Score answers 0 for such a pod.
    assert run_score(pl, make_pod(containers=[container()]), infos, pre_score=False) == [("node1", 0), ("node2", 0)]


def test_balanced_uses_requested_not_defaults_and_counts_sidecars():
    # A sidecar's request adds to the steady state (requested, not non-zero defaults).
    pod = make_pod(containers=[container(requests={"cpu": "1"})], init_containers=[sidecar(requests={"memory": "1Gi"})])
    fw = framework_for([make_node("node1", cpu=2, memory="2Gi")], features=V135)
    # cpu 1/2 = 0.5, memory 1Gi/2Gi = 0.5 -> std 0 -> 100
    assert run_score(NodeResourcesBalancedAllocation(fw), pod, fw.snapshot.node_infos) == [("node1", 100)]
    # 1.36: 0/0 without it (100), balanced with it (100): no change, 75.
    fw = framework_for([make_node("node1", cpu=2, memory="2Gi")], features=V136)
    assert run_score(NodeResourcesBalancedAllocation(fw), pod, fw.snapshot.node_infos) == [("node1", 75)]


@pytest.mark.parametrize(
    "requested, allocatable, score",
    [
        ([3000, 5000], [4000, 10000], 87),
        ([6000, 0], [6000, 10000], 50),
        ([9000, 0], [6000, 10000], 50),  # fractions are capped at 1
        ([1, 1], [0, 0], 100),  # no resources: std 0
        ([1, 2, 3], [0, 4, 0], 100),  # one fraction: std 0
    ],
)
def test_balanced_resource_scorer(requested, allocatable, score):
    assert balanced_resource_scorer(requested, allocatable) == score
