"""fixtures/whatif/: the drain and node-template examples, worked out by hand.

These tests build, by hand, the cluster each change leaves behind (as
kubectl drain, the Eviction API, the node lifecycle controller and the
workload controllers would) and check that the scheduling cycle gives the
answers fixtures/whatif/README.md states: which node each replacement lands
on, which template node takes a pending pod. `simulate --drain` and
`--add-nodes auto` are held to the same answers (tests/test_whatif_drain.py,
tests/test_whatif_templates.py), and these states are what the oracle
schedules there.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.sources.fixtures import Origin, read_objects

ROOT = Path(__file__).resolve().parent.parent
WHATIF = ROOT / "fixtures" / "whatif"
DRAIN = WHATIF / "drain" / "cluster.yaml"
ADD = WHATIF / "add-nodes"

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
# A fixed moment: deletionTimestamp only has to be set.
NOW = "2026-11-21T10:00:00Z"


# ---- building a cluster state by hand -----------------------------------------------------------

def _objects(path: Path) -> list[dict]:
    return [copy.deepcopy(obj) for obj, _ in read_objects([str(path)])]


def _node(objects, name) -> dict:
    return next(o for o in objects if o.get("kind") == "Node" and o["metadata"]["name"] == name)


def _pod(objects, key) -> dict:
    ns, name = key.split("/")
    return next(o for o in objects if o.get("kind") == "Pod" and o["metadata"]["name"] == name
                and (o["metadata"].get("namespace") or "default") == ns)


def cordon(objects, name) -> None:
    """kubectl cordon, and the taint the node lifecycle controller then adds."""
    node = _node(objects, name)
    spec = node.setdefault("spec", {})
    spec["unschedulable"] = True
    spec["taints"] = list(spec.get("taints") or []) + [dict(UNSCHEDULABLE_TAINT)]


def terminating(objects, key) -> dict:
    """An evicted pod: still on its node, with a deletionTimestamp."""
    pod = _pod(objects, key)
    pod["metadata"]["deletionTimestamp"] = NOW
    return pod


def gone(objects, key) -> dict:
    pod = _pod(objects, key)
    objects.remove(pod)
    return pod


def recreated(evicted: dict, name: str) -> dict:
    """The pod its controller makes in place of `evicted`: the same spec and
    labels, its own name, not bound."""
    pod = copy.deepcopy(evicted)
    meta = pod["metadata"]
    for key in ("uid", "deletionTimestamp", "resourceVersion", "creationTimestamp"):
        meta.pop(key, None)
    meta["name"] = name
    pod["spec"].pop("nodeName", None)
    pod["status"] = {"phase": "Pending"}
    return pod


def bound(pod: dict, node: str) -> dict:
    pod = copy.deepcopy(pod)
    pod["spec"]["nodeName"] = node
    pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    return pod


def node_from_template(objects, template: Path, n: int) -> list[dict]:
    """A node made from a template as the autoscalers make one: its own name
    and hostname label, each ResourceSlice in a pool of its own on it, and the
    node-exporter DaemonSet pod it would run."""
    node, *slices = _objects(template)
    name = f"{node['metadata']['name']}-{n}"
    node["metadata"]["name"] = name
    node["metadata"]["labels"] = dict(node["metadata"].get("labels") or {}, **{"kubernetes.io/hostname": name})
    made = [node]
    for s in slices:
        s["metadata"]["name"] = f"{s['metadata']['name']}-{n}"
        s["spec"]["pool"]["name"] = f"{s['spec']['pool']['name']}-{n}"
        s["spec"]["nodeName"] = name
        made.append(s)
    exporter = copy.deepcopy(next(o for o in objects if o.get("kind") == "Pod"
                                  and o["metadata"]["name"].startswith("node-exporter-")))
    exporter["metadata"]["name"] = f"node-exporter-{name}"
    exporter["metadata"].pop("uid", None)
    exporter["spec"]["nodeName"] = name
    return made + [exporter]


def run(objects, pods=(), mode="explain", pod_files=()) -> list[dict]:
    """The pending pods `pods` (with `pod_files`: the pods of those files;
    else the state's own pending pods) through today's cycle."""
    origin = Origin("state built by hand")
    workload = load_workload((), [str(f) for f in pod_files],
                             cluster_objects=[(o, origin) for o in list(objects) + list(pods)])
    doc = (explain if mode == "explain" else simulate)(workload, tie_break="name")
    return doc["pods"]


def nodes(p) -> dict:
    return {n["name"]: n for n in p["nodes"]}


def failing(p, node) -> list[tuple[str, str, list[str]]]:
    return [(f["plugin"], f["code"], f["reasons"]) for f in nodes(p)[node]["filters"]
            if f["code"] not in ("Success", "Skip")]


# ---- the fixtures load --------------------------------------------------------------------------

@pytest.mark.parametrize("pod_file, statuses", [
    # explain places the Deployment's replicas one after another: five usable nodes take five (the README's
    # "Why the sixth replica needs zone c"), the sixth fits nowhere.
    ("web.yaml", ["Scheduled"] * 5 + ["Unschedulable"]),
    ("gpu-job.yaml", ["Unschedulable"]),
    ("dra-job.yaml", ["Unschedulable"]),
])
def test_add_nodes_fixtures_load(pod_file, statuses):
    doc = explain(load_workload([str(ADD / "cluster.yaml")], [str(ADD / pod_file)]), tie_break="name")
    assert [p["status"] for p in doc["pods"]] == statuses
    if pod_file == "web.yaml":
        assert sorted(p["placedNode"] for p in doc["pods"][:5]) == ["a1", "a2", "b1", "b2", "c1"]


def test_drain_cluster_loads_with_no_pending_pod():
    doc = explain(load_workload([str(DRAIN)]), tie_break="name")
    assert doc["pods"] == []
    assert not [w for w in doc.get("warnings", []) if "PodDisruptionBudget" in w]


@pytest.mark.parametrize("template", ["pool-b", "pool-c", "pool-gpu", "pool-gpu-dra"])
def test_each_template_loads_as_one_more_node(template):
    # A template file is a Node manifest (and ResourceSlices): today it loads
    # as one more node of the snapshot, named after the template.
    workload = load_workload([str(ADD / "cluster.yaml"), str(ADD / "templates" / f"{template}.yaml")],
                             [str(ADD / "gpu-job.yaml")])
    assert template in {ni["metadata"]["name"] for ni in workload.cluster.nodes}


def test_pdb_statuses_are_what_the_disruption_controller_writes():
    # minAvailable as an integer: expectedPods is the number of pods the
    # selector matches, desiredHealthy the integer, disruptionsAllowed
    # currentHealthy - desiredHealthy (disruption.go getExpectedPodCount,
    # updatePdbStatus); every pod here is Ready.
    objects = _objects(DRAIN)
    for pdb in (o for o in objects if o.get("kind") == "PodDisruptionBudget"):
        ns, sel = pdb["metadata"]["namespace"], pdb["spec"]["selector"]["matchLabels"]
        pods = [o for o in objects if o.get("kind") == "Pod" and o["metadata"].get("namespace") == ns
                and all(o["metadata"]["labels"].get(k) == v for k, v in sel.items())]
        ready = [p for p in pods if {"type": "Ready", "status": "True"} in p["status"]["conditions"]]
        desired = pdb["spec"]["minAvailable"]
        assert pdb["status"] == dict(pdb["status"], expectedPods=len(pods), currentHealthy=len(ready),
                                     desiredHealthy=desired, disruptionsAllowed=max(0, len(ready) - desired))


# ---- (a) a Deployment's pod moves ---------------------------------------------------------------

def test_drain_n1_moves_its_web_replica_to_n2():
    objects = _objects(DRAIN)
    cordon(objects, "n1")
    evicted = terminating(objects, "shop/web-5d8f6c7b9-x2k7p")
    [p] = run(objects, [recreated(evicted, "web-5d8f6c7b9-q8hwz")])
    assert (p["status"], p["selectedNode"]) == ("Scheduled", "n2")
    assert nodes(p)["n1"]["firstFailure"] == "NodeUnschedulable"
    assert {n: nodes(p)[n]["totalScore"] for n in ("n2", "n3", "n4")} == {"n2": 636, "n3": 556, "n4": 535}
    # Why n2: zone-a has no web replica left (the evicted one is terminating,
    # which PodTopologySpread's system default constraints do not count).
    spread = {n: next(s for s in nodes(p)[n]["scores"] if s["plugin"] == "PodTopologySpread")
              for n in ("n2", "n3", "n4")}
    assert [(spread[n]["raw"], spread[n]["normalized"]) for n in ("n2", "n3", "n4")] == [(6, 100), (12, 53), (13, 46)]


def test_drain_n4_moves_two_replicas_one_at_a_time():
    objects = _objects(DRAIN)
    cordon(objects, "n4")
    # Round 1: the budget allows one eviction; the other is refused (429) and retried.
    first = terminating(objects, "shop/web-5d8f6c7b9-h5n2c")
    [p1] = run(objects, [recreated(first, "web-5d8f6c7b9-wz256")])
    assert (p1["status"], p1["selectedNode"]) == ("Scheduled", "n2")
    assert {n: nodes(p1)[n]["totalScore"] for n in ("n1", "n2", "n3")} == {"n1": 612, "n2": 636, "n3": 590}
    # Round 2: the evicted pod is gone, its replacement Ready: the budget allows one again.
    gone(objects, "shop/web-5d8f6c7b9-h5n2c")
    objects.append(bound(recreated(first, "web-5d8f6c7b9-wz256"), "n2"))
    second = terminating(objects, "shop/web-5d8f6c7b9-t6w9r")
    [p2] = run(objects, [recreated(second, "web-5d8f6c7b9-zvlss")])
    assert (p2["status"], p2["selectedNode"]) == ("Scheduled", "n3")
    assert {n: nodes(p2)[n]["totalScore"] for n in ("n1", "n2", "n3")} == {"n1": 632, "n2": 607, "n3": 650}


def test_drain_n1_then_n4():
    objects = _objects(DRAIN)
    cordon(objects, "n1")
    cordon(objects, "n4")
    placed = []
    for key, name in (("shop/web-5d8f6c7b9-x2k7p", "web-5d8f6c7b9-q8hwz"),
                      ("shop/web-5d8f6c7b9-h5n2c", "web-5d8f6c7b9-wz256"),
                      ("shop/web-5d8f6c7b9-t6w9r", "web-5d8f6c7b9-zvlss")):
        evicted = terminating(objects, key)
        [p] = run(objects, [recreated(evicted, name)])
        placed.append((p["selectedNode"], nodes(p)["n2"]["totalScore"], nodes(p)["n3"]["totalScore"]))
        gone(objects, key)
        objects.append(bound(recreated(evicted, name), p["selectedNode"]))
    assert placed == [("n2", 636, 550), ("n3", 627, 630), ("n2", 627, 591)]


# ---- (b) a StatefulSet's pod, were its budget to allow it ---------------------------------------

def test_db_0_recreated_after_deletion_goes_where_its_volume_is():
    # With disruptionsAllowed 0 the eviction never succeeds. Deleted instead
    # (kubectl drain --disable-eviction), the StatefulSet makes db-0 again once
    # it is gone, with the same claim: its volume is in zone-a.
    objects = _objects(DRAIN)
    cordon(objects, "n2")
    deleted = gone(objects, "db/db-0")
    [p] = run(objects, [recreated(deleted, "db-0")])
    assert (p["status"], p["selectedNode"]) == ("Scheduled", "n1")
    for n in ("n3", "n4"):
        assert failing(p, n) == [("VolumeBinding", "UnschedulableAndUnresolvable",
                                  ["node(s) didn't match PersistentVolume's node affinity"])]


# ---- (c) a bare pod, with --force ---------------------------------------------------------------

def test_drain_n3_with_force_moves_web_and_loses_debug():
    objects = _objects(DRAIN)
    cordon(objects, "n3")
    evicted = terminating(objects, "shop/web-5d8f6c7b9-m4q8z")
    terminating(objects, "default/debug")  # deleted for good: no controller makes it again
    [p] = run(objects, [recreated(evicted, "web-5d8f6c7b9-rstlz")])
    assert (p["status"], p["selectedNode"]) == ("Scheduled", "n2")
    assert {n: nodes(p)[n]["totalScore"] for n in ("n1", "n2", "n4")} == {"n1": 618, "n2": 636, "n4": 559}


# ---- (d) the sixth replica needs a node in zone c -----------------------------------------------

def _after_simulate(pod_files) -> tuple[list[dict], list[dict], dict]:
    """The cluster after `simulate POD_FILEs` (placed pods bound) and the pods it left pending."""
    workload = load_workload([str(ADD / "cluster.yaml")], [str(ADD / f) for f in pod_files])
    raw = {pi.key: copy.deepcopy(pi.pod) for pi in workload.pods}
    doc = simulate(workload, tie_break="name")
    objects = _objects(ADD / "cluster.yaml")
    pending = []
    for p in doc["pods"]:
        pod = raw[p["pod"]]
        pod["metadata"].pop("uid", None)
        if p["placedNode"]:
            objects.append(bound(pod, p["placedNode"]))
        else:
            pod["status"] = {"phase": "Pending"}
            pending.append(pod)
    return objects, pending, doc


def test_web_places_five_replicas_one_per_usable_node():
    _, pending, doc = _after_simulate(["web.yaml"])
    placed = sorted(p["placedNode"] for p in doc["pods"] if p["placedNode"])
    assert placed == ["a1", "a2", "b1", "b2", "c1"]
    [sixth] = [p for p in doc["pods"] if not p["placedNode"]]
    assert sixth["message"].startswith(
        "0/6 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 1 node(s) had untolerated "
        "taint(s), 4 node(s) didn't match pod topology spread constraints.")


@pytest.mark.parametrize("templates, placed_on", [
    (["pool-b"], None),
    (["pool-c"], "pool-c-1"),
    (["pool-gpu"], None),
])
def test_sixth_replica_fits_only_a_zone_c_node(templates, placed_on):
    objects, pending, _ = _after_simulate(["web.yaml"])
    for t in templates:
        objects += node_from_template(objects, ADD / "templates" / f"{t}.yaml", 1)
    [p] = run(objects, pending, mode="simulate")
    assert p["placedNode"] == placed_on
    if templates == ["pool-b"]:
        # zone b would hold 3 replicas against zone c's 1: skew 2 > maxSkew 1
        assert nodes(p)["pool-b-1"]["firstFailure"] == "PodTopologySpread"
        assert failing(p, "pool-b-1") == [("PodTopologySpread", "Unschedulable",
                                           ["node(s) didn't match pod topology spread constraints"])]
    if templates == ["pool-gpu"]:
        assert nodes(p)["pool-gpu-1"]["firstFailure"] == "TaintToleration"


# ---- (e) GPUs no node has -----------------------------------------------------------------------

@pytest.mark.parametrize("template, train, infer", [
    ("pool-b", None, None),
    ("pool-c", None, None),
    ("pool-gpu", "pool-gpu-1", None),
    ("pool-gpu-dra", None, "pool-gpu-dra-1"),
])
def test_gpu_pods_fit_only_their_gpu_template(template, train, infer):
    objects = _objects(ADD / "cluster.yaml")
    objects += node_from_template(objects, ADD / "templates" / f"{template}.yaml", 1)
    new = f"{template}-1"
    by_pod = {p["pod"]: p for p in run(objects, pod_files=[ADD / "gpu-job.yaml", ADD / "dra-job.yaml"])}
    assert by_pod["ml/train"]["selectedNode"] == train
    assert by_pod["ml/infer"]["selectedNode"] == infer
    if template in ("pool-b", "pool-c"):
        assert failing(by_pod["ml/train"], new) == [("NodeResourcesFit", "UnschedulableAndUnresolvable",
                                                     ["Insufficient nvidia.com/gpu"])]
        assert failing(by_pod["ml/infer"], new) == [("DynamicResources", "UnschedulableAndUnresolvable",
                                                     ["cannot allocate all claims"])]
    if template == "pool-gpu":
        assert nodes(by_pod["ml/infer"])[new]["firstFailure"] == "TaintToleration"


# ---- capacity once a node is drained -------------------------------------------------------------

def _capacity(objects) -> dict:
    from kschedx.commands.capacity import Options, capacity

    origin = Origin("state built by hand")
    workload = load_workload((), [str(WHATIF / "drain" / "web.yaml")],
                             cluster_objects=[(o, origin) for o in objects])
    [t] = capacity(workload, Options(), tie_break="name")["templates"]
    return t


def test_capacity_of_web_before_and_after_draining_n1():
    # cpu is the limit: 500m a copy in what each schedulable node has free
    assert _capacity(_objects(DRAIN))["perNode"] == {"n1": 6, "n2": 5, "n3": 6, "n4": 5}
    objects = _objects(DRAIN)
    cordon(objects, "n1")
    evicted = gone(objects, "shop/web-5d8f6c7b9-x2k7p")
    objects.append(bound(recreated(evicted, "web-5d8f6c7b9-q8hwz"), "n2"))
    after = _capacity(objects)
    assert (after["count"], after["perNode"]) == (15, {"n2": 4, "n3": 6, "n4": 5})


def test_three_pending_pods_need_three_template_nodes(tmp_path):
    # Each pod fits one template only (zone c; nvidia.com/gpu; a DRA GPU):
    # three nodes, one of each, place all of them.
    import yaml

    objects, pending, _ = _after_simulate(["web.yaml"])
    for t in ("pool-b", "pool-c", "pool-gpu", "pool-gpu-dra"):
        objects += node_from_template(objects, ADD / "templates" / f"{t}.yaml", 1)
    sixth = tmp_path / "sixth-replica.yaml"
    sixth.write_text(yaml.safe_dump_all(pending))
    placed = {p["pod"]: p["placedNode"] for p in run(objects, mode="simulate",
                                                     pod_files=[sixth, ADD / "gpu-job.yaml", ADD / "dra-job.yaml"])}
    assert sorted(placed.values()) == ["pool-c-1", "pool-gpu-1", "pool-gpu-dra-1"]
    assert (placed["ml/train"], placed["ml/infer"]) == ("pool-gpu-1", "pool-gpu-dra-1")
