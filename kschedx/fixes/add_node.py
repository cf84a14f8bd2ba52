"""add-node: a new node shaped like an existing one (its labels, taints and
allocatable, without its pods), when the pod is kept off that node only by
what runs there (resources in use, host ports, pod affinity, spreading,
volumes in use). Shapes are tried smallest first; the first that makes the
pod fit is proposed, named after the node it copies."""

from __future__ import annotations

import json

from ..config import names
from ..api.resources import CPU, MEMORY
from ..result.document import quantity_text
from ..plugins.interpodaffinity.filtering import ERR_REASON_AFFINITY as AFFINITY_REASON
from ..plugins.volumerestrictions import ERR_REASON_RWOP_CONFLICT as RWOP_REASON
from .jsonpatch import pointer

KIND = "add-node"
ORDER = 5
HOSTNAME = "kubernetes.io/hostname"
# Plugins whose verdict on an empty copy of the node can differ.
# (Not DynamicResources: a node's devices are published for that node, so
# a copy has none; nor a PreFilter rejection, which no node changes.)
_USAGE = (names.NodeResourcesFit, names.NodePorts, names.InterPodAffinity, names.PodTopologySpread, names.NodeVolumeLimits,
          names.VolumeRestrictions)


def new_node(node: dict, name: str) -> dict:
    meta = node.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    if HOSTNAME in labels:
        labels[HOSTNAME] = name
    status = node.get("status") or {}
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
    taints = (node.get("spec") or {}).get("taints")
    if taints:
        obj["spec"] = {"taints": json.loads(json.dumps(taints))}
    allocatable = dict(status.get("allocatable") or {})
    obj["status"] = {"capacity": dict(status.get("capacity") or allocatable), "allocatable": allocatable}
    return obj


def _fits_empty(pi, ni) -> bool:
    req, alloc = pi.resource.as_dict(), ni.allocatable.as_dict()
    return all(v <= alloc.get(k, 0) for k, v in req.items() if v) and ni.allocatable.allowed_pod_number > 0


def find(search) -> list:
    from .search import MAX_CANDIDATES, node_target

    snap = search.snapshot
    if search.blockers.pre_filter:
        return []
    shapes: dict[str, object] = {}
    for name in search.blockers.only(*_USAGE):
        if AFFINITY_REASON in search.blockers.reasons(name, names.InterPodAffinity):
            continue  # the pods its affinity needs are no nearer to a copy of the node
        if RWOP_REASON in search.blockers.reasons(name, names.VolumeRestrictions):
            continue  # the claim is in use wherever the pod goes
        ni = snap.get(name)
        if ni.unschedulable or not _fits_empty(search.pod_info, ni):
            continue
        labels = {k: v for k, v in ni.labels.items() if k != HOSTNAME}
        key = json.dumps([sorted(labels.items()), ni.taints, sorted(ni.allocatable.as_dict().items())],
                         sort_keys=True, default=str)
        shapes.setdefault(key, ni)
    ordered = sorted(shapes.values(), key=lambda ni: (ni.allocatable.milli_cpu, ni.allocatable.memory, ni.name))
    for ni in ordered[:MAX_CANDIDATES]:
        name = f"{ni.name}-copy"
        n = 2
        while snap.get(name) is not None:
            name, n = f"{ni.name}-copy-{n}", n + 1
        obj = new_node(ni.node, name)
        alloc = ni.allocatable.as_dict()
        size = (f"cpu {quantity_text(CPU, alloc.get(CPU, 0))}, "
                f"memory {quantity_text(MEMORY, alloc.get(MEMORY, 0) * 1000)}")
        fix = search.try_cluster_change(
            KIND, f"add a node {name} shaped like {ni.name} ({size}, its labels and taints, no pods)",
            [{"action": "create", "target": node_target(name), "patch": [{"op": "add", "path": pointer(), "value": obj}]}],
            lambda obj=obj: search.verifier.node_added(obj), order=ORDER)
        if fix is not None:
            return [fix]
    return []
