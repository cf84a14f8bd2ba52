"""relax-node-affinity: the nodeSelector entry, or the required node affinity
requirement or whole requirement, to drop so that nodes kept off by
NodeAffinity alone open."""

from __future__ import annotations

from ..api.labels import NodeSelector
from ..plugins.nodeaffinity import RequiredNodeAffinity
from .jsonpatch import pointer

KIND = "relax-node-affinity"
ORDER = 1
_REQUIRED = ("spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")


def _candidates(spec: dict):
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

    nodes = [search.snapshot.get(n) for n in search.blockers.only("NodeAffinity")]
    if not nodes or daemon_pod(search):
        return []
    screened = []
    for change, patch, magnitude in _candidates(search.raw_pod.get("spec") or {}):
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
    ni = ctx.search.snapshot.get(node)
    spec = ctx.raw_pod.get("spec") or {}
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
    if not ops:
        return []
    return [Part(KIND, "NodeAffinity", POD, "; ".join(words), pod_patch=ops, magnitude=len(ops))]
