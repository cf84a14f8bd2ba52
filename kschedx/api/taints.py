"""Taints and tolerations (core/v1 helpers), comparison operators off as in v1.35."""

from __future__ import annotations


def toleration_tolerates_taint(tol: dict, taint: dict) -> bool:
    effect = tol.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = tol.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    op = tol.get("operator") or ""
    if op in ("", "Equal"):
        return (tol.get("value") or "") == (taint.get("value") or "")
    if op == "Exists":
        return True
    # Lt / Gt need the TaintTolerationComparisonOperators gate (alpha, off).
    return False


def tolerations_tolerate_taint(tolerations, taint: dict) -> bool:
    for tol in tolerations or ():
        if toleration_tolerates_taint(tol, taint):
            return True
    return False


def find_matching_untolerated_taint(taints, tolerations, effects) -> dict | None:
    for taint in taints or ():
        if taint.get("effect") not in effects:
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")
