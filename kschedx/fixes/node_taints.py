"""remove-taint: the taints to remove from a named node (and cordoning to
undo) when that alone keeps the pod off it."""

from __future__ import annotations

from ..config import names
from ..api.taints import tolerations_tolerate_taint
from .common import taint_text
from .jsonpatch import apply_patch, pointer
from .tolerations import untolerated
from .widens import _CONDITION_TAINTS

KIND = "remove-taint"
ORDER = 0
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


def _controller_owned(taint: dict) -> bool:
    """Whether a controller owns the taint: the node lifecycle controller
    puts a condition's taint (not ready, under pressure, ...) back while
    the condition lasts, and the cloud provider's controllers set theirs,
    so removing it by hand does not stick or hides a node that is not fit.
    The cordon's taint is the exception: uncordoning lifts it."""
    key = taint.get("key")
    return key in _CONDITION_TAINTS and key != UNSCHEDULABLE_TAINT


def _removable(ni, tolerations) -> list | None:
    """The untolerated taints to remove, or None when one of them is a
    condition's: the node stays closed however the others go."""
    taints = untolerated(ni.taints, tolerations)
    if any(_controller_owned(t) for t in taints):
        return None
    return taints


def _cordon_taints(ni, tolerations, taints: list) -> list:
    """Uncordoning also drops the taint the node lifecycle controller adds for the cordon."""
    return [t for t in ni.taints if t.get("key") == UNSCHEDULABLE_TAINT and t not in taints
            and not tolerations_tolerate_taint(tolerations, t)]


def find(search) -> list:
    from .search import MAX_CANDIDATES

    b = search.blockers
    nodes = sorted(set(b.only(names.TaintToleration, names.NodeUnschedulable)),
                   key=list(b.by_node).index)
    tolerations = search.pod_info.spec.get("tolerations")
    candidates = []
    for name in nodes:
        ni = search.snapshot.get(name)
        cordoned = names.NodeUnschedulable in b.by_node[name]
        taints = _removable(ni, tolerations)
        if taints is None:
            continue  # the pod's toleration (add-toleration) is the change that sticks
        if cordoned:
            taints += _cordon_taints(ni, tolerations, taints)
        all_taints = ni.node.get("spec", {}).get("taints") or []
        indexes = sorted((all_taints.index(t) for t in taints), reverse=True)
        ops = [{"op": "remove", "path": pointer("spec", "taints", i)} for i in indexes]
        if cordoned:
            ops.append({"op": "remove", "path": pointer("spec", "unschedulable")})
        if not ops:
            continue
        words = []
        if cordoned:
            words.append(f"uncordon node {name}")
        rest = [taint_text(t) for t in taints if not (cordoned and t.get("key") == UNSCHEDULABLE_TAINT)]
        if rest:
            words.append(f"remove taint {', '.join(rest)} from node {name}")
        candidates.append((len(ops), name, " and ".join(words), ops, (cordoned, tuple(rest))))
    fixes = []
    seen = set()
    for size, name, change, ops, what in sorted(candidates, key=lambda c: c[0]):
        if what in seen:
            continue  # the same taints on another node: one node is the smaller change
        seen.add(what)
        if len(seen) > MAX_CANDIDATES:
            break
        node = apply_patch(search.snapshot.get(name).node, ops)
        fix = search.try_cluster_change(
            KIND, change, [{"action": "patch", "target": _target(name), "patch": ops}],
            lambda node=node: search.verifier.node_replaced(node), magnitude=size, order=ORDER)
        if fix is not None:
            fixes.append(fix)
    return fixes


def _target(name: str) -> dict:
    from .search import node_target

    return node_target(name)


def parts(ctx, node: str):
    """The node's blocking taints removed (and the node uncordoned)."""
    from .parts import Part
    from .search import CLUSTER, node_target

    failing = ctx.blockers.by_node.get(node, {})
    ni = ctx.search.snapshot.get(node)
    tolerations = ctx.pod_info.spec.get("tolerations")
    cordoned = names.NodeUnschedulable in failing
    opens = {p for p in (names.TaintToleration, names.NodeUnschedulable) if p in failing}
    taints = _removable(ni, tolerations) if names.TaintToleration in failing else []
    if taints is None:
        # A condition's taint stays: only the pod's toleration opens TaintToleration here.
        taints = []
        opens.discard(names.TaintToleration)
    if cordoned:
        taints += _cordon_taints(ni, tolerations, taints)
    all_taints = ni.node.get("spec", {}).get("taints") or []
    ops = [{"op": "remove", "path": pointer("spec", "taints", i)}
           for i in sorted((all_taints.index(t) for t in taints), reverse=True)]
    if cordoned:
        ops.append({"op": "remove", "path": pointer("spec", "unschedulable")})
    if not ops or not opens:
        return []
    words = ([f"uncordon node {node}"] if cordoned else []) + (
        [f"remove taint {', '.join(taint_text(t) for t in taints if t.get('key') != UNSCHEDULABLE_TAINT)} "
         f"from node {node}"] if any(t.get("key") != UNSCHEDULABLE_TAINT for t in taints) else [])
    opens = frozenset(opens)
    return [Part(KIND, min(opens), CLUSTER, " and ".join(words), node_patches={node: ops},
                 changes=[{"action": "patch", "target": node_target(node), "patch": ops}], magnitude=len(ops),
                 covers=opens)]
