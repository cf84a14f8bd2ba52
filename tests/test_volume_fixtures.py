"""The example fixtures under fixtures/volumes/ say what they claim to show."""

from __future__ import annotations

from pathlib import Path

from kschedx.commands import explain as explaining
from kschedx.commands.load import load_workload

FIXTURES = Path(__file__).parent.parent / "fixtures" / "volumes"


def explain(name):
    doc = explaining.explain(load_workload([str(FIXTURES / name)]), tie_break="name")
    return {p["pod"]: p for p in doc["pods"]}


def failures(pod):
    return {n["name"]: n["firstFailure"] for n in pod["nodes"]}


def test_zonal_statefulset():
    pods = explain("zonal-statefulset.yaml")
    assert pods["default/db-0"]["selectedNode"] == "node-a1"
    assert failures(pods["default/db-0"])["node-c1"] == "VolumeBinding"
    db1 = pods["default/db-1"]
    assert db1["status"] == "Unschedulable"
    assert db1["message"].startswith("0/4 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s), "
                                      "2 node(s) didn't match PersistentVolume's node affinity.")
    db2 = pods["default/db-2"]
    c1 = next(n for n in db2["nodes"] if n["name"] == "node-c1")
    vb = next(f for f in c1["filters"] if f["plugin"] == "VolumeBinding")
    assert vb["reasons"] == ["node(s) didn't find available persistent volumes to bind"]
    assert vb["details"]["claims"][0]["verdict"] == "the class's allowedTopologies exclude this node"


def test_csi_attach_limit():
    pods = explain("csi-attach-limit.yaml")
    ingest = pods["default/ingest-7"]
    assert ingest["selectedNode"] == "ip-10-0-1-11"
    full = next(n for n in ingest["nodes"] if n["name"] == "ip-10-0-1-10")
    nvl = next(f for f in full["filters"] if f["plugin"] == "NodeVolumeLimits")
    assert nvl["reasons"] == ["node(s) exceed max volume count"]
    assert (nvl["details"]["limit"], nvl["details"]["attached"], nvl["details"]["new"]) == (3, 3, 1)
    assert nvl["details"]["volumes"][0]["storageClass"] == "gp3"
    reader = pods["default/reader-2"]
    assert all(n["feasible"] for n in reader["nodes"])
