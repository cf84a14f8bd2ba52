"""relax-topology-spread: a DoNotSchedule topology spread constraint made
looser (the smallest maxSkew the nodes it blocks need, raised step by step
while a workload's later replicas still need more) or soft
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


def _hard(constraints: list) -> list[int]:
    return [k for k, c in enumerate(constraints) if (c.get("whenUnsatisfiable") or "DoNotSchedule") == "DoNotSchedule"]


def _needed(blockers, hard: list[int]) -> dict[int, int]:
    """Constraint index -> the smallest skew that opens one of the nodes
    the constraint alone keeps the pod off."""
    needed: dict[int, int] = {}
    for name in blockers.only(names.PodTopologySpread):
        # The Filter stops at the first constraint a node breaks: the last one in its details.
        evaluated = (blockers.detail(name, names.PodTopologySpread) or {}).get("constraints") or []
        if not evaluated or evaluated[-1].get("satisfied", True) or "skew" not in evaluated[-1]:
            continue
        j = len(evaluated) - 1
        if j < len(hard):
            needed[hard[j]] = min(needed.get(hard[j], evaluated[-1]["skew"]), evaluated[-1]["skew"])
    return needed


def _unit_size(search) -> int:
    """The pods a check places that carry the change: a workload's replicas
    (sequence.py), else the one pod."""
    return len(getattr(search.verifier, "targets", None) or ()) or 1


def _raise_op(k: int, skew: int) -> list[dict]:
    return [{"op": "add", "path": pointer("spec", "topologySpreadConstraints", k, "maxSkew"), "value": skew}]


def _raised(search, k: int, where: str, skew: int, hard: list[int]):
    """The smallest raised maxSkew of constraint k, from `skew` (what the
    first blocked pod needs), that verifies. A workload's later replicas may
    need more than its first blocked one: after a check that leaves one
    unplaced, the next step is the skew that replica needs (one more at
    least), up to the first skew plus the replica count - 1 (each replica
    adds at most one to a domain's count). None when no step verifies."""
    bound = skew + _unit_size(search) - 1
    while skew <= bound and search.has_budget():
        patch = _raise_op(k, skew)
        fix = search.try_pod_patch(KIND, f"raise maxSkew of {where} to {skew}", patch, magnitude=0.5, order=ORDER)
        if fix is not None:
            return fix
        failed = search.last_failed
        if failed is None or failed.candidate.pod_patch is not patch or failed.blockers() is None:
            return None
        nxt = _needed(failed.blockers(), hard).get(k)
        if nxt is None:
            return None  # the constraint no longer keeps the unplaced pod off a node: more skew cannot help
        skew = max(nxt, skew + 1)
    return None


def find(search) -> list:
    from .search import MAX_CANDIDATES

    nodes = search.blockers.only(names.PodTopologySpread)
    constraints = (search.raw_pod.get("spec") or {}).get("topologySpreadConstraints") or []
    hard = _hard(constraints)
    if not nodes or not hard:
        return []
    needed = _needed(search.blockers, hard)
    candidates = []
    for k in hard:
        c = constraints[k]
        where = f"topology spread constraint {k} ({c.get('topologyKey')}, maxSkew {c.get('maxSkew')})"
        if k in needed and needed[k] > (c.get("maxSkew") or 1):
            candidates.append((0.5, k, where))
        candidates.append((1.0, k, where))
    fixes = []
    for magnitude, k, where in sorted(candidates, key=lambda c: c[0])[:MAX_CANDIDATES]:
        if magnitude < 1:
            fix = _raised(search, k, where, needed[k], hard)
        else:
            fix = search.try_pod_patch(KIND, f"make {where} soft (whenUnsatisfiable: ScheduleAnyway)",
                                       soft_ops(constraints[k], k), magnitude=magnitude, order=ORDER)
        if fix is not None:
            fixes.append(fix)
            if magnitude < 1:
                break  # the raised maxSkew fits: making the constraint soft is a bigger change
    return fixes
