"""NodeResourcesFit and NodeResourcesBalancedAllocation explain the nodes
of one size and use with one shared explanation, InterPodAffinity the
nodes of the same domains, PodTopologySpread describes its constraints
once and shares a constraint's part among the nodes of a domain
(Plugin.score_details_all): the documents are those of asking every node
for its own."""

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
from kschedx.plugins.interpodaffinity.plugin import InterPodAffinity
from kschedx.plugins.podtopologyspread.plugin import PodTopologySpread
from kschedx.result.sink import DocumentSink
from golden_compare import GOLDEN, V135, case_names
from test_golden_config import CASES as CONFIG_CASES, CONFIGS, GOLDEN_CONFIG

SHARING = (NodeResourcesFit, NodeResourcesBalancedAllocation)
COLUMN_WISE = (*SHARING, PodTopologySpread, InterPodAffinity)


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


def _node(name: str, zone: str | None = None) -> dict:
    labels = {"kubernetes.io/hostname": name}
    if zone is not None:
        labels["topology.kubernetes.io/zone"] = zone
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, node: str | None, requests: dict | None, labels: dict | None = None, **spec) -> dict:
    c = {"name": "c", "image": "busybox"}
    if requests:
        c["resources"] = {"requests": requests}
    spec["containers"] = [c]
    if node:
        spec["nodeName"] = node
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
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


def _domains_cluster(tmp_path) -> str:
    """Six nodes in two zones (one node without a zone), pods of app=web on
    some; the pending pod prefers web's zone and host, and spreads over
    zones and hosts."""
    nodes = [_node(f"n{i}", zone=None if i == 5 else f"z{i % 2}") for i in range(6)]
    web = [_pod(f"web-{k}", f"n{i}", None, {"app": "web"}) for k, i in enumerate((0, 0, 1, 2, 5))]
    term = {"labelSelector": {"matchLabels": {"app": "web"}}}
    pending = _pod("new", None, {"cpu": "100m"}, {"app": "web"},
                   affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                       {"weight": 10, "podAffinityTerm": {**term, "topologyKey": "topology.kubernetes.io/zone"}},
                       {"weight": 1, "podAffinityTerm": {**term, "topologyKey": "kubernetes.io/hostname"}}]}},
                   topologySpreadConstraints=[
                       {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway", **term}
                       for key in ("topology.kubernetes.io/zone", "kubernetes.io/hostname")])
    path = tmp_path / "domains.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [*nodes, *web, pending]}))
    return str(path)


def test_domains_shared_by_interpodaffinity_and_podtopologyspread(tmp_path, monkeypatch):
    path = _domains_cluster(tmp_path)
    seen = {}

    from kschedx.result.sink import ResultSink

    class Keep(ResultSink):
        def node_records_encoder(self, records):
            for nr in records:
                rows = nr.table_rows()[1]
                if rows:
                    t = rows[0]
                    t.settle()
                    for j, pl in enumerate(t.plugins):
                        if isinstance(pl, (InterPodAffinity, PodTopologySpread)) and t.details[j] is not None:
                            seen[pl.name] = (t.details[j], [n.name for n in t.nodes])
            return []

    explain_into(Keep(), load_workload([path]), tie_break="name")
    ipa, names = seen["InterPodAffinity"]
    by_name = dict(zip(names, ipa))
    # n0, n2, n4 share zone z0, but not a host: InterPodAffinity's
    # hostname term gives each its own domains; its zone part is one object.
    zone_parts = [next(d for d in by_name[n]["domains"] if d["topologyKey"].endswith("zone")) for n in ("n0", "n2")]
    assert zone_parts[0] is zone_parts[1]
    pts, names = seen["PodTopologySpread"]
    by_name = dict(zip(names, pts))
    z0 = [by_name[n]["constraints"][0] for n in ("n0", "n2", "n4")]
    assert z0[0] is z0[1] is z0[2] and z0[0]["domain"] == "z0"
    assert by_name["n1"]["constraints"][0]["domainCounts"] is z0[0]["domainCounts"]
    assert by_name["n0"]["constraints"][1] is not by_name["n2"]["constraints"][1]  # hosts: one node each
    shared = _document(path, "explain")
    _each_node_its_own(monkeypatch)
    assert _document(path, "explain") == shared


def test_interpodaffinity_nodes_of_one_domain_share_the_whole_explanation(tmp_path, monkeypatch):
    # Zone terms alone: the nodes of a zone have one explanation, as one object.
    items = [_node(f"n{i}", zone=f"z{i % 2}") for i in range(4)]
    items += [_pod("web-0", "n0", None, {"app": "web"}), _pod("web-1", "n1", None, {"app": "web"})]
    items.append(_pod("new", None, None, None, affinity={"podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "topology.kubernetes.io/zone"}}]}}))
    path = tmp_path / "zones.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    from kschedx.plugins.interpodaffinity import scoring

    got = []
    real = scoring.score_details_all

    def spy(state, nodes):
        out = real(state, nodes)
        got.append((out, [ni.name for ni in nodes]))
        return out

    monkeypatch.setattr(scoring, "score_details_all", spy)
    doc = json.loads(_document(str(path), "explain"))
    (details, names), = got
    by_name = dict(zip(names, details))
    assert by_name["n0"] is by_name["n2"] and by_name["n1"] is by_name["n3"]
    assert by_name["n0"] is not by_name["n1"]
    assert by_name["n0"]["domains"][0]["topologyValue"] == "z0"
    written = {n["name"]: next(s for s in n["scores"] if s["plugin"] == "InterPodAffinity") for n in doc["pods"][0]["nodes"]}
    assert written["n0"]["details"] == written["n2"]["details"] != written["n1"]["details"]
