"""NodeResourcesFit and NodeResourcesBalancedAllocation explain the nodes
of one size and use with one shared explanation, PodTopologySpread
describes its constraints once for every node (Plugin.score_details_all):
the documents are those of asking every node for its own."""

from __future__ import annotations

import json

import pytest

from kschedx.commands.explain import explain_into
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate_into
from kschedx.framework.configured import load_config
from kschedx.framework.interface import Plugin
from kschedx.plugins.noderesources.balanced_allocation import NodeResourcesBalancedAllocation
from kschedx.plugins.noderesources.fit import NodeResourcesFit
from kschedx.plugins.podtopologyspread.plugin import PodTopologySpread
from kschedx.result.sink import DocumentSink
from golden_compare import GOLDEN, V135, case_names
from test_golden_config import CASES as CONFIG_CASES, CONFIGS, GOLDEN_CONFIG

SHARING = (NodeResourcesFit, NodeResourcesBalancedAllocation)
COLUMN_WISE = (*SHARING, PodTopologySpread)


def _document(path: str, mode: str, config=None, features=None) -> str:
    sink = DocumentSink()
    run = explain_into if mode == "explain" else simulate_into
    kwargs = {"config": config} if config is not None else {}
    if features is not None:
        kwargs["features"] = features
    run(sink, load_workload([path]), tie_break="name", **kwargs)
    return json.dumps(sink.doc, sort_keys=True)


def _each_node_its_own(monkeypatch) -> None:
    for cls in COLUMN_WISE:
        monkeypatch.setattr(cls, "score_details_all", Plugin.score_details_all)


@pytest.mark.parametrize("mode", ["explain", "simulate"])
@pytest.mark.parametrize("name", case_names())
def test_golden_cases_the_same_with_shared_explanations(name, mode, monkeypatch):
    path = str(GOLDEN / "cases" / f"{name}.yaml")
    shared = _document(path, mode)
    _each_node_its_own(monkeypatch)
    assert _document(path, mode) == shared


@pytest.mark.parametrize("config", [c for c in CONFIGS if c != "default"])
@pytest.mark.parametrize("case", CONFIG_CASES)
def test_scoring_strategies_the_same_with_shared_explanations(config, case, monkeypatch):
    # MostAllocated, RequestedToCapacityRatio (a shape), reweighted resources.
    path = str(GOLDEN_CONFIG / "cases" / f"{case}.json")
    cfg = load_config(str(GOLDEN_CONFIG / "configs" / f"{config}.yaml"), features=V135)
    shared = _document(path, "explain", cfg, V135)
    _each_node_its_own(monkeypatch)
    assert _document(path, "explain", cfg, V135) == shared


def test_nodes_alike_share_one_explanation():
    # The mixed golden-config cluster has nodes of one size and use: fewer
    # explanations than nodes, each one shared as it is (read-only).
    from kschedx.result.sink import ResultSink

    counts = []

    class Count(ResultSink):
        def node_records_encoder(self, records):
            tables = {id(t): t for t in (nr.table_rows()[1][0] for nr in records if nr.table_rows()[1])}
            for t in tables.values():
                t.settle()
                for j, pl in enumerate(t.plugins):
                    if isinstance(pl, SHARING) and t.details is not None and t.details[j] is not None:
                        counts.append((len(t.details[j]), len({id(d) for d in t.details[j]})))
            return []

    explain_into(Count(), load_workload([str(GOLDEN_CONFIG / "cases" / f"{CONFIG_CASES[0]}.json")]),
                 tie_break="name")
    assert counts and any(distinct < n for n, distinct in counts)


def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, node: str | None, requests: dict | None) -> dict:
    c = {"name": "c", "image": "busybox"}
    if requests:
        c["resources"] = {"requests": requests}
    spec = {"containers": [c]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": spec, "status": {"phase": "Running" if node else "Pending"}}


def test_nodes_alike_for_one_plugin_and_not_the_other(tmp_path, monkeypatch):
    # a: a pod with no requests (NodeResourcesFit counts 100m/200Mi for it,
    # BalancedAllocation nothing); b: a pod asking exactly 100m/200Mi. The
    # two are alike for Fit and not for BalancedAllocation.
    items = [_node("a"), _node("b"), _pod("free", "a", None),
             _pod("asks", "b", {"cpu": "100m", "memory": "200Mi"}),
             _pod("new", None, {"cpu": "500m", "memory": "1Gi"})]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    shared = _document(str(path), "explain")
    doc = json.loads(shared)
    by_plugin = {}
    for n in doc["pods"][0]["nodes"]:
        for s in n["scores"]:
            by_plugin.setdefault(s["plugin"], []).append(s.get("details"))
    assert by_plugin["NodeResourcesFit"][0] == by_plugin["NodeResourcesFit"][1]
    assert by_plugin["NodeResourcesBalancedAllocation"][0] != by_plugin["NodeResourcesBalancedAllocation"][1]
    _each_node_its_own(monkeypatch)
    assert _document(str(path), "explain") == shared
