"""simulate --drain and --add-nodes on small clusters built here: the cases
the bundled example does not show (Jobs, two budgets, emptyDir, percentage
budgets over a Deployment's scale, a new pod with no room, a pod already
terminating, a drain blocked until nodes are added)."""

from __future__ import annotations

import copy

from kschedx.commands.load import load_workload
from kschedx.commands.whatif import Change, simulate_changed
from kschedx.result.sink import DocumentSink
from kschedx.sources.fixtures import Origin
from kschedx.sources.node_templates import NodeTemplate
from kschedx.whatif.drain import DrainOptions

ORIGIN = Origin("test.yaml")


def node(name, cpu="4", zone="a", pods="110"):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": pods}}}


def owned(kind, name, uid=None, api="apps/v1"):
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid or f"{kind}-{name}", "controller": True}


def pod(name, node_name, cpu="1", labels=None, owner=None, ns="default", ready=True, annotations=None, **spec):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": ns, "labels": dict(labels or {}),
                      "creationTimestamp": "2026-01-01T00:00:00Z"},
         "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "i",
                                                         "resources": {"requests": {"cpu": cpu}}}], **spec},
         "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}
    if owner:
        p["metadata"]["ownerReferences"] = [owner]
    if annotations:
        p["metadata"]["annotations"] = annotations
    return p


def replica_set(name, replicas, labels, ns="default", deployment=None):
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": name, "namespace": ns, "uid": f"ReplicaSet-{name}", "labels": labels},
          "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                   "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    if deployment:
        rs["metadata"]["ownerReferences"] = [owned("Deployment", deployment)]
    return rs


def pdb(name, selector, ns="default", status=None, **spec):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": ns, "generation": 1},
            "spec": {"selector": {"matchLabels": selector}, **spec}, **({"status": status} if status else {})}


def run(objects, nodes, *, force=False, delete_emptydir_data=False, templates=(), add_nodes=None):
    workload = load_workload((), cluster_objects=[(copy.deepcopy(o), ORIGIN) for o in objects])
    sink = DocumentSink()
    change = Change(drain=DrainOptions(nodes, force=force, delete_emptydir_data=delete_emptydir_data) if nodes
                    else None, templates=list(templates), add_nodes=add_nodes)
    code = simulate_changed(sink, workload, change, tie_break="name")
    return code, sink.doc


def drained_pod(doc, key):
    for n in doc["drain"]["nodes"]:
        for p in n["pods"]:
            if p["pod"] == key:
                return p
    raise KeyError(key)


WEB = {"app": "web"}


def test_two_budgets_fail_the_eviction_with_500():
    objects = [node("n1"), node("n2"), replica_set("web", 1, WEB),
               pod("web-1", "n1", labels=WEB, owner=owned("ReplicaSet", "web")),
               pdb("a", WEB, minAvailable=0), pdb("b", WEB, minAvailable=0)]
    code, doc = run(objects, ["n1"])
    assert code == 1
    [n] = doc["drain"]["nodes"]
    assert n["outcome"] == "Failed"
    assert doc["drain"]["answer"] == (
        "n1 cannot be drained: evicting default/web-1 fails: This pod has more than one PodDisruptionBudget, which "
        "the eviction subresource does not support. (default/a, default/b)")
    assert 'error when evicting pods/"web-1" -n "default": This pod has more than one PodDisruptionBudget' in \
        "\n".join(n["kubectl"])
    assert doc["warnings"][0].startswith("PodDisruptionBudget default/a has no status")


def test_empty_dir_refuses_the_node_unless_asked():
    p = pod("cache-1", "n1", labels=WEB, owner=owned("ReplicaSet", "web"), volumes=[{"name": "s", "emptyDir": {}}])
    objects = [node("n1"), node("n2"), replica_set("web", 1, WEB), p]
    code, doc = run(objects, ["n1"])
    assert code == 1 and doc["drain"]["nodes"][0]["errors"] == [
        "cannot delete Pods with local storage (use --delete-emptydir-data to override): default/cache-1"]
    assert "default/cache-1 has local storage (emptyDir)" in doc["drain"]["answer"]
    code, doc = run(objects, ["n1"], delete_emptydir_data=True)
    assert code == 0 and doc["pods"][0]["placedNode"] == "n2"


def test_percentage_budget_counts_the_deployments_replicas():
    # maxUnavailable 25% of the Deployment's 4 replicas (not of the 2 pods
    # that exist): desired 3, healthy 2: no disruption allowed.
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "namespace": "default", "uid": "Deployment-web"},
                  "spec": {"replicas": 4, "selector": {"matchLabels": WEB},
                           "template": {"metadata": {"labels": WEB}, "spec": {"containers": [{"name": "c",
                                                                                              "image": "i"}]}}}}
    objects = [node("n1"), node("n2"), deployment, replica_set("web-abc", 4, WEB, deployment="web"),
               pod("web-abc-1", "n1", labels=WEB, owner=owned("ReplicaSet", "web-abc")),
               pod("web-abc-2", "n2", labels=WEB, owner=owned("ReplicaSet", "web-abc")),
               pdb("web", WEB, maxUnavailable="25%")]
    code, doc = run(objects, ["n1"])
    assert code == 1
    [b] = doc["drain"]["budgets"]
    assert b["read"] == {"currentHealthy": 2, "desiredHealthy": 3, "expectedPods": 4, "disruptionsAllowed": 0}
    assert b["computed"] is True
    assert drained_pod(doc, "default/web-abc-1")["refusals"][0]["cause"] == (
        "The disruption budget web needs 3 healthy pods and has 2 currently")


def test_a_new_pod_with_no_room_does_not_come_back():
    objects = [node("n1", cpu="2"), node("n2", cpu="1"), replica_set("web", 1, WEB),
               pod("web-1", "n1", cpu="1500m", labels=WEB, owner=owned("ReplicaSet", "web"))]
    code, doc = run(objects, ["n1"])
    assert code == 1
    assert doc["drain"]["answer"].startswith("n1 can be drained, but 1 pod does not come back: default/web-1 is "
                                             "recreated as default/web-")
    assert doc["drain"]["replacementsPending"] == 1 and doc["drain"]["outcome"] == "NotDrained"
    [p] = doc["pods"]
    assert p["status"] == "Unschedulable" and p["replacementFor"]["pod"] == "default/web-1"


def test_job_pods_come_back_indexed_and_a_failed_job_gives_up():
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "train", "namespace": "default", "uid": "Job-train"},
           "spec": {"completionMode": "Indexed", "completions": 2, "parallelism": 2, "backoffLimit": 6,
                    "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}},
           "status": {"failed": 0}}
    p = pod("train-1-x7k2p", "n1", labels={"batch.kubernetes.io/job-completion-index": "1"},
            owner=owned("Job", "train", api="batch/v1"),
            annotations={"batch.kubernetes.io/job-completion-index": "1"})
    objects = [node("n1"), node("n2"), job, p]
    code, doc = run(objects, ["n1"])
    assert code == 0
    [new] = doc["pods"]
    assert new["pod"].startswith("default/train-1-") and len(new["pod"].split("/")[1]) == len("train-1-") + 5
    assert new["replacementFor"]["controller"] == {"kind": "Job", "name": "train"}
    job["status"]["failed"] = 6
    code, doc = run([node("n1"), node("n2"), job, p], ["n1"])
    report = drained_pod(doc, "default/train-1-x7k2p")
    assert report["lost"] is True and "past its backoffLimit 6" in report["note"]
    assert doc["pods"] == []


def test_a_pod_that_tolerates_the_cordon_may_come_back_to_the_drained_node():
    # Its replacement tolerates node.kubernetes.io/unschedulable: the cycle
    # decides, and n1 (emptier) wins.
    tol = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    objects = [node("n1"), node("n2"), replica_set("agent", 1, {"app": "agent"}),
               pod("agent-1", "n1", labels={"app": "agent"}, owner=owned("ReplicaSet", "agent"), tolerations=tol),
               pod("busy", "n2", cpu="3", owner=owned("ReplicaSet", "agent"))]
    code, doc = run(objects, ["n1"])
    [p] = doc["pods"]
    assert p["placedNode"] == "n1"
    assert [f["plugin"] for f in p["nodes"][0]["filters"] if f["code"] == "Unschedulable"] == []


def test_a_pod_already_terminating_is_not_recreated_twice():
    p = pod("web-1", "n1", labels=WEB, owner=owned("ReplicaSet", "web"))
    p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    objects = [node("n1"), node("n2"), replica_set("web", 1, WEB), p]
    code, doc = run(objects, ["n1"])
    assert code == 0 and doc["pods"] == []
    report = drained_pod(doc, "default/web-1")
    assert report["action"] == "Deleted" and "already terminating" in report["reason"]


def template(name, cpu="4", zone="b"):
    n = node(name, cpu=cpu, zone=zone)
    del n["metadata"]["labels"]["kubernetes.io/hostname"]
    n["status"]["capacity"] = dict(n["status"]["allocatable"])
    return NodeTemplate(name, n)


def test_a_drain_blocked_for_want_of_room_goes_on_once_nodes_are_added():
    # Two replicas of a budget allowing one disruption on n1; n2 has no room.
    # The first eviction's new pod waits for a node, so the budget never
    # allows the second: blocked. With a pool to add nodes from, the new pods
    # are placed and the drain completes.
    objects = [node("n1"), node("n2", cpu="1"), replica_set("web", 3, WEB),
               pod("web-1", "n1", labels=WEB, owner=owned("ReplicaSet", "web")),
               pod("web-2", "n1", labels=WEB, owner=owned("ReplicaSet", "web")),
               pod("web-3", "n2", labels=WEB, owner=owned("ReplicaSet", "web")),
               pdb("web", WEB, minAvailable=2, status={"observedGeneration": 1, "currentHealthy": 3,
                                                         "desiredHealthy": 2, "expectedPods": 3,
                                                         "disruptionsAllowed": 1})]
    code, doc = run(objects, ["n1"])
    assert code == 1 and doc["drain"]["nodes"][0]["outcome"] == "Blocked"
    assert doc["drain"]["replacementsPending"] == 1
    code, doc = run(objects, ["n1"], templates=[template("pool")], add_nodes="auto")
    assert code == 0, doc["drain"]["answer"]
    assert doc["drain"]["nodes"][0]["outcome"] == "Drained"
    assert doc["addNodes"]["perTemplate"] == {"pool": 1}
    assert sorted(p["placedNode"] for p in doc["pods"]) == ["pool-1", "pool-1"]
