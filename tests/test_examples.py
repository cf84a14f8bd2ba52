"""The bundled example (fixtures/) shows what its comments and the README say it shows."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = ROOT / "fixtures" / "cluster"
PODS = ROOT / "fixtures" / "pods"
FAILED = ("Unschedulable", "UnschedulableAndUnresolvable")


@lru_cache(maxsize=None)
def result(name: str) -> dict:
    doc = explain(load_workload([str(CLUSTER)], [str(PODS / f"{name}.yaml")]), tie_break="name")
    assert doc["pods"], name
    return doc["pods"][0]


def nodes(p) -> dict:
    return {n["name"]: n for n in p["nodes"]}


def verdict(p, node, plugin) -> dict:
    return next(f for f in nodes(p)[node]["filters"] if f["plugin"] == plugin)


def score_of(p, node, plugin) -> dict:
    return next(s for s in nodes(p)[node]["scores"] if s["plugin"] == plugin)


def test_every_example_pod_file_is_covered_here():
    covered = {"web", "cpu-heavy", "too-big", "gpu-training", "ingress", "orders-db", "log-agent", "canary",
               "debug-shell"}
    assert {p.stem for p in PODS.glob("*.yaml")} == covered


def test_web():
    p = result("web")
    assert (p["status"], p["selectedNode"]) == ("Scheduled", "worker-a2")
    assert nodes(p)["worker-b2"]["firstFailure"] == "NodeUnschedulable"
    assert nodes(p)["gpu-b1"]["firstFailure"] == "TaintToleration"
    # the spot node's PreferNoSchedule taint costs it the TaintToleration score
    assert score_of(p, "worker-b1", "TaintToleration")["normalized"] == 0
    assert score_of(p, "worker-a1", "TaintToleration")["normalized"] == 100
    # nginx is already pulled on worker-a1 and worker-a2, not on worker-b1
    assert score_of(p, "worker-a1", "ImageLocality")["raw"] > 0
    assert score_of(p, "worker-b1", "ImageLocality")["raw"] == 0


def test_cpu_heavy():
    p = result("cpu-heavy")
    assert (p["status"], p["selectedNode"]) == ("Scheduled", "worker-a2")
    a1 = verdict(p, "worker-a1", "NodeResourcesFit")
    assert (a1["code"], a1["reasons"]) == ("Unschedulable", ["Insufficient cpu"])
    assert verdict(p, "worker-b1", "NodeResourcesFit")["code"] == "Success"


def test_too_big():
    p = result("too-big")
    assert p["status"] == "Unschedulable"
    assert p["message"].startswith("0/5 nodes are available: 1 node(s) had untolerated taint(s), "
                                   "1 node(s) were unschedulable, 2 Insufficient memory, 3 Insufficient cpu.")
    assert verdict(p, "worker-a2", "NodeResourcesFit")["code"] == "UnschedulableAndUnresolvable"


def test_gpu_training():
    p = result("gpu-training")
    assert (p["status"], p["selectedNode"]) == ("Scheduled", "gpu-b1")
    assert p["requests"]["nvidia.com/gpu"] == "1"
    for name in ("worker-a1", "worker-a2", "worker-b1"):
        assert nodes(p)[name]["firstFailure"] == "NodeAffinity"
    assert verdict(p, "worker-a2", "NodeResourcesFit")["reasons"] == ["Insufficient nvidia.com/gpu"]
    assert verdict(p, "gpu-b1", "TaintToleration")["code"] == "Success"
    assert score_of(p, "gpu-b1", "ImageLocality")["normalized"] == 100


def test_ingress():
    p = result("ingress")
    assert p["status"] == "Scheduled"
    assert nodes(p)["worker-a1"]["firstFailure"] == "NodePorts"
    assert verdict(p, "worker-a2", "NodePorts")["code"] == "Success"


def test_orders_db():
    p = result("orders-db")
    assert (p["status"], p["selectedNode"]) == ("Scheduled", "worker-b1")
    assert p["priority"] == 100000
    assert nodes(p)["worker-a1"]["firstFailure"] == "NodeAffinity"
    assert nodes(p)["worker-a2"]["firstFailure"] == "NodeAffinity"
    assert score_of(p, "worker-b1", "NodeAffinity")["weighted"] == 200
    assert score_of(p, "worker-b1", "TaintToleration")["normalized"] == 100  # the spot taint is tolerated


def test_log_agent():
    p = result("log-agent")
    assert (p["status"], p["selectedNode"]) == ("Scheduled", "worker-b2")
    assert p["preFilterResult"] == {"nodeNames": ["worker-b2"], "plugins": ["NodeAffinity"]}
    assert verdict(p, "worker-b2", "NodeUnschedulable")["code"] == "Success"


def test_canary():
    p = result("canary")
    assert p["status"] == "Gated"
    assert p["gate"]["plugin"] == "SchedulingGates"


def test_debug_shell():
    p = result("debug-shell")
    assert p["status"] == "Scheduled"
    assert p["requests"] == {}
    scored = [n for n in p["nodes"] if n.get("scores") is not None]
    assert scored and all(score_of(p, n["name"], "NodeResourcesBalancedAllocation").get("skipped") for n in scored)
    assert all(score_of(p, n["name"], "ImageLocality")["raw"] == 0 for n in scored)


def test_pending_pod_of_the_snapshot():
    doc = explain(load_workload([str(CLUSTER)]), tie_break="name")
    assert [(p["pod"], p["status"]) for p in doc["pods"]] == [("shop/search-indexer-5f6c7d8b9-r2x4z", "Scheduled")]


FILTER_PLUGINS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit")
# A pod naming its node never reaches the scheduler (kschedx evaluates such a
# POD_FILE pod without spec.nodeName), so NodeName cannot fail on real input.
CANNOT_FAIL = {"NodeName"}


@pytest.mark.parametrize("plugin", FILTER_PLUGINS)
def test_each_filter_plugin_both_passes_and_fails(plugin):
    codes = set()
    for pod_file in PODS.glob("*.yaml"):
        for n in result(pod_file.stem)["nodes"]:
            codes.update(f["code"] for f in n["filters"] if f["plugin"] == plugin)
    assert "Success" in codes
    if plugin not in CANNOT_FAIL:
        assert codes & set(FAILED)


@pytest.mark.parametrize("plugin", ("NodeResourcesBalancedAllocation", "ImageLocality", "TaintToleration",
                                    "NodeAffinity"))
def test_each_score_plugin_both_helps_and_does_not(plugin):
    values = set()
    for pod_file in PODS.glob("*.yaml"):
        for n in result(pod_file.stem)["nodes"]:
            values.update((s["weighted"], bool(s.get("skipped"))) for s in n.get("scores") or () if s["plugin"] == plugin)
    assert any(w > 0 for w, _ in values)
    assert any(w == 0 or skipped for w, skipped in values)


def test_scheduling_gates_both_hold_and_let_through():
    statuses = {result(p.stem)["status"] for p in PODS.glob("*.yaml")}
    assert {"Gated", "Scheduled"} <= statuses
