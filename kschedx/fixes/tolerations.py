"""add-toleration: the tolerations for the taints that keep the pod off
nodes where nothing else does."""

from __future__ import annotations

from ..config import names
from ..api.taints import tolerations_tolerate_taint
from .common import append_ops, taint_text

KIND = "add-toleration"
ORDER = 0
_BLOCKING = ("NoSchedule", "NoExecute")


def untolerated(taints, tolerations) -> list[dict]:
    return [t for t in taints or () if t.get("effect") in _BLOCKING and not tolerations_tolerate_taint(tolerations, t)]


def toleration_for(taint: dict) -> dict:
    tol = {"key": taint.get("key", "")}
    if taint.get("value"):
        tol.update(operator="Equal", value=taint["value"])
    else:
        tol["operator"] = "Exists"
    tol["effect"] = taint["effect"]
    return tol


def find(search) -> list:
    from .search import MAX_CANDIDATES

    tolerations = search.pod_info.spec.get("tolerations")
    groups: dict[tuple, tuple[list, list]] = {}
    for name in search.blockers.only(names.TaintToleration):
        taints = untolerated(search.snapshot.get(name).taints, tolerations)
        if not taints:
            continue
        key = tuple(sorted(taint_text(t) for t in taints))
        groups.setdefault(key, (taints, []))[1].append(name)
    fixes = []
    ranked = sorted(groups.values(), key=lambda g: (len(g[0]), -len(g[1])))
    for taints, nodes in ranked[:MAX_CANDIDATES]:
        tols = [toleration_for(t) for t in taints]
        patch = append_ops(search.raw_pod, ("spec", "tolerations"), tols)
        what = ", ".join(taint_text(t) for t in taints)
        fix = search.try_pod_patch(KIND, f"tolerate taint {what}", patch,
                                   magnitude=len(taints), order=ORDER)
        if fix is not None:
            fixes.append(fix)
    return fixes


def parts(ctx, node: str):
    from .parts import Part
    from .search import POD

    taints = untolerated(ctx.search.snapshot.get(node).taints, ctx.pod_info.spec.get("tolerations"))
    if not taints:
        return []
    patch = append_ops(ctx.raw_pod, ("spec", "tolerations"), [toleration_for(t) for t in taints])
    return [Part(KIND, names.TaintToleration, POD, "tolerate taint " + ", ".join(taint_text(t) for t in taints),
                 pod_patch=patch, magnitude=len(taints))]
