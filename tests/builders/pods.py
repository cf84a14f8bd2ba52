"""Pods and what goes in them: containers; the pod of most plugin tests
(`make_pod`: a fresh uid, one container, only the fields a test gives); the
pods other tests were written against, each a few arguments of make_pod
(fixture_pod, preemption_pod, volume_pod) or as the test API server serves
them (api_pod); and `P`, a pod built step by step like upstream's st.MakePod()."""

from __future__ import annotations

import copy
import itertools

from .constraints import (
    REQUIRED,
    affinity_term,
    label_selector,
    node_selector_term,
    requirement,
    required_node_affinity,
    spread_constraint,
    toleration,
)
from .core import AUTO, api_object, metadata, owner_reference, put, served

__all__ = [
    "HIGH",
    "IMAGE",
    "LARGE",
    "LOW",
    "MEDIUM",
    "MID",
    "NEG",
    "NODE_RES",
    "ONE_POD",
    "P",
    "PAST",
    "SMALL",
    "VERY_HIGH",
    "VERY_LARGE",
    "api_pod",
    "claim_volumes",
    "container",
    "epoch",
    "fixture_pod",
    "make_pod",
    "preemption_pod",
    "req_containers",
    "sidecar",
    "volume_pod",
]

IMAGE = "registry.example/app:1"
PAUSE = "registry.k8s.io/pause:3.10"
PAST = "2024-01-01T00:00:00Z"  # when a terminating pod was deleted, an evicted one disrupted

# The requests, capacities and priorities of upstream's preemption tests.
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000

_uids = itertools.count(1)
_names = itertools.count(1)


def container(name="c", *, requests=None, limits=None, image=None, ports=None, restart_policy=None) -> dict:
    resources = put({}, requests=_copy(requests), limits=_copy(limits))
    return put({"name": name, "image": image or IMAGE}, resources=resources or None,
               ports=[dict(p) for p in ports] if ports is not None else None, restartPolicy=restart_policy)


def sidecar(name="sidecar", **kw) -> dict:
    return container(name, restart_policy="Always", **kw)


def req_containers(*requests) -> list[dict]:
    """One container per request list, named c0, c1, ..."""
    return [container(f"c{i}", requests=r) for i, r in enumerate(requests)]


def make_pod(
    name="pod",
    namespace="default",
    *,
    containers=None,
    init_containers=None,
    node=None,
    priority=None,
    uid=AUTO,
    labels=None,
    tolerations=None,
    node_selector=None,
    affinity=None,
    overhead=None,
    pod_resources=None,
    scheduling_gates=None,
    status=None,
    created=None,
    terminating=False,
    **spec,
) -> dict:
    """A Pod as stored, without admission: what is given, one default
    container, and a fresh uid unless `uid` says otherwise (None: none).
    Other keyword arguments are spec fields under their API names."""
    spec = put(
        put({}, **spec),
        containers=containers if containers is not None else [container()],
        initContainers=init_containers,
        nodeName=node,
        priority=priority,
        tolerations=tolerations,
        nodeSelector=node_selector,
        affinity=affinity,
        overhead=overhead,
        resources=pod_resources,
        schedulingGates=[{"name": g} for g in scheduling_gates] if scheduling_gates is not None else None,
    )
    meta = metadata(name, namespace, uid=f"uid-{next(_uids)}" if uid is AUTO else uid,
                    labels=_copy(labels), creationTimestamp=created, deletionTimestamp=PAST if terminating else None)
    return api_object("v1", "Pod", meta, spec=spec, status=status)


def fixture_pod(name="p", namespace=None, **spec) -> dict:
    """A pod as a user writes it in a fixture file: a name, one container,
    the spec fields given; no uid, no namespace unless given."""
    spec.setdefault("containers", [container(image="i")])
    return make_pod(name, namespace, uid=None, **spec)


def preemption_pod(name, *, priority=None, node=None, req=None, labels=None, start=None, ns="default", nominated=None,
                   policy=None, terminating=False, disruption=False, affinity=None, spread=None) -> dict:
    """A pod as upstream's preemption tables make it (st.MakePod().Name(n).UID(n)...):
    one pause container requesting `req`, a status (start time, nominated node,
    the DisruptionTarget condition of a pod being preempted) always there."""
    status = put({}, startTime=start or None, nominatedNodeName=nominated or None, conditions=[
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}] if disruption else None)
    return make_pod(name, ns, uid=name, labels=labels or None, terminating=terminating,
                    containers=[container(image="pause", requests=req or None)], priority=priority,
                    node=node or None, preemptionPolicy=policy or None, affinity=affinity or None,
                    topologySpreadConstraints=spread or None, status=status)


def volume_pod(name, ns="default", claims=(), volumes=(), node_name=None, uid=None, priority=None) -> dict:
    """A pod of the volume plugin tests: its `claims` as volumes v0, v1, ...
    followed by `volumes`; no uid unless given."""
    return make_pod(name, ns, uid=uid or None, containers=[container(image="x")], node=node_name or None,
                    priority=priority, volumes=claim_volumes(claims) + list(volumes))


def claim_volumes(claims) -> list[dict]:
    """Volumes v0, v1, ... for these claim names."""
    return [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]


def api_pod(name, *, namespace="default", node_name=None, phase=None, cpu="100m", memory="128Mi", labels=None,
            uid=None, ready=True) -> dict:
    """A pod as the test API server serves it: labelled app=<name> unless
    `labels`, one pause container, Running (and Ready unless not `ready`) when
    bound, Pending otherwise, unless `phase` says."""
    if phase is None:
        phase = "Running" if node_name else "Pending"
    meta = metadata(name, namespace, labels=labels or {"app": name}, uid=uid or None)
    spec = put({"containers": [container("app", image=PAUSE, requests={"cpu": cpu, "memory": memory})],
                "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30}, nodeName=node_name or None)
    status = put({"phase": phase}, conditions=[{"type": "Ready", "status": "True" if ready else "False"}]
                 if phase == "Running" else None)
    return served("v1", "Pod", meta, spec=spec, status=status)


def epoch(n: int) -> str:
    """metav1.Time of n seconds after the epoch (upstream uses nanoseconds;
    only the order matters)."""
    return f"1970-01-01T00:00:{n:02d}Z"


def _copy(d: dict | None) -> dict | None:
    return dict(d) if d is not None else None


class P:
    """A pod under construction; .obj() returns (a copy of) the dict.

    Unnamed pods are pod-1, pod-2, ...; a P has no uid (admission gives it one)."""

    def __init__(self, name: str | None = None):
        self.o = make_pod(name or f"pod-{next(_names)}", uid=None, labels={}, containers=[container(image="img")])

    def name(self, n):
        self.o["metadata"]["name"] = n
        return self

    def namespace(self, ns):
        self.o["metadata"]["namespace"] = ns or "default"
        return self

    def uid(self, uid):
        self.o["metadata"]["uid"] = uid
        return self

    def labels(self, d):
        self.o["metadata"]["labels"].update(d)
        return self

    def label(self, k, v):
        self.o["metadata"]["labels"][k] = v
        return self

    def node(self, n):
        self.o["spec"]["nodeName"] = n
        return self

    def terminating(self):
        self.o["metadata"]["deletionTimestamp"] = PAST
        return self

    def owner(self, kind, name, api_version="apps/v1"):
        self.o["metadata"].setdefault("ownerReferences", []).append(owner_reference(kind, name, "x", api_version))
        return self

    def node_selector(self, d):
        self.o["spec"]["nodeSelector"] = dict(d)
        return self

    def node_affinity_in(self, key, values):
        return self._node_affinity(requirement(key, "In", *values))

    def node_affinity_not_in(self, key, values):
        return self._node_affinity(requirement(key, "NotIn", *values))

    def _node_affinity(self, req):
        self.o["spec"].setdefault("affinity", {})["nodeAffinity"] = required_node_affinity(node_selector_term(req))
        return self

    def toleration(self, key, effect="NoSchedule", operator="Exists", value=None):
        self.o["spec"].setdefault("tolerations", []).append(toleration(key, value, effect, operator))
        return self

    # -- pod (anti-)affinity ------------------------------------------------------------
    def _term(self, anti, kind, selector, topology_key, weight=1, **extra):
        term = affinity_term(selector, topology_key, **extra)
        aff = self.o["spec"].setdefault("affinity", {})
        block = aff.setdefault("podAntiAffinity" if anti else "podAffinity", {})
        if kind == REQUIRED:
            block.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            block.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term})
        return self

    def pod_affinity(self, topology_key, selector, kind=REQUIRED, weight=1, **extra):
        return self._term(False, kind, selector, topology_key, weight, **extra)

    def pod_anti_affinity(self, topology_key, selector, kind=REQUIRED, weight=1, **extra):
        return self._term(True, kind, selector, topology_key, weight, **extra)

    def pod_affinity_in(self, key, topology_key, values, kind=REQUIRED, weight=1):
        return self._term(False, kind, label_selector(requirement(key, "In", *values)), topology_key, weight)

    def pod_affinity_not_in(self, key, topology_key, values, kind=REQUIRED, weight=1):
        return self._term(False, kind, label_selector(requirement(key, "NotIn", *values)), topology_key, weight)

    def pod_affinity_exists(self, key, topology_key, kind=REQUIRED, weight=1):
        return self._term(False, kind, label_selector(requirement(key, "Exists")), topology_key, weight)

    def pod_anti_affinity_in(self, key, topology_key, values, kind=REQUIRED, weight=1):
        return self._term(True, kind, label_selector(requirement(key, "In", *values)), topology_key, weight)

    def pod_anti_affinity_not_in(self, key, topology_key, values, kind=REQUIRED, weight=1):
        return self._term(True, kind, label_selector(requirement(key, "NotIn", *values)), topology_key, weight)

    def pod_anti_affinity_exists(self, key, topology_key, kind=REQUIRED, weight=1):
        return self._term(True, kind, label_selector(requirement(key, "Exists")), topology_key, weight)

    # -- spread ----------------------------------------------------------------------------
    def spread(self, max_skew, topology_key, when, selector, min_domains=None, node_affinity_policy=None,
               node_taints_policy=None, match_label_keys=None):
        self.o["spec"].setdefault("topologySpreadConstraints", []).append(spread_constraint(
            max_skew, topology_key, when, selector, min_domains=min_domains, node_affinity_policy=node_affinity_policy,
            node_taints_policy=node_taints_policy, match_label_keys=match_label_keys))
        return self

    def obj(self):
        return copy.deepcopy(self.o)
