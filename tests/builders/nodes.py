"""Nodes, and the images they hold."""

from __future__ import annotations

from .core import api_object, metadata, put, served
from .pods import VERY_LARGE

__all__ = [
    "HOSTNAME",
    "api_node",
    "capacity_node",
    "fixture_node",
    "image",
    "make_node",
    "node_spec",
    "preemption_node",
    "topology_node",
]

HOSTNAME = "kubernetes.io/hostname"


def make_node(
    name="node",
    *,
    cpu=None,
    memory=None,
    pods=None,
    allocatable=None,
    labels=None,
    taints=None,
    unschedulable=False,
    images=None,
) -> dict:
    """A node whose capacity and allocatable are the same list.

    cpu / memory / pods are quantities; `allocatable` adds or overrides any
    resource. Without any, the node has an empty allocatable (all zero)."""
    alloc = put({}, cpu=_str(cpu), memory=_str(memory), pods=_str(pods))
    for k, v in (allocatable or {}).items():
        alloc[k] = str(v)
    meta = metadata(name, uid=f"node-{name}", labels=dict(labels) if labels is not None else None)
    status = put({"capacity": dict(alloc), "allocatable": dict(alloc)}, images=images or None)
    return api_object("v1", "Node", meta, spec=node_spec(taints, unschedulable), status=status)


def fixture_node(name) -> dict:
    """A node as a user may write it in a fixture file: a name and nothing else."""
    return api_object("v1", "Node", metadata(name))


def topology_node(name, labels=None, taints=None, unschedulable=False) -> dict:
    """A node that only its labels (and taints) tell apart: room for any pod
    (100 CPUs, 100Gi, 1000 pods), no capacity list, no uid."""
    meta = metadata(name, labels=dict(labels or {}))
    spec = node_spec(list(taints) if taints else None, unschedulable)
    status = {"allocatable": {"cpu": "100", "memory": "100Gi", "pods": "1000"}}
    return api_object("v1", "Node", meta, spec=spec, status=status)


def preemption_node(name, capacity=None, labels=None) -> dict:
    """st.MakeNode().Capacity(...) of upstream's preemption tables: 32 pods
    unless the capacity says otherwise, labelled with its hostname."""
    cap = {"pods": "32"}
    cap.update(capacity or VERY_LARGE)
    meta = metadata(name, labels=dict(labels or {HOSTNAME: name}))
    return api_object("v1", "Node", meta, status={"capacity": cap, "allocatable": dict(cap)})


def capacity_node(name, labels=None, **status) -> dict:
    """A node of the volume plugin tests, as a kubelet registers it: a capacity
    (8 CPUs, 16Gi, 110 pods) and no allocatable (admission copies it); `status`
    adds status fields."""
    meta = metadata(name, labels=dict(labels or {}))
    return api_object("v1", "Node", meta, status={"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}, **status})


def api_node(name, *, cpu="4", memory="16Gi", pods="110", labels=None, **extra) -> dict:
    """A node as the test API server serves it: labelled with its hostname,
    capacity = allocatable; `extra` replaces whole top-level fields."""
    rl = {"cpu": cpu, "memory": memory, "pods": pods}
    meta = metadata(name, labels={HOSTNAME: name, **(labels or {})})
    return {**served("v1", "Node", meta, spec={}, status={"capacity": rl, "allocatable": dict(rl)}), **extra}


def node_spec(taints=None, unschedulable=False) -> dict:
    return put({}, taints=taints or None, unschedulable=True if unschedulable else None)


def image(size, *names) -> dict:
    return {"names": list(names), "sizeBytes": size}


def _str(q):
    return str(q) if q is not None else None
