"""state/live.py: a cluster state kept up to date by watch events is, after
any sequence of events, what a fresh read of the same objects builds: every
order a result can see (pods on a node, pending pods, nodes, each kind's
dict), the aggregates, the pod index, the node columns, the image counts.

The events are built from builder objects as the watcher hands them on
(typed, trimmed: sources/watch.adopt); the reference is build_cluster +
build_snapshot of the model's objects in the API's list order (key order)."""

from __future__ import annotations

import copy
import random
import uuid

import pytest

from builders import api_node, api_pod, image, metadata, node_spec, served, taint
from kschedx.sources.kinds import KINDS
from kschedx.sources.fixtures import Origin
from kschedx.sources.watch import ADDED, DELETED, MODIFIED, RELIST_BEGIN, RELIST_END, RELIST_PAGE, WatchEvent, adopt
from kschedx.state import live as live_module
from kschedx.state.cluster import build_cluster
from kschedx.state.live import LiveCluster, describe
from kschedx.state.snapshot import build_snapshot
from kschedx.state.types import signature_count

BY_KIND = {k.kind: k for k in KINDS}
ORIGIN = Origin("cluster https://test")


def key_of(obj: dict) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


class Model:
    """The API server's objects, and the watch events its writes make."""

    def __init__(self, rng: random.Random | None = None):
        self.objects: dict[str, dict[str, dict]] = {}
        self.rv = 100
        self.rng = rng or random.Random(0)

    def _stamp(self, obj: dict) -> dict:
        obj = copy.deepcopy(obj)
        meta = obj["metadata"]
        if obj["kind"] in ("Pod", "PersistentVolumeClaim", "Service", "ResourceClaim") and not meta.get("namespace"):
            meta["namespace"] = "default"
        meta.setdefault("uid", str(uuid.UUID(int=self.rng.getrandbits(128))))
        meta.setdefault("creationTimestamp", "2026-01-01T00:00:00Z")
        self.rv += 1
        meta["resourceVersion"] = str(self.rv)
        return obj

    def put(self, obj: dict) -> WatchEvent:
        obj = self._stamp(obj)
        store = self.objects.setdefault(obj["kind"], {})
        key = key_of(obj)
        type_ = MODIFIED if key in store else ADDED
        if obj["kind"] == "Pod" and (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            store.pop(key, None)
            return self._event(obj, DELETED)  # it leaves the field selector
        store[key] = obj
        return self._event(obj, type_)

    def change(self, kind: str, key: str, fn) -> WatchEvent:
        obj = copy.deepcopy(self.objects[kind][key])
        obj.pop("metadata")["resourceVersion"] if False else None
        fn(obj)
        return self.put(obj)

    def delete(self, kind: str, key: str) -> WatchEvent:
        obj = self.objects[kind].pop(key)
        obj = copy.deepcopy(obj)
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        return self._event(obj, DELETED)

    def _event(self, obj: dict, type_: str) -> WatchEvent:
        kind = BY_KIND[obj["kind"]]
        extra = {"scheduledAt": None} if obj["kind"] == "Pod" else None
        return WatchEvent(obj["kind"], type_, adopt(copy.deepcopy(obj), kind), rv=str(self.rv), extra=extra)

    def listed(self) -> list[dict]:
        """A read of every kind, in list order, typed and trimmed."""
        out = []
        for kind in KINDS:
            for key in sorted(self.objects.get(kind.kind, {})):
                out.append(adopt(copy.deepcopy(self.objects[kind.kind][key]), kind))
        return out


def fresh(model: Model):
    cluster = build_cluster([(obj, ORIGIN) for obj in model.listed()])
    snap = build_snapshot(cluster)
    return describe(cluster, snap)


def start(model: Model) -> LiveCluster:
    cluster = build_cluster([(obj, ORIGIN) for obj in model.listed()])
    return LiveCluster(cluster, source="cluster https://test")


def assert_same(live: LiveCluster, model: Model):
    got, want = live.describe(), fresh(model)
    assert got["columnsMatch"] and want["columnsMatch"]
    for part in want:
        assert got[part] == want[part], part


def basic(model: Model):
    for name, zone in (("n1", "a"), ("n2", "b"), ("n3", "a")):
        node = api_node(name, cpu="4", labels={"topology.kubernetes.io/zone": zone})
        node["status"]["images"] = [image(100_000_000, f"img-{name}"), image(50_000_000, "shared")]
        model.put(node)
    model.put(served("v1", "Namespace", metadata("default")))
    model.put(api_pod("a-1", node_name="n1", cpu="1"))
    model.put(api_pod("b-1", node_name="n1", cpu="500m", namespace="team"))
    model.put(api_pod("z-1", node_name="n2", cpu="1"))
    model.put(api_pod("web", cpu="500m"))
    model.put(api_pod("big", cpu="3"))


def test_each_change_gives_what_a_fresh_read_builds():
    model = Model()
    basic(model)
    live = start(model)
    assert_same(live, model)
    steps = [
        lambda: model.put(api_pod("m-1", node_name="n1", cpu="250m")),  # between a-1 and team/b-1 in key order
        lambda: model.change("Pod", "default/web", lambda p: p["spec"].update(nodeName="n3")),  # bound
        lambda: model.delete("Pod", "default/a-1"),  # a bound pod leaves
        lambda: model.change("Pod", "default/big", lambda p: p["metadata"]["labels"].update(tier="x")),
        lambda: model.put(api_pod("c-1", node_name="n2", cpu="1", phase="Succeeded")),  # never seen: a no-op
        lambda: model.change("Pod", "default/z-1", lambda p: p["status"].update(phase="Failed")),  # finished
        lambda: model.put(api_node("n0", cpu="2")),  # a node before the others in name order
        lambda: model.change("Node", "n2", lambda n: n["spec"].update(taints=[taint("k", "v", "NoSchedule")])),
        lambda: model.change("Node", "n1", lambda n: n["status"].update(images=[image(7, "shared")])),
        lambda: model.change("Node", "n3", lambda n: n["metadata"]["labels"].update(
            {"topology.kubernetes.io/zone": "c"})),
        lambda: model.delete("Node", "n2"),
        lambda: model.put(served("v1", "Namespace", metadata("aaa"))),
        lambda: model.put(api_pod("p", namespace="ghost", cpu="1")),  # a namespace only a pod uses
        lambda: model.delete("Namespace", "default"),  # still used: synthesized
        lambda: model.put(served("v1", "PersistentVolumeClaim", metadata("claim", "default"),
                                 spec={"accessModes": ["ReadWriteOnce"],
                                       "resources": {"requests": {"storage": "1Gi"}}})),
        lambda: model.put(served("v1", "Service", metadata("svc", "team"), spec={"selector": {"app": "x"}})),
        lambda: model.delete("Pod", "ghost/p"),
    ]
    for step in steps:
        live.apply(step())
        assert_same(live, model)


def test_a_pod_bound_to_a_node_not_yet_there_waits_for_it():
    model = Model()
    basic(model)
    live = start(model)
    live.apply(model.put(api_pod("early", node_name="n9", cpu="1")))
    assert "early" not in str(live.describe()["podInfos"])
    assert_same(live, model)
    assert live.warnings(grace=0) == ["ignored 1 pod(s) bound to node 'n9', which is not in the snapshot"]
    assert live.warnings(grace=3600) == []  # kinds come on separate streams: not said at once
    changes = live.apply(model.put(api_node("n9")))
    assert [c.what for c in changes] == ["node-added", "arrived"]
    assert_same(live, model)
    assert live.warnings(grace=0) == []


def test_a_node_removed_with_pods_and_added_again():
    model = Model()
    basic(model)
    live = start(model)
    node = model.objects["Node"]["n1"]
    live.apply(model.delete("Node", "n1"))
    assert_same(live, model)
    assert live.warnings(grace=0) == ["ignored 2 pod(s) bound to node 'n1', which is not in the snapshot"]
    live.apply(model.put({**node, "metadata": {k: v for k, v in node["metadata"].items() if k != "uid"}}))
    assert_same(live, model)


def test_unchanged_objects_are_no_change():
    """A heartbeat or a status-only update that trimming leaves equal changes nothing."""
    model = Model()
    basic(model)
    live = start(model)
    version = live.version
    cond = {"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-01T00:01:00Z"}
    assert live.apply(model.change("Node", "n1", lambda n: n["status"].update(conditions=[cond]))) == []
    assert live.apply(model.change("Pod", "default/web", lambda p: p["status"].update(
        conditions=[{"type": "PodScheduled", "status": "False"}]))) == []
    assert live.version == version
    assert_same(live, model)


def test_a_relist_gives_the_missed_changes():
    model = Model()
    basic(model)
    live = start(model)
    # Changes the watch never saw (the server compacted its history meanwhile).
    model.change("Pod", "default/web", lambda p: p["spec"].update(nodeName="n2"))
    model.delete("Pod", "default/a-1")
    model.put(api_pod("new", cpu="1"))
    model.delete("Node", "n3")
    for kind in ("Pod", "Node"):
        live.apply(WatchEvent(kind, RELIST_BEGIN))
        items = [adopt(copy.deepcopy(o), BY_KIND[kind]) for _, o in sorted(model.objects[kind].items())]
        live.apply(WatchEvent(kind, RELIST_PAGE, items=items[:2]))
        live.apply(WatchEvent(kind, RELIST_PAGE, items=items[2:]))
        live.apply(WatchEvent(kind, RELIST_END, rv=str(model.rv)))
    assert_same(live, model)


def _random_step(model: Model, rng: random.Random, n: int) -> WatchEvent:
    pods = model.objects.get("Pod", {})
    nodes = sorted(model.objects.get("Node", {}))
    bound = [k for k, p in pods.items() if p["spec"].get("nodeName")]
    pending = [k for k, p in pods.items() if not p["spec"].get("nodeName")]
    ns = rng.choice(["default", "team", "a-b", "z"])
    op = rng.random()
    if op < 0.25 or not pods:
        labels = {"app": rng.choice(["web", "db", f"job-{n}"]), "hash": rng.choice(["1", "2"])}
        pod = api_pod(f"p{n}", namespace=ns, cpu=rng.choice(["100m", "1", "2"]), labels=labels,
                      node_name=rng.choice(nodes + ["n-missing"]) if nodes and rng.random() < 0.3 else None)
        if rng.random() < 0.2:
            pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
        if rng.random() < 0.1:
            pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
        return model.put(pod)
    if op < 0.45 and pending and nodes:
        return model.change("Pod", rng.choice(sorted(pending)), lambda p: p["spec"].update(nodeName=rng.choice(nodes)))
    if op < 0.6 and bound:
        return model.delete("Pod", rng.choice(sorted(bound)))
    if op < 0.65 and bound:
        return model.change("Pod", rng.choice(sorted(bound)), lambda p: p["status"].update(phase="Succeeded"))
    if op < 0.72:
        key = rng.choice(sorted(pods))
        return model.change("Pod", key, lambda p: p["metadata"]["labels"].update(v=str(n)))
    if op < 0.76:
        key = rng.choice(sorted(pods))
        return model.change("Pod", key, lambda p: p["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z"))
    if op < 0.82 or not nodes:
        name = f"n{rng.randint(0, 9)}"
        if name in model.objects.get("Node", {}):
            return model.delete("Node", name)
        node = api_node(name, cpu=rng.choice(["2", "4"]), labels={"topology.kubernetes.io/zone": rng.choice("ab")})
        node["status"]["images"] = [image(rng.randint(1, 9) * 10**8, rng.choice(["i1", "i2", "i3"]))]
        return model.put(node)
    if op < 0.9:
        name = rng.choice(nodes)

        def relabel(node):
            node["metadata"]["labels"]["topology.kubernetes.io/zone"] = rng.choice("abc")
            node["spec"] = node_spec(taints=[taint("t", "v", "NoSchedule")] if rng.random() < 0.3 else None)
            node["status"]["images"] = [image(5 * 10**8, rng.choice(["i1", "i2", "i4"]))]
        return model.change("Node", name, relabel)
    if op < 0.95:
        name = f"c{rng.randint(0, 3)}"
        key = f"{ns}/{name}"
        if key in model.objects.get("PersistentVolumeClaim", {}):
            return model.delete("PersistentVolumeClaim", key)
        return model.put(served("v1", "PersistentVolumeClaim", metadata(name, ns),
                                spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}))
    name = rng.choice(["default", "team", "a-b", "z", "extra"])
    if name in model.objects.get("Namespace", {}):
        return model.delete("Namespace", name)
    return model.put(served("v1", "Namespace", metadata(name, labels={"env": rng.choice(["a", "b"])})))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_changes_keep_the_state_a_fresh_read_builds(seed):
    rng = random.Random(seed)
    model = Model(rng)
    basic(model)
    live = start(model)
    for n in range(300):
        live.apply(_random_step(model, rng, n))
        if n % 25 == 24:
            assert_same(live, model)
    assert_same(live, model)


def test_compaction_forgets_old_signatures_and_changes_nothing(monkeypatch):
    monkeypatch.setattr(live_module, "SIGNATURE_SLACK", 5)
    model = Model()
    basic(model)
    live = start(model)
    for n in range(60):  # every Job a label set of its own, gone again
        live.apply(model.put(api_pod(f"job-{n}", node_name="n1", labels={"job": str(n)})))
        live.apply(model.delete("Pod", f"default/job-{n}"))
    before = live.describe()
    grown = signature_count()
    assert live.maybe_compact()
    assert signature_count() < grown
    after = live.describe()
    assert before == after
    assert_same(live, model)
