"""Small builders for preemption tests: pods, nodes, PDBs, a framework."""

from __future__ import annotations

from kschedx.cluster import build_cluster
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.interface import Plugin
from kschedx.framework.runner import Framework, NodeToStatus, PodResult
from kschedx.framework.status import Code, Status
from kschedx.snapshot import PodInfo, build_snapshot
from kschedx.sources.fixtures import Origin

SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000


def epoch(n: int) -> str:
    """metav1.Time of n seconds after the epoch (upstream uses nanoseconds;
    only the order matters)."""
    return f"1970-01-01T00:00:{n:02d}Z"


def pod(name, *, priority=None, node=None, req=None, labels=None, start=None, ns="default", nominated=None,
        policy=None, terminating=False, disruption=False, affinity=None, spread=None):
    spec = {"containers": [{"name": "c", "image": "pause"}]}
    if req:
        spec["containers"][0]["resources"] = {"requests": dict(req)}
    if priority is not None:
        spec["priority"] = priority
    if node:
        spec["nodeName"] = node
    if policy:
        spec["preemptionPolicy"] = policy
    if affinity:
        spec["affinity"] = affinity
    if spread:
        spec["topologySpreadConstraints"] = spread
    meta = {"name": name, "namespace": ns, "uid": name}
    if labels:
        meta["labels"] = dict(labels)
    if terminating:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    status = {}
    if start:
        status["startTime"] = start
    if nominated:
        status["nominatedNodeName"] = nominated
    if disruption:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def node(name, capacity=None, labels=None):
    """st.MakeNode().Capacity(...): 32 pods unless the capacity says otherwise."""
    cap = {"pods": "32"}
    cap.update(capacity or VERY_LARGE)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": dict(labels or {"kubernetes.io/hostname": name})},
            "status": {"capacity": cap, "allocatable": dict(cap)}}


def pdb(name, match_labels, allowed=0, disrupted=(), ns="default"):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"matchLabels": dict(match_labels)}},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": {p: "2024-01-01T00:00:00Z" for p in disrupted}}}


class Env:
    """A cluster, its snapshot and a default-profile framework."""

    def __init__(self, objects, tie_break="name", seed=None):
        self.cluster = build_cluster([(o, Origin("test")) for o in objects])
        self.snapshot = build_snapshot(self.cluster)
        self.fw = Framework(self.snapshot, tie_break=tie_break, seed=seed)
        for p in self.cluster.pending_pods():
            nom = (p.get("status") or {}).get("nominatedNodeName")
            if nom:
                self.fw.nominator.add(PodInfo(p), nom)
        self.plugin = self.fw.profile.by_name["DefaultPreemption"]

    def pod_info(self, name, ns="default") -> PodInfo:
        for p in self.cluster.pods:
            if p["metadata"]["name"] == name and p["metadata"]["namespace"] == ns:
                return PodInfo(p)
        raise KeyError(name)

    def pre_filter(self, pi) -> CycleState:
        state = CycleState()
        _, st, _ = self.fw._run_pre_filter(state, pi, PodResult(pi))
        assert st is None or st.is_success(), st
        return state

    def node_to_status(self, explicit: dict, absent=Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
        return NodeToStatus({n: Status(c) for n, c in explicit.items()},
                            Status(absent) if absent is not None else None, self.snapshot)

    def add_filter_first(self, plugin):
        self.fw.profile.filter.insert(0, plugin)

    def add_pre_filter(self, plugin):
        self.fw.profile.pre_filter.append(plugin)


class CountingFilter(Plugin):
    """tf.FakeFilterPlugin: counts Filter calls, returns a fixed code."""

    name = "FakeFilter"

    def __init__(self, code=Code.SUCCESS):
        super().__init__(None)
        self.code = code
        self.calls = 0

    def filter(self, state, pod_info, node_info):
        self.calls += 1
        return None if self.code == Code.SUCCESS else Status(self.code)


class FalseFilter(Plugin):
    name = "FalseFilter"

    def __init__(self):
        super().__init__(None)

    def filter(self, state, pod_info, node_info):
        return Status(Code.UNSCHEDULABLE, "injecting failure for pod test-pod")


class MatchFilter(Plugin):
    """Passes only the node named like the pod."""

    name = "MatchFilter"

    def __init__(self):
        super().__init__(None)

    def filter(self, state, pod_info, node_info):
        return None if node_info.name == pod_info.name else Status(Code.UNSCHEDULABLE, "node name mismatch")


class ErroringExtensions(Plugin):
    """The upstream TestPlugin: AddPod / RemovePod fail on nodes labelled error=true."""

    name = "test-plugin"

    def __init__(self):
        super().__init__(None)

    def pre_filter(self, state, pod_info, nodes):
        return None, None

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_info, to_add, node_info):
        if node_info.labels.get("error") == "true":
            return Status.as_error(f"failed to add pod: {pod_info.name}")
        return None

    def remove_pod(self, state, pod_info, to_remove, node_info):
        if node_info.labels.get("error") == "true":
            return Status.as_error(f"failed to remove pod: {pod_info.name}")
        return None
