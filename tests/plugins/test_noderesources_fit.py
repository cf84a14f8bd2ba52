"""NodeResourcesFit Filter and LeastAllocated Score (upstream fit_test.go
TestEnoughRequests / TestNotEnoughRequests / TestStorageRequests /
TestRestartableInitContainers / TestFitScore, least_allocated_test.go).

Rows are ported for v1.35 default gates: PodLevelResources (beta, on) rows as
written; DRAExtendedResource (alpha, off) only its "not enabled" row. The
scoring-strategy variants other than LeastAllocated (the default profile's)
and the args-validation rows are not ported.
"""

import pytest
from builders import (handle_at, 
    container, framework_for, make_node, make_pod, node_info, req_containers, run_filter, run_score, sidecar, verdict,
)

from kschedx.plugins.noderesources.fit import NodeResourcesFit

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
EXT_DRA = "extended.resource.dra.io/something"


def res(cpu=0, mem=0, eph=0, **scalar):
    """newResourcePod's request list: milli-cpu, memory bytes, pods 0, storage."""
    rl = {"cpu": f"{cpu}m", "memory": str(mem), "pods": "0", "ephemeral-storage": str(eph)}
    for k, v in scalar.items():
        rl[k.replace("__", "/").replace("_", ".")] = str(v)
    return rl


def sc(**kw):
    """Scalar resources by real name: sc(**{EXT_A: 1})."""
    return {k: str(v) for k, v in kw.items()}


def pod_of(*usage, init=None, overhead=None, pod_level=None):
    return make_pod(
        containers=req_containers(*usage),
        init_containers=[container(f"i{i}", requests=u) for i, u in enumerate(init)] if init else None,
        overhead=overhead,
        pod_resources={"requests": pod_level} if pod_level else None,
    )


def with_scalar(base, **scalar):
    out = dict(base)
    out.update({k: str(v) for k, v in scalar.items()})
    return out


def node_10_20(*existing):
    """makeAllocatableResources(10, 20, 32, 5, 20, 5) with `existing` pods on it."""
    node = make_node("n", cpu="10m", memory=20, pods=32, allocatable={EXT_A: 5, "ephemeral-storage": 20, HUGE_A: 5})
    return node_info(node, *existing)


def ins(resource):
    return f"Insufficient {resource}"


U = "Unschedulable"
UU = "UnschedulableAndUnresolvable"
OK = ("Success", [])

# name, pod, existing pod's request list, plugin args, expected verdict, expected insufficient (resource, req, used, cap)
ENOUGH = [
    ("no resources requested always fits", make_pod(containers=[container()]), res(10, 20), None, OK, []),
    ("too many resources fails", pod_of(res(1, 1)), res(10, 20), None, (U, [ins("cpu"), ins("memory")]),
     [("cpu", 1, 10, 10), ("memory", 1, 20, 20)]),
    ("fails due to init container cpu", pod_of(res(1, 1), init=[res(3, 1)]), res(8, 19), None, (U, [ins("cpu")]),
     [("cpu", 3, 8, 10)]),
    ("fails due to highest init container cpu", pod_of(res(1, 1), init=[res(3, 1), res(2, 1)]), res(8, 19), None,
     (U, [ins("cpu")]), [("cpu", 3, 8, 10)]),
    ("fails due to init container memory", pod_of(res(1, 1), init=[res(1, 3)]), res(9, 19), None, (U, [ins("memory")]),
     [("memory", 3, 19, 20)]),
    ("fails due to highest init container memory", pod_of(res(1, 1), init=[res(1, 3), res(1, 2)]), res(9, 19), None,
     (U, [ins("memory")]), [("memory", 3, 19, 20)]),
    ("init container fits: max, not sum", pod_of(res(1, 1), init=[res(1, 1)]), res(9, 19), None, OK, []),
    ("multiple init containers fit: max, not sum", pod_of(res(1, 1), init=[res(1, 1), res(1, 1)]), res(9, 19), None,
     OK, []),
    ("both resources fit", pod_of(res(1, 1)), res(5, 5), None, OK, []),
    ("one resource memory fits", pod_of(res(2, 1)), res(9, 5), None, (U, [ins("cpu")]), [("cpu", 2, 9, 10)]),
    ("one resource cpu fits", pod_of(res(1, 2)), res(5, 19), None, (U, [ins("memory")]), [("memory", 2, 19, 20)]),
    ("equal edge case", pod_of(res(5, 1)), res(5, 19), None, OK, []),
    ("equal edge case for init container", pod_of(res(4, 1), init=[res(5, 1)]), res(5, 19), None, OK, []),
    ("extended resource fits", pod_of(sc(**{EXT_A: 1})), res(), None, OK, []),
    ("extended resource fits for init container", pod_of(res(), init=[sc(**{EXT_A: 1})]), res(), None, OK, []),
    ("extended resource capacity enforced", pod_of(with_scalar(res(1, 1), **{EXT_A: 10})), with_scalar(res(), **{EXT_A: 0}),
     None, (UU, [ins(EXT_A)]), [(EXT_A, 10, 0, 5)]),
    ("extended resource capacity enforced for init container", pod_of(res(), init=[with_scalar(res(1, 1), **{EXT_A: 10})]),
     with_scalar(res(), **{EXT_A: 0}), None, (UU, [ins(EXT_A)]), [(EXT_A, 10, 0, 5)]),
    ("extended resource allocatable enforced", pod_of(with_scalar(res(1, 1), **{EXT_A: 1})),
     with_scalar(res(), **{EXT_A: 5}), None, (U, [ins(EXT_A)]), [(EXT_A, 1, 5, 5)]),
    ("extended resource allocatable enforced for init container", pod_of(res(), init=[with_scalar(res(1, 1), **{EXT_A: 1})]),
     with_scalar(res(), **{EXT_A: 5}), None, (U, [ins(EXT_A)]), [(EXT_A, 1, 5, 5)]),
    ("extended resource allocatable enforced for multiple containers",
     pod_of(with_scalar(res(1, 1), **{EXT_A: 3}), with_scalar(res(1, 1), **{EXT_A: 3})), with_scalar(res(), **{EXT_A: 2}),
     None, (UU, [ins(EXT_A)]), [(EXT_A, 6, 2, 5)]),
    ("extended resource allocatable admits multiple init containers",
     pod_of(res(), init=[with_scalar(res(1, 1), **{EXT_A: 3}), with_scalar(res(1, 1), **{EXT_A: 3})]),
     with_scalar(res(), **{EXT_A: 2}), None, OK, []),
    ("extended resource allocatable enforced for multiple init containers",
     pod_of(res(), init=[with_scalar(res(1, 1), **{EXT_A: 6}), with_scalar(res(1, 1), **{EXT_A: 3})]),
     with_scalar(res(), **{EXT_A: 2}), None, (UU, [ins(EXT_A)]), [(EXT_A, 6, 2, 5)]),
    ("extended resource enforced for unknown resource", pod_of(with_scalar(res(1, 1), **{EXT_B: 1})), res(), None,
     (UU, [ins(EXT_B)]), [(EXT_B, 1, 0, 0)]),
    ("extended resource enforced for unknown resource, init container",
     pod_of(res(), init=[with_scalar(res(1, 1), **{EXT_B: 1})]), res(), None, (UU, [ins(EXT_B)]), [(EXT_B, 1, 0, 0)]),
    ("kubernetes.io resource capacity enforced", pod_of(with_scalar(res(1, 1), **{K8S_IO_A: 10})), res(), None,
     (UU, [ins(K8S_IO_A)]), [(K8S_IO_A, 10, 0, 0)]),
    ("kubernetes.io resource capacity enforced for init container",
     pod_of(res(), init=[with_scalar(res(1, 1), **{K8S_IO_B: 10})]), res(), None, (UU, [ins(K8S_IO_B)]),
     [(K8S_IO_B, 10, 0, 0)]),
    ("hugepages resource capacity enforced", pod_of(with_scalar(res(1, 1), **{HUGE_A: 10})),
     with_scalar(res(), **{HUGE_A: 0}), None, (UU, [ins(HUGE_A)]), [(HUGE_A, 10, 0, 5)]),
    ("hugepages resource capacity enforced for init container", pod_of(res(), init=[with_scalar(res(1, 1), **{HUGE_A: 10})]),
     with_scalar(res(), **{HUGE_A: 0}), None, (UU, [ins(HUGE_A)]), [(HUGE_A, 10, 0, 5)]),
    ("hugepages resource allocatable enforced for multiple containers",
     pod_of(with_scalar(res(1, 1), **{HUGE_A: 3}), with_scalar(res(1, 1), **{HUGE_A: 3})),
     with_scalar(res(), **{HUGE_A: 2}), None, (UU, [ins(HUGE_A)]), [(HUGE_A, 6, 2, 5)]),
    ("skip checking ignored extended resource", pod_of(with_scalar(res(1, 1), **{EXT_B: 1})), res(),
     {"ignoredResources": [EXT_B]}, OK, []),
    ("resources + pod overhead fits", pod_of(res(1, 1), overhead={"cpu": "3m", "memory": "13"}), res(5, 5), None, OK, []),
    ("requests + overhead does not fit for memory", pod_of(res(1, 1), overhead={"cpu": "1m", "memory": "15"}), res(5, 5),
     None, (U, [ins("memory")]), [("memory", 16, 5, 20)]),
    ("skip ignored extended resource via resource groups", pod_of(with_scalar(res(1, 1), **{EXT_B: 1, K8S_IO_A: 1})),
     res(), {"ignoredResourceGroups": ["example.com"]}, (UU, [ins(K8S_IO_A)]), [(K8S_IO_A, 1, 0, 0)]),
    ("skip extended resource request with quantity zero", pod_of(with_scalar(res(1, 1), **{EXT_A: 0})),
     with_scalar(res(), **{EXT_A: 6}), None, OK, []),
    ("skip resource request with quantity zero (pod-level on)", pod_of(sc(**{EXT_A: 1})),
     with_scalar(res(20, 30), **{EXT_A: 1}), None, OK, []),
    ("both pod-level and container-level resources fit", pod_of(res(1, 1), pod_level={"cpu": "1m", "memory": "2"}),
     res(5, 5), None, OK, []),
    ("pod-level cpu resource not fit", pod_of(res(1, 1), pod_level={"cpu": "7m", "memory": "2"}), res(5, 5), None,
     (U, [ins("cpu")]), [("cpu", 7, 5, 10)]),
    ("pod-level memory resource not fit", pod_of(res(1, 1), pod_level={"cpu": "3m", "memory": "2"}), res(5, 19), None,
     (U, [ins("memory")]), [("memory", 2, 19, 20)]),
    ("pod-level cpu fits, all init and non-init containers fit",
     pod_of(res(1, 1), init=[res(1, 1)], pod_level={"cpu": "3m", "memory": "2"}), res(5, 19), None, (U, [ins("memory")]),
     [("memory", 2, 19, 20)]),
    # DRAExtendedResource is off by default in v1.35: the resource is checked like any other.
    ("extended resource backed by DRA, gate off", pod_of(with_scalar(res(1, 1), **{EXT_DRA: 1})), res(), None,
     (UU, [ins(EXT_DRA)]), [(EXT_DRA, 1, 0, 0)]),
]


@pytest.mark.parametrize("name, pod, existing, args, expected, insufficient", ENOUGH, ids=[c[0] for c in ENOUGH])
def test_enough_requests(name, pod, existing, args, expected, insufficient):
    ni = node_10_20(make_pod(containers=[container(requests=existing)]))
    pre, st = run_filter(NodeResourcesFit(handle_at(VERSION), args), pod, ni)
    assert pre is None
    assert verdict(st) == expected
    got = [(i["resource"], i["requested"], i["used"], i["allocatable"]) for i in (st.details["insufficient"] if st else [])]
    assert got == insufficient


def pod_level_node():
    return node_info(make_node("n", cpu="10m", memory=20, pods=32, allocatable={EXT_A: 5, "ephemeral-storage": 20, HUGE_A: 5}))


@pytest.mark.parametrize(
    "name, pod, expected",
    [
        ("pod-level hugepages resource fit", pod_of(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}), OK),
        ("both pod-level and container-level hugepages fit",
         pod_of(with_scalar(res(1, 1), **{HUGE_A: 3}), pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}), OK),
        ("pod-level hugepages resource not fit", pod_of(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "10"}),
         (UU, [ins(HUGE_A)])),
    ],
)
def test_pod_level_hugepages(name, pod, expected):
    if not pod["spec"]["containers"]:
        pod["spec"]["containers"] = [container()]
    _, st = run_filter(NodeResourcesFit(handle_at(VERSION)), pod, pod_level_node())
    assert verdict(st) == expected


def small_node(*existing):
    """makeAllocatableResources(10, 20, 1, 0, 0, 0): room for one pod."""
    return node_info(make_node("n", cpu="10m", memory=20, pods=1, allocatable={EXT_A: 0, "ephemeral-storage": 0, HUGE_A: 0}),
                     *existing)


@pytest.mark.parametrize(
    "name, pod, existing",
    [
        ("no space for additional pod, no requests", make_pod(), res(10, 20)),
        ("no space for additional pod though resources fit", pod_of(res(1, 1)), res(5, 5)),
        ("no space for additional pod, equal edge case", pod_of(res(5, 1)), res(5, 19)),
        ("no space for additional pod, init container", pod_of(res(5, 1), init=[res(5, 1)]), res(5, 19)),
    ],
)
def test_not_enough_pods(name, pod, existing):
    _, st = run_filter(NodeResourcesFit(handle_at(VERSION)), pod, small_node(make_pod(containers=[container(requests=existing)])))
    assert verdict(st) == (U, ["Too many pods"])
    assert st.details["insufficient"] == [{"resource": "pods", "requested": 1, "used": 1, "allocatable": 1}]


@pytest.mark.parametrize(
    "name, pod, existing, expected",
    [
        ("empty storage requested, and pod fits", pod_of(res(1, 1)), res(2, 10), OK),
        ("ephemeral storage request exceeds allocatable", pod_of(res(eph=25)), res(2, 2),
         (UU, [ins("ephemeral-storage")])),
        ("ephemeral local storage is sufficient", pod_of(res(eph=5)), res(2, 2, eph=10), OK),
        ("pod fits", pod_of(res(eph=10)), res(2, 2), OK),
        ("ephemeral storage short only because of usage", pod_of(res(eph=15)), res(2, 2, eph=10),
         (U, [ins("ephemeral-storage")])),
    ],
)
def test_storage_requests(name, pod, existing, expected):
    _, st = run_filter(NodeResourcesFit(handle_at(VERSION)), pod, node_10_20(make_pod(containers=[container(requests=existing)])))
    assert verdict(st) == expected


@pytest.mark.parametrize(
    "name, regular, sidecar_req, expected",
    [
        ("restartable init container without requests", None, None, OK),
        ("total requests within allocatable", {"cpu": "1m"}, {"cpu": "1m"}, OK),
        ("total requests exceed allocatable", {"cpu": "1m"}, {"cpu": "2m"}, (UU, [ins("cpu")])),
    ],
)
def test_restartable_init_containers(name, regular, sidecar_req, expected):
    # SidecarContainers is GA: a restartable init container is accepted and
    # its requests add to the regular containers'.
    pod = make_pod(containers=[container("regular", requests=regular)],
                   init_containers=[sidecar("restartable-init", requests=sidecar_req)])
    ni = node_info(make_node("n", cpu="2m", memory=0, pods=1))
    pre, st = run_filter(NodeResourcesFit(handle_at(VERSION)), pod, ni)
    assert pre is None
    assert verdict(st) == expected


def test_unresolvable_only_when_request_exceeds_allocatable_outright():
    ni = node_info(make_node("n", cpu=2, memory="4Gi", pods=10),
                   make_pod(containers=[container(requests={"cpu": "1500m", "memory": "3Gi"})]))
    _, st = run_filter(NodeResourcesFit(handle_at(VERSION)), pod_of({"cpu": "1", "memory": "5Gi"}), ni)
    assert verdict(st) == (UU, [ins("cpu"), ins("memory")])
    assert [i["resource"] for i in st.details["insufficient"]] == ["cpu", "memory"]
    _, st = run_filter(NodeResourcesFit(handle_at(VERSION)), pod_of({"cpu": "1", "memory": "1Gi"}), ni)
    assert verdict(st) == (U, [ins("cpu")])


def test_memory_counts_whole_bytes_rounded_up():
    # 1500m bytes is Value() 2: the pod asks 2 bytes, the node has 1 free.
    ni = node_info(make_node("n", cpu=1, memory=3, pods=10), make_pod(containers=[container(requests={"memory": "2"})]))
    _, st = run_filter(NodeResourcesFit(handle_at(VERSION)), pod_of({"memory": "1500m"}), ni)
    assert verdict(st) == (U, [ins("memory")])
    assert st.details["insufficient"][0]["requested"] == 2


# --- LeastAllocated score -------------------------------------------------------------

DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXT_RES = "abc.com/xyz"
EXT_SET = DEFAULT + [{"name": EXT_RES, "weight": 1}]


def cap_node(name, cpu=None, memory=None, **scalar):
    alloc = {k: str(v) for k, v in scalar.items()}
    return make_node(name, cpu=cpu, memory=memory, allocatable=alloc)


def reqs(*lists, node=None, sidecars=()):
    """st.MakePod().Req(...): one container per Req call, none without."""
    return make_pod(containers=req_containers(*lists),
                    init_containers=[sidecar(f"s{i}", requests=r) for i, r in enumerate(sidecars)] or None, node=node)


C1_2 = {"cpu": "1000", "memory": "2000"}
C2_3 = {"cpu": "2000", "memory": "3000"}

LEAST = [
    ("nothing scheduled, nothing requested", reqs(), [cap_node("node1", 4000, 10000), cap_node("node2", 4000, 10000)], [],
     DEFAULT, [("node1", 100), ("node2", 100)]),
    ("nothing scheduled, resources requested, differently sized nodes", reqs(C1_2, C2_3),
     [cap_node("node1", 4000, 10000), cap_node("node2", 6000, 10000)], [], DEFAULT, [("node1", 37), ("node2", 50)]),
    ("no resources requested, pods scheduled", reqs(), [cap_node("node1", 4000, 10000), cap_node("node2", 4000, 10000)],
     [reqs(node="node1"), reqs(node="node1"), reqs(node="node2"), reqs(node="node2")], DEFAULT,
     [("node1", 100), ("node2", 100)]),
    ("no resources requested, pods scheduled with resources", reqs(),
     [cap_node("node1", 10000, 20000), cap_node("node2", 10000, 20000)],
     [reqs({"cpu": "3000", "memory": "0"}, node="node1"), reqs({"cpu": "3000", "memory": "0"}, node="node1"),
      reqs({"cpu": "3000", "memory": "0"}, node="node2"), reqs({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT, [("node1", 70), ("node2", 57)]),
    ("resources requested, pods scheduled with resources", reqs(C1_2, C2_3),
     [cap_node("node1", 10000, 20000), cap_node("node2", 10000, 20000)],
     [reqs({"cpu": "3000", "memory": "0"}, node="node1"), reqs({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT, [("node1", 57), ("node2", 45)]),
    ("resources requested, pods scheduled with resources, differently sized nodes", reqs(C1_2, C2_3),
     [cap_node("node1", 10000, 20000), cap_node("node2", 10000, 50000)],
     [reqs({"cpu": "3000", "memory": "0"}, node="node1"), reqs({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT, [("node1", 57), ("node2", 60)]),
    ("requested resources exceed node capacity", reqs({"cpu": "3000", "memory": "0"}),
     [cap_node("node1", 4000, 10000), cap_node("node2", 4000, 10000)],
     [reqs({"cpu": "3000", "memory": "0"}, node="node1"), reqs({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT, [("node1", 50), ("node2", 25)]),
    ("zero node resources, pods scheduled with resources", reqs(), [cap_node("node1"), cap_node("node2")],
     [reqs({"cpu": "3000", "memory": "0"}, node="node1"), reqs({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT, [("node1", 0), ("node2", 0)]),
    ("different weight on cpu and memory", reqs(C1_2, C2_3),
     [cap_node("node1", 4000, 10000), cap_node("node2", 6000, 10000)], [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [("node1", 41), ("node2", 50)]),
    ("bypass extended resource if the pod does not request", reqs(C1_2, C2_3),
     [cap_node("node1", 6000, 10000), cap_node("node2", 6000, 10000, **{EXT_RES: 4})], [], EXT_SET,
     [("node1", 50), ("node2", 50)]),
    ("honor extended resource if the pod requests", reqs({"cpu": "3000", "memory": "5000", EXT_RES: "2"}),
     [cap_node("node1", 6000, 10000, **{EXT_RES: 4}), cap_node("node2", 6000, 10000, **{EXT_RES: 10})], [], EXT_SET,
     [("node1", 50), ("node2", 60)]),
    ("the node doesn't have the resource", reqs({"cpu": "3000", "memory": "4000"}),
     [cap_node("node1", 6000, 10000), cap_node("node2", 6000, 10000, **{EXT_RES: 4})], [],
     [{"name": EXT_RES, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
     [("node1", 55), ("node2", 55)]),
    # TestFitScore
    ("fit score LeastAllocated", reqs(C1_2), [cap_node("node1", 4000, 10000), cap_node("node2", 6000, 10000)],
     [reqs({"cpu": "2000", "memory": "4000"}, node="node1"), reqs(C1_2, node="node2")], DEFAULT,
     [("node1", 32), ("node2", 63)]),
    ("fit score LeastAllocated with sidecar container", reqs(C1_2),
     [cap_node("node1", 4000, 10000), cap_node("node2", 4000, 10000)],
     [reqs(C1_2, node="node1", sidecars=[C1_2]), reqs(C1_2, node="node2")], DEFAULT, [("node1", 32), ("node2", 55)]),
]


@pytest.mark.parametrize("name, pod, nodes, pods, resources, expected", LEAST, ids=[c[0] for c in LEAST])
@pytest.mark.parametrize("with_prescore", [True, False], ids=["prescore", "no-prescore"])
def test_least_allocated(name, pod, nodes, pods, resources, expected, with_prescore):
    fw = framework_for(nodes, pods, version=VERSION)
    infos = [fw.snapshot.get(n["metadata"]["name"]) for n in nodes]
    pl = NodeResourcesFit(fw, {"scoringStrategy": {"type": "LeastAllocated", "resources": resources}})
    assert run_score(pl, pod, infos, pre_score=with_prescore) == expected


def test_least_allocated_uses_defaults_for_missing_requests():
    # 100m / 200Mi for a container without requests: node1 has one such pod.
    nodes = [cap_node("node1", "1", "1000Mi"), cap_node("node2", "1", "1000Mi")]
    fw = framework_for(nodes, [reqs({}, node="node1")], version=VERSION)
    infos = [fw.snapshot.get("node1"), fw.snapshot.get("node2")]
    # node1: cpu (1000-200)*100/1000 = 80, memory (1000-400)*100/1000 = 60 -> 70
    # node2: cpu 90, memory 80 -> 85
    assert run_score(NodeResourcesFit(fw), reqs({}), infos) == [("node1", 70), ("node2", 85)]


def test_least_allocated_ignores_pod_level_requests():
    # Upstream builds the LeastAllocated scorer without the feature flags, so
    # pod-level requests are skipped (the containers' defaults apply).
    pod = make_pod(containers=[container()], pod_resources={"requests": {"cpu": "500m", "memory": "500Mi"}})
    fw = framework_for([cap_node("node1", "1", "1000Mi")], version=VERSION)
    assert run_score(NodeResourcesFit(fw), pod, [fw.snapshot.get("node1")]) == [("node1", 85)]
