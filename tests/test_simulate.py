"""simulate: pods in queue order, each placement and preemption applied
before the next pod."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.state.types import PodInfo
from kschedx.cli.main import main
from golden_compare import GOLDEN
from builders import HIGH, LOW, MID, ONE_POD
from builders import preemption_node as node
from builders import preemption_pod as pod


def _write(tmp_path, objs, name="cluster.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


def _simulate(tmp_path, objs, **kw):
    return simulate(load_workload([_write(tmp_path, objs)]), tie_break="name", **kw)


def _by_pod(doc):
    return {p["pod"]: p for p in doc["pods"]}


def test_placements_fill_nodes_one_after_another(tmp_path):
    objs = [node("a", {"cpu": "1", "memory": "1Gi"}), node("b", {"cpu": "1", "memory": "1Gi"})]
    objs += [pod(f"w{i}", req={"cpu": "400m"}) for i in range(5)]
    doc = _simulate(tmp_path, objs)
    placed = [p["placedNode"] for p in doc["pods"]]
    assert placed.count("a") == 2 and placed.count("b") == 2 and placed.count(None) == 1
    last = doc["pods"][-1]
    assert last["status"] == "Unschedulable" and last["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    util = {u["node"]: u for u in doc["utilization"]}
    assert util["a"]["before"]["cpu"] == 0 and util["a"]["after"]["cpu"] == 800
    assert util["a"]["allocatable"]["cpu"] == 1000
    assert doc["summary"]["placed"] == 4 and doc["summary"]["unschedulable"] == 1


def test_preemption_deletes_victims_and_places_preemptor(tmp_path):
    objs = [node("n1", ONE_POD), pod("low", node="n1", priority=LOW), pod("urgent", priority=HIGH),
            pod("later", priority=LOW)]
    doc = _simulate(tmp_path, objs)
    pods = _by_pod(doc)
    urgent = pods["default/urgent"]
    assert urgent["status"] == "Unschedulable" and urgent["selectedNode"] == "n1" and urgent["placedNode"] == "n1"
    assert urgent["preemption"]["victims"] == [{"pod": "default/low", "priority": 0, "node": "n1"}]
    # v1.37 (the default) says where preemption found room.
    assert urgent["message"] == ("0/1 nodes are available: 1 Too many pods. preemption: found a potential "
                                 "placement for pod on node n1, preempting 1 victims")
    assert any(n.startswith("preemption: deleted 1 victim(s) [default/low] on n1; retried at once") for n in urgent["notes"])
    # The victim is gone (not re-queued); the node is full with the preemptor.
    later = pods["default/later"]
    assert later["placedNode"] is None
    assert later["message"] == ("0/1 nodes are available: 1 Too many pods. "
                                "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")
    assert doc["summary"]["preemptions"] == 1 and doc["summary"]["victims"] == 1


def test_queue_order_is_priority_then_creation_time(tmp_path):
    def created(p, ts):
        p["metadata"]["creationTimestamp"] = ts
        return p

    objs = [node("n1", ONE_POD),
            created(pod("old-low", priority=LOW), "2024-01-01T00:00:00Z"),
            created(pod("new-mid", priority=MID), "2024-01-03T00:00:00Z"),
            created(pod("old-mid", priority=MID), "2024-01-02T00:00:00Z")]
    doc = _simulate(tmp_path, objs)
    assert [p["pod"] for p in doc["pods"]] == ["default/old-mid", "default/new-mid", "default/old-low"]
    assert [p["placedNode"] for p in doc["pods"]] == ["n1", None, None]


def test_victim_placed_earlier_in_the_run_is_marked(tmp_path):
    # low is placed first (it comes first in this queue), then urgent preempts it.
    w = load_workload([_write(tmp_path, [node("n1", ONE_POD), pod("low", priority=LOW)])])
    w.pods.append(PodInfo(pod("urgent", priority=HIGH)))
    doc = simulate(w, tie_break="name")
    by = _by_pod(doc)
    assert by["default/low"]["placedNode"] == "n1"
    assert by["default/low"]["preemptedBy"] == "default/urgent"
    assert by["default/urgent"]["placedNode"] == "n1"
    assert doc["utilization"][0]["after"]["pods"] == 1


def test_nominated_pod_reserves_its_node_until_placed(tmp_path):
    objs = [node("m1", {"cpu": "2", "memory": "4Gi"}),
            pod("nominee", priority=1000, req={"cpu": "1500m"}, nominated="m1"),
            dict(pod("filler", req={"cpu": "1"}), spec={"nodeSelector": {"kubernetes.io/hostname": "m1"},
                                                         "containers": [{"name": "c", "image": "x",
                                                                         "resources": {"requests": {"cpu": "1"}}}]})]
    doc = _simulate(tmp_path, objs)
    by = _by_pod(doc)
    assert by["default/nominee"]["placedNode"] == "m1"
    assert by["default/filler"]["placedNode"] is None


def test_lower_priority_nomination_is_cleared_by_preemption(tmp_path):
    objs = [node("n1", ONE_POD), node("n2", ONE_POD),
            pod("low1", node="n1", priority=LOW), pod("busy", node="n2", priority=HIGH),
            pod("nominee", priority=MID, nominated="n1"), pod("urgent", priority=HIGH)]
    doc = _simulate(tmp_path, objs)
    by = _by_pod(doc)
    assert by["default/urgent"]["placedNode"] == "n1"
    assert by["default/urgent"]["preemption"]["clearedNominations"] == ["default/nominee"]
    assert by["default/nominee"]["placedNode"] is None


def test_random_tie_break_is_reproducible_with_seed(tmp_path):
    objs = [node(f"n{i}") for i in range(6)] + [pod(f"p{i}", req={"cpu": "10m"}) for i in range(12)]
    path = _write(tmp_path, objs)
    runs = [simulate(load_workload([path]), tie_break="random", seed=42) for _ in range(2)]
    assert [p["placedNode"] for p in runs[0]["pods"]] == [p["placedNode"] for p in runs[1]["pods"]]


def test_progress_is_reported(tmp_path):
    objs = [node("n1")] + [pod(f"p{i}") for i in range(3)]
    seen = []
    _simulate(tmp_path, objs, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_cli_simulate_json_and_human(tmp_path):
    case = str(GOLDEN / "cases" / "hand-05-preemption.yaml")
    runner = CliRunner()
    res = runner.invoke(main, ["simulate", "--snapshot", case, "--tie-break", "name", "-o", "json"])
    doc = json.loads(res.stdout)
    assert doc["mode"] == "simulate" and res.exit_code == 1
    assert _by_pod(doc)["default/urgent"]["placedNode"] == "n1"
    res = runner.invoke(main, ["simulate", "--snapshot", case, "--tie-break", "name"])
    assert "default/low-2" in res.stdout and "preempted 1 pod(s)" in res.stdout
    res = runner.invoke(main, ["simulate"])
    assert res.exit_code == 2


def test_cli_simulate_deployment(tmp_path):
    cluster = _write(tmp_path, [node("n1"), node("n2")])
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx",
                                                             "resources": {"requests": {"cpu": "100m"}}}]}}}}
    path = _write(tmp_path, [deploy], "deploy.yaml")
    res = CliRunner().invoke(main, ["simulate", path, "--snapshot", cluster, "--tie-break", "name", "-o", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert len(doc["pods"]) == 4 and all(p["placedNode"] for p in doc["pods"])
    assert doc["inputNotes"]


@pytest.mark.parametrize("name", ["hand-05-preemption", "hand-08-preemption-pdb"])
def test_explain_and_simulate_agree_on_first_preemption(name):
    w = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    e = explain(w, tie_break="name")["pods"][0]["preemption"]
    s = simulate(w, tie_break="name")["pods"][0]["preemption"]
    assert e["nominatedNode"] == s["nominatedNode"] and e["victims"] == s["victims"]
