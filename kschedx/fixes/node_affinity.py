"""relax-node-affinity: the nodeSelector entry, or the required node affinity
requirement or whole requirement, to drop so that nodes kept off by
NodeAffinity alone open."""

from __future__ import annotations

from ..config import names
from ..api.labels import NodeSelector
from ..plugins.nodeaffinity import RequiredNodeAffinity
from .jsonpatch import pointer

KIND = "relax-node-affinity"
ORDER = 1
_REQUIRED = ("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")


def _per_node(spec: dict, nodes) -> list:
    """(change, patch, magnitude) dropping, for a node, every nodeSelector
    entry and the required node affinity it does not match: the smallest
    relaxation that opens it when no single entry does (a selector naming
    two labels the node lacks). One candidate per distinct change."""
    out, seen = [], set()
    for ni in nodes:
        made = _unmatched(spec, ni)
        if made is None or len(made[0]) < 2:
            continue  # one entry: a single candidate already
        ops, words = made
        key = repr(ops)
        if key not in seen:
            seen.add(key)
            out.append(("; ".join(words), ops, len(ops) + (1 if ops[-1]["path"] == pointer(*_REQUIRED) else 0)))
    return out


def _unmatched(spec: dict, ni) -> tuple[list, list] | None:
    """(ops, words): drop the nodeSelector entries the node does not match,
    and the required node affinity when the node matches none of its terms."""
    labels = ni.labels
    ops, words = [], []
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            ops.append({"op": "remove", "path": pointer("spec", "nodeSelector", key)})
            words.append(f"drop nodeSelector {key}={value}")
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required:
        terms = NodeSelector(required) if isinstance(required, dict) else None
        if terms is None or not terms.matches(labels, ni.name):
            ops.append({"op": "remove", "path": pointer(*_REQUIRED)})
            words.append("drop the required node affinity")
    return (ops, words) if ops else None


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
            values = ",".join(str(v) for v in r.get("values") or ())
            text = f"{r.get('key')} {r.get('operator')}" + (f" ({values})" if values else "")
            yield (f"drop requirement {text} of required node affinity term {i}",
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
    fixes = []
    for magnitude, _, change, patch, opens in screened[:MAX_CANDIDATES]:
        fix = search.try_pod_patch(KIND, change, patch, magnitude=magnitude,
                                   order=ORDER)
        if fix is not None:
            fixes.append(fix)
    return fixes


def parts(ctx, node: str):
    """Drop the nodeSelector entries the node does not match, and the
    required node affinity when the node matches none of its terms."""
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
