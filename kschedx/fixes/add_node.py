"""add-node: a new node shaped like an existing one (its labels, taints and
allocatable, without its pods), when the pod is kept off that node only by
what runs there (resources in use, host ports, pod affinity, spreading,
volumes in use). Shapes are tried smallest first; the first that makes the
pod fit is proposed, named after the node it copies.

With node templates (--node-template) the new node is one of a template
instead, as its pool would make it (its own name and hostname, its
ResourceSlices, its static and DaemonSet pods): templates are tried
smallest first, whatever keeps the pod off the existing nodes (a template
with devices fixes a device shortage too)."""

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
    # A new node is labelled with its own hostname, whatever the copied one
    # had (the kubelet sets it; cluster-autoscaler's copies get it too).
    labels = dict(meta.get("labels") or {}, **{HOSTNAME: name})
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
    if search.templates:
        return from_templates(search)
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
            KIND, f"add a node {name} shaped like {ni.name} ({size}, its labels and taints, no pods but its "
                  "DaemonSet pods)",
            [{"action": "create", "target": node_target(name), "patch": [{"op": "add", "path": pointer(), "value": obj}]}],
            lambda obj=obj: search.verifier.node_added(obj), order=ORDER)
        if fix is not None:
            return [fix]
    return []


def _size(template) -> tuple:
    from ..api.resources import Resource, to_milli_list

    r = Resource.from_milli_list(to_milli_list(template.allocatable))
    return r.milli_cpu, r.memory


def from_templates(search) -> list:
    """A node of the smallest template whose node takes the pod (checked by
    the pod's cycle with the node, its slices and DaemonSet pods added)."""
    from ..sources.node_templates import make_node, node_name
    from ..sources.workloads import daemon_pods_for_node
    from .search import MAX_CANDIDATES, node_target

    snap = search.snapshot
    requests = search.pod_info.resource.as_dict()

    def offers_enough(template) -> bool:
        from ..api.resources import Resource, to_milli_list

        alloc = Resource.from_milli_list(to_milli_list(template.allocatable)).as_dict()
        return all(v <= alloc.get(k, 0) for k, v in requests.items() if v)

    # Templates whose node offers what the pod requests first, smallest first.
    ordered = sorted(enumerate(search.templates),
                     key=lambda it: (not offers_enough(it[1]), _size(it[1]), it[0]))
    for _, template in ordered[:MAX_CANDIDATES]:
        name, n = node_name(template, lambda name: snap.get(name) is not None)
        made = make_node(template, name, n)
        alloc = template.allocatable
        size = ", ".join(f"{k} {v}" for k, v in alloc.items() if k != "pods")
        daemon_sets = [o for o in search.cluster.workloads if o.get("kind") == "DaemonSet"]
        runs = [f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                for p in made.pods + daemon_pods_for_node(made.node, daemon_sets)]
        change = (f"add a node {name} from template {template.name} ({size}, its labels and taints"
                  + (f"; runs {', '.join(runs)}" if runs else "") + "): scale node pool " + template.name + " by 1")
        create = {"action": "create", "target": node_target(name), "template": template.name,
                  "patch": [{"op": "add", "path": pointer(), "value": made.node}]}
        fix = search.try_cluster_change(KIND, change, [create],
                                        lambda made=made: search.verifier.template_node_added(made), order=ORDER)
        if fix is not None:
            return [fix]
    return []
