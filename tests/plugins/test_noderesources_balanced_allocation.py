"""NodeResourcesBalancedAllocation (upstream balanced_allocation_test.go).
The DRAExtendedResource rows (gate off in v1.35) are not ported."""

import pytest
from builders import container, framework_for, make_node, make_pod, req_containers, run_score, sidecar

from kschedx.plugins.noderesources.balanced_allocation import (
    NodeResourcesBalancedAllocation,
    balanced_resource_scorer,
)

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


@pytest.mark.parametrize("name, pod, nodes, pods, resources, expected", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("with_prescore", [True, False], ids=["prescore", "no-prescore"])
def test_balanced_allocation(name, pod, nodes, pods, resources, expected, with_prescore):
    fw = framework_for(nodes, pods)
    infos = [fw.snapshot.get(n["metadata"]["name"]) for n in nodes]
    pl = NodeResourcesBalancedAllocation(fw, {"resources": resources})
    assert run_score(pl, pod, infos, pre_score=with_prescore) == expected


def test_best_effort_pod_skips_at_prescore():
    fw = framework_for([node("node1", 4000, 10000), node("node2", 4000, 10000)])
    infos = list(fw.snapshot.node_infos)
    pl = NodeResourcesBalancedAllocation(fw)
    assert run_score(pl, make_pod(containers=[container()]), infos) == "Skip"
    # Without PreScore, Score answers 0 for such a pod.
    assert run_score(pl, make_pod(containers=[container()]), infos, pre_score=False) == [("node1", 0), ("node2", 0)]


def test_balanced_uses_requested_not_defaults_and_counts_sidecars():
    # A sidecar's request adds to the steady state (requested, not non-zero defaults).
    pod = make_pod(containers=[container(requests={"cpu": "1"})], init_containers=[sidecar(requests={"memory": "1Gi"})])
    fw = framework_for([make_node("node1", cpu=2, memory="2Gi")])
    # cpu 1/2 = 0.5, memory 1Gi/2Gi = 0.5 -> std 0 -> 100
    assert run_score(NodeResourcesBalancedAllocation(fw), pod, fw.snapshot.node_infos) == [("node1", 100)]


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
