"""Taints and tolerations (core/v1 Toleration.ToleratesTaint). The `Lt` and
`Gt` operators compare integers only when the caller says the
TaintTolerationComparisonOperators gate is on (`comparison_operators`);
without it they tolerate nothing."""

from __future__ import annotations

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def decimal_int64(value: str) -> int | None:
    """content.IsDecimalInteger then strconv.ParseInt(v, 10, 64): an optional
    minus, no leading zero (but "0" itself), digits, within int64."""
    digits = value[1:] if value.startswith("-") else value
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    if digits[0] == "0" and (len(digits) > 1 or value.startswith("-")):
        return None
    number = int(value)
    return number if INT64_MIN <= number <= INT64_MAX else None


def toleration_tolerates_taint(tol: dict, taint: dict, comparison_operators: bool = False) -> bool:
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
    if op in ("Lt", "Gt") and comparison_operators:
        wanted = decimal_int64(tol.get("value") or "")
        have = decimal_int64(taint.get("value") or "")
        if wanted is None or have is None:
            return False
        return have < wanted if op == "Lt" else have > wanted
    return False


def tolerations_tolerate_taint(tolerations, taint: dict, comparison_operators: bool = False) -> bool:
    for tol in tolerations or ():
        if toleration_tolerates_taint(tol, taint, comparison_operators):
            return True
    return False


def find_matching_untolerated_taint(taints, tolerations, effects, comparison_operators: bool = False) -> dict | None:
    for taint in taints or ():
        if taint.get("effect") not in effects:
            continue
        if not tolerations_tolerate_taint(tolerations, taint, comparison_operators):
            return taint
    return None


DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")
