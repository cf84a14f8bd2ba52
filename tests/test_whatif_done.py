"""Issue 33's "Done means", each run as a user types it (the command line, on
the bundled fixtures), its answer line, its placements and its exit code.
The reasons behind each answer are held by test_whatif_drain.py,
test_whatif_templates.py (each placement also against the real
kube-scheduler) and test_disruption.py (upstream's tables)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DRAIN = ("--snapshot", "fixtures/whatif/drain/cluster.yaml", "--tie-break", "name")
A = "fixtures/whatif/add-nodes"


def kschedx(*args) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "kschedx", *args], capture_output=True, text=True, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr


def answer(out: str) -> str:
    """The line after the version line: the answer."""
    return out.splitlines()[1]


def test_a_node_with_one_replica_of_a_4_replica_deployment_with_min_available_3_drains():
    code, out, _ = kschedx("simulate", *DRAIN, "--drain", "n1")
    assert code == 0
    assert answer(out) == "n1 can be drained: 1 pod moves, shop/web-5d8f6c7b9-x2k7p → n2"
    _, out, _ = kschedx("simulate", *DRAIN, "--drain", "n1", "-o", "json")
    doc = json.loads(out)
    [pdb] = [b for b in doc["drain"]["budgets"] if b["pdb"] == "shop/web"]
    assert pdb["read"]["desiredHealthy"] == 3 and pdb["read"]["expectedPods"] == 4
    [new] = doc["pods"]
    # Where the scheduler puts it: the highest total score among the feasible nodes.
    best = max((n for n in new["nodes"] if n["feasible"]), key=lambda n: n["totalScore"])
    assert new["placedNode"] == best["name"] == "n2"
    assert new["replacementFor"]["pod"] == "shop/web-5d8f6c7b9-x2k7p"


def test_the_node_of_a_single_replica_stateful_set_with_min_available_1_is_blocked_by_its_budget():
    code, out, _ = kschedx("simulate", *DRAIN, "--drain", "n2")
    assert code == 1
    assert answer(out) == (
        "n2 cannot be drained: evicting db/db-0 would violate PodDisruptionBudget db/db (The disruption budget db "
        "needs 1 healthy pods and has 1 currently); kubectl drain retries it every 5s and never finishes")
    _, out, _ = kschedx("simulate", *DRAIN, "--drain", "n2", "-o", "json")
    [node] = json.loads(out)["drain"]["nodes"]
    assert (node["outcome"], node["repeats"]) == ("Blocked", "every 5s")


def test_a_node_with_a_bare_pod_is_refused_without_force_and_the_pod_is_named():
    code, out, _ = kschedx("simulate", *DRAIN, "--drain", "n3")
    assert code == 1
    assert answer(out).startswith("n3 cannot be drained: default/debug declares no controller")
    assert "(use --force to override): default/debug" in answer(out)
    code, out, _ = kschedx("simulate", *DRAIN, "--drain", "n3", "--force")
    assert code == 0
    assert answer(out).endswith("1 pod is lost: default/debug (no controller recreates it)")


def test_add_nodes_auto_adds_one_node_of_the_zone_that_needs_it_and_places_all_6_replicas():
    for order in (("pool-b", "pool-c"), ("pool-c", "pool-b")):
        args = ["simulate", f"{A}/web.yaml", "--snapshot", f"{A}/cluster.yaml", "--tie-break", "name",
                "--add-nodes", "auto", "-o", "json"]
        for t in order:
            args += ["--node-template", f"{A}/templates/{t}.yaml"]
        code, out, _ = kschedx(*args)
        assert code == 0
        doc = json.loads(out)
        assert doc["addNodes"]["perTemplate"] == {"pool-c": 1}
        [node] = doc["addNodes"]["nodes"]
        assert (node["name"], node["template"]) == ("pool-c-1", "pool-c")
        template = yaml.safe_load((ROOT / A / "templates" / "pool-c.yaml").read_text())
        assert template["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-c"  # the zone with one node
        assert len(doc["pods"]) == 6 and all(p["placedNode"] for p in doc["pods"])
        assert doc["summary"]["unschedulable"] == 0


def test_add_nodes_auto_adds_one_gpu_node_for_a_pod_asking_for_gpus_no_node_has():
    code, out, _ = kschedx("simulate", f"{A}/gpu-job.yaml", "--snapshot", f"{A}/cluster.yaml", "--tie-break",
                           "name", "--node-template", f"{A}/templates/pool-b.yaml", "--node-template",
                           f"{A}/templates/pool-gpu.yaml", "--add-nodes", "auto", "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["addNodes"]["perTemplate"] == {"pool-gpu": 1}
    [p] = doc["pods"]
    assert p["placedNode"] == "pool-gpu-1"
    # Without the templates, no node has one.
    code, out, _ = kschedx("simulate", f"{A}/gpu-job.yaml", "--snapshot", f"{A}/cluster.yaml", "-o", "json")
    assert code == 1 and json.loads(out)["pods"][0]["placedNode"] is None


def test_fix_with_a_drain_is_a_usage_error_not_a_silent_mix():
    # --fix verifies against the run it follows; a drain's run is its own answer.
    code, out, err = kschedx("simulate", *DRAIN, "--drain", "n1", "--fix")
    assert code == 2 and out == ""
    assert "--fix cannot be combined with --drain" in err
