"""label-node: the labels to add to a named node so that the pod's
nodeSelector and one of its required node affinity terms match it, when
NodeAffinity alone keeps the pod off that node. Only labels the node does
not have are added: changing an existing label (a zone, an instance type)
is not a change of configuration but of hardware."""

from __future__ import annotations

from ..api.labels import _parse_int, _valid_value
from ..config import names
from .jsonpatch import apply_patch, pointer

KIND = "label-node"
ORDER = 1


def _term_labels(term: dict, labels: dict) -> dict | None:
    """Labels to add so that the term matches, or None when adding cannot."""
    if term.get("matchFields"):
        return None  # metadata.name: not a label
    add: dict = {}
    for e in term.get("matchExpressions") or ():
        key, op, values = e.get("key"), e.get("operator"), [str(v) for v in e.get("values") or ()]
        has = key in labels
        if op == "In":
            if has and labels[key] not in values:
                return None
            if not has:
                add[key] = values[0] if values else ""
        elif op == "Exists":
            if not has:
                add[key] = "true"
        elif op in ("NotIn", "DoesNotExist"):
            if has and (op == "DoesNotExist" or labels[key] in values):
                return None
        elif op in ("Gt", "Lt"):
            value = None if has or len(values) != 1 else _number_label(op, values[0])
            if value is None:
                return None
            add[key] = value
        else:
            return None
    return add


def _number_label(op: str, bound: str) -> str | None:
    """The label value nearest the Gt/Lt `bound` that matches it, or None.
    A label value has no sign, and a bound that is no label value makes the
    requirement match no node (NewRequirement refuses it): so the bound is
    0 or more, every integer between 0 and Lt's bound is as good as the
    nearest, and Lt 0 has none. The value must parse as an int64 to match
    (Gt 9223372036854775807 has none)."""
    n = _parse_int(bound)
    if n is None or not _valid_value(bound):
        return None
    value = str(n + 1 if op == "Gt" else n - 1)
    if not _valid_value(value) or _parse_int(value) is None:
        return None
    return value


def labels_for(spec: dict, labels: dict) -> dict | None:
    """The fewest labels to add for the pod's nodeSelector and required node affinity."""
    add: dict = {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if key in labels and labels[key] != value:
            return None
        if key not in labels:
            add[key] = value
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        options = []
        for term in required.get("nodeSelectorTerms") or ():
            if not term.get("matchExpressions") and not term.get("matchFields"):
                continue
            extra = _term_labels(term, dict(labels, **add))
            if extra is not None:
                options.append(extra)
        if not options:
            return None
        add.update(min(options, key=len))
    return add or None


def load(ni) -> float:
    """How full a node is: the larger of its cpu and memory requested over allocatable."""
    alloc, used = ni.allocatable, ni.requested
    return max(used.milli_cpu / alloc.milli_cpu if alloc.milli_cpu else 1.0,
               used.memory / alloc.memory if alloc.memory else 1.0)


def _room(pi, ni) -> bool:
    """Whether the pod's requests fit what the node has free."""
    free = ni.allocatable.as_dict()
    used = ni.requested.as_dict()
    return all(v <= free.get(k, 0) - used.get(k, 0) for k, v in pi.resource.as_dict().items() if v)


def find(search) -> list:
    """Per set of labels to add, the least loaded node it opens that has
    room for the pod (the labels mark the node for the pod: its busiest
    nodes are the last to choose)."""
    from .search import MAX_CANDIDATES, node_target

    spec = search.pod_info.spec
    candidates = []
    for name in search.blockers.only(names.NodeAffinity):
        ni = search.snapshot.get(name)
        labels = (ni.node.get("metadata") or {}).get("labels") or {}
        add = labels_for(spec, labels)
        if add:
            candidates.append((len(add), not _room(search.pod_info, ni), load(ni), name, add))
    candidates.sort(key=lambda c: c[:4])
    fixes = []
    seen = set()
    for size, _, _, name, add in candidates:
        key = tuple(sorted(add.items()))
        if key in seen:
            continue  # the same labels on another node: one node is the smaller change
        seen.add(key)
        if len(seen) > MAX_CANDIDATES:
            break
        node = search.snapshot.get(name).node
        if isinstance((node.get("metadata") or {}).get("labels"), dict):
            ops = [{"op": "add", "path": pointer("metadata", "labels", k), "value": v} for k, v in add.items()]
        else:
            ops = [{"op": "add", "path": pointer("metadata", "labels"), "value": dict(add)}]
        changed = apply_patch(node, ops)
        text = ", ".join(f"{k}={v}" for k, v in add.items())
        fix = search.try_cluster_change(
            KIND, f"label node {name} with {text}", [{"action": "patch", "target": node_target(name), "patch": ops}],
            lambda changed=changed: search.verifier.node_replaced(changed), magnitude=size, order=ORDER)
        if fix is not None:
            fixes.append(fix)
    return fixes


def parts(ctx, node: str):
    from .parts import Part
    from .search import CLUSTER, node_target

    ni = ctx.search.snapshot.get(node)
    labels = (ni.node.get("metadata") or {}).get("labels") or {}
    add = labels_for(ctx.pod_info.spec, labels)
    if not add:
        return []
    if isinstance((ni.node.get("metadata") or {}).get("labels"), dict):
        ops = [{"op": "add", "path": pointer("metadata", "labels", k), "value": v} for k, v in add.items()]
    else:
        ops = [{"op": "add", "path": pointer("metadata", "labels"), "value": dict(add)}]
    text = ", ".join(f"{k}={v}" for k, v in add.items())
    return [Part(KIND, names.NodeAffinity, CLUSTER, f"label node {node} with {text}", node_patches={node: ops},
                 changes=[{"action": "patch", "target": node_target(node), "patch": ops}], magnitude=len(add))]


__all__ = ["find", "labels_for", "parts"]
