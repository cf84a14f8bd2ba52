"""relax-topology-spread: a DoNotSchedule topology spread constraint made
looser (the smallest maxSkew the nodes it blocks need) or soft
(whenUnsatisfiable: ScheduleAnyway)."""

from __future__ import annotations

from ..config import names
from .jsonpatch import pointer

KIND = "relax-topology-spread"
ORDER = 3


def soft_ops(constraint: dict, k: int) -> list[dict]:
    """Make constraint k ScheduleAnyway; minDomains goes with it (the API
    server allows it only with DoNotSchedule)."""
    ops = [{"op": "add", "path": pointer("spec", "topologySpreadConstraints", k, "whenUnsatisfiable"),
            "value": "ScheduleAnyway"}]
    if "minDomains" in constraint:
        ops.append({"op": "remove", "path": pointer("spec", "topologySpreadConstraints", k, "minDomains")})
    return ops


def parts(ctx, node: str):
    """Every DoNotSchedule constraint made soft (the Filter reports only the
    first one a node breaks)."""
    from .parts import Part
    from .search import POD

    constraints = (ctx.raw_pod.get("spec") or {}).get("topologySpreadConstraints") or []
    ops, which = [], []
    for k, c in enumerate(constraints):
        if (c.get("whenUnsatisfiable") or "DoNotSchedule") == "DoNotSchedule":
            ops += soft_ops(c, k)
            which.append(str(k))
    if not ops:
        return []
    return [Part(KIND, names.PodTopologySpread, POD,
                 f"make topology spread constraint(s) {', '.join(which)} soft (whenUnsatisfiable: ScheduleAnyway)",
                 pod_patch=ops, magnitude=len(which))]


def find(search) -> list:
    from .search import MAX_CANDIDATES

    nodes = search.blockers.only(names.PodTopologySpread)
    constraints = (search.raw_pod.get("spec") or {}).get("topologySpreadConstraints") or []
    hard = [k for k, c in enumerate(constraints) if (c.get("whenUnsatisfiable") or "DoNotSchedule") == "DoNotSchedule"]
    if not nodes or not hard:
        return []
    # The Filter stops at the first constraint a node breaks: the last one in its details.
    needed: dict[int, int] = {}
    for name in nodes:
        evaluated = (search.blockers.detail(name, names.PodTopologySpread) or {}).get("constraints") or []
        if not evaluated or evaluated[-1].get("satisfied", True) or "skew" not in evaluated[-1]:
            continue
        j = len(evaluated) - 1
        if j < len(hard):
            needed[hard[j]] = min(needed.get(hard[j], evaluated[-1]["skew"]), evaluated[-1]["skew"])
    candidates = []
    for k in hard:
        c = constraints[k]
        where = f"topology spread constraint {k} ({c.get('topologyKey')}, maxSkew {c.get('maxSkew')})"
        if k in needed and needed[k] > (c.get("maxSkew") or 1):
            candidates.append((0.5, f"raise maxSkew of {where} to {needed[k]}",
                               [{"op": "add", "path": pointer("spec", "topologySpreadConstraints", k, "maxSkew"),
                                 "value": needed[k]}]))
        candidates.append((1.0, f"make {where} soft (whenUnsatisfiable: ScheduleAnyway)", soft_ops(c, k)))
    fixes = []
    for magnitude, change, patch in sorted(candidates, key=lambda c: c[0])[:MAX_CANDIDATES]:
        fix = search.try_pod_patch(KIND, change, patch, magnitude=magnitude, order=ORDER)
        if fix is not None:
            fixes.append(fix)
            if magnitude < 1:
                break  # the raised maxSkew fits: making the constraint soft is a bigger change
    return fixes
