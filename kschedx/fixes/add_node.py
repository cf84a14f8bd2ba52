"""add-node: new nodes of a shape, when the pod is kept off nodes of that
shape only by what runs there (resources in use, host ports, pod affinity,
spreading, volumes in use), or by an extended resource no node has enough
of.

A shape is what a new node is made from (`Shape`): a copy of an existing
node (its labels, taints and allocatable, without its pods but with the
DaemonSet pods that would run there), with the extended resources the pod
asks for and no node advertises added. Shapes are tried smallest first; the
first that makes the pod fit is proposed, the nodes named after the shape.

For a workload judged as a whole (sequence.py), the fix says how many such
nodes: the fewest with which every replica is placed (an estimate from the
replicas left and what one empty node takes, then checked, and one fewer
checked too).

With node templates (--node-template) the new node is one of a template
instead, as its pool would make it (its own name and hostname, its
ResourceSlices, its static and DaemonSet pods): templates are tried
smallest first, whatever keeps the pod off the existing nodes (a template
with devices fixes a device shortage too).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..api.resources import CPU, MEMORY
from ..config import names
from ..plugins.interpodaffinity.filtering import ERR_REASON_AFFINITY as AFFINITY_REASON
from ..plugins.volumerestrictions import ERR_REASON_RWOP_CONFLICT as RWOP_REASON
from ..result.document import quantity_text
from .jsonpatch import pointer

KIND = "add-node"
ORDER = 5
HOSTNAME = "kubernetes.io/hostname"
# Plugins whose verdict on an empty copy of the node can differ.
# (Not DynamicResources: a node's devices are published for that node, so
# a copy has none; nor a PreFilter rejection, which no node changes.)
_USAGE = (names.NodeResourcesFit, names.NodePorts, names.InterPodAffinity, names.PodTopologySpread, names.NodeVolumeLimits,
          names.VolumeRestrictions)
# Checks of one shape's node count, for a workload.
MAX_COUNT_CHECKS = 6


@dataclass
class Shape:
    """What new nodes are made from: `node`, the Node object each copies
    (labels, taints, allocatable), named `<base>-copy`, `<base>-copy-2`...;
    `words` says what it is; `extra`: allocatable added to it (an extended
    resource no node advertises: `why` says so)."""

    base: str
    node: dict
    words: str
    allocatable: dict  # what one new node has, in the units of Resource.as_dict()
    extra: dict = field(default_factory=dict)
    why: str = ""

    def make(self, name: str) -> dict:
        obj = new_node(self.node, name)
        for resource, amount in self.extra.items():
            obj["status"]["allocatable"][resource] = str(amount)
            obj["status"]["capacity"][resource] = str(amount)
        return obj


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


def _missing_extended(pi, snapshot) -> dict:
    """Extended resources the pod asks for that no node has as much of
    allocatable: resource -> the pod's request."""
    from .requests import overcommits

    req = pi.resource.as_dict()
    wanted = {k: v for k, v in req.items() if v and not overcommits(k) and "/" in k
              and not k.startswith(("hugepages-", "kubernetes.io/"))}
    if not wanted:
        return {}
    for ni in snapshot.node_infos:
        alloc = ni.allocatable.as_dict()
        wanted = {k: v for k, v in wanted.items() if alloc.get(k, 0) < v}
        if not wanted:
            break
    return wanted


def _fits_empty(pi, ni, extra: dict) -> bool:
    req, alloc = pi.resource.as_dict(), dict(ni.allocatable.as_dict(), **extra)
    return all(v <= alloc.get(k, 0) for k, v in req.items() if v) and ni.allocatable.allowed_pod_number > 0


def copy_shapes(search) -> list[Shape]:
    """Shapes of the existing nodes the pod is kept off by usage only (or by
    an extended resource no node has enough of, then added to the copy)."""
    snap = search.snapshot
    b = search.blockers
    if b.pre_filter:
        return []
    missing = _missing_extended(search.pod_info, snap)
    shapes: dict[str, Shape] = {}
    for name in b.only(*_USAGE):
        if AFFINITY_REASON in b.reasons(name, names.InterPodAffinity):
            continue  # the pods its affinity needs are no nearer to a copy of the node
        if RWOP_REASON in b.reasons(name, names.VolumeRestrictions):
            continue  # the claim is in use wherever the pod goes
        ni = snap.get(name)
        extra = {k: v for k, v in missing.items() if ni.allocatable.as_dict().get(k, 0) < v}
        if ni.unschedulable or not _fits_empty(search.pod_info, ni, extra):
            continue
        labels = {k: v for k, v in ni.labels.items() if k != HOSTNAME}
        key = json.dumps([sorted(labels.items()), ni.taints, sorted(ni.allocatable.as_dict().items()),
                          sorted(extra.items())], sort_keys=True, default=str)
        if key in shapes:
            continue
        alloc = ni.allocatable.as_dict()
        size = f"cpu {quantity_text(CPU, alloc.get(CPU, 0))}, memory {quantity_text(MEMORY, alloc.get(MEMORY, 0) * 1000)}"
        # The verifier runs a new node's DaemonSet pods first (their room is theirs).
        pods = "no pods but its DaemonSet pods" if _runs_daemon_pods(search, ni.node) else "no pods"
        words = f"shaped like {ni.name} ({size}, its labels and taints, {pods})"
        why = ""
        if extra:
            added = ", ".join(f"{k} {v}" for k, v in sorted(extra.items()))
            words = f"{words} with {added}"
            why = "; ".join(f"no node advertises {k}" if not _advertised(snap, k) else f"no node has {v} {k}"
                            for k, v in sorted(extra.items()))
        shapes[key] = Shape(ni.name, ni.node, words, dict(alloc, **extra), extra, why)
    return sorted(shapes.values(), key=lambda s: (s.allocatable.get(CPU, 0), s.allocatable.get(MEMORY, 0), s.base))


def _runs_daemon_pods(search, node: dict) -> bool:
    from ..sources.workloads import daemon_pods_for_node

    daemon_sets = [o for o in search.cluster.workloads if o.get("kind") == "DaemonSet"]
    return bool(daemon_sets) and bool(daemon_pods_for_node(node, daemon_sets))


def _advertised(snapshot, resource: str) -> bool:
    return any(ni.allocatable.as_dict().get(resource, 0) for ni in snapshot.node_infos)


# Where shapes come from when no --node-template is given (templates are
# tried by from_templates: a template's node brings its slices and pods).
SHAPE_SOURCES = [copy_shapes]


def _names(snap, base: str, count: int) -> list[str]:
    out = []
    name, n = f"{base}-copy", 2
    while len(out) < count:
        if snap.get(name) is None:
            out.append(name)
        name, n = f"{base}-copy-{n}", n + 1
    return out


def _candidate(search, shape: Shape, count: int):
    from .search import CLUSTER, Candidate, node_target

    nodes = [shape.make(name) for name in _names(search.snapshot, shape.base, count)]
    what = (f"add a node {nodes[0]['metadata']['name']}" if count == 1 else
            f"add {count} nodes {', '.join(n['metadata']['name'] for n in nodes[:3])}{', ...' if count > 3 else ''}")
    change = f"{what} {shape.words}" + (f" ({shape.why})" if shape.why else "")
    changes = [{"action": "create", "target": node_target(n["metadata"]["name"]),
                "patch": [{"op": "add", "path": pointer(), "value": n}]} for n in nodes]
    return Candidate(KIND, CLUSTER, change, changes=changes, new_nodes=nodes, magnitude=count, order=ORDER)


def _per_node(pi, shape: Shape) -> int:
    """Replicas of the pod one empty node of the shape takes: by its
    requests, and one when its required anti-affinity keeps its own pods
    a node apart."""
    from ..api.labels import SelectorError, label_selector

    for term in ((pi.spec.get("affinity") or {}).get("podAntiAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution") or ():
        if term.get("topologyKey") != HOSTNAME:
            continue
        try:
            if label_selector(term.get("labelSelector")).matches(pi.labels):
                return 1
        except SelectorError:
            continue  # a selector the API server refuses: no estimate from it
    req = pi.resource.as_dict()
    fits = [shape.allocatable.get(k, 0) // v for k, v in req.items() if v]
    return max(1, min(fits) if fits else 1)


def find(search, shapes: list[Shape] | None = None) -> list:
    from .search import MAX_CANDIDATES

    if shapes is None and search.templates:
        return from_templates(search)
    if shapes is None:
        shapes = [s for source in SHAPE_SOURCES for s in source(search)]
    sequence = getattr(search.verifier, "sequence", False)
    for shape in shapes[:MAX_CANDIDATES]:
        if not search.has_budget():
            break
        fix = _count(search, shape) if sequence else search.check(_candidate(search, shape, 1))
        if fix is not None:
            return [fix]
    return []


def _count(search, shape: Shape):
    """The fewest nodes of the shape with which every replica is placed:
    the estimate, else as many as replicas are left; then fewer, while
    fewer verify."""
    left = search.verifier.unplaced
    guess = min(left, -(-left // _per_node(search.pod_info, shape)))
    checks = 0
    best, lo = None, 0  # lo: a count known not to be enough
    for count in dict.fromkeys((guess, left)):
        if checks >= MAX_COUNT_CHECKS or not search.has_budget():
            return best
        checks += 1
        fix = search.check(_candidate(search, shape, count))
        if fix is not None:
            best, hi = fix, count
            break
        lo = count
    if best is None:
        return None
    while hi - lo > 1 and checks < MAX_COUNT_CHECKS and search.has_budget():
        mid = hi - 1 if hi - lo == 2 or checks == 1 else (lo + hi) // 2
        checks += 1
        fix = search.check(_candidate(search, shape, mid))
        if fix is not None:
            best, hi = fix, mid
        else:
            lo = mid
    return best


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
