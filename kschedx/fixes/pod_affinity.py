"""relax-pod-affinity: a required pod affinity or anti-affinity term of the
pod to drop, when InterPodAffinity alone keeps it off some nodes because of
its own terms (existing pods' anti-affinity is theirs to change)."""

from __future__ import annotations

from .jsonpatch import pointer

KIND = "relax-pod-affinity"
ORDER = 3
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
    from .search import MAX_CANDIDATES

    nodes = search.blockers.only("InterPodAffinity")
    reasons = {r for n in nodes for r in search.blockers.reasons(n, "InterPodAffinity")}
    affinity = (search.raw_pod.get("spec") or {}).get("affinity") or {}
    candidates = []
    for kind, reason in _OWN.items():
        if reason not in reasons:
            continue
        terms = (affinity.get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or []
        for i, term in enumerate(terms):
            what = "anti-affinity" if kind == "podAntiAffinity" else "affinity"
            candidates.append((f"drop required pod {what} term {i} ({_term_text(term)})",
                               [{"op": "remove", "path": pointer("spec", "affinity", kind,
                                                                 "requiredDuringSchedulingIgnoredDuringExecution", i)}]))
    fixes = []
    for change, patch in candidates[:MAX_CANDIDATES]:
        fix = search.try_pod_patch(KIND, change, patch, order=ORDER)
        if fix is not None:
            fixes.append(fix)
    return fixes
