"""Running what was built: NodeInfos, snapshots and frameworks over built
objects, and plugins through their extension points as the framework runs
them."""

from __future__ import annotations

from kschedx.cluster import ClusterState, build_cluster
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.interface import NodeScore
from kschedx.framework.runner import Framework
from kschedx.framework.status import Code
from kschedx.snapshot import NodeInfo, PodInfo, build_snapshot
from kschedx.sources.fixtures import Origin

__all__ = ["admitted", "cluster_of", "framework_for", "node_info", "run_filter", "run_score", "verdict"]


def node_info(node: dict, *pods: dict) -> NodeInfo:
    ni = NodeInfo(node)
    for p in pods:
        ni.add_pod(PodInfo(p))
    return ni


def cluster_of(nodes=(), pods=()) -> ClusterState:
    return ClusterState(nodes=list(nodes), pods=list(pods))


def framework_for(nodes=(), pods=(), *, plugin_args=None, tie_break="name") -> Framework:
    """A Framework with the default profile over these nodes and bound pods."""
    snap = build_snapshot(cluster_of(nodes, pods))
    return Framework(snap, tie_break=tie_break, plugin_args=plugin_args)


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
