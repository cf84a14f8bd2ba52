"""relax-node-affinity: the nodeSelector entry, or the required node affinity
requirement or whole requirement, to drop so that nodes kept off by
NodeAffinity alone open."""

from __future__ import annotations

from ..config import names
from ..api.labels import NodeSelector, NodeSelectorTerm
from ..plugins.nodeaffinity import RequiredNodeAffinity
from .jsonpatch import pointer

KIND = "relax-node-affinity"
ORDER = 1
_REQUIRED = ("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")


def _per_node(spec: dict, nodes) -> list:
    """(change, patch, magnitude) dropping, for a node, every nodeSelector
    entry and every requirement of the required node affinity it does not
    match: the smallest relaxation that opens it when no single entry does
    (a selector naming two labels the node lacks). One candidate per
    distinct change."""
    out, seen = [], set()
    for ni in nodes:
        made = _unmatched(spec, ni)
        if made is None or len(made[0]) < 2:
            continue  # one entry: a single candidate already
        ops, words = made
        key = repr(ops)
        if key not in seen:
            seen.add(key)
            out.append(("; ".join(words), ops, len(ops) + (1 if _drops_all(ops) else 0)))
    return out


def _drops_all(ops: list) -> bool:
    return any(op["path"] == pointer(*_REQUIRED) for op in ops)


def _unmatched(spec: dict, ni) -> tuple[list, list] | None:
    """(ops, words): drop the nodeSelector entries the node does not match,
    and the requirements of the required node affinity it fails (the whole
    affinity only when no term is left that could match it)."""
    labels = ni.labels
    ops, words = [], []
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            ops.append({"op": "remove", "path": pointer("spec", "nodeSelector", key)})
            words.append(f"drop nodeSelector {key}={value}")
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required:
        dropped = _failed_requirements(required, labels, ni.name) if isinstance(required, dict) else None
        if dropped is None:
            ops.append({"op": "remove", "path": pointer(*_REQUIRED)})
            words.append("drop the required node affinity")
        else:
            ops += dropped[0]
            words += dropped[1]
    return (ops, words) if ops else None


def _failed_requirements(required: dict, labels: dict, name: str) -> tuple[list, list] | None:
    """(ops, words) dropping the requirements the node fails in the term
    that needs the fewest dropped (the terms are ORed: one term matching is
    enough); ([], []) when a term matches already; None when every term
    would be left empty (an empty term matches no node) or cannot be read."""
    if NodeSelector(required).matches(labels, name):
        return [], []
    best = None
    for i, term in enumerate(required.get("nodeSelectorTerms") or ()):
        failed = _failed_in_term(term, labels, name) if isinstance(term, dict) else None
        if failed and (best is None or len(failed) < len(best[1])):
            best = (i, failed)
    if best is None:
        return None
    i, failed = best
    ops, words = [], []
    # Highest index first: each removal leaves the indexes before it in place.
    for f, j, r in sorted(failed, key=lambda x: (x[0], -x[1])):
        ops.append({"op": "remove", "path": pointer(*_REQUIRED, "nodeSelectorTerms", i, f, j)})
        words.append(f"drop requirement {_requirement_text(r)} of required node affinity term {i}")
    return ops, words


def _failed_in_term(term: dict, labels: dict, name: str) -> list | None:
    """(field, index, requirement) of each requirement of the term the node
    fails; None when they are all failed (dropping them leaves an empty
    term, which matches nothing) or the term has none."""
    reqs = [(f, j, r) for f in ("matchExpressions", "matchFields") for j, r in enumerate(term.get(f) or ())]
    failed = [(f, j, r) for f, j, r in reqs
              if not NodeSelectorTerm({f: [r]}).matches(labels, name)]
    if not reqs or len(failed) == len(reqs):
        return None
    return failed


def _requirement_text(r: dict) -> str:
    values = ",".join(str(v) for v in r.get("values") or ())
    return f"{r.get('key')} {r.get('operator')}" + (f" ({values})" if values else "")


def _candidates(spec: dict) -> list:
    return list(_single(spec))


def _single(spec: dict):
    """(change, patch, magnitude): smaller relaxations first."""
    for key, value in (spec.get("nodeSelector") or {}).items():
        yield (f"drop nodeSelector {key}={value}", [{"op": "remove", "path": pointer("spec", "nodeSelector", key)}], 1)
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if not isinstance(required, dict):
        return
    terms = required.get("nodeSelectorTerms") or []
    for i, term in enumerate(terms):
        reqs = [(f, j, r) for f in ("matchExpressions", "matchFields") for j, r in enumerate(term.get(f) or ())]
        if len(reqs) < 2:
            continue  # dropping a term's only requirement leaves a term that matches nothing
        for f, j, r in reqs:
            yield (f"drop requirement {_requirement_text(r)} of required node affinity term {i}",
                   [{"op": "remove", "path": pointer(*_REQUIRED, "nodeSelectorTerms", i, f, j)}], 1)
    yield ("drop the required node affinity", [{"op": "remove", "path": pointer(*_REQUIRED)}], 2)


def find(search) -> list:
    from .search import MAX_CANDIDATES

    from .workload_target import daemon_pod

    nodes = [search.snapshot.get(n) for n in search.blockers.only(names.NodeAffinity)]
    if not nodes or daemon_pod(search):
        return []
    screened = []
    spec = search.raw_pod.get("spec") or {}
    for change, patch, magnitude in _candidates(spec) + _per_node(spec, nodes):
        pi = search.verifier.patched_pod(patch)
        if pi is None:
            continue
        req = RequiredNodeAffinity(pi.spec)
        opens = [ni.name for ni in nodes if req.matches(ni)]
        if opens:
            screened.append((magnitude, -len(opens), change, patch, opens))
    screened.sort(key=lambda c: c[:2])
    # Dropping the whole affinity comes last: it is only worth a cycle when
    # no narrower change (one keeping the affinity) verified.
    narrow = [c for c in screened if not _drops_all(c[3])]
    fixes, kept = _checked(search, narrow[:MAX_CANDIDATES])
    wide = [c for c in screened if _drops_all(c[3]) and not any(_within(p, c[3]) for p in kept)]
    more, _ = _checked(search, wide[:MAX_CANDIDATES - len(fixes)])
    return fixes + more


def _checked(search, candidates: list) -> tuple[list, list]:
    """(the fixes that verify, their patches)."""
    fixes, patches = [], []
    for magnitude, _, change, patch, _ in candidates:
        fix = search.try_pod_patch(KIND, change, patch, magnitude=magnitude, order=ORDER)
        if fix is not None:
            fixes.append(fix)
            patches.append(patch)
    return fixes, patches


def _within(narrow: list, wide: list) -> bool:
    """Whether every node `narrow` lets the pod on, `wide` (which drops the
    whole required node affinity) does too: `narrow` drops no nodeSelector
    entry that `wide` keeps."""
    kept_by_wide = {op["path"] for op in narrow if op["path"].startswith("/spec/nodeSelector/")} - \
        {op["path"] for op in wide}
    return not kept_by_wide


def parts(ctx, node: str):
    """Drop the nodeSelector entries the node does not match, and the
    requirements of the required node affinity it fails (the whole
    affinity when no term can be left matching it)."""
    from .parts import Part
    from .search import POD

    from .workload_target import daemon_pod

    if daemon_pod(ctx.search):
        return []
    made = _unmatched(ctx.raw_pod.get("spec") or {}, ctx.search.snapshot.get(node))
    if made is None:
        return []
    ops, words = made
    return [Part(KIND, names.NodeAffinity, POD, "; ".join(words), pod_patch=ops, magnitude=len(ops))]


# ---- move-to-volume-node ---------------------------------------------------------------------------
MOVE_KIND = "move-to-volume-node"
MOVE_ORDER = 2
_VOLUME_PLUGINS = (names.VolumeBinding, names.VolumeZone)


def _moved(spec: dict, labels: dict, name: str):
    """(ops, words) replacing the nodeSelector values and the `In`
    requirements the node misses by the node's own values; None when a
    requirement cannot be met that way (a key the node lacks...)."""
    ops, words = [], []
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) == value:
            continue
        if key not in labels:
            return None
        ops.append({"op": "replace", "path": pointer("spec", "nodeSelector", key), "value": labels[key]})
        words.append(f"nodeSelector {key}={value} -> {labels[key]}")
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        terms = required.get("nodeSelectorTerms") or []
        if terms and not NodeSelector(required).matches(labels, name):
            term = terms[0]
            for j, r in enumerate(term.get("matchExpressions") or ()):
                key = r.get("key")
                if r.get("operator") != "In" or key not in labels or labels[key] in (r.get("values") or ()):
                    continue
                ops.append({"op": "replace", "path": pointer(*_REQUIRED, "nodeSelectorTerms", 0, "matchExpressions",
                                                            j, "values"), "value": [labels[key]]})
                words.append(f"{key} In ({','.join(r.get('values') or ())}) -> ({labels[key]})")
    return (ops, words) if ops else None


def _move_find(search) -> list:
    """When the nodes the pod's node affinity allows cannot reach its volume
    (VolumeBinding, VolumeZone) and nodes that can are kept off by the node
    affinity alone: the same selector, with the volume's node's values (a
    replace, smaller than a drop). Never a change of a node's labels."""
    from .search import MAX_CANDIDATES
    from .workload_target import daemon_pod

    b = search.blockers
    if daemon_pod(search) or not b.failing_anywhere() & set(_VOLUME_PLUGINS):
        return []
    spec = search.raw_pod.get("spec") or {}
    seen, fixes = set(), []
    for name in b.only(names.NodeAffinity):
        ni = search.snapshot.get(name)
        made = _moved(spec, ni.labels, name)
        if made is None:
            continue
        ops, words = made
        key = repr(ops)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > MAX_CANDIDATES:
            break
        pi = search.verifier.patched_pod(ops)
        if pi is None or not RequiredNodeAffinity(pi.spec).matches(ni):
            continue
        fix = search.try_pod_patch(MOVE_KIND, f"move to where the volume is: {'; '.join(words)} (node {name} "
                                              "reaches the pod's volumes)", ops, magnitude=0.5, order=MOVE_ORDER)
        if fix is not None:
            fixes.append(fix)
            break
    return fixes


class _Move:
    """move-to-volume-node's place among the kinds."""

    KIND = MOVE_KIND
    find = staticmethod(_move_find)


move = _Move
