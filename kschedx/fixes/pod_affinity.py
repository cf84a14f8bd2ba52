"""relax-pod-affinity: a required pod affinity or anti-affinity term of the
pod to drop, when InterPodAffinity alone keeps it off some nodes because of
its own terms (existing pods' anti-affinity is theirs to change)."""

from __future__ import annotations

from ..config import names
from .jsonpatch import pointer

KIND = "relax-pod-affinity"
ORDER = 4
_OWN = {
    "podAffinity": "node(s) didn't match pod affinity rules",
    "podAntiAffinity": "node(s) didn't match pod anti-affinity rules",
}


def _term_text(term: dict) -> str:
    sel = term.get("labelSelector") or {}
    parts = [f"{k}={v}" for k, v in (sel.get("matchLabels") or {}).items()]
    parts += [f"{e.get('key')} {e.get('operator')}" for e in sel.get("matchExpressions") or ()]
    return f"{', '.join(parts) or 'any pod'} per {term.get('topologyKey')}"


def find(search) -> list:
    """Per own term the Filter names: made a preference (the same term,
    preferred with weight 100), else dropped."""
    from .common import append_ops
    from .search import MAX_CANDIDATES

    nodes = search.blockers.only(names.InterPodAffinity)
    reasons = {r for n in nodes for r in search.blockers.reasons(n, names.InterPodAffinity)}
    affinity = (search.raw_pod.get("spec") or {}).get("affinity") or {}
    terms_of = []
    for kind, reason in _OWN.items():
        if reason not in reasons:
            continue
        terms = (affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
        terms_of += [(kind, i, term) for i, term in enumerate(terms)]
    fixes = []
    for kind, i, term in terms_of[:MAX_CANDIDATES]:
        what = "anti-affinity" if kind == "podAntiAffinity" else "affinity"
        remove = [{"op": "remove", "path": pointer("spec", "affinity", kind,
                                                   "requiredDuringSchedulingIgnoredDuringExecution", i)}]
        soft = remove + append_ops(search.raw_pod, ("spec", "affinity", kind,
                                                    "preferredDuringSchedulingIgnoredDuringExecution"),
                                   [{"weight": 100, "podAffinityTerm": term}])
        fix = search.try_pod_patch(KIND, f"make required pod {what} term {i} ({_term_text(term)}) preferred "
                                         "(weight 100)", soft, magnitude=0.5, order=ORDER)
        if fix is None:
            fix = search.try_pod_patch(KIND, f"drop required pod {what} term {i} ({_term_text(term)})", remove,
                                       order=ORDER)
        if fix is not None:
            fixes.append(fix)
    return fixes


def parts(ctx, node: str):
    """Every required term of the kind the node fails (the Filter names the
    kind, not the term)."""
    from .parts import Part
    from .search import POD

    reasons = set(ctx.blockers.reasons(node, names.InterPodAffinity))
    affinity = (ctx.raw_pod.get("spec") or {}).get("affinity") or {}
    ops, words = [], []
    for kind, reason in _OWN.items():
        terms = (affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
        if reason in reasons and terms:
            ops.append({"op": "remove", "path": pointer("spec", "affinity", kind,
                                                        "requiredDuringSchedulingIgnoredDuringExecution")})
            what = "anti-affinity" if kind == "podAntiAffinity" else "affinity"
            words.append(f"drop the required pod {what} ({'; '.join(_term_text(t) for t in terms)})")
    if not ops:
        return []
    return [Part(KIND, names.InterPodAffinity, POD, "; ".join(words), pod_patch=ops, magnitude=len(ops) + 1)]
