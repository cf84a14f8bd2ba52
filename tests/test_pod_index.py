"""The pod index (state/pod_index.py) changes no result: every document of
a mixed workload is the same with and without it, and after a simulation
the incrementally kept index equals one built afresh."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from kschedx.state import cache
from kschedx.commands.explain import explain
from kschedx.commands.load import Workload
from kschedx.commands.simulate import simulate
from kschedx.framework.dispatch import new_framework
from kschedx.state import pod_index
from kschedx.state.cluster import build_cluster
from kschedx.framework.queue import queue_order
from kschedx.state.types import PodInfo
from kschedx.sources.fixtures import Origin

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("gen_mixed_workload", ROOT / "benchmarks" / "gen_mixed_workload.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _workload(nodes=24, pods=240, pending=30):
    objs = _generator().generate(nodes, pods, 3, pending, groups=3, replicas=3, seed=7)
    cluster = build_cluster([(o, Origin("generated")) for o in objs])
    return Workload(cluster, queue_order([PodInfo(p) for p in cluster.pending_pods()]))


def _doc(run, enabled: bool, monkeypatch) -> str:
    monkeypatch.setattr(pod_index, "ENABLED", enabled)
    return json.dumps(run(_workload()), sort_keys=False)


@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_same_document_with_and_without_the_index(command, monkeypatch):
    def run(w):
        if command == "explain":
            return explain(w, tie_break="name")
        return simulate(w, tie_break="name", detail="full")

    with_index = _doc(run, True, monkeypatch)
    without = _doc(run, False, monkeypatch)
    assert with_index == without
    doc = json.loads(with_index)
    statuses = {p["status"] for p in doc["pods"]}
    assert "Scheduled" in statuses


def _rebuilt(snapshot) -> pod_index.PodIndex:
    idx = pod_index.PodIndex()
    for ni in snapshot.node_infos:
        for p in ni.pods:
            idx.update(p, ni.name, 1)
    return idx


def test_index_follows_placements_and_evictions():
    w = _workload()
    fw = new_framework(w.cluster, tie_break="name", seed=None)
    snap = fw.snapshot
    idx = pod_index.index_of(snap)
    placed = []
    for pi in w.pods[:12]:
        r = fw.schedule(pi)
        if r.status == "Scheduled":
            cache.assume_pod(snap, pi, r.selected_node)
            placed.append(pi)
    assert placed
    for pi in placed[::2]:
        cache.forget_pod(snap, pi)
    # A node copy changes nothing in the index.
    copy = snap.node_infos[0].clone()
    copy.add_pod(placed[1])
    fresh = _rebuilt(snap)
    assert idx.sig_nodes == fresh.sig_nodes
    assert idx.ns_sigs == fresh.ns_sigs
    assert {k: v[1] for k, v in idx.terms_nodes.items()} == {k: v[1] for k, v in fresh.terms_nodes.items()}
    assert idx.terms_nodes


def test_index_built_after_changes_counts_the_nodes_as_they_are():
    """build_snapshot's per-node signature counts (NodeInfo.signature_counts)
    serve the index only for nodes unchanged since: pods placed and evicted
    before the index is first asked for are counted as they now are."""
    w = _workload()
    fw = new_framework(w.cluster, tie_break="name", seed=None)
    snap = fw.snapshot
    assert snap.pod_index is None
    counted = [ni for ni in snap.node_infos if ni.signature_counts is not None]
    assert counted
    target, other = counted[0], counted[1]
    cache.assume_pod(snap, w.pods[0], target.name)
    cache.forget_pod(snap, other.pods[0])
    idx = pod_index.index_of(snap)
    fresh = _rebuilt(snap)
    assert idx.sig_nodes == fresh.sig_nodes
    assert list(idx.sig_nodes) == list(fresh.sig_nodes)
    assert all(list(idx.sig_nodes[s]) == list(fresh.sig_nodes[s]) for s in fresh.sig_nodes)
    assert idx.ns_sigs == fresh.ns_sigs
    assert any(target.name in nodes for sig, nodes in idx.sig_nodes.items() if sig == w.pods[0].signature)
