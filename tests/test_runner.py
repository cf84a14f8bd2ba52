"""The scheduling cycle (framework/schedule_one.py, framework/runtime.py) against upstream schedule_one.go
and framework.go: PreFilter Skip / rejection / Error, PreFilterResult and
absent-node statuses, Filter with nominated pods (two passes), the nominated
node tried first, FitError message building, one feasible node, scoring and
selection, PostFilter. Facts from schedule_one_test.go TestSchedulerSchedulePod
and types.go FitError.Error; clusters are small and hand-made, profiles are
built from fake plugins (and real ones where the point needs them)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from builders import cluster_of, container, make_node, make_pod

from kschedx.state import cache
from kschedx.framework.interface import Plugin, PluginError, PostFilterResult, PreFilterResult
from kschedx.framework.runtime import Framework
from kschedx.framework.schedule_one import NOMINATED_FITS_NOTE, ONE_FEASIBLE_NOTE
from kschedx.framework.status import Code, Status
from kschedx.plugins.nodeaffinity import NodeAffinity
from kschedx.plugins.noderesources.fit import NodeResourcesFit
from kschedx.state.snapshot import build_snapshot
from kschedx.state.types import PodInfo

POINTS = {"pre_enqueue": "pre_enqueue", "pre_filter": "pre_filter", "filter": "filter", "post_filter": "post_filter",
          "pre_score": "pre_score", "score": "score"}


def framework(nodes, plugins, pods=(), weights=None, tie_break="name", seed=None, nominated=()):
    """A Framework whose profile is exactly `plugins`, in this order."""
    fw = Framework(build_snapshot(cluster_of(nodes, pods)), tie_break=tie_break, seed=seed)
    prof = fw.profile
    prof.plugins = list(plugins)
    prof.by_name = {p.name: p for p in plugins}
    prof.weights = {p.name: (weights or {}).get(p.name, 1) for p in plugins}
    prof.not_evaluated = []
    for point, attr in POINTS.items():
        setattr(prof, attr, [p for p in plugins if p.implements(point)])
    for pod, node in nominated:
        fw.nominator.add(PodInfo(pod), node)
    return fw


def nodes(*names, **kw):
    return [make_node(n, cpu=kw.get("cpu", 4), memory=kw.get("memory", "8Gi"), pods=110) for n in names]


class FakeFilter(Plugin):
    """Fails the listed nodes with the given code and reason."""

    def __init__(self, name, fails, reason=None):
        super().__init__(None)
        self.name = name
        self.fails = fails  # {node: Code} or {node: (Code, reason)}
        self.reason = reason
        self.calls = []

    def filter(self, state, pod_info, node_info):
        self.calls.append(node_info.name)
        f = self.fails.get(node_info.name)
        if f is None:
            return None
        code, reason = f if isinstance(f, tuple) else (f, self.reason or f"injecting failure for pod {pod_info.name}")
        return Status(code, reason) if code != Code.ERROR else Status.as_error(reason)


class FakePreFilter(Plugin):
    def __init__(self, name, result=None, status=None):
        super().__init__(None)
        self.name = name
        self.result = result
        self.status = status
        self.called = False

    def pre_filter(self, state, pod_info, nodes):
        self.called = True
        res = PreFilterResult(self.result) if self.result is not None else None
        return res, self.status


class FakePreFilterAndFilter(FakeFilter):
    def __init__(self, name, pre_status, fails):
        super().__init__(name, fails)
        self.pre_status = pre_status

    def pre_filter(self, state, pod_info, nodes):
        return None, self.pre_status


class NumericScore(Plugin):
    """Scores a node by the number in its name (upstream newNumericMapPlugin)."""

    def __init__(self, name="NumericMap", fn=None, raise_on=None):
        super().__init__(None)
        self.name = name
        self.fn = fn or (lambda n: int("".join(ch for ch in n if ch.isdigit()) or 0))
        self.raise_on = raise_on

    def score(self, state, pod_info, node_info):
        if self.raise_on is not None:
            raise PluginError(self.raise_on)
        return self.fn(node_info.name)


class FakePostFilter(Plugin):
    def __init__(self, name, status, nominated=None):
        super().__init__(None)
        self.name = name
        self.status = status
        self.nominated = nominated
        self.seen = None

    def post_filter(self, state, pod_info, node_to_status):
        self.seen = {ni.name: node_to_status.get(ni.name) for ni in node_to_status.snapshot.node_infos}
        return (PostFilterResult(self.nominated) if self.nominated else None), self.status


def schedule(fw, pod=None):
    return fw.schedule(PodInfo(pod or make_pod("test-pod")))


# --- FitError message -------------------------------------------------------------

TAINT = "node(s) had untolerated taint(s)"
CPU = "Insufficient cpu"
MEM = "Insufficient memory"


@pytest.mark.parametrize(
    "failures, expected",
    [
        ({"n1": [CPU], "n2": [TAINT], "n3": [TAINT]},
         "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s)."),
        # Plain string sort: "10 ..." sorts before "2 ...".
        ({**{f"t{i:02d}": [TAINT] for i in range(10)}, "c1": [CPU], "c2": [CPU]},
         "0/12 nodes are available: 10 node(s) had untolerated taint(s), 2 Insufficient cpu."),
        ({"a": [MEM], "b": ["node(s) didn't match Pod's node affinity/selector"], "c": [CPU], "d": [CPU], "e": [CPU]},
         "0/5 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector, "
         "3 Insufficient cpu."),
        # Every reason of a node counts.
        ({"n1": [CPU, MEM], "n2": [CPU]}, "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."),
        ({"n1": ["injecting failure for pod test-filter"]},
         "0/1 nodes are available: 1 injecting failure for pod test-filter."),
    ],
)
def test_fit_error_message(failures, expected):
    class MultiReason(Plugin):
        name = "MultiReason"

        def filter(self, state, pod_info, node_info):
            return Status(Code.UNSCHEDULABLE, *failures[node_info.name])

    fw = framework(nodes(*failures), [MultiReason(None)])
    res = schedule(fw)
    assert res.status == "Unschedulable"
    assert res.message == expected
    assert res.preemption is None  # no PostFilter plugin in this profile


def test_fit_error_counts_first_failure_only():
    first = FakeFilter("First", {"n1": Code.UNSCHEDULABLE}, reason="first reason")
    second = FakeFilter("Second", {"n1": Code.UNSCHEDULABLE, "n2": Code.UNSCHEDULABLE}, reason="second reason")
    res = schedule(framework(nodes("n1", "n2"), [first, second]))
    assert res.message == "0/2 nodes are available: 1 first reason, 1 second reason."
    n1 = next(n for n in res.nodes if n.name == "n1")
    # Every filter is recorded, the first failure is the one reported.
    assert [v.plugin for v in n1.filters] == ["First", "Second"]
    assert n1.first_failure == "First" and n1.status.reasons == ["first reason"]


def test_no_nodes():
    res = schedule(framework([], [FakeFilter("F", {})]))
    assert (res.status, res.message, res.nodes) == ("Unschedulable", "no nodes available to schedule pods", [])


# --- PreFilter ----------------------------------------------------------------------


def test_prefilter_unresolvable_rejection():
    pre = FakePreFilter("FakePreFilter", status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "injected unschedulable status"))
    later = FakePreFilter("Later")
    filt = FakeFilter("F", {})
    post = FakePostFilter("Post", Status(Code.UNSCHEDULABLE, "post says no"))
    fw = framework(nodes("1", "2"), [pre, later, filt, post])
    res = schedule(fw)
    assert res.message == "0/2 nodes are available: injected unschedulable status. post says no"
    assert later.called is False  # UnschedulableAndUnresolvable stops PreFilter
    assert filt.calls == []
    assert [(n.name, n.status.reasons, n.first_failure) for n in res.nodes] == [
        ("1", ["injected unschedulable status"], "FakePreFilter"), ("2", ["injected unschedulable status"], "FakePreFilter")]
    # PostFilter sees every node with the PreFilter status.
    assert {k: v.reasons for k, v in post.seen.items()} == {"1": ["injected unschedulable status"],
                                                            "2": ["injected unschedulable status"]}


def test_prefilter_unschedulable_runs_the_remaining_prefilters():
    pre = FakePreFilter("FakePreFilter", status=Status(Code.UNSCHEDULABLE, "not now"))
    later = FakePreFilter("Later", result={"2"})
    res = schedule(framework(nodes("1", "2"), [pre, later, FakeFilter("F", {})]))
    assert later.called is True
    assert res.message == "0/2 nodes are available: not now."


def test_prefilter_error():
    pre = FakePreFilter("FakePreFilter", status=Status.as_error("injected error status"))
    res = schedule(framework(nodes("1", "2"), [pre, FakeFilter("F", {})]))
    assert (res.status, res.message) == ("Error", 'running PreFilter plugin "FakePreFilter": injected error status')
    assert res.nodes == []


def test_prefilter_result_intersection():
    plugins = [FakePreFilter("FakePreFilter1"), FakePreFilter("FakePreFilter2", result={"node2"}),
               FakePreFilter("FakePreFilter3", result={"node1", "node2"}), FakeFilter("F", {})]
    res = schedule(framework(nodes("node1", "node2", "node3"), plugins))
    assert (res.status, res.selected_node) == ("Scheduled", "node2")
    assert res.pre_filter_result == {"nodeNames": ["node2"], "plugins": ["FakePreFilter2", "FakePreFilter3"]}
    absent = {n.name: (n.feasible, n.first_failure, n.status.reasons if n.status else None) for n in res.nodes}
    assert absent["node1"] == (False, "FakePreFilter2, FakePreFilter3",
                               ["node(s) didn't satisfy plugin(s) [FakePreFilter2 FakePreFilter3]"])
    assert absent["node2"] == (True, None, None)


def test_prefilter_results_not_intersecting():
    plugins = [FakePreFilter("FakePreFilter1"), FakePreFilter("FakePreFilter2", result={"node2"}),
               FakePreFilter("FakePreFilter3", result={"node1"}), FakeFilter("F", {})]
    res = schedule(framework(nodes("node1", "node2", "node3"), plugins))
    assert res.message == ("0/3 nodes are available: node(s) didn't satisfy plugin(s) "
                           "[FakePreFilter2 FakePreFilter3] simultaneously.")


def test_prefilter_result_empty_set():
    plugins = [FakePreFilter("FakePreFilter1"), FakePreFilter("FakePreFilter2", result=set()), FakeFilter("F", {})]
    res = schedule(framework(nodes("node1"), plugins))
    assert res.message == "0/1 nodes are available: node(s) didn't satisfy plugin FakePreFilter2."


def test_nodes_left_out_by_prefilter_and_failed_by_filter():
    plugins = [FakePreFilter("FakePreFilter", result={"node2"}), FakeFilter("FakeFilter", {"node2": Code.UNSCHEDULABLE})]
    post = FakePostFilter("Post", Status(Code.UNSCHEDULABLE))
    res = schedule(framework(nodes("node1", "node2"), plugins + [post]), make_pod("test-prefilter"))
    assert res.message == ("0/2 nodes are available: 1 injecting failure for pod test-prefilter, "
                           "1 node(s) didn't satisfy plugin(s) [FakePreFilter].")
    # PostFilter sees the absent node with the absent-nodes status.
    assert post.seen["node1"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert post.seen["node1"].reasons == ["node(s) didn't satisfy plugin(s) [FakePreFilter]"]
    assert post.seen["node2"].reasons == ["injecting failure for pod test-prefilter"]


def test_prefilter_result_naming_a_missing_node():
    plugins = [FakePreFilter("FakePreFilter", result={"invalid-node"}), FakeFilter("TrueFilter", {})]
    res = schedule(framework(nodes("1", "2"), plugins))
    assert res.message == "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [FakePreFilter]."


def test_prefilter_skip_skips_the_filter():
    skipper = FakePreFilterAndFilter("FakeFilter2", Status(Code.SKIP),
                                     {"node1": Code.ERROR, "node2": Code.ERROR, "node3": Code.ERROR})
    plugins = [FakePreFilter("FakePreFilter1"), FakeFilter("FakeFilter1", {"node1": Code.UNSCHEDULABLE}), skipper,
               NumericScore("Equal", fn=lambda n: 1)]
    res = schedule(framework(nodes("node1", "node2", "node3"), plugins))
    assert res.status == "Scheduled" and res.top_nodes == ["node2", "node3"]
    assert skipper.calls == []
    assert [(p.plugin, p.code.label) for p in res.pre_filter] == [("FakeFilter2", "Skip")]
    for n in res.nodes:
        assert n.filters[-1].plugin == "FakeFilter2" and n.filters[-1].code == Code.SKIP


# --- Filter errors ------------------------------------------------------------------


def test_filter_error_aborts_the_cycle():
    res = schedule(framework(nodes("1", "2"), [FakeFilter("Broken", {"2": (Code.ERROR, "boom")})]))
    assert (res.status, res.message) == ("Error", 'running "Broken" filter plugin: boom')


def test_filter_error_after_a_rejection_is_only_recorded():
    # kube-scheduler stops at the first failing plugin and never sees the error.
    first = FakeFilter("First", {"1": Code.UNSCHEDULABLE}, reason="nope")
    broken = FakeFilter("Broken", {"1": (Code.ERROR, "boom")})
    res = schedule(framework(nodes("1", "2"), [first, broken]))
    assert (res.status, res.selected_node) == ("Scheduled", "2")
    n1 = next(n for n in res.nodes if n.name == "1")
    assert [(v.plugin, v.code.label) for v in n1.filters] == [("First", "Unschedulable"), ("Broken", "Error")]
    assert n1.first_failure == "First"


def test_filter_error_on_a_node_left_out_by_prefilter_is_only_recorded():
    plugins = [FakePreFilter("Narrow", result={"2"}), FakeFilter("Broken", {"1": (Code.ERROR, "boom")})]
    res = schedule(framework(nodes("1", "2"), plugins))
    assert (res.status, res.selected_node) == ("Scheduled", "2")


# --- nominated pods -------------------------------------------------------------------


def fit_profile_nodes():
    return [make_node("n1", cpu=3, memory="8Gi", pods=110), make_node("n2", cpu=1, memory="8Gi", pods=110)]


def cpu_pod(name, cpu, priority=0, **kw):
    return make_pod(name, containers=[container(requests={"cpu": cpu})], priority=priority, **kw)


@pytest.mark.parametrize(
    "incoming_priority, nominee_priority, fits_n1",
    [
        (5, 10, False),  # a higher-priority nominee holds its request on n1
        (10, 10, False),  # equal priority counts too
        (20, 10, True),  # lower-priority nominees are ignored
    ],
)
def test_nominated_pods_count_on_their_node(incoming_priority, nominee_priority, fits_n1):
    nominee = cpu_pod("nominee", "2", nominee_priority)
    fw = framework(fit_profile_nodes(), [NodeResourcesFit(None)], nominated=[(nominee, "n1")])
    res = schedule(fw, cpu_pod("incoming", "2", incoming_priority))
    n1 = next(n for n in res.nodes if n.name == "n1")
    assert n1.feasible is fits_n1
    if not fits_n1:
        assert n1.status.reasons == ["Insufficient cpu"]
        assert res.message == "0/2 nodes are available: 2 Insufficient cpu."


def test_nominated_pod_does_not_count_against_itself():
    me = cpu_pod("me", "2", 10)
    fw = framework(fit_profile_nodes(), [NodeResourcesFit(None)], nominated=[(me, "n1")])
    res = fw.schedule(PodInfo(me))
    assert res.selected_node == "n1"


def test_filters_run_again_without_nominated_pods_when_they_passed_with_them():
    class NeedsPods(Plugin):
        """Passes only on a node with pods (upstream's MatchFilter-style fake)."""

        name = "NeedsPods"

        def filter(self, state, pod_info, node_info):
            return None if node_info.pods else Status(Code.UNSCHEDULABLE, "node has no pods")

    nominee = cpu_pod("nominee", "1", 100)
    res = schedule(framework(fit_profile_nodes(), [NeedsPods(None)], nominated=[(nominee, "n1")]), cpu_pod("p", "1", 0))
    # With the nominee n1 passes; the second pass without it fails: the node fails.
    assert res.message == "0/2 nodes are available: 2 node has no pods."


def test_nominated_node_is_tried_first_and_alone():
    scores = NumericScore("Numeric")
    fw = framework(nodes("n1", "n2", "n9"), [FakeFilter("F", {}), scores])
    pod = make_pod("p", status={"nominatedNodeName": "n2"})
    res = schedule(fw, pod)
    assert (res.status, res.selected_node, res.top_nodes) == ("Scheduled", "n2", ["n2"])
    # As the golden corpus words it: the nominated node, not "the only feasible node".
    assert res.notes[0] == ("nominated node n2 passed the filters: kube-scheduler selects it without looking at "
                            "other nodes or scoring") == NOMINATED_FITS_NOTE.format(node="n2")
    assert ONE_FEASIBLE_NOTE not in res.notes


def test_nominated_node_that_does_not_fit_falls_back_to_all_nodes():
    fw = framework(nodes("n1", "n2", "n9"), [FakeFilter("F", {"n2": Code.UNSCHEDULABLE}), NumericScore()])
    res = schedule(fw, make_pod("p", status={"nominatedNodeName": "n2"}))
    assert (res.selected_node, res.top_nodes) == ("n9", ["n9"])


def test_nominated_node_missing_from_the_snapshot_is_ignored():
    fw = framework(nodes("n1", "n2"), [FakeFilter("F", {}), NumericScore()])
    res = schedule(fw, make_pod("p", status={"nominatedNodeName": "gone"}))
    assert res.selected_node == "n2"


def test_nominated_node_outside_prefilter_result_keeps_its_own_status():
    # The nominated node is filtered before the PreFilterResult narrows the
    # nodes, so its failure is counted with its own reason.
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}
    ns = [make_node("n1", cpu=1, memory="8Gi", pods=110), make_node("n2", cpu=8, memory="8Gi", pods=110),
          make_node("n3", cpu=8, memory="8Gi", pods=110)]
    fw = framework(ns, [NodeAffinity(None), NodeResourcesFit(None)])
    pod = make_pod("p", containers=[container(requests={"cpu": "2"})], affinity=affinity,
                   status={"nominatedNodeName": "n2"})
    res = schedule(fw, pod)
    assert res.message == ("0/3 nodes are available: 1 Insufficient cpu, "
                           "1 node(s) didn't match Pod's node affinity/selector, "
                           "1 node(s) didn't satisfy plugin(s) [NodeAffinity].")
    by = {n.name: n for n in res.nodes}
    assert by["n2"].first_failure == "NodeAffinity"
    assert by["n3"].first_failure == "NodeAffinity" and by["n3"].status.reasons == [
        "node(s) didn't satisfy plugin(s) [NodeAffinity]"]


# --- scoring and selection ------------------------------------------------------------


def test_highest_total_wins_with_weights():
    a = NumericScore("A")
    b = NumericScore("B", fn=lambda n: 10 - int(n))
    fw = framework(nodes("1", "2", "3"), [FakeFilter("F", {}), a, b], weights={"A": 1, "B": 2})
    res = schedule(fw)
    # totals: 1 + 18 = 19, 2 + 16 = 18, 3 + 14 = 17
    assert (res.selected_node, res.top_nodes) == ("1", ["1"])
    assert {n.name: n.total for n in res.nodes} == {"1": 19, "2": 18, "3": 17}


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_ties_are_broken_at_random_among_top_nodes(seed):
    eq = NumericScore("Equal", fn=lambda n: 5 if n != "c" else 1)
    fw = framework(nodes("a", "b", "c"), [FakeFilter("F", {}), eq], tie_break="random", seed=seed)
    res = schedule(fw)
    assert res.top_nodes == ["a", "b"] and res.selected_node in ("a", "b")
    fw2 = framework(nodes("a", "b", "c"), [FakeFilter("F", {}), eq], tie_break="random", seed=seed)
    assert schedule(fw2).selected_node == res.selected_node  # reproducible with a seed


def test_ties_broken_by_name():
    eq = NumericScore("Equal", fn=lambda n: 1)
    res = schedule(framework(nodes("b", "a", "c"), [FakeFilter("F", {}), eq]))
    assert (res.top_nodes, res.selected_node) == (["a", "b", "c"], "a")


def test_one_feasible_node_is_selected_without_scoring_errors():
    boom = NumericScore("Boom", raise_on="boom")
    fw = framework(nodes("1", "2"), [FakeFilter("F", {"1": Code.UNSCHEDULABLE}), boom])
    res = schedule(fw)
    assert (res.status, res.selected_node, res.top_nodes) == ("Scheduled", "2", ["2"])
    assert ONE_FEASIBLE_NOTE in res.notes
    assert any("Boom" in n for n in res.notes)


def test_one_feasible_node_still_shows_scores():
    res = schedule(framework(nodes("1", "2"), [FakeFilter("F", {"1": Code.UNSCHEDULABLE}), NumericScore()]))
    n2 = next(n for n in res.nodes if n.name == "2")
    assert [(s.plugin, s.raw, s.normalized) for s in n2.scores] == [("NumericMap", 2, 2)]


def test_score_error_with_several_feasible_nodes():
    boom = NumericScore("FalseMap", raise_on="injected error")
    res = schedule(framework(nodes("1", "2"), [FakeFilter("F", {}), boom]))
    assert (res.status, res.message) == ("Error", 'running Score plugins: plugin "FalseMap" failed with: injected error')


@pytest.mark.parametrize("scores, invalid", [
    ({"1": 101, "2": 101}, 101),  # every node the same score
    ({"1": 50, "2": -1, "3": 100}, -1),
    ({"1": 100, "2": 0, "3": 102}, 102),
])
def test_invalid_score_is_an_error(scores, invalid):
    big = NumericScore("Big", fn=scores.__getitem__)
    res = schedule(framework(nodes(*scores), [FakeFilter("F", {}), big]))
    assert res.status == "Error"
    assert res.message == (f'applying score defaultWeights on Score plugins: plugin "Big" returns an invalid score '
                           f"{invalid}, it should in the range of [0, 100] after normalizing")


def test_prescore_skip_marks_scores_skipped():
    class SkipScore(NumericScore):
        def pre_score(self, state, pod_info, nodes):
            return Status(Code.SKIP)

        def score(self, state, pod_info, node_info):
            raise AssertionError("Score must not run after PreScore Skip")

    res = schedule(framework(nodes("1", "2"), [FakeFilter("F", {}), SkipScore("Skipper"), NumericScore()]))
    n1 = next(n for n in res.nodes if n.name == "1")
    assert [(s.plugin, s.skipped, s.weighted) for s in n1.scores] == [("Skipper", True, 0), ("NumericMap", False, 1)]


def test_prescore_error():
    class BadPreScore(NumericScore):
        def pre_score(self, state, pod_info, nodes):
            return Status.as_error("nope")

    res = schedule(framework(nodes("1", "2"), [FakeFilter("F", {}), BadPreScore("Bad")]))
    assert (res.status, res.message) == ("Error", 'running PreScore plugin "Bad": nope')


# --- PostFilter ----------------------------------------------------------------------


def failing():
    return FakeFilter("F", {"1": Code.UNSCHEDULABLE, "2": Code.UNSCHEDULABLE}, reason="no")


def test_post_filter_reasons_are_joined_in_order():
    p1 = FakePostFilter("P1", Status(Code.UNSCHEDULABLE, "no new claims to deallocate"))
    p2 = FakePostFilter("P2", Status(Code.UNSCHEDULABLE, "preemption: 0/2 nodes are available: 2 No victims found."))
    res = schedule(framework(nodes("1", "2"), [failing(), p1, p2]))
    assert res.message == ("0/2 nodes are available: 2 no. no new claims to deallocate, "
                           "preemption: 0/2 nodes are available: 2 No victims found.")
    assert res.preemption["code"] == "Unschedulable"


def test_post_filter_success_stops_and_nominates():
    p1 = FakePostFilter("P1", Status(Code.SUCCESS), nominated="2")
    p2 = FakePostFilter("P2", Status(Code.UNSCHEDULABLE, "never"))
    res = schedule(framework(nodes("1", "2"), [failing(), p1, p2]))
    assert p2.seen is None
    assert res.status == "Unschedulable"
    assert res.message == "0/2 nodes are available: 2 no."
    assert (res.nominated_node, res.preemption["nominatedNode"]) == ("2", "2")


def test_post_filter_unresolvable_stops():
    p1 = FakePostFilter("P1", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "not eligible"))
    p2 = FakePostFilter("P2", Status(Code.UNSCHEDULABLE, "never"))
    res = schedule(framework(nodes("1", "2"), [failing(), p1, p2]))
    assert p2.seen is None
    assert res.message == "0/2 nodes are available: 2 no. not eligible"


def test_post_filter_error_is_part_of_the_message():
    class Raises(Plugin):
        name = "Raises"

        def post_filter(self, state, pod_info, node_to_status):
            raise PluginError("not found")

    res = schedule(framework(nodes("1", "2"), [failing(), Raises(None)]))
    assert res.message == "0/2 nodes are available: 2 no. not found"
    assert res.preemption["code"] == "Error"


# --- the default profile end to end ---------------------------------------------------


def test_default_profile_message_and_queue():
    from builders import framework_for

    tainted = make_node("t1", cpu=4, memory="8Gi", pods=110, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    small = make_node("s1", cpu=1, memory="8Gi", pods=110)
    fw = framework_for([tainted, small, dict(tainted, metadata={"name": "t2", "uid": "t2"})])
    res = fw.schedule(PodInfo(cpu_pod("big", "2")))
    assert res.message.startswith("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s).")
    by = {n.name: n for n in res.nodes}
    assert by["t1"].first_failure == "TaintToleration"
    assert by["s1"].first_failure == "NodeResourcesFit"
    assert by["s1"].status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE  # 2 > allocatable 1


@pytest.mark.parametrize("node_names, status", [(["a"], "Scheduled"), (["a", "b"], "Error")])
def test_prescore_error_only_matters_with_several_feasible_nodes(node_names, status):
    from builders import framework_for

    bad = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "bad key", "operator": "Exists"}]}}]}}
    fw = framework_for([make_node(n, cpu=1, memory="1Gi", pods=10) for n in node_names])
    res = fw.schedule(PodInfo(make_pod("p", affinity=bad)))
    assert res.status == status
    if status == "Error":
        assert res.message.startswith('running PreScore plugin "NodeAffinity": ')


# --- score explanations read late ----------------------------------------------------------


def test_score_details_read_after_a_node_changed_is_an_error():
    fw = framework(nodes("a", "b", "c"), [NodeResourcesFit(None)])
    fw.profile.plugins[0].handle = fw
    res = fw.schedule(PodInfo(make_pod("p", containers=[container(requests={"cpu": "1"})])))
    table = res.node_records.score_table
    snap = fw.snapshot
    # A copy changed later, and the table's nodes unchanged: readable.
    snap.get("a").clone().add_pod(PodInfo(make_pod("q", node="a", containers=[container(requests={"cpu": "1"})])))
    assert [row[0] for row in table.rows(0)] == ["NodeResourcesFit"]
    cache.assume_pod(snap, PodInfo(make_pod("r", containers=[container(requests={"cpu": "1"})])), "b")
    assert list(table.rows(0)) and list(table.rows(2))
    with pytest.raises(RuntimeError, match="node b read after the node changed"):
        list(table.rows(1))
    with pytest.raises(RuntimeError):
        table.settle()


class _OutOfTree:
    name = "Other"


@given(st.lists(st.tuples(st.integers(1, 5), st.one_of(st.none(), st.integers(0, 100), st.just("varying"))),
                max_size=6),
       st.integers(0, 8), st.booleans(), st.data())
def test_score_table_totals_are_the_weighted_sums(columns, n, out_of_tree, data):
    """ScoreTable.totals adds a column of one value once, not node by node:
    the same totals, integer for integer."""
    from kschedx.framework.records import ScoreTable
    from kschedx.plugins.tainttoleration import TaintToleration

    table = ScoreTable(None, None, [None] * n)
    for weight, kind in columns:
        if kind is None:
            col = None
        elif kind == "varying":
            col = data.draw(st.lists(st.integers(0, 100), min_size=n, max_size=n))
        else:
            col = [kind] * n
            if out_of_tree and n:
                col[-1] = float(kind)  # equal, not the same type: never folded for another plugin
        plugin = _OutOfTree() if out_of_tree else TaintToleration.__new__(TaintToleration)
        table.add(plugin, weight, col, col)
    want = [sum(col[i] * w for w, col in zip(table.weights, table.normalized) if col is not None) for i in range(n)]
    got = table.totals()
    assert got == want and [type(t) for t in got] == [type(t) for t in want]
