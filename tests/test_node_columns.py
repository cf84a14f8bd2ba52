"""The node columns (state/node_columns.py) change no result: documents are
the same with and without them, and the values kept per key, updated only
for the rows that changed, always equal the per-node Filter and Score
methods, whatever pods come and go."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedx.state import cache
from kschedx.commands.explain import explain
from kschedx.commands.load import Workload
from kschedx.commands.simulate import simulate
from kschedx.framework.dispatch import new_framework
from kschedx.state import node_columns
from kschedx.state.cluster import build_cluster
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.queue import queue_order
from kschedx.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kschedx.plugins.noderesources.fit import NodeResourcesFit
from kschedx.state.types import NodeInfo, PodInfo
from kschedx.sources.fixtures import Origin

ROOT = Path(__file__).resolve().parent.parent

CPU_MEM = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 3}]
STRATEGIES = [
    {"type": "LeastAllocated", "resources": CPU_MEM},
    {"type": "MostAllocated", "resources": CPU_MEM},
    {"type": "RequestedToCapacityRatio", "resources": CPU_MEM,
     "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10}, {"utilization": 40, "score": 2},
                                            {"utilization": 100, "score": 7}]}},
]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_mixed_workload", ROOT / "benchmarks" / "gen_mixed_workload.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _workload(nodes=16, pods=120, pending=24):
    objs = _generator().generate(nodes, pods, 3, pending, groups=3, replicas=3, seed=11)
    cluster = build_cluster([(o, Origin("generated")) for o in objs])
    return Workload(cluster, queue_order([PodInfo(p) for p in cluster.pending_pods()]))


@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_same_document_with_and_without_the_columns(command, monkeypatch):
    def run(enabled):
        monkeypatch.setattr(node_columns, "ENABLED", enabled)
        w = _workload()
        doc = explain(w, tie_break="name") if command == "explain" else \
            simulate(w, tie_break="name", detail="full")
        return json.dumps(doc)

    with_columns = run(True)
    assert with_columns == run(False)
    assert '"Scheduled"' in with_columns


def _plugins(fw):
    out = [NodeResourcesFit(fw, {"scoringStrategy": s}) for s in STRATEGIES]
    out.append(NodeResourcesBalancedAllocation(fw, None))
    return out


def _check(plugins, pod, nodes):
    """Every batch method equals its per-node method on these nodes."""
    for pl in plugins:
        state = CycleState()
        if hasattr(pl, "pre_filter"):
            pl.pre_filter(state, pod, nodes)
            batch = pl.filter_all(state, pod, nodes)
            per_node = [pl.filter(state, pod, ni) for ni in nodes]
            got = [None] * len(nodes) if batch is None else batch
            assert [None if s is None else (s.code, s.reasons) for s in got] == \
                   [None if s is None else (s.code, s.reasons) for s in per_node]
        if pl.pre_score(state, pod, nodes) is None:
            assert pl.score_all(state, pod, nodes) == [pl.score(state, pod, ni) for ni in nodes]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 10_000), st.integers(0, 10_000)), max_size=40))
def test_kept_values_follow_every_change(moves):
    w = _workload(nodes=6, pods=40, pending=8)
    fw = new_framework(w.cluster, tie_break="name", seed=None)
    snap = fw.snapshot
    plugins = _plugins(fw)
    pending = list(w.pods)
    placed: list[PodInfo] = []
    for add, a, b in moves:
        nodes = snap.node_infos
        if add or not placed:
            pi = pending[a % len(pending)]
            if pi.uid in snap.assigned_pod_node:
                continue
            cache.assume_pod(snap, pi, nodes[b % len(nodes)].name)
            placed.append(snap.pod_infos[pi.uid])
        else:
            cache.forget_pod(snap, placed.pop(a % len(placed)))
        for pod in pending[:3]:
            _check(plugins, pod, nodes)
            _check(plugins, pod, nodes[b % len(nodes):])  # a subset, other rows
    assert snap.node_columns is not None or not moves


def test_clones_and_added_nodes_take_the_per_node_path():
    w = _workload(nodes=5, pods=30, pending=4)
    fw = new_framework(w.cluster, tie_break="name", seed=None)
    snap = fw.snapshot
    plugins = _plugins(fw)
    pod = w.pods[0]
    _check(plugins, pod, snap.node_infos)
    cols = snap.node_columns
    assert cols is not None and [ni.row for ni in snap.node_infos] == list(range(len(snap.node_infos)))
    clone = snap.node_infos[0].clone()
    clone.add_pod(w.pods[1])
    assert clone.row == -1 and clone.columns is None
    assert node_columns.columns_for(fw, [clone] + snap.node_infos[1:]) is None
    _check(plugins, pod, [clone] + snap.node_infos[1:])
    extra = NodeInfo({"metadata": {"name": "zz-new"}, "status": {"allocatable": {"cpu": "3", "memory": "1Gi",
                                                                                 "pods": "5"}}})
    assert node_columns.columns_for(fw, snap.node_infos + [extra]) is None
    _check(plugins, pod, snap.node_infos + [extra])
    # The original node is unchanged by its clone's pod.
    _check(plugins, pod, snap.node_infos)


def test_set_node_refreshes_the_row():
    w = _workload(nodes=4, pods=20, pending=4)
    fw = new_framework(w.cluster, tie_break="name", seed=None)
    snap = fw.snapshot
    plugins = _plugins(fw)
    pod = w.pods[0]
    _check(plugins, pod, snap.node_infos)
    ni = snap.node_infos[1]
    node = json.loads(json.dumps(ni.node))
    node["status"]["allocatable"] = {"cpu": "1", "memory": "64Mi", "pods": "3"}
    ni.set_node(node)
    assert snap.node_columns.alloc_cpu[ni.row] == 1000
    _check(plugins, pod, snap.node_infos)


def test_the_epoch_starts_again_after_many_changes():
    w = _workload(nodes=3, pods=12, pending=4)
    fw = new_framework(w.cluster, tie_break="name", seed=None)
    snap = fw.snapshot
    plugins = _plugins(fw)
    pod = w.pods[0]
    _check(plugins, pod, snap.node_infos)
    cols = snap.node_columns
    pi = w.pods[1]
    for i in range(200):
        cache.assume_pod(snap, pi, snap.node_infos[i % 3].name)
        _check(plugins, pod, snap.node_infos)
        cache.forget_pod(snap, snap.pod_infos[pi.uid])
    assert cols.epoch > 0
    _check(plugins, pod, snap.node_infos)
