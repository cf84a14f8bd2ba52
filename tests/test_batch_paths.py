"""Plugins' batch fast paths (filter_all / score_all) give exactly what their
per-node filter / score give: on every golden case, the whole explain
document (verdicts, reasons, details, scores, explanations) is the same with
the fast paths and without them."""

from __future__ import annotations

import json

import pytest

from kschedx.commands.load import Workload, load_workload
from kschedx.commands.simulate import simulate
from kschedx.framework.dispatch import new_framework
from kschedx.result.document import build_document
from golden_compare import GOLDEN, case_names

BATCH_METHODS = ("filter_all", "score_all", "normalize_all")


def explain_document(name: str, batch: bool) -> str:
    workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    fw = new_framework(workload.cluster, tie_break="name", seed=None)
    if not batch:
        for pl in fw.profile.plugins:
            for method in BATCH_METHODS:
                setattr(pl, method, None)  # the runner then calls filter / score per node
    results = [fw.schedule(pi) for pi in workload.pods]
    doc = build_document(results, mode="explain", tie_break="name", profile=fw.profile.name,
                         not_evaluated=fw.profile.not_evaluated)
    return json.dumps(doc, sort_keys=True, default=repr)


def test_the_default_profile_has_batch_paths():
    workload = load_workload([str(GOLDEN / "cases" / f"{case_names()[0]}.yaml")])
    fw = new_framework(workload.cluster, tie_break="name", seed=None)
    with_batch = {pl.name for pl in fw.profile.plugins if any(callable(getattr(pl, m, None)) for m in BATCH_METHODS)}
    assert {"NodeResourcesFit", "NodeResourcesBalancedAllocation", "TaintToleration", "ImageLocality",
            "PodTopologySpread", "InterPodAffinity"} <= with_batch


@pytest.mark.parametrize("name", case_names())
def test_batch_paths_agree_with_per_node_methods(name):
    assert explain_document(name, batch=True) == explain_document(name, batch=False)


def _mixed_workload(nodes: int):
    import importlib.util
    from pathlib import Path

    from kschedx.state.cluster import build_cluster
    from kschedx.framework.queue import queue_order
    from kschedx.state.types import PodInfo
    from kschedx.sources.fixtures import Origin

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "gen_mixed_workload.py"
    spec = importlib.util.spec_from_file_location("gen_mixed_workload", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    objs = gen.generate(nodes, nodes * 6, 3, 40, groups=3, replicas=4, seed=11)
    cluster = build_cluster([(o, Origin("generated")) for o in objs])
    return Workload(cluster, queue_order([PodInfo(p) for p in cluster.pending_pods()]))


@pytest.mark.parametrize("detail", ["full", "failures"])
def test_simulate_batch_paths_agree_with_per_node_methods(detail, monkeypatch):
    """A simulation of the benchmarks' mixed workload (spread, anti-affinity,
    node affinity; more nodes than kube-scheduler samples, so the `sampling`
    fields name windows) writes the same document with the plugins' batch
    paths as with their per-node methods: explanations a batch path defers
    are settled before the snapshot changes."""
    from kschedx.plugins.registry import IN_TREE

    def document():
        return json.dumps(simulate(_mixed_workload(150), tie_break="name", detail=detail), sort_keys=True)

    with_batch = document()
    for declaration in IN_TREE:
        cls = declaration.factory
        for method in BATCH_METHODS:
            if getattr(cls, method, None) is not None:
                monkeypatch.setattr(cls, method, None)
    assert with_batch == document()
    doc = json.loads(with_batch)
    assert any(p["sampling"] and p["sampling"]["couldBeMissed"] for p in doc["pods"])
    if detail == "full":
        reasons = {r for p in doc["pods"] for plugin in p["filterSummary"].values() for r in plugin}
        assert "node(s) didn't match pod anti-affinity rules" in reasons
