"""Running what was built: NodeInfos, snapshots and frameworks over built
objects, and plugins through their extension points as the framework runs
them."""

from __future__ import annotations

import copy

from types import SimpleNamespace

from kschedx.features import default_features
from kschedx.state.cluster import ClusterState, build_cluster
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.interface import NodeScore
from kschedx.framework.runtime import Framework
from kschedx.framework.status import Code
from kschedx.state.snapshot import build_snapshot
from kschedx.state.types import NodeInfo, PodInfo
from kschedx.sources.fixtures import Origin

__all__ = [
    "Env",
    "admitted",
    "cluster_of",
    "filter_all",
    "framework",
    "framework_for",
    "handle_at",
    "node_info",
    "pod_info",
    "rejection",
    "run_filter",
    "run_score",
    "verdict",
]


def node_info(node: dict, *pods: dict) -> NodeInfo:
    ni = NodeInfo(node)
    for p in pods:
        ni.add_pod(PodInfo(p))
    return ni


def cluster_of(nodes=(), pods=()) -> ClusterState:
    return ClusterState(nodes=list(nodes), pods=list(pods))


def handle_at(version: str):
    """What a plugin made without a framework reads (a plugin test's unit):
    the version's default features; no snapshot, no cluster."""
    return SimpleNamespace(features=default_features(version), snapshot=None, cluster=None)


def _features(features, version):
    return features if features is not None else default_features(version) if version is not None else None


def framework_for(nodes=(), pods=(), *, plugin_args=None, tie_break="name", features=None, version=None) -> Framework:
    """A Framework with the default profile over these nodes and bound pods,
    as built (no admission). `features`, or `version`'s defaults: the version
    and gates (the newest version's defaults when neither: tests of plugins
    name theirs)."""
    snap = build_snapshot(cluster_of(nodes, pods), _features(features, version))
    return Framework(snap, tie_break=tie_break, plugin_args=plugin_args)


def framework(*objects, tie_break="name", seed=None, plugin_args=None, features=None, version=None) -> Framework:
    """A Framework with the default profile over any objects, admitted as a
    fixture file is (see `admitted`), for `features` or `version`'s defaults
    (the newest version's defaults when neither: tests of plugins name
    theirs)."""
    return Framework(build_snapshot(admitted(*objects), _features(features, version)), tie_break=tie_break, seed=seed,
                     plugin_args=plugin_args)


def pod_info(fw: Framework, name: str, ns: str = "default") -> PodInfo:
    """The PodInfo of a pod of the framework's cluster (as admitted)."""
    for p in fw.cluster.pods:
        if p["metadata"]["name"] == name and p["metadata"].get("namespace", "default") == ns:
            return PodInfo(p)
    raise KeyError(name)


def filter_all(fw: Framework, plugin: str, pod_info: PodInfo):
    """PreFilter then (unless it rejected or skipped) Filter on every node:
    (pre-filter status, {node: filter status}, cycle state)."""
    pl = fw.profile.by_name[plugin]
    state = CycleState()
    _, pre = pl.pre_filter(state, pod_info, fw.snapshot.node_infos)
    if pre is not None and not pre.is_success():
        return pre, {}, state
    return pre, {ni.name: pl.filter(state, pod_info, ni) for ni in fw.snapshot.node_infos}, state


class Env:
    """An incoming pod against a cluster of admitted objects (copies of those
    given), with a default-profile framework: one plugin at a time."""

    def __init__(self, pod, pods=(), nodes=(), others=(), plugin_args=None, features=None, version=None):
        incoming = copy.deepcopy(pod)
        incoming["spec"].pop("nodeName", None)
        objects = [copy.deepcopy(o) for o in [*others, *nodes, *pods]]
        self.fw = framework(*objects, incoming, plugin_args=plugin_args, features=features, version=version)
        self.cluster = self.fw.cluster
        self.snapshot = self.fw.snapshot
        self.pod_info = PodInfo(incoming)

    def plugin(self, name):
        return self.fw.profile.by_name[name]

    def node(self, name):
        return self.snapshot.get(name)

    def pre_filter(self, name, state=None):
        state = state or CycleState()
        _, st = self.plugin(name).pre_filter(state, self.pod_info, self.snapshot.node_infos)
        return state, st

    def filter_all(self, name):
        """PreFilter then Filter on every node: (prefilter status, {node: status})."""
        pre, statuses, _ = filter_all(self.fw, name, self.pod_info)
        return pre, statuses

    def scores(self, name, feasible=None):
        """PreScore, Score and NormalizeScore over the feasible nodes (default all)."""
        pl = self.plugin(name)
        nodes = [self.snapshot.get(n) for n in feasible] if feasible is not None else self.snapshot.node_infos
        state = CycleState()
        st = pl.pre_score(state, self.pod_info, nodes)
        if st is not None and not st.is_success():
            return st, None
        scores = [NodeScore(ni.name, pl.score(state, self.pod_info, ni)) for ni in nodes]
        pl.normalize_score(state, self.pod_info, scores)
        return None, {s.name: s.score for s in scores}


def admitted(*objects, path="test.yaml") -> ClusterState:
    """Run the fixture admission over raw objects, as build_cluster does."""
    return build_cluster([(o, Origin(path, i + 1)) for i, o in enumerate(objects)])


def run_filter(plugin, pod: dict, ni: NodeInfo, *, pre_filter=True):
    """PreFilter (when the plugin has one) then Filter, as the framework runs them.

    Returns (pre_filter_status, filter_status); the filter is not run (None)
    when PreFilter returned Skip or rejected the pod."""
    pi = PodInfo(pod)
    state = CycleState()
    pst = None
    if pre_filter and plugin.implements("pre_filter"):
        _, pst = plugin.pre_filter(state, pi, [ni])
        if pst is not None and not pst.is_success():
            return pst, None
    return pst, plugin.filter(state, pi, ni)


def run_score(plugin, pod: dict, node_infos, *, pre_score=True, normalize=True):
    """PreScore, Score on every node and NormalizeScore: [(name, score)]."""
    pi = PodInfo(pod)
    state = CycleState()
    if pre_score and plugin.implements("pre_score"):
        st = plugin.pre_score(state, pi, list(node_infos))
        if st is not None and st.code == Code.SKIP:
            return "Skip"
    scores = [NodeScore(ni.name, plugin.score(state, pi, ni)) for ni in node_infos]
    if normalize and plugin.implements("normalize_score"):
        plugin.normalize_score(state, pi, scores)
    return [(s.name, s.score) for s in scores]


def verdict(status):
    """(code label, reasons) of a Status, ("Success", []) for None."""
    if status is None:
        return ("Success", [])
    return (status.code.label, list(status.reasons))


def rejection(status):
    """(code label, reasons as a tuple) of a Status, None for a success."""
    if status is None or status.is_success():
        return None
    return (status.code.label, tuple(status.reasons))
