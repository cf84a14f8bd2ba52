"""Preemption's shortcuts held to the full computation.

- framework/preemption_memo.py keeps dry runs from one cycle to the next;
- simulate's retry of a preemptor stops at its nominated node when it fits
  (Simulation.record_retries False);
- the victims are ordered by a key kept on each PodInfo (importance_key,
  gosort.sort_slice_by_key) instead of MoreImportantPod's comparisons.

With the memo off and every retry recorded in full, kschedx does every dry
run of every cycle as before: documents must be byte for byte the same
either way, on clusters where the memo answers (identical preemptors, full
nodes, PodDisruptionBudgets, two priorities, nominated pods, start times
that tie), where it must step aside (spreading, anti-affinity, volumes,
claims: their dry runs read more than the node), on every golden case and
the bundled fixtures. A verify mode does every dry run again and checks
each kept answer against it.
"""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden_compare import GOLDEN, case_names
from kschedx.commands.explain import explain
from kschedx.commands.load import Workload, load_workload
from kschedx.commands.simulate import simulate
from kschedx.framework.gosort import sort_slice, sort_slice_by_key
from kschedx.framework.preemption import importance_key
from kschedx.framework.preemption_memo import DryRunMemo
from kschedx.framework.queue import queue_order
from kschedx.framework.simulation import Simulation
from kschedx.sources.fixtures import Origin
from kschedx.state.cluster import build_cluster
from kschedx.state.types import PodInfo

ROOT = Path(__file__).resolve().parent.parent


def _bench(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return mod


def workload_of(objs: list[dict]) -> Workload:
    objs = json.loads(json.dumps(objs))  # each run its own objects
    cluster = build_cluster([(o, Origin("generated")) for o in objs])
    return Workload(cluster, queue_order([PodInfo(p) for p in cluster.pending_pods()]))


def _documents(make, monkeypatch, run):
    """run(make()) with the shortcuts, in verify mode, and without them."""
    with monkeypatch.context() as m:
        m.setattr(DryRunMemo, "default_verify", True)
        verified = json.dumps(run(make()), sort_keys=True, default=repr)
    fast = json.dumps(run(make()), sort_keys=True, default=repr)
    with monkeypatch.context() as m:
        m.setattr(DryRunMemo, "default_enabled", False)
        m.setattr(Simulation, "record_retries", True)
        full = json.dumps(run(make()), sort_keys=True, default=repr)
    return fast, verified, full


def sim(detail="full", tie_break="name", seed=None):
    return lambda w: simulate(w, tie_break=tie_break, seed=seed, detail=detail)


def count_dry_runs(monkeypatch) -> list:
    """The DryRunMemo of every Evaluator made from now on."""
    made = []
    init = DryRunMemo.__init__

    def record(self):
        init(self)
        made.append(self)

    monkeypatch.setattr(DryRunMemo, "__init__", record)
    return made


# -- clusters ---------------------------------------------------------------------------------
def issue_cluster(nodes=300, pending=8, **kw) -> list[dict]:
    return _bench("gen_preemption_workload").generate(nodes, pending, **kw)


def pdb_cluster(nodes=200, pending=6, seed=3) -> list[dict]:
    """bench_preemption's: 2 and 4 core pods of priorities 0 and 100, a PDB
    that allows no disruption, preemptors of 2, 3 and 4 cores."""
    return _bench("bench_preemption").generate(nodes, pending, seed)


def with_nominated(objs: list[dict], count=6) -> list[dict]:
    """Pending pods of the preemptors' priority, created after them and
    nominated to nodes already: the dry runs on those nodes add them."""
    objs = json.loads(json.dumps(objs))
    nodes = [o["metadata"]["name"] for o in objs if o["kind"] == "Node"]
    for k in range(count):
        objs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"nominated-{k}", "namespace": "default", "labels": {"app": "late"},
                                  "creationTimestamp": "2025-01-03T00:00:00Z"},
                     "spec": {"priority": 1000, "preemptionPolicy": "Never",
                              "containers": [{"name": "c", "image": "late:1",
                                              "resources": {"requests": {"cpu": f"{400 * (k % 3 + 1)}m"}}}]},
                     "status": {"phase": "Pending", "nominatedNodeName": nodes[(7 * k) % len(nodes)]}})
    return objs


def with_constraints(objs: list[dict], kind: str) -> list[dict]:
    """Every other preemptor spreads over zones, or keeps away from pods of
    its own app: its dry runs read other nodes, so none is kept."""
    objs = json.loads(json.dumps(objs))
    pending = [o for o in objs if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    for i, p in enumerate(pending):
        if i % 2:
            continue
        labels = p["metadata"]["labels"]
        if kind == "spread":
            p["spec"]["topologySpreadConstraints"] = [{
                "maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": dict(labels)}}]
        else:
            p["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                "topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": dict(labels)}}]}}
    return objs


def with_claims(objs: list[dict]) -> list[dict]:
    """Preemptors with a PVC each (bound to a zonal PV): VolumeBinding,
    VolumeZone and VolumeRestrictions filter them."""
    objs = json.loads(json.dumps(objs))
    pending = [o for o in objs if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    objs.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "std"},
                 "provisioner": "example.com/disk", "volumeBindingMode": "WaitForFirstConsumer"})
    for i, p in enumerate(pending):
        name = f"data-{i}"
        objs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"name": name, "namespace": "default"},
                     "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "std",
                              "resources": {"requests": {"storage": "1Gi"}}}})
        p["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": name}}]
    return objs


def with_devices(objs: list[dict]) -> list[dict]:
    """Every node publishes two GPUs; every other preemptor asks for one
    through a ResourceClaim (DynamicResources filters it, and allocates in
    flight for the pods after it), the others ask for none."""
    objs = json.loads(json.dumps(objs))
    nodes = [o["metadata"]["name"] for o in objs if o["kind"] == "Node"]
    objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
                 "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    for n in nodes:
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                     "metadata": {"name": f"{n}-gpu"},
                     "spec": {"driver": "gpu.example.com", "nodeName": n,
                              "pool": {"name": n, "generation": 1, "resourceSliceCount": 1},
                              "devices": [{"name": f"gpu-{i}"} for i in range(2)]}})
    pending = [o for o in objs if o["kind"] == "Pod" and not o["spec"].get("nodeName")]
    for i, p in enumerate(pending):
        if i % 2:
            continue
        claim = f"gpu-claim-{i}"
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                     "metadata": {"name": claim, "namespace": "default"},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                         "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]}}})
        p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
        p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    return objs


CLUSTERS = {
    "issue": lambda: issue_cluster(),
    "issue-equal-start-times": lambda: issue_cluster(200, 6, start_times="equal"),
    "issue-few-nodes": lambda: issue_cluster(40, 12),
    "pdb-two-priorities": lambda: pdb_cluster(),
    "nominated": lambda: with_nominated(issue_cluster(150, 6)),
    "nominated-pdb": lambda: with_nominated(pdb_cluster(120, 5)),
    "spread": lambda: with_constraints(issue_cluster(120, 6), "spread"),
    "anti-affinity": lambda: with_constraints(issue_cluster(120, 6), "anti"),
    "volumes": lambda: with_claims(issue_cluster(60, 4)),
    "devices": lambda: with_devices(issue_cluster(40, 8)),
}


@pytest.mark.parametrize("name", sorted(CLUSTERS))
def test_simulate_documents_equal_the_full_computation(name, monkeypatch):
    fast, verified, full = _documents(lambda: workload_of(CLUSTERS[name]()), monkeypatch, sim())
    assert fast == full
    assert verified == full
    doc = json.loads(full)
    assert doc["summary"]["preemptions"] > 0


@pytest.mark.parametrize("name", ["issue", "pdb-two-priorities", "nominated"])
def test_placements_documents_and_random_ties_equal_the_full_computation(name, monkeypatch):
    for run in (sim(detail="placements"), sim(tie_break="random", seed=7)):
        fast, verified, full = _documents(lambda: workload_of(CLUSTERS[name]()), monkeypatch, run)
        assert fast == full == verified


@pytest.mark.parametrize("name", ["issue", "nominated-pdb"])
def test_explain_documents_equal_the_full_computation(name, monkeypatch):
    """explain: identical preemptors against one state (reuse off, so each
    pod's cycle runs and the memo answers the later ones)."""
    from kschedx.commands.explain import explain_into
    from kschedx.result.sink import DocumentSink

    def run(w):
        sink = DocumentSink()
        explain_into(sink, w, tie_break="random", seed=5, reuse=False)
        return sink.doc

    fast, verified, full = _documents(lambda: workload_of(CLUSTERS[name]()), monkeypatch, run)
    assert fast == full == verified


def test_one_dry_run_per_changed_node(monkeypatch):
    """300 potential nodes, 8 identical preemptors: the first cycle dry-runs
    every node, each later one only the node the previous preemption changed."""
    memos = count_dry_runs(monkeypatch)
    doc = simulate(workload_of(issue_cluster(300, 8)), tie_break="name", detail="placements")
    assert doc["summary"]["preemptions"] == 8
    assert sum(m.dry_runs for m in memos) == 300 + 7
    assert all(p["preemption"]["search"]["nodesWithVictims"] == 300 for p in doc["pods"])


def test_nothing_is_kept_when_a_dry_run_reads_other_nodes(monkeypatch):
    memos = count_dry_runs(monkeypatch)
    doc = simulate(workload_of(with_constraints(issue_cluster(50, 4), "spread")), tie_break="name",
                   detail="placements")
    assert doc["summary"]["preemptions"] == 4
    # Two spreading preemptors dry-run every node each time; the other two
    # share their dry runs (the second: one node changed, and the spreading
    # pods' placements in between change two more).
    assert sum(m.dry_runs for m in memos) > 2 * 50 + 50


@pytest.mark.parametrize("name", case_names())
def test_golden_cases_simulate_alike(name, monkeypatch):
    path = str(GOLDEN / "cases" / f"{name}.yaml")
    fast, verified, full = _documents(lambda: load_workload([path]), monkeypatch, sim())
    assert fast == full == verified


FIXTURES = ["preemption", "preemption-search", "gpu", "volumes/csi-attach-limit.yaml", "volumes/zonal-statefulset.yaml",
            "capacity", "zone-spread", "cluster"]


@pytest.mark.parametrize("name", FIXTURES)
def test_bundled_fixtures_simulate_alike(name, monkeypatch):
    path = str(ROOT / "fixtures" / name)
    fast, verified, full = _documents(lambda: load_workload([path]), monkeypatch, sim())
    assert fast == full == verified


def test_the_retry_shortcut_falls_back_when_an_extender_rejects_the_nominated_node(tmp_path, monkeypatch):
    """An extender that rejects the nominated node (node-00000) sends the retry through
    every node again, as kube-scheduler's evaluateNominatedNode does; the
    document is the one of a retry recorded in full."""
    from extender_server import ExtenderServer

    from kschedx.framework.configured import parse_config

    server = ExtenderServer().start()
    try:
        # Every node but the first is fine for the extender; preemption (which asks
        # no filter extender) nominates node-00000, the smallest name.
        server.on("filter", lambda args: {"NodeNames": [n for n in args["NodeNames"] if n != "node-00000"],
                                          "FailedNodes": {"node-00000": "draining"}})
        cfg = parse_config(json.dumps({
            "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "extenders": [{"urlPrefix": server.url, "filterVerb": "filter", "nodeCacheCapable": True}]}),
            "sched.yaml")
        objs = issue_cluster(3, 1)

        def run(w):
            return simulate(w, tie_break="name", config=cfg)

        fast, verified, full = _documents(lambda: workload_of(objs), monkeypatch, run)
    finally:
        server.stop()
    assert fast == full == verified
    [p] = json.loads(full)["pods"]
    assert p["preemption"]["nominatedNode"] == "node-00000" and "still Unschedulable" in p["notes"][-1]


# -- the ordering key -----------------------------------------------------------------------
def _pod(i: int, priority: int, start: str | None) -> PodInfo:
    pod = {"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
           "spec": {"priority": priority, "containers": []}}
    if start is not None:
        pod["status"] = {"startTime": start}
    return PodInfo(pod)


def _less_by_comparison(a, b) -> bool:
    """util.MoreImportantPod as it was written: priority, then start time."""
    if a.priority != b.priority:
        return a.priority > b.priority

    def start(p):
        return (1, 0.0) if p.start_time is None else (0, p.start_time.timestamp())

    return start(a) < start(b)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-2, 2), st.sampled_from([None, "2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z",
                                                               "2025-01-02T10:00:00Z"])), max_size=40))
def test_sort_by_importance_key_gives_go_sort_slice_order(items):
    """Many ties: which of equal pods ends where is Go's pdqsort's doing, and
    the key must leave it exactly so."""
    pods = [_pod(i, p, s) for i, (p, s) in enumerate(items)]
    expected = list(pods)
    sort_slice(expected, _less_by_comparison)
    got = list(pods)
    sort_slice_by_key(got, importance_key)
    assert [p.uid for p in got] == [p.uid for p in expected]


def test_memo_is_bounded(monkeypatch):
    """Many preemptor shapes: the memo keeps at most a few entries per node."""
    objs = issue_cluster(30, 0)
    rng = random.Random(4)
    for k in range(12):
        objs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"shape-{k}", "namespace": "default",
                                  "creationTimestamp": f"2025-01-02T00:00:{k:02d}Z"},
                     "spec": {"priority": 1000, "containers": [{"name": "c", "image": "x:1", "resources": {
                         "requests": {"cpu": f"{rng.choice([800, 1200, 1600, 2000]) + k}m"}}}]},
                     "status": {"phase": "Pending"}})
    memos = count_dry_runs(monkeypatch)
    explain(workload_of(objs), tie_break="name")
    [memo] = [m for m in memos if m.dry_runs]
    assert sum(len(s.by_node) for s in memo._shapes.values()) <= 4 * 30
