"""Pod resource arithmetic: component-helpers resource.PodRequests (upstream
helpers_test.go: TestPodRequestsAndLimits, TestPodResourceRequests,
TestPodLevelResourceRequests, ...) with kube-scheduler v1.35's options, and
the scheduler's non-zero defaults (framework types.go CalculateResource).

Options not used by the scheduler (ExcludeOverhead, Reuse, the alpha
InPlacePodLevelResourcesVerticalScaling and DRA node-allocatable claims) are
not ported; rows whose only difference is ExcludeOverhead are ported without
the overhead.
"""

import pytest
from builders import container, make_pod, put, req_containers, sidecar
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedx.api.resources import (
    DEFAULT_MEMORY_REQUEST,
    RequestOptions,
    defaults_apply,
    non_missing_container_requests,
    pod_level_requests_set,
    pod_requests,
    to_milli_list,
)
from kschedx.state.types import PodInfo

INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def m(rl):
    """Expected requests as milli-units."""
    return to_milli_list(rl)


def pod(containers=(), init=(), overhead=None, pod_level=None, statuses=None, init_statuses=None, conditions=None):
    status = put({}, containerStatuses=statuses or None, initContainerStatuses=init_statuses or None,
                 conditions=conditions or None)
    return make_pod(containers=list(containers), init_containers=list(init) or None, overhead=overhead,
                    pod_resources=pod_level, status=status or None)


def cs(name, requests=None, allocated=None, has_resources=True):
    return put({"name": name}, allocatedResources=allocated,
               resources={"requests": requests or {}} if has_resources else None)


def c(name="c", **requests):
    return container(name, requests=requests or None)


def sc(name="s", **requests):
    return sidecar(name, requests=requests or None)


# TestPodRequestsAndLimits (requests half)
@pytest.mark.parametrize(
    "name, the_pod, expected",
    [
        ("just-limit-no-overhead", pod([container("foo", limits={"cpu": "9"})]), {}),
        ("just-overhead", pod([container("foo")], overhead={"cpu": "5", "memory": "5"}), {"cpu": "5", "memory": "5"}),
        ("req-and-overhead", pod([c("foo", cpu="1", memory="10")], overhead={"cpu": "5", "memory": "5"}),
         {"cpu": "6", "memory": "15"}),
        ("two containers sum", pod([c("foobar", cpu="1", memory="5"), c("foobar2", cpu="4", memory="12")]),
         {"cpu": "5", "memory": "17"}),
        ("massive init container is the largest",
         pod([c("foobar", cpu="1", memory="5"), c("foobar2", cpu="4", memory="12")],
             init=[c("small-init", cpu="1", memory="5"), c("big-init", cpu="40", memory="120")]),
         {"cpu": "40", "memory": "120"}),
    ],
)
def test_pod_requests_and_overhead(name, the_pod, expected):
    assert pod_requests(the_pod, use_status=False) == m(expected)


# TestPodResourceRequests
RESOURCE_REQUESTS = [
    ("larger init container", pod([c(cpu="1")], init=[c("i", cpu="4")]), False, {"cpu": "4"}),
    ("larger containers", pod([c("a", cpu="2"), c("b", cpu="3")], init=[c("i", cpu="2")]), False, {"cpu": "5"}),
    ("pod overhead included", pod([c("a", cpu="2"), c("b", cpu="3")], init=[c("i", cpu="2")],
                                  overhead={"cpu": "1", "memory": "1Gi"}), False, {"cpu": "6", "memory": "1Gi"}),
    ("resized, infeasible", pod([c("container-1", cpu="4")], statuses=[cs("container-1", {"cpu": "2"})],
                                conditions=INFEASIBLE), True, {"cpu": "2"}),
    ("resized, infeasible & in-progress",
     pod([c("container-1", cpu="6")], statuses=[cs("container-1", {"cpu": "2"}, allocated={"cpu": "4"})],
         conditions=INFEASIBLE), True, {"cpu": "4"}),
    ("resized, no resize status", pod([c("container-1", cpu="4")], statuses=[cs("container-1", {"cpu": "2"})]), True,
     {"cpu": "4"}),
    ("resized: per-resource 3-way maximum",
     pod([c("container-1", cpu="30m", memory="20M", **{"ephemeral-storage": "10G"})],
         statuses=[cs("container-1", {"cpu": "10m", "memory": "30M", "ephemeral-storage": "20G"},
                      allocated={"cpu": "20m", "memory": "10M", "ephemeral-storage": "30G"})]),
     True, {"cpu": "30m", "memory": "30M", "ephemeral-storage": "30G"}),
    ("resized, infeasible, but don't use status",
     pod([c("container-1", cpu="4")], statuses=[cs("container-1", {"cpu": "2"})], conditions=INFEASIBLE), False,
     {"cpu": "4"}),
    ("resized, restartable init container, infeasible",
     pod([], init=[sc("restartable-init-1", cpu="4")], init_statuses=[cs("restartable-init-1", {"cpu": "2"})],
         conditions=INFEASIBLE), True, {"cpu": "2"}),
    ("resized, restartable init container, no resize status",
     pod([], init=[sc("restartable-init-1", cpu="4")], init_statuses=[cs("restartable-init-1", {"cpu": "2"})]), True,
     {"cpu": "4"}),
    ("resized, restartable init container, infeasible, but don't use status",
     pod([], init=[sc("restartable-init-1", cpu="4")], init_statuses=[cs("restartable-init-1", {"cpu": "2"})],
         conditions=INFEASIBLE), False, {"cpu": "4"}),
    ("regular init container status is never used",
     pod([c("c1", cpu="1")], init=[c("init-1", cpu="4")], init_statuses=[cs("init-1", {"cpu": "8"})]), True,
     {"cpu": "4"}),
    ("restartable init container", pod([c("container-1", cpu="1")], init=[sc("restartable-init-1", cpu="1")]), False,
     {"cpu": "2"}),
    ("multiple restartable init containers",
     pod([c("container-1", cpu="1")], init=[c("init-1", cpu="5"), sc("restartable-init-1", cpu="1"),
                                            sc("restartable-init-2", cpu="2"), sc("restartable-init-3", cpu="3")]),
     False, {"cpu": "7"}),
    ("multiple restartable and regular init containers",
     pod([c("container-1", cpu="1")], init=[c("init-1", cpu="5"), sc("restartable-init-1", cpu="1"),
                                            sc("restartable-init-2", cpu="2"), c("init-2", cpu="5"),
                                            sc("restartable-init-3", cpu="3")]),
     False, {"cpu": "8"}),
    ("restartable-init, init and regular",
     pod([c("container-1", cpu="100")], init=[sc("restartable-init-1", cpu="10"), c("init-1", cpu="200")]), False,
     {"cpu": "210"}),
    ("aggregate request resolves max of sums, not sum of maxes",
     pod([c("c1", cpu="1"), c("c2", cpu="2")], statuses=[cs("c1", allocated={"cpu": "2"}, has_resources=False),
                                                          cs("c2", allocated={"cpu": "1"}, has_resources=False)]),
     True, {"cpu": "3"}),
    ("a status with resources counts at its maximum per container",
     pod([c("c1", cpu="1"), c("c2", cpu="2")], statuses=[cs("c1", {"cpu": "1"}, allocated={"cpu": "2"}),
                                                          cs("c2", {"cpu": "2"}, allocated={"cpu": "1"})]),
     True, {"cpu": "4"}),
]


@pytest.mark.parametrize("name, the_pod, use_status, expected", RESOURCE_REQUESTS, ids=[r[0] for r in RESOURCE_REQUESTS])
def test_pod_resource_requests(name, the_pod, use_status, expected):
    assert pod_requests(the_pod, use_status=use_status) == m(expected)


# TestPodLevelResourceRequests (SkipPodLevelResources as given; PodLevelResources is on in v1.35)
POD_LEVEL = [
    ("nil", pod([]), False, {}),
    ("pod-level memory, SkipPodLevelResources", pod([], pod_level={"requests": {"memory": "2Mi"}}), True, {}),
    ("pod-level memory", pod([], pod_level={"requests": {"memory": "2Mi"}}), False, {"memory": "2Mi"}),
    ("pod-level memory and container-level cpu", pod([c(cpu="2m")], pod_level={"requests": {"memory": "2Mi"}}), False,
     {"memory": "2Mi", "cpu": "2m"}),
    ("unsupported resource at both levels", pod([c(storage="3Mi")], pod_level={"requests": {"storage": "2Mi"}}), False,
     {"storage": "3Mi"}),
    ("unsupported resource at pod level only", pod([c(memory="3Mi")], pod_level={"requests": {"storage": "2Mi"}}),
     False, {"memory": "3Mi"}),
    ("only container-level", pod([c(memory="3Mi", cpu="2m")]), False, {"memory": "3Mi", "cpu": "2m"}),
    ("both levels: pod level wins", pod([c(memory="3Mi", cpu="2m")], pod_level={"requests": {"memory": "6Mi", "cpu": "8m"}}),
     False, {"memory": "6Mi", "cpu": "8m"}),
    ("container-level and init container", pod([c(memory="3Mi", cpu="2m")], init=[c("i", memory="5Mi", cpu="4m")]), False,
     {"memory": "5Mi", "cpu": "4m"}),
    ("container-level and init container, skip pod level", pod([c(memory="3Mi", cpu="2m")],
                                                              init=[c("i", memory="5Mi", cpu="4m")]), True,
     {"memory": "5Mi", "cpu": "4m"}),
    ("container-level and sidecar", pod([c(memory="3Mi", cpu="2m")], init=[sc("s", memory="5Mi", cpu="4m")]), False,
     {"memory": "8Mi", "cpu": "6m"}),
    ("container-level, init and sidecar",
     pod([c(memory="3Mi", cpu="2m")], init=[sc("s", memory="5Mi", cpu="4m"), c("i", memory="6Mi", cpu="8m")]), False,
     {"memory": "11Mi", "cpu": "12m"}),
    ("pod-level, container-level, init and sidecar",
     pod([c(memory="3Mi", cpu="2m")], init=[sc("s", memory="5Mi", cpu="4m"), c("i", memory="6Mi", cpu="8m")],
         pod_level={"requests": {"memory": "15Mi", "cpu": "18m"}}), False, {"memory": "15Mi", "cpu": "18m"}),
    ("pod-level hugepages single page size",
     pod([], pod_level={"limits": {"hugepages-2Mi": "2Mi"}, "requests": {"memory": "10Mi", "hugepages-2Mi": "2Mi"}}), False,
     {"memory": "10Mi", "hugepages-2Mi": "2Mi"}),
    ("pod-level hugepages multiple page sizes",
     pod([], pod_level={"requests": {"cpu": "1", "hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"}}), False,
     {"cpu": "1", "hugepages-2Mi": "2Mi", "hugepages-1Gi": "1Gi"}),
    ("pod-level and container-level hugepages, single size",
     pod([c(**{"hugepages-2Mi": "6Mi"})], pod_level={"requests": {"cpu": "1", "hugepages-2Mi": "10Mi"}}), False,
     {"cpu": "1", "hugepages-2Mi": "10Mi"}),
    ("pod-level and container-level hugepages, multiple sizes",
     pod([c(cpu="1", **{"hugepages-1Gi": "2Gi"})],
         pod_level={"requests": {"cpu": "1", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"}}), False,
     {"cpu": "1", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "2Gi"}),
    ("hugepage sizes split between levels",
     pod([c(memory="4Mi", **{"hugepages-1Gi": "1Gi"})], pod_level={"requests": {"cpu": "1", "hugepages-2Mi": "10Mi"}}),
     False, {"cpu": "1", "memory": "4Mi", "hugepages-2Mi": "10Mi", "hugepages-1Gi": "1Gi"}),
    ("pod-level requests plus overhead", pod([], pod_level={"requests": {"cpu": "1", "memory": "100Mi"}},
                                             overhead={"cpu": "100m", "memory": "10Mi"}), False,
     {"cpu": "1100m", "memory": "110Mi"}),
]


@pytest.mark.parametrize("name, the_pod, skip, expected", POD_LEVEL, ids=[r[0] for r in POD_LEVEL])
def test_pod_level_resource_requests(name, the_pod, skip, expected):
    assert pod_requests(the_pod, skip_pod_level=skip) == m(expected)


def test_pod_level_status_is_ignored_by_default():
    # InPlacePodLevelResourcesVerticalScaling is alpha (off) in v1.35.
    p = pod([c(cpu="1")], pod_level={"requests": {"cpu": "2"}})
    p["status"] = {"allocatedResources": {"cpu": "3"}, "resources": {"requests": {"cpu": "3500m"}}}
    assert pod_requests(p) == m({"cpu": "2"})


def _resized(status, conditions=None):
    p = pod([c(cpu="1")], pod_level={"requests": {"cpu": "2", "memory": "1Gi"}})
    p["status"] = dict(status, **({"conditions": conditions} if conditions else {}))
    return p


# PodRequests with InPlacePodLevelResourcesVerticalScaling (on from 1.36): the
# largest of spec, actuated (status.resources) and allocated; a resize found
# infeasible leaves the spec out (determineEffectiveRequests, component-helpers).
INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
POD_LEVEL_STATUS = [
    ("actuated above the spec", _resized({"resources": {"requests": {"cpu": "3500m"}}}),
     {"cpu": "3500m", "memory": "1Gi"}),
    ("allocated above both", _resized({"resources": {"requests": {"cpu": "3"}}, "allocatedResources": {"cpu": "4"}}),
     {"cpu": "4", "memory": "1Gi"}),
    ("spec above both", _resized({"resources": {"requests": {"cpu": "1"}}, "allocatedResources": {"cpu": "1"}}),
     {"cpu": "2", "memory": "1Gi"}),
    # Infeasible: max(actuated, allocated) only; memory in neither reads 0.
    ("infeasible resize", _resized({"resources": {"requests": {"cpu": "1"}}, "allocatedResources": {"cpu": "1500m"}},
                                   INFEASIBLE), {"cpu": "1500m", "memory": "0"}),
    ("no status resources: the spec", _resized({"allocatedResources": {"cpu": "4"}}), {"cpu": "2", "memory": "1Gi"}),
]


@pytest.mark.parametrize("name, the_pod, expected", POD_LEVEL_STATUS, ids=[r[0] for r in POD_LEVEL_STATUS])
def test_pod_level_status_with_in_place_pod_level_scaling(name, the_pod, expected):
    assert pod_requests(the_pod, pod_level_status=True) == m(expected)
    # Without status (Fit's own pod request) or with the gate off: the spec.
    assert pod_requests(the_pod, pod_level_status=True, use_status=False) == m({"cpu": "2", "memory": "1Gi"})
    assert pod_requests(the_pod) == m({"cpu": "2", "memory": "1Gi"})


def test_snapshot_counts_a_resized_pods_pod_level_status_from_1_36():
    from builders import make_node
    from kschedx.features import default_features
    from kschedx.state.cluster import ClusterState
    from kschedx.state.snapshot import build_snapshot

    running = _resized({"resources": {"requests": {"cpu": "3"}}})
    running["spec"]["nodeName"] = "n1"
    for version, cpu in (("1.35", 2000), ("1.36", 3000)):
        snap = build_snapshot(ClusterState(nodes=[make_node("n1", cpu="8", memory="8Gi")], pods=[running]),
                              default_features(version))
        assert snap.get("n1").requested.milli_cpu == cpu, version


@pytest.mark.parametrize(
    "resources, expected",
    [
        (None, False),
        ({}, False),
        ({"requests": {"ephemeral-storage": "1Mi"}}, False),
        ({"limits": {"cpu": "1m"}}, False),  # only requests count for PodRequests
        ({"requests": {"ephemeral-storage": "1Mi", "cpu": "1m"}}, True),
        ({"requests": {"hugepages-1Gi": "1Gi"}}, True),
    ],
)
def test_is_pod_level_requests_set(resources, expected):
    spec = {"containers": []}
    if resources is not None:
        spec["resources"] = resources
    assert pod_level_requests_set(spec) is expected


@pytest.mark.parametrize(
    "the_pod, expected",
    [
        ("init", {"cpu": "1", "memory": "100Mi"}),
        ("regular", {"cpu": "1", "memory": "100Mi"}),
    ],
)
def test_non_missing_container_requests_apply_to_every_container(the_pod, expected):
    p = pod([], init=[c("i1", cpu="1")]) if the_pod == "init" else pod([c("c1", cpu="1")])
    assert pod_requests(p, non_missing=m({"memory": "100Mi"})) == m(expected)


def test_non_missing_requests_without_pod_level_resources():
    got = non_missing_container_requests(pod([c()]), {})
    assert got == {"cpu": 100, "memory": DEFAULT_MEMORY_REQUEST * 1000}


def test_non_missing_requests_with_pod_level_resources_fill_only_absent_ones():
    p = pod([c()], pod_level={"requests": {"cpu": "500m"}})
    assert non_missing_container_requests(p, pod_requests(p)) == {"memory": DEFAULT_MEMORY_REQUEST * 1000}
    p = pod([c()], pod_level={"requests": {"cpu": "500m", "memory": "1Gi"}})
    assert non_missing_container_requests(p, pod_requests(p)) == {}


@pytest.mark.parametrize(
    "the_pod, cpu, mem, non0_cpu, non0_mem",
    [
        (pod([c()]), 0, 0, 100, 200 * 1024 * 1024),
        (pod([c(cpu="250m")]), 250, 0, 250, 200 * 1024 * 1024),
        (pod([c(cpu="250m"), c("d")]), 250, 0, 350, 400 * 1024 * 1024),
        (pod([c(cpu="0", memory="0")]), 0, 0, 0, 0),  # explicit zero is not missing
        (pod([c()], init=[c("i", cpu="2")]), 2000, 0, 2000, 200 * 1024 * 1024),
        (pod([c()], pod_level={"requests": {"cpu": "1"}}), 1000, 0, 1000, 200 * 1024 * 1024),
        (pod([c()], pod_level={"requests": {"cpu": "1", "memory": "1Gi"}}), 1000, 1 << 30, 1000, 1 << 30),
        (pod([], overhead={"cpu": "10m"}), 10, 0, 10, 0),
    ],
)
def test_pod_info_requested_and_non_zero(the_pod, cpu, mem, non0_cpu, non0_mem):
    pi = PodInfo(the_pod)
    assert (pi.resource.milli_cpu, pi.resource.memory) == (cpu, mem)
    assert (pi.non0_cpu, pi.non0_mem) == (non0_cpu, non0_mem)


def test_pod_info_uses_status_resources_of_a_resized_pod():
    p = pod([c("c1", cpu="1")], statuses=[cs("c1", {"cpu": "3"})])
    assert PodInfo(p).resource.milli_cpu == 3000


def test_memory_beyond_int64_milli_is_not_wrapped():
    # 8Ei is stored capped at 2^63-1 bytes; MilliValue() of that wraps in
    # int64, Value() does not, and the scheduler reads memory via Value().
    from kschedx.api.resources import milli, value_of

    assert value_of(milli("8Ei")) == 2**63 - 1
    assert value_of(milli("1Gi")) == 1024**3
    assert milli("100m") == 100


# --- defaults_apply: when the non-zero requests need their own PodRequests ---------------
_RESOURCE_LISTS = st.sampled_from([None, {}, {"cpu": "100m"}, {"memory": "64Mi"}, {"cpu": "1", "memory": "1Gi"},
                                   {"cpu": "0", "memory": "0"}, {"example.com/gpu": "1"}])
_STATUS = st.sampled_from([None, {"name": "c0"}, {"name": "c0", "resources": {"requests": {"cpu": "2"}}},
                           {"name": "c1", "resources": {}}])


@settings(max_examples=200, deadline=None)
@given(st.lists(_RESOURCE_LISTS, min_size=1, max_size=3), st.lists(_RESOURCE_LISTS, max_size=2),
       st.lists(_STATUS, max_size=2), st.booleans(), st.sampled_from([None, {"requests": {"cpu": "1"}}]))
def test_requests_stand_for_non_zero_requests_unless_defaults_apply(requests, init, statuses, sidecars, pod_level):
    containers = req_containers(*requests)
    inits = [(sidecar if sidecars else container)(f"i{i}", requests=r) for i, r in enumerate(init)]
    p = pod(containers, inits, pod_level=pod_level, statuses=[s for s in statuses if s])
    reqs = pod_requests(p)
    non_missing = non_missing_container_requests(p, reqs)
    if not defaults_apply(p, non_missing):
        assert pod_requests(p, non_missing=non_missing) == reqs


# -- v1.37's status resources (component-helpers v0.37.2 resource/helpers.go) ---------------------------
V137 = RequestOptions(aggregated_status=True)
V136 = RequestOptions()


@pytest.mark.parametrize("name, the_pod, v137, v136", [
    # TestPodResourceRequests' new row (v0.37.2): statuses with allocatedResources only.
    ("aggregate request resolves max of sums instead of sum of maxes",
     pod([c("c1", cpu="1"), c("c2", cpu="2")], statuses=[cs("c1", allocated={"cpu": "2"}, has_resources=False),
                                                          cs("c2", allocated={"cpu": "1"}, has_resources=False)]),
     {"cpu": "3"}, {"cpu": "3"}),
    # One container grew, the other shrank: 1.36 sums the larger of each (2 + 2).
    ("a grown and a shrunk container",
     pod([c("c1", cpu="1"), c("c2", cpu="2")], statuses=[cs("c1", {"cpu": "1"}, allocated={"cpu": "2"}),
                                                          cs("c2", {"cpu": "2"}, allocated={"cpu": "1"})]),
     {"cpu": "3"}, {"cpu": "4"}),
    # 1.37 reads a regular init container's status too.
    ("a regular init container's status",
     pod([c("c1", cpu="1")], init=[c("init", cpu="1")], init_statuses=[cs("init", allocated={"cpu": "3"},
                                                                            has_resources=False)]),
     {"cpu": "3"}, {"cpu": "1"}),
    # Infeasible: the spec is dropped, the allocated resources stand.
    ("infeasible resize keeps what is allocated",
     pod([c("c1", cpu="4")], statuses=[cs("c1", {"cpu": "2"}, allocated={"cpu": "2"})], conditions=INFEASIBLE),
     {"cpu": "2"}, {"cpu": "2"}),
])
def test_status_resources_from_1_37(name, the_pod, v137, v136):
    assert pod_requests(the_pod, options=V137) == m(v137)
    assert pod_requests(the_pod, options=V136) == m(v136)


def test_pod_level_status_from_1_37_counts_resources_only_in_status():
    """applyPodLevelResources (v1.37): every supported resource of the largest
    of spec, actuated and allocated, so one only in status counts."""
    the_pod = pod([c("c1", cpu="1")], pod_level={"requests": {"cpu": "2"}})
    the_pod["status"] = {"resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}
    with_status = RequestOptions(pod_level_status=True, aggregated_status=True)
    assert pod_requests(the_pod, options=with_status) == m({"cpu": "2", "memory": "1Gi"})
    assert pod_requests(the_pod, options=RequestOptions(pod_level_status=True)) == m({"cpu": "2"})
