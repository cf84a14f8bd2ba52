"""simulate --drain and capacity --drain on fixtures/whatif/drain/: the answers
fixtures/whatif/README.md works out by hand, the document's `drain`, every
output format, the exit codes; and each replacement's placement against the
real kube-scheduler (the oracle) on the state the drain leaves when it is
scheduled."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kschedx.commands.load import load_workload
from kschedx.commands.whatif import Change, simulate_changed
from kschedx.result.sink import DocumentSink
from kschedx.whatif.drain import DrainOptions
from test_whatif_fixtures import DRAIN, WHATIF, _objects, bound, cordon, gone, recreated, terminating

ROOT = Path(__file__).resolve().parent.parent


def drain(*nodes, force=False, disable_eviction=False, pod_files=(), snapshot=DRAIN):
    workload = load_workload([str(snapshot)], [str(f) for f in pod_files])
    sink = DocumentSink()
    code = simulate_changed(sink, workload, Change(drain=DrainOptions(list(nodes), force=force,
                                                                      disable_eviction=disable_eviction)),
                            tie_break="name")
    return code, sink.doc


def placed(doc) -> dict:
    return {p["replacementFor"]["pod"]: (p["pod"], p["placedNode"]) for p in doc["pods"] if p.get("replacementFor")}


def node_report(doc, node) -> dict:
    return next(n for n in doc["drain"]["nodes"] if n["node"] == node)


def pod_report(doc, node, key) -> dict:
    return next(p for p in node_report(doc, node)["pods"] if p["pod"] == key)


# -- Done means: the 4-replica Deployment with minAvailable 3 --------------------------------------
def test_draining_a_node_with_one_web_replica_completes_and_the_replacement_goes_where_the_scheduler_would():
    code, doc = drain("n1")
    assert code == 0
    assert doc["drain"]["answer"] == "n1 can be drained: 1 pod moves, shop/web-5d8f6c7b9-x2k7p → n2"
    assert placed(doc) == {"shop/web-5d8f6c7b9-x2k7p": ("shop/web-5d8f6c7b9-q8hwz", "n2")}
    [p] = doc["pods"]
    assert {n["name"]: n.get("totalScore") for n in p["nodes"]} == {"n1": None, "n2": 636, "n3": 556, "n4": 535}
    assert p["replacementFor"] == {"pod": "shop/web-5d8f6c7b9-x2k7p", "node": "n1", "round": 1, "from": "pod",
                                   "controller": {"kind": "ReplicaSet", "name": "web-5d8f6c7b9",
                                                  "workload": "Deployment shop/web"}}
    report = node_report(doc, "n1")
    assert (report["outcome"], report["rounds"]) == ("Drained", 1)
    assert pod_report(doc, "n1", "kube-system/node-exporter-b7kq2") == {
        "pod": "kube-system/node-exporter-b7kq2", "action": "Stays", "reason": "DaemonSet"}
    assert report["kubectl"] == [
        "node/n1 cordoned",
        "Warning: ignoring DaemonSet-managed Pods: kube-system/node-exporter-b7kq2",
        "evicting pod shop/web-5d8f6c7b9-x2k7p",
        "pod/web-5d8f6c7b9-x2k7p evicted",
        "node/n1 drained",
    ]
    # The budget allowed the eviction and, once the replacement was Ready, allows one again.
    [budget] = doc["drain"]["budgets"]
    assert budget["pdb"] == "shop/web" and budget["read"] == budget["final"] == {
        "currentHealthy": 4, "desiredHealthy": 3, "expectedPods": 4, "disruptionsAllowed": 1}
    assert doc["whatIf"]["drain"] == {"nodes": ["n1"], "force": False, "deleteEmptyDirData": False,
                                      "disableEviction": False}


def test_two_replicas_of_one_budget_move_one_at_a_time():
    code, doc = drain("n4")
    assert code == 0
    assert doc["drain"]["answer"] == (
        "n4 can be drained: 2 pods move one at a time (PodDisruptionBudget shop/web allows 1 disruption): "
        "shop/web-5d8f6c7b9-h5n2c → n2, shop/web-5d8f6c7b9-t6w9r → n3")
    report = node_report(doc, "n4")
    assert (report["rounds"], report["raceOrder"]) == (2, True)
    second = pod_report(doc, "n4", "shop/web-5d8f6c7b9-t6w9r")
    assert second["round"] == 2
    # Refused first with the status the first eviction had just written
    # (allowed 0, currentHealthy still 4, the condition without a message).
    assert second["refusals"] == [{"round": 1, "code": 429, "pdb": "shop/web",
                                   "message": "Cannot evict pod as it would violate the pod's disruption budget.",
                                   "cause": "The disruption budget web does not allow evicting pods currently"}]
    scores = [{n["name"]: n.get("totalScore") for n in p["nodes"]} for p in doc["pods"]]
    assert scores == [{"n1": 612, "n2": 636, "n3": 590, "n4": None}, {"n1": 632, "n2": 607, "n3": 650, "n4": None}]


def test_two_nodes_drain_one_after_the_other():
    code, doc = drain("n1", "n4")
    assert code == 0
    assert [n["outcome"] for n in doc["drain"]["nodes"]] == ["Drained", "Drained"]
    assert {k: v[1] for k, v in placed(doc).items()} == {"shop/web-5d8f6c7b9-x2k7p": "n2",
                                                        "shop/web-5d8f6c7b9-h5n2c": "n3",
                                                        "shop/web-5d8f6c7b9-t6w9r": "n2"}
    assert doc["drain"]["answer"].splitlines()[-1] == "drained 2 of 2 nodes; 3 pod(s) moved, 0 lost, 0 pending"


# -- Done means: the single-replica StatefulSet with minAvailable 1 --------------------------------
def test_stateful_set_pod_is_blocked_by_its_budget():
    code, doc = drain("n2")
    assert code == 1
    assert doc["drain"]["answer"] == (
        "n2 cannot be drained: evicting db/db-0 would violate PodDisruptionBudget db/db (The disruption budget db "
        "needs 1 healthy pods and has 1 currently); kubectl drain retries it every 5s and never finishes")
    report = node_report(doc, "n2")
    assert report["outcome"] == "Blocked" and report["repeats"] == "every 5s"
    assert pod_report(doc, "n2", "db/db-0")["action"] == "Blocked"
    assert report["kubectl"][-1] == ('error when evicting pods/"db-0" -n "db" (will retry after 5s): Cannot evict '
                                     "pod as it would violate the pod's disruption budget.")
    assert doc["pods"] == []  # nothing was recreated


def test_stateful_set_pod_deleted_without_the_eviction_api_comes_back_where_its_volume_is():
    # --disable-eviction: the same name and claim once the old pod is gone.
    code, doc = drain("n2", disable_eviction=True)
    assert code == 0
    assert placed(doc) == {"db/db-0": ("db/db-0", "n1")}
    [p] = doc["pods"]
    assert p["uid"] != "uid-of-the-old-pod"
    failing = {n["name"]: n["firstFailure"] for n in p["nodes"] if not n["feasible"]}
    assert failing == {"n2": "NodeUnschedulable", "n3": "VolumeBinding", "n4": "VolumeBinding"}
    assert "pod/db-0 deleted" in node_report(doc, "n2")["kubectl"]


# -- Done means: a bare pod ----------------------------------------------------------------------
def test_bare_pod_refuses_the_node_and_is_named():
    code, doc = drain("n3")
    assert code == 1
    assert doc["drain"]["answer"] == (
        "n3 cannot be drained: default/debug declares no controller (cannot delete Pods that declare no controller "
        "(use --force to override): default/debug); nothing is evicted and n3 stays cordoned")
    report = node_report(doc, "n3")
    assert report["outcome"] == "Refused" and report["rounds"] == 0
    assert pod_report(doc, "n3", "shop/web-5d8f6c7b9-m4q8z")["action"] == "NotEvicted"
    assert report["kubectl"][-1] == ('error: unable to drain node "n3" due to error: cannot delete Pods that declare '
                                     'no controller (use --force to override): default/debug, continuing command...')


def test_bare_pod_with_force_is_lost_and_said_so():
    code, doc = drain("n3", force=True)
    assert code == 0
    assert doc["drain"]["answer"] == ("n3 can be drained (--force): 1 pod moves, shop/web-5d8f6c7b9-m4q8z → n2; "
                                      "1 pod is lost: default/debug (no controller recreates it)")
    assert doc["summary"]["lost"] == 1 and doc["drain"]["lost"] == 1
    assert pod_report(doc, "n3", "default/debug")["lost"] is True


def test_a_refused_node_stays_cordoned_for_the_pods_after_it():
    # n3 is refused, but cordoned: n4's replacements cannot go there.
    code, doc = drain("n3", "n4")
    assert code == 1
    assert {v[1] for v in placed(doc).values()} <= {"n1", "n2"}


# -- the oracle: the real kube-scheduler on the states the drain leaves ---------------------------
def _oracle_placement(objects) -> dict:
    """The real kube-scheduler's simulate over `objects` (its pending pods)."""
    from tests.oracle import binary_or_skip, run

    binary_or_skip("1.36")
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump_all(objects, f)
    doc = run("1.36", f.name, "simulate")
    Path(f.name).unlink()
    return {p["pod"]: (p["placedNode"], {n["name"]: n.get("totalScore") for n in p["nodes"]}) for p in doc["pods"]}


@pytest.mark.parametrize("nodes, force, rounds", [
    (["n1"], False, [["shop/web-5d8f6c7b9-x2k7p"]]),
    (["n4"], False, [["shop/web-5d8f6c7b9-h5n2c"], ["shop/web-5d8f6c7b9-t6w9r"]]),
    (["n3"], True, [["shop/web-5d8f6c7b9-m4q8z"]]),
    (["n1", "n4"], False, [["shop/web-5d8f6c7b9-x2k7p"], ["shop/web-5d8f6c7b9-h5n2c"],
                           ["shop/web-5d8f6c7b9-t6w9r"]]),
])
def test_replacements_go_where_the_real_scheduler_puts_them(nodes, force, rounds):
    """Each round's state (the nodes cordoned, the evicted pods terminating,
    the pods placed before bound) scheduled by the oracle: the same node and
    the same totals as kschedx's drain."""
    code, doc = drain(*nodes, force=force)
    ours = {p["replacementFor"]["pod"]: p for p in doc["pods"] if p.get("replacementFor")}
    objects = _objects(DRAIN)
    for n in nodes:
        cordon(objects, n)
    if force:
        gone(objects, "default/debug")
    for evicted_keys in rounds:
        pending = []
        for key in evicted_keys:
            evicted = terminating(objects, key)
            mine = ours[key]
            pending.append(recreated(evicted, mine["pod"].split("/")[1]))
        theirs = _oracle_placement(objects + pending)
        for key, pod in zip(evicted_keys, pending):
            mine = ours[key]
            node, totals = theirs[mine["pod"]]
            assert (mine["placedNode"], {n["name"]: n.get("totalScore") for n in mine["nodes"]}) == (node, totals)
            gone(objects, key)
            objects.append(bound(pod, node))


def test_stateful_set_pod_recreated_goes_where_the_real_scheduler_puts_it():
    code, doc = drain("n2", disable_eviction=True)
    objects = _objects(DRAIN)
    cordon(objects, "n2")
    old = gone(objects, "db/db-0")
    [mine] = doc["pods"]
    theirs = _oracle_placement(objects + [recreated(old, "db-0")])
    assert theirs["db/db-0"][0] == mine["placedNode"] == "n1"


# -- capacity --drain ----------------------------------------------------------------------------------
def test_capacity_counts_on_the_cluster_the_drain_leaves():
    from kschedx.commands.capacity import Options, capacity

    workload = load_workload([str(DRAIN)], [str(WHATIF / "drain" / "web.yaml")])
    doc = capacity(workload, Options(drain=DrainOptions(["n1"])), tie_break="name")
    [t] = doc["templates"]
    assert (t["count"], t["perNode"]) == (15, {"n2": 4, "n3": 6, "n4": 5})
    assert t["drain"]["answer"] == "n1 can be drained: 1 pod moves, shop/web-5d8f6c7b9-x2k7p → n2"
    assert doc["options"]["drain"]["nodes"] == ["n1"] and doc["exitCode"] == 0
    # The run shares the cluster with the next: nothing of the drain is left in it.
    again = capacity(load_workload([str(DRAIN)], [str(WHATIF / "drain" / "web.yaml")]), Options(), tie_break="name")
    assert again["templates"][0]["count"] == 22


def test_capacity_with_a_drain_that_does_not_complete_exits_1():
    from kschedx.commands.capacity import Options, capacity

    workload = load_workload([str(DRAIN)], [str(WHATIF / "drain" / "web.yaml")])
    doc = capacity(workload, Options(drain=DrainOptions(["n2"])), tie_break="name")
    assert doc["exitCode"] == 1 and doc["templates"][0]["drain"]["outcome"] == "NotDrained"


# A pending pod of priority 1000 (preemptionPolicy Never) and the drained
# pod's new pod both want m1's one CPU: kube-scheduler's queue takes the
# pending pod first, so the ReplicaSet's new pod stays Pending.
PENDING_FIRST = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000,
     "preemptionPolicy": "Never"},
    *({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
       "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "20"}}} for n, cpu in (("d1", "4"), ("m1", "1"))),
    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "low", "namespace": "default", "uid": "rs-low"},
     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "low"}},
              "template": {"metadata": {"labels": {"app": "low"}},
                           "spec": {"containers": [{"name": "c", "image": "x",
                                                    "resources": {"requests": {"cpu": "1"}}}]}}}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "low-1", "namespace": "default", "labels": {"app": "low"},
                  "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "low", "uid": "rs-low",
                                       "controller": True}]},
     "spec": {"nodeName": "d1", "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
     "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "urgent", "namespace": "default"},
     "spec": {"priorityClassName": "high",
              "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]},
     "status": {"phase": "Pending"}},
]
TINY = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tiny", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}}


def test_capacity_with_pending_drains_as_simulate_does(tmp_path):
    from kschedx.commands.capacity import Options, capacity

    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(yaml.safe_dump_all(PENDING_FIRST))
    pod_file = tmp_path / "tiny.yaml"
    pod_file.write_text(yaml.safe_dump(TINY))
    _, sim = drain("d1", snapshot=snapshot)
    assert sim["drain"]["answer"].startswith("d1 can be drained, but 1 pod does not come back")

    workload = load_workload([str(snapshot)], [str(pod_file)])
    doc = capacity(workload, Options(with_pending=True, drain=DrainOptions(["d1"])), tie_break="name")
    [t] = doc["templates"]
    # The same answer and the same placements as simulate --drain: the
    # pending pod is queued with the new pod, not placed after the drain.
    assert t["drain"]["answer"] == sim["drain"]["answer"]
    assert t["drain"]["outcome"] == sim["drain"]["outcome"]
    assert {r["replacementFor"]: (r["pod"], r["placedNode"]) for r in t["drain"]["replacements"]} == placed(sim)
    assert t["pending"] == {"pods": 1, "placed": 1}
    assert (t["count"], doc["exitCode"]) == (0, 1)

    # Without --with-pending the pending pod takes no room: the new pod goes to m1.
    alone = capacity(load_workload([str(snapshot)], [str(pod_file)]), Options(drain=DrainOptions(["d1"])),
                     tie_break="name")
    assert alone["templates"][0]["drain"]["answer"] == "d1 can be drained: 1 pod moves, default/low-1 → m1"
    assert "pending" not in alone["templates"][0]


# -- the command line, every format ------------------------------------------------------------------
def cli(*args):
    proc = subprocess.run([sys.executable, "-m", "kschedx", *args], capture_output=True, text=True, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr


SNAPSHOT = ("--snapshot", "fixtures/whatif/drain/cluster.yaml", "--tie-break", "name")


def test_human_output_says_the_answer_first():
    code, out, _ = cli("simulate", *SNAPSHOT, "--drain", "n4")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].startswith("n4 can be drained: 2 pods move one at a time")
    assert "shop/web-5d8f6c7b9-t6w9r         refused once (429, PDB shop/web), evicted in round 2" in out
    assert "scheduled (replaces shop/web-5d8f6c7b9-h5n2c)" in out
    code, wide, _ = cli("simulate", *SNAPSHOT, "--drain", "n4", "-o", "wide")
    assert "kubectl drain would print:" in wide and "  node/n4 drained" in wide


@pytest.mark.parametrize("node, code", [("n1", 0), ("n2", 1), ("n3", 1)])
def test_exit_code(node, code):
    assert cli("simulate", *SNAPSHOT, "--drain", node)[0] == code


def test_json_yaml_jsonl_carry_the_drain():
    _, out, _ = cli("simulate", *SNAPSHOT, "--drain", "n2", "-o", "json")
    doc = json.loads(out)
    assert doc["drain"]["nodes"][0]["outcome"] == "Blocked"
    _, out, _ = cli("simulate", *SNAPSHOT, "--drain", "n2", "-o", "yaml")
    assert yaml.safe_load(out)["drain"]["outcome"] == "NotDrained"
    _, out, _ = cli("simulate", *SNAPSHOT, "--drain", "n1", "-o", "jsonl")
    last = json.loads(out.splitlines()[-1])
    assert last["drain"]["answer"].startswith("n1 can be drained")


def test_ci_formats_carry_the_drain():
    code, out, _ = cli("simulate", *SNAPSHOT, "--drain", "n2,n1", "-o", "junit")
    assert code == 1
    assert '<testcase name="drain n2" classname="kschedx.simulate.whatif">' in out
    assert '<failure type="Blocked" message="n2 cannot be drained' in out
    assert 'tests="3" failures="1"' in out
    _, out, _ = cli("simulate", *SNAPSHOT, "--drain", "n2,n1", "-o", "github")
    assert out.splitlines()[0].startswith("::error title=drain n2 is Blocked::n2 cannot be drained")
    assert out.splitlines()[1].startswith("::notice title=drain n1::n1 can be drained")
    assert out.splitlines()[-1].endswith("; drained 1 of 2 nodes")
    _, out, _ = cli("simulate", *SNAPSHOT, "--drain", "n2,n1", "-o", "tap")
    assert "not ok 1 - drain n2: Blocked" in out and "ok 2 - drain n1: n1 can be drained" in out
    assert "ok 3 - shop/web-5d8f6c7b9-q8hwz: Scheduled on n3 (replaces shop/web-5d8f6c7b9-x2k7p)" in out


def test_junit_with_a_drain_is_valid(tmp_path):
    import xmlschema

    _, out, _ = cli("simulate", *SNAPSHOT, "--drain", "n2,n1", "-o", "junit")
    xmlschema.XMLSchema(str(ROOT / "tests" / "schemas" / "junit-10.xsd")).validate(out)


def test_html_report_has_the_cluster_changes(tmp_path):
    report = tmp_path / "r.html"
    code, _, _ = cli("simulate", *SNAPSHOT, "--drain", "n4", "--report", str(report))
    page = report.read_text()
    assert '<section id="changes"><h2>Cluster changes</h2>' in page
    assert "n4 can be drained: 2 pods move one at a time" in page
    assert "kubectl drain would print" in page


def test_capacity_human_says_the_drain_first():
    code, out, _ = cli("capacity", "fixtures/whatif/drain/web.yaml", *SNAPSHOT, "--drain", "n1")
    assert code == 0
    assert out.splitlines()[2] == "n1 can be drained: 1 pod moves, shop/web-5d8f6c7b9-x2k7p → n2"
    assert "15 copies fit" in out


@pytest.mark.parametrize("args, message", [
    (("--drain", "n11"), "no node named 'n11' in the snapshot (did you mean n1"),
    (("--force",), "--force needs --drain"),
    (("--disable-eviction",), "--disable-eviction needs --drain"),
    (("--drain", "n1,,n2"), "an empty node name"),
])
def test_usage_errors(args, message):
    code, _, err = cli("simulate", *SNAPSHOT, *args)
    assert code == 2 and message in err


# -- a live cluster ------------------------------------------------------------------------------------------
def test_drain_on_a_live_cluster_with_the_read_role(kube_api):
    """The pods' controllers are read (and the read role grants them): the
    same answer as from the snapshot file; no pod needs naming."""
    from cluster_scenarios import run as run_cli
    from kschedx.sources.fixtures import read_objects
    from test_rbac import roles

    kube_api.add(*(obj for obj, _ in read_objects([str(DRAIN)])))
    kube_api.authorize(roles()["kschedx-read"])
    r = run_cli("simulate", "--drain", "n4", "--kubeconfig", kube_api.kubeconfig, "-o", "json", "--tie-break", "name")
    doc = json.loads(r.output)
    assert r.exit_code == 0, r.output
    assert doc["drain"]["answer"].startswith("n4 can be drained: 2 pods move one at a time")
    assert all(req.status != 403 for req in kube_api.requests)
    assert any(req.path.startswith("/apis/apps/v1/daemonsets") for req in kube_api.requests)
    r = run_cli("simulate", "--drain", "n3", "--kubeconfig", kube_api.kubeconfig, "--tie-break", "name")
    assert r.exit_code == 1 and "default/debug declares no controller" in r.output


def test_capacity_html_report_says_the_drain(tmp_path):
    report = tmp_path / "c.html"
    cli("capacity", "fixtures/whatif/drain/web.yaml", *SNAPSHOT, "--drain", "n1", "--report", str(report))
    assert '<p class="answer"><b>n1 can be drained: 1 pod moves, shop/web-5d8f6c7b9-x2k7p → n2</b></p>' in \
        report.read_text()


# A pod whose DaemonSet is not in the cluster: kubectl's daemonSetFilter
# gets a NotFound and refuses the node (--ignore-daemonsets keeps only pods
# of a DaemonSet that exists); with --force it deletes the pod.
ORPHAN = """
apiVersion: v1
kind: Node
metadata: {name: d1, labels: {kubernetes.io/hostname: d1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "50"}}
---
apiVersion: v1
kind: Node
metadata: {name: m1, labels: {kubernetes.io/hostname: m1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "50"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: orphan-ds
  namespace: kube-system
  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: gone, uid: u, controller: true}]
spec:
  nodeName: d1
  containers: [{name: c, image: x}]
status:
  phase: Running
  conditions: [{type: Ready, status: "True"}]
"""


def test_a_pod_of_a_daemon_set_that_does_not_exist_refuses_the_node(tmp_path):
    snapshot = tmp_path / "orphan.yaml"
    snapshot.write_text(ORPHAN)
    code, doc = drain("d1", snapshot=snapshot)
    assert code == 1
    assert node_report(doc, "d1")["outcome"] == "Refused"
    assert pod_report(doc, "d1", "kube-system/orphan-ds") == {
        "pod": "kube-system/orphan-ds", "action": "Refused", "reason": "DaemonSet"}
    assert doc["drain"]["answer"] == (
        'd1 cannot be drained: kube-system/orphan-ds belongs to a DaemonSet that does not exist (cannot delete '
        'daemonsets.apps "gone" not found: kube-system/orphan-ds); nothing is evicted and d1 stays cordoned')
    code, out, _ = cli("simulate", "--snapshot", str(snapshot), "--drain", "d1", "--tie-break", "name")
    assert code == 1
    assert "kube-system/orphan-ds  refused: its DaemonSet does not exist (--force deletes it)" in out


def test_a_pod_of_a_daemon_set_that_does_not_exist_is_lost_with_force(tmp_path):
    snapshot = tmp_path / "orphan.yaml"
    snapshot.write_text(ORPHAN)
    code, doc = drain("d1", force=True, snapshot=snapshot)
    assert code == 0
    report = pod_report(doc, "d1", "kube-system/orphan-ds")
    assert (report["action"], report.get("lost"), report["note"]) == (
        "Deleted", True, "its DaemonSet is gone: nothing recreates it")
