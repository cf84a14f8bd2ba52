"""explain --watch's triggers are sound: after any event, every pending pod
whose verdict a one-shot explain of the new state would change is due again.

A live state of 12 nodes, bound pods of several apps (some with pod
anti-affinity or preferred affinity), a Service and a ReplicaSet (the
system's default spreading), and pending pods of every kind the triggers
tell apart: plain replicas, node selectors, required and preferred node
affinity, required pod anti-affinity, preferred pod affinity, topology
spread (DoNotSchedule over zones, ScheduleAnyway over hosts), a toleration, a
host port, images on nodes, one that fits nowhere, a preemptor, a gated pod.
Random events are applied one at a time, as the watch applies them (state
changes, then triggers); after each, every pod's one-shot verdict is
compared with its last explanation: where they differ, the pod must be due.
The other way is allowed (a pod due whose verdict stays).

A pod's verdict: its status, the node chosen (selectedNode and every top
node), the nomination and victims of a preemption. Not the message of a pod
that fits nowhere: it counts nodes per reason, and a pod rejected everywhere
stays so until an event its rejecting plugins register (kube-scheduler's
queue moves a pod on those events, and so does the watch), whatever other
reasons nodes gain or lose meanwhile.
"""

from __future__ import annotations

import copy
import os
import queue
import random

import pytest

from builders import api_node, api_pod, image, served, metadata
from kschedx.commands.explain import explainer_for, pod_documents
from kschedx.commands.load import Workload
from kschedx.commands.watch import WatchRun
from kschedx.framework.queue import queue_order
from kschedx.state.types import PodInfo
from test_live_state import Model, start
from watching import Recorder

ZONE = "topology.kubernetes.io/zone"
SEEDS, STEPS = int(os.environ.get("SOUNDNESS_SEEDS", 6)), int(os.environ.get("SOUNDNESS_STEPS", 40))


class FakeWatcher:
    def __init__(self):
        self.events = queue.Queue()
        self.fatal = None
        self.resource_versions = {}
        self.conn = None


def _pod(name, *, cpu="100m", labels=None, node=None, priority=None, **spec) -> dict:
    p = api_pod(name, node_name=node, cpu=cpu, labels=labels or {"app": name})
    p["spec"].update(spec)
    if priority is not None:
        p["spec"]["priority"] = priority
    return p


def _term(labels: dict, key: str) -> dict:
    return {"labelSelector": {"matchLabels": labels}, "topologyKey": key}


def cluster(model: Model, rng: random.Random) -> None:
    for i in range(12):
        node = api_node(f"n{i:02d}", cpu=rng.choice(["2", "4"]), labels={ZONE: "ab"[i % 2],
                                                                        "disk": rng.choice(["ssd", "hdd"])})
        node["status"]["images"] = [image(300_000_000, "registry.example/web:1")] if i % 3 == 0 else []
        model.put(node)
    model.put(served("v1", "Service", metadata("web", "default"), spec={"selector": {"app": "web"}}))
    model.put(served("apps/v1", "ReplicaSet", metadata("web-rs", "default"),
                     spec={"selector": {"matchLabels": {"app": "web"}}, "replicas": 5}))
    for j in range(60):
        app = rng.choice(["web", "db", "cache", "batch"])
        pod = _pod(f"b{j:03d}", cpu=rng.choice(["100m", "300m", "700m"]), labels={"app": app},
                   node=f"n{rng.randrange(12):02d}", priority=rng.choice([0, 0, 100]))
        if app == "db" and j % 4 == 0:
            pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                _term({"app": "web"}, "kubernetes.io/hostname")]}}
        if app == "cache" and j % 3 == 0:
            pod["spec"]["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": _term({"app": "web"}, ZONE)}]}}
        model.put(pod)
    pending = [
        _pod("web-1", labels={"app": "web"}, containers=[{"name": "c", "image": "registry.example/web:1",
                                                             "resources": {"requests": {"cpu": "200m"}}}]),
        _pod("ssd", cpu="500m", nodeSelector={"disk": "ssd"}),
        _pod("zone-a", cpu="300m", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["a"]}]}]}}}),
        _pod("likes-hdd", cpu="200m", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "preference": {"matchExpressions": [{"key": "disk", "operator": "In",
                                                                 "values": ["hdd"]}]}}]}}),
        _pod("lonely", cpu="200m", labels={"app": "lonely"}, affinity={"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [_term({"app": "db"}, "kubernetes.io/hostname")]}}),
        _pod("near-web", cpu="200m", labels={"app": "near"}, affinity={"podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 80, "podAffinityTerm":
                                                                  _term({"app": "web"}, "kubernetes.io/hostname")}]}}),
        _pod("spread", cpu="200m", labels={"app": "batch"}, topologySpreadConstraints=[
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "batch"}}},
            {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app": "batch"}}}]),
        _pod("tolerant", cpu="200m", tolerations=[{"key": "example.com/maintenance", "operator": "Exists"}]),
        _pod("ported", cpu="100m", containers=[{"name": "c", "image": "x:1", "ports": [
            {"containerPort": 80, "hostPort": 8080}], "resources": {"requests": {"cpu": "100m"}}}]),
        _pod("huge", cpu="3500m"),
        _pod("urgent", cpu="1500m", priority=1000),
        _pod("gated", cpu="100m", schedulingGates=[{"name": "example.com/wait"}]),
    ]
    for p in pending:
        model.put(p)


def step(model: Model, rng: random.Random, n: int):
    """One random event, as the API server's watch would send it."""
    pods = model.objects["Pod"]
    nodes = sorted(model.objects["Node"])
    bound = sorted(k for k, p in pods.items() if p["spec"].get("nodeName"))
    churn = sorted(k for k, p in pods.items() if not p["spec"].get("nodeName") and k.split("/")[1].startswith("c"))
    op = rng.random()
    if op < 0.30 and bound:
        return model.delete("Pod", rng.choice(bound))
    if op < 0.40:
        labels = {"app": rng.choice(["web", "db", "cache", "batch", "other"])}
        pod = _pod(f"c{n:04d}", cpu=rng.choice(["50m", "300m", "900m"]), labels=labels,
                   node=rng.choice(nodes) if rng.random() < 0.7 else None, priority=rng.choice([0, 0, 100]))
        if rng.random() < 0.15:
            pod["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                _term({"app": rng.choice(["lonely", "web"])}, "kubernetes.io/hostname")]}}
        if rng.random() < 0.1:
            pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
        return model.put(pod)
    if op < 0.45 and churn:
        return model.change("Pod", rng.choice(churn), lambda p: p["spec"].update(nodeName=rng.choice(nodes)))
    if op < 0.50 and bound:
        return model.change("Pod", rng.choice(bound),
                            lambda p: p["metadata"]["labels"].update(app=rng.choice(["web", "db", "x"])))
    if op < 0.54 and bound:
        return model.change("Pod", rng.choice(bound), lambda p: p["status"].update(
            conditions=[{"type": "Ready", "status": rng.choice(["True", "False"])}]))
    if op < 0.66:
        def beat(node):
            node["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastHeartbeatTime": f"t{n}"}]
        return model.change("Node", rng.choice(nodes), beat)
    if op < 0.72:
        def images(node):
            node["status"]["images"] = [image(rng.choice([1, 3]) * 10**8,
                                              rng.choice(["registry.example/web:1", "registry.example/other:2"]))]
        return model.change("Node", rng.choice(nodes), images)
    if op < 0.79:
        def relabel(node):
            labels = node["metadata"]["labels"]
            key = rng.choice(["disk", ZONE, "example.com/rack"])
            labels[key] = rng.choice({"disk": ["ssd", "hdd"], ZONE: ["a", "b"],
                                      "example.com/rack": ["r1", "r2"]}[key])
        return model.change("Node", rng.choice(nodes), relabel)
    if op < 0.85:
        def taint(node):
            spec = node.setdefault("spec", {})
            if spec.get("taints"):
                spec.pop("taints")
            else:
                spec["taints"] = [{"key": "example.com/maintenance", "effect": "NoSchedule"}]
        return model.change("Node", rng.choice(nodes), taint)
    if op < 0.90:
        def cordon(node):
            spec = node.setdefault("spec", {})
            if spec.get("unschedulable"):
                spec.pop("unschedulable")
            else:
                spec["unschedulable"] = True
        return model.change("Node", rng.choice(nodes), cordon)
    name = f"x{rng.randrange(3)}"
    if name in model.objects["Node"] and rng.random() < 0.6:
        return model.delete("Node", name)
    node = api_node(name, cpu=rng.choice(["2", "8"]), labels={ZONE: rng.choice("ab"), "disk": "ssd"})
    return model.put(node)


def verdict(doc: dict) -> tuple:
    pre = doc.get("preemption") or {}
    return (doc["status"], doc.get("selectedNode"), tuple(doc.get("topNodes") or ()), pre.get("nominatedNode"),
            tuple(v["pod"] for v in pre.get("victims") or ()))


def one_shot(run: WatchRun, keys) -> dict:
    """What a one-shot explain of the live state says of these pods."""
    live = run.live
    scheds = run._schedulers()
    pods = scheds.queue_order(queue_order([live.snapshot.pod_info(live.pending_pod(k)) for k in keys]))
    sink = Recorder()
    explainer = explainer_for(scheds, Workload(live.cluster, pods), sink, reuse=False)
    return {d["pod"]: d for d in pod_documents(explainer, pods, sink, 1)}


@pytest.mark.parametrize("seed", range(SEEDS))
def test_every_pod_whose_verdict_changed_is_due(seed):
    rng = random.Random(seed)
    model = Model(rng)
    cluster(model, rng)
    live = start(model)
    now = [0.0]
    sink = Recorder()
    pods = [PodInfo(p) for p in live.pending.values()]
    run = WatchRun(sink, FakeWatcher(), live, Workload(live.cluster, pods), selected=lambda pod: True, named=None,
                   tie_break="name", seed=None, settle=1.0, clock=lambda: now[0], wall=lambda: 1_700_000_000.0)
    for pi in run.workload.pods:
        run._due(run._track(pi.pod, now[0]), now[0], "pending", settle=0.0)
    run._flush(now[0], run._schedulers())
    last = {doc["pod"]: doc for _, doc in sink.explained()}
    seen = len(sink.items)
    checked = 0
    for n in range(STEPS):
        ev = step(model, rng, n)
        run._event(ev)
        # Due, or kept for its scores to be computed again at the batch.
        due = {k for k, t in run.tracked.items() if t.due is not None or (t.reach is not None and t.reach in run._flagged)}
        keys = [k for k in run.tracked if k in last]
        now_says = one_shot(run, keys)
        what = f"step {n}: {ev.type} {ev.kind} {ev.obj['metadata'].get('name') if ev.obj else ''}"
        for k in keys:
            if k in due:
                continue
            checked += 1
            assert verdict(now_says[k]) == verdict(last[k]), (
                f"{what}: {k} changed from {verdict(last[k])} to {verdict(now_says[k])} and is not due")
        # The batch: every pod's last explanation now says what a one-shot does.
        now[0] += 5.0
        run._flush(now[0])
        for kind, item in sink.items[seen:]:
            if kind == "pod":
                last[item["pod"]] = item
        seen = len(sink.items)
        for k in keys:
            assert verdict(last[k]) == verdict(now_says[k]), (
                f"{what}: after the batch, {k} says {verdict(last[k])}, a one-shot {verdict(now_says[k])}")
    assert checked > 0
