"""NodeResourcesFit scoring strategies other than LeastAllocated: upstream's
most_allocated_test.go (TestMostAllocatedScoringStrategy) and
requested_to_capacity_ratio_test.go (TestRequestedToCapacityRatioScoringStrategy,
TestBrokenLinearFunction, TestResourceBinPackingSingleExtended /
MultipleExtended), the strategy rows of fit_test.go's TestFitScore, plus hand-derived cases for the integer rules (Go's
truncating division on falling segments, math.Round of the weighted mean,
resources scoring 0 left out of the weights).

The "resources not set" rows are not ported: v1 defaulting always fills the
resources, so that state cannot be configured.
"""

import pytest
from builders import framework_for, make_node, make_pod, req_containers, run_score

from kschedx.plugins.noderesources.fit import NodeResourcesFit, broken_linear_function, requested_to_capacity_ratio_scorer

DEFAULT = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXT_RES = "abc.com/xyz"
EXT_SET = DEFAULT + [{"name": EXT_RES, "weight": 1}]


def cap_node(name, cpu=None, memory=None, **scalar):
    return make_node(name, cpu=cpu, memory=memory, allocatable={k: str(v) for k, v in scalar.items()})


def reqs(*lists, node=None):
    """st.MakePod().Req(...): one container per Req call, none without."""
    return make_pod(containers=req_containers(*lists), node=node)


C1_2 = {"cpu": "1000", "memory": "2000"}
C2_3 = {"cpu": "2000", "memory": "3000"}


def scores(nodes, pods, pod, args):
    fw = framework_for(nodes, pods, version=VERSION)
    infos = [fw.snapshot.get(n["metadata"]["name"]) for n in nodes]
    pl = NodeResourcesFit(fw, args)
    per_node = run_score(pl, pod, infos)
    # The batch path the runner uses gives the same scores.
    from kschedx.framework.cycle_state import CycleState
    from kschedx.state.types import PodInfo
    state = CycleState()
    pi = PodInfo(pod)
    pl.pre_score(state, pi, infos)
    assert pl.score_all(state, pi, infos) == [s for _, s in per_node]
    return per_node


MOST = [
    ("nothing scheduled, nothing requested", reqs(), [cap_node("node1", 4000, 10000), cap_node("node2", 4000, 10000)],
     [], DEFAULT, [("node1", 0), ("node2", 0)]),
    ("nothing scheduled, resources requested, differently sized nodes", reqs(C1_2, C2_3),
     [cap_node("node1", 4000, 10000), cap_node("node2", 6000, 10000)], [], DEFAULT, [("node1", 62), ("node2", 50)]),
    ("no resources requested, pods scheduled with resources", reqs(),
     [cap_node("node1", 10000, 20000), cap_node("node2", 10000, 20000)],
     [reqs({"cpu": "3000", "memory": "0"}, node="node1"), reqs({"cpu": "3000", "memory": "0"}, node="node1"),
      reqs({"cpu": "3000", "memory": "0"}, node="node2"), reqs({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT, [("node1", 30), ("node2", 42)]),
    ("resources requested, pods scheduled with resources", reqs(C1_2, C2_3),
     [cap_node("node1", 10000, 20000), cap_node("node2", 10000, 20000)],
     [reqs({"cpu": "3000", "memory": "0"}, node="node1"), reqs({"cpu": "3000", "memory": "5000"}, node="node2")],
     DEFAULT, [("node1", 42), ("node2", 55)]),
    ("resources requested equal node capacity", reqs({"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
     [cap_node("node1", 5000, 10000), cap_node("node2", 10000, 9000)], [], DEFAULT, [("node1", 95), ("node2", 75)]),
    ("different weight on cpu and memory", reqs(C1_2, C2_3),
     [cap_node("node1", 4000, 10000), cap_node("node2", 6000, 10000)], [],
     [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}], [("node1", 58), ("node2", 50)]),
    ("no resources requested, pods scheduled, nonzero request for resource", make_pod(containers=[{"name": "c"}]),
     [cap_node("node1", "250m", "1000Mi"), cap_node("node2", "250m", "1000Mi")],
     [make_pod(containers=[{"name": "c"}], node="node1"), make_pod(containers=[{"name": "c"}], node="node1")],
     DEFAULT, [("node1", 80), ("node2", 30)]),
    ("bypass extended resource if the pod does not request", reqs(C1_2, C2_3),
     [cap_node("node1", 6000, 10000), cap_node("node2", 6000, 10000, **{EXT_RES: 4})], [], EXT_SET,
     [("node1", 50), ("node2", 50)]),
    ("honor extended resource if the pod requests", reqs({"cpu": "3000", "memory": "5000", EXT_RES: "2"}),
     [cap_node("node1", 6000, 10000, **{EXT_RES: 4}), cap_node("node2", 6000, 10000, **{EXT_RES: 10})], [], EXT_SET,
     [("node1", 50), ("node2", 40)]),
    ("if the node doesn't have a resource", reqs({"cpu": "3000", "memory": "4000"}),
     [cap_node("node1", 6000, 10000), cap_node("node2", 6000, 10000, **{EXT_RES: 4})], [],
     [{"name": EXT_RES, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
     [("node1", 45), ("node2", 45)]),
]


@pytest.mark.parametrize("name, pod, nodes, pods, resources, expected", MOST, ids=[c[0] for c in MOST])
def test_most_allocated(name, pod, nodes, pods, resources, expected):
    args = {"scoringStrategy": {"type": "MostAllocated", "resources": resources}}
    assert scores(nodes, pods, pod, args) == expected


@pytest.mark.parametrize("resources, message", [
    ([{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}],
     "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]"),
    ([{"name": "memory", "weight": 101}],
     "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of memory not in valid range (0, 100]"),
])
def test_most_allocated_rejects_weights(resources, message):
    # Weight 0 is defaulted to 1 in v1, so only negative and >100 reach NewFit.
    fw = framework_for([cap_node("node2", 4000, 10000)], version=VERSION)
    with pytest.raises(ValueError) as exc:
        NodeResourcesFit(fw, {"scoringStrategy": {"type": "MostAllocated", "resources": resources}})
    assert str(exc.value) == f'initializing plugin "NodeResourcesFit": {message}'


def test_most_allocated_clamps_overcommitted_nodes():
    # Pods without requests count 100m each: 3 on a 250m node exceed it; the
    # cpu share is clamped to 100 rather than going past it.
    nodes = [cap_node("node1", "250m", "1000Mi")]
    pods = [make_pod(containers=[{"name": "c"}], node="node1") for _ in range(3)]
    args = {"scoringStrategy": {"type": "MostAllocated"}}
    # cpu min(400,250)*100/250 = 100, memory 800Mi*100/1000Mi = 80 -> 90
    assert scores(nodes, pods, make_pod(containers=[{"name": "c"}]), args) == [("node1", 90)]


# --- RequestedToCapacityRatio ------------------------------------------------------------

SPREAD_SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]


def rtcr(resources, shape):
    return {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": resources,
                                "requestedToCapacityRatio": {"shape": shape}}}


RTCR = [
    ("nothing scheduled, nothing requested", reqs(), [cap_node("node1", 4000, 10000), cap_node("node2", 4000, 10000)],
     [reqs(node="node1"), reqs(node="node1")], [("node1", 100), ("node2", 100)]),
    ("nothing scheduled, resources requested, differently sized nodes", reqs(C1_2, C2_3),
     [cap_node("node1", 4000, 10000), cap_node("node2", 6000, 10000)],
     [reqs(node="node1"), reqs(node="node1")], [("node1", 38), ("node2", 50)]),
    ("no resources requested, pods scheduled with resources", reqs(),
     [cap_node("node1", 4000, 10000), cap_node("node2", 6000, 10000)],
     [reqs({"cpu": "3000", "memory": "5000"}, node="node1"), reqs({"cpu": "3000", "memory": "5000"}, node="node2")],
     [("node1", 38), ("node2", 50)]),
]


@pytest.mark.parametrize("name, pod, nodes, pods, expected", RTCR, ids=[c[0] for c in RTCR])
def test_requested_to_capacity_ratio(name, pod, nodes, pods, expected):
    assert scores(nodes, pods, pod, rtcr(DEFAULT, SPREAD_SHAPE)) == expected


@pytest.mark.parametrize("points, assertions", [
    ([(10, 1), (90, 9)], [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9),
                          (100, 9), (110, 9)]),
    ([(0, 2), (40, 10), (100, 0)], [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    ([(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
])
def test_broken_linear_function(points, assertions):
    f = broken_linear_function(points)
    assert [(p, f(p)) for p, _ in assertions] == assertions


def test_broken_linear_function_truncates_toward_zero():
    # Falling segment 100 -> 0 over 0..100 at 33: 100 + (-100*33)/100 = 100 - 33 = 67;
    # at 1 on a 0..3 segment from 10 to 0: 10 + (-10*1)/3 = 10 + (-3) = 7 (Go truncates
    # -3.33 to -3; floor division would give 6).
    assert broken_linear_function([(0, 100), (100, 0)])(33) == 67
    assert broken_linear_function([(0, 10), (3, 0)])(1) == 7


def ext_node(name, **ext):
    return make_node(name, cpu="4", memory=str(10000 * 1024 * 1024), pods=110, allocatable=ext)


BIN_PACKING = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}]
FOO, BAR = "intel.com/foo", "intel.com/bar"


@pytest.mark.parametrize("name, pod, pods, expected", [
    ("nothing scheduled, nothing requested", reqs(), [], [("node1", 0), ("node2", 0)]),
    ("resources requested, pods scheduled with less resources", reqs({FOO: "2"}), [reqs()],
     [("node1", 2), ("node2", 5)]),
    ("resources requested, pods scheduled with resources, on node with existing pod running", reqs({FOO: "2"}),
     [reqs({FOO: "2"}, node="node2")], [("node1", 2), ("node2", 10)]),
    ("resources requested, pods scheduled with more resources", reqs({FOO: "4"}), [reqs()],
     [("node1", 5), ("node2", 10)]),
])
def test_bin_packing_single_extended(name, pod, pods, expected):
    nodes = [ext_node("node1", **{FOO: 8}), ext_node("node2", **{FOO: 4})]
    assert scores(nodes, pods, pod, rtcr([{"name": FOO, "weight": 1}], BIN_PACKING)) == expected


@pytest.mark.parametrize("name, pod, pods, expected", [
    ("nothing scheduled, nothing requested", reqs(), [], [("node1", 0), ("node2", 0)]),
    ("resources requested, pods scheduled with less resources", reqs({FOO: "2", BAR: "2"}), [reqs()],
     [("node1", 4), ("node2", 3)]),
    ("resources requested, pods scheduled with resources, on node with existing pod running",
     reqs({FOO: "2", BAR: "2"}), [reqs({FOO: "4", BAR: "2"}, node="node2")], [("node1", 4), ("node2", 7)]),
    ("resources requested, pods scheduled with more resources", reqs({FOO: "4", BAR: "2"}), [reqs()],
     [("node1", 5), ("node2", 5)]),
])
def test_bin_packing_multiple_extended(name, pod, pods, expected):
    nodes = [ext_node("node1", **{FOO: 8, BAR: 4}), ext_node("node2", **{FOO: 4, BAR: 8})]
    resources = [{"name": FOO, "weight": 3}, {"name": BAR, "weight": 5}]
    assert scores(nodes, pods, pod, rtcr(resources, BIN_PACKING)) == expected


def test_rtcr_leaves_zero_scores_out_of_the_weights():
    # shape 0->0, 100->10 (x10 = 100): cpu at 0% scores 0 and is dropped, memory at
    # 50% scores 50 with weight 2: mean = 50*2/2 = 50, not 50*2/3 = 33.
    scorer = requested_to_capacity_ratio_scorer((("cpu", 1), ("memory", 2)), ((0, 0), (100, 10)))
    assert scorer((0, 50), (100, 100)) == 50
    # Both scoring: (20*1 + 50*2) / 3 = 40
    assert scorer((20, 50), (100, 100)) == 40


def test_rtcr_rounds_the_weighted_mean_half_away_from_zero():
    scorer = requested_to_capacity_ratio_scorer((("cpu", 1), ("memory", 1)), ((0, 0), (100, 10)))
    # 25 and 50 -> 37.5 -> 38; 25 and 40 -> 32.5 -> 33; 25 and 42 -> 33.5 -> 34
    assert scorer((25, 50), (100, 100)) == 38
    assert scorer((25, 40), (100, 100)) == 33
    assert scorer((25, 42), (100, 100)) == 34
    # Over capacity counts as full utilization.
    assert scorer((150, 150), (100, 100)) == 100


def test_rtcr_spread_out_golden_config_shape():
    # The rtcr-spread-out configuration: 0->10, 50->7, 100->0 (x10), cpu weight 1,
    # memory weight 2. A node at cpu 30% and memory 80%:
    #   cpu: 100 + (70-100)*30/50 = 100 - 18 = 82
    #   memory: 70 + (0-70)*(80-50)/50 = 70 - 42 = 28
    #   (82*1 + 28*2) / 3 = 138/3 = 46
    shape = ((0, 10), (50, 7), (100, 0))
    scorer = requested_to_capacity_ratio_scorer((("cpu", 1), ("memory", 2)), shape)
    assert scorer((300, 800), (1000, 1000)) == 46


def test_score_details_name_the_strategy_and_weights():
    nodes = [cap_node("node1", 4000, 10000)]
    fw = framework_for(nodes, [], version=VERSION)
    pl = NodeResourcesFit(fw, rtcr([{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 3}], SPREAD_SHAPE))
    from kschedx.framework.cycle_state import CycleState
    from kschedx.state.types import PodInfo
    d = pl.score_details(CycleState(), PodInfo(reqs(C1_2)), fw.snapshot.get("node1"))
    assert d["strategy"] == "RequestedToCapacityRatio"
    assert d["weights"] == {"cpu": 1, "memory": 3}
    assert d["shape"] == SPREAD_SHAPE


# --- the batch path (score_all) agrees with Score --------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"


@st.composite
def shapes(draw):
    utilizations = sorted(draw(st.sets(st.integers(0, 100), min_size=1, max_size=4)))
    return [{"utilization": u, "score": draw(st.integers(0, 10))} for u in utilizations]


@settings(max_examples=60, deadline=None)
@given(shape=shapes(), weights=st.tuples(st.integers(1, 100), st.integers(1, 100)),
       strategy=st.sampled_from(["MostAllocated", "RequestedToCapacityRatio", "LeastAllocated"]),
       nodes=st.lists(st.tuples(st.integers(0, 8000), st.integers(0, 64), st.integers(0, 6000), st.integers(0, 48)),
                      min_size=1, max_size=5),
       pod_req=st.tuples(st.integers(0, 4000), st.integers(0, 16)))
def test_score_all_matches_score(shape, weights, strategy, nodes, pod_req):
    built, pods = [], []
    for i, (cpu, mem, used_cpu, used_mem) in enumerate(nodes):
        built.append(cap_node(f"n{i}", f"{cpu}m", f"{mem}Gi"))
        pods.append(reqs({"cpu": f"{used_cpu}m", "memory": f"{used_mem}Gi"}, node=f"n{i}"))
    args = {"scoringStrategy": {"type": strategy, "resources": [{"name": "cpu", "weight": weights[0]},
                                                                 {"name": "memory", "weight": weights[1]}]}}
    if strategy == "RequestedToCapacityRatio":
        args["scoringStrategy"]["requestedToCapacityRatio"] = {"shape": shape}
    scores(built, pods, reqs({"cpu": f"{pod_req[0]}m", "memory": f"{pod_req[1]}Gi"}), args)


# --- TestFitScore: the strategy rows ----------------------------------------------------------
def reqs_sidecar(main, side, node=None):
    from builders import sidecar
    return make_pod(containers=req_containers(main), init_containers=[sidecar("s0", requests=side)], node=node)


FIT_NODES = [cap_node("node1", 4000, 10000), cap_node("node2", 6000, 10000)]
FIT_PODS = [reqs({"cpu": "2000", "memory": "4000"}, node="node1"), reqs({"cpu": "1000", "memory": "2000"}, node="node2")]
C3_5 = {"cpu": "3000", "memory": "5000"}


@pytest.mark.parametrize("name, pod, nodes, pods, args, expected", [
    ("RequestedToCapacityRatio case1", reqs(C3_5), FIT_NODES, FIT_PODS,
     rtcr(DEFAULT, [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]), [("node1", 10), ("node2", 32)]),
    ("RequestedToCapacityRatio case2", reqs(C3_5), FIT_NODES, FIT_PODS,
     rtcr(DEFAULT, [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]), [("node1", 95), ("node2", 68)]),
    ("MostAllocated", reqs(C1_2), FIT_NODES, FIT_PODS,
     {"scoringStrategy": {"type": "MostAllocated", "resources": DEFAULT}}, [("node1", 67), ("node2", 36)]),
    ("MostAllocated with sidecar container", reqs(C1_2),
     [cap_node("node1", 4000, 10000), cap_node("node2", 4000, 10000)],
     [reqs_sidecar(C1_2, C1_2, node="node1"), reqs(C1_2, node="node2")],
     {"scoringStrategy": {"type": "MostAllocated", "resources": DEFAULT}}, [("node1", 67), ("node2", 45)]),
], ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("with_prescore", [True, False], ids=["prescore", "no-prescore"])
def test_fit_score_strategies(name, pod, nodes, pods, args, expected, with_prescore):
    fw = framework_for(nodes, pods, version=VERSION)
    infos = [fw.snapshot.get(n["metadata"]["name"]) for n in nodes]
    assert run_score(NodeResourcesFit(fw, args), pod, infos, pre_score=with_prescore) == expected
