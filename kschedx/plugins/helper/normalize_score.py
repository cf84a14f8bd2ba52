"""DefaultNormalizeScore: scale scores to 0..max with integer division."""

from __future__ import annotations


def default_normalize_score(max_priority: int, reverse: bool, scores) -> None:
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        score = go_div(max_priority * s.score, max_count)
        if reverse:
            score = max_priority - score
        s.score = score


def default_normalize_values(max_priority: int, reverse: bool, values: list[int]) -> list[int]:
    """default_normalize_score on a list of plain scores (a new list), for
    plugins' normalize_all."""
    max_count = max(0, max(values, default=0))
    if max_count == 0:
        return [max_priority] * len(values) if reverse else list(values)
    # Go's truncating division is Python's floor division for v >= 0.
    out = [max_priority * v // max_count if v >= 0 else go_div(max_priority * v, max_count) for v in values]
    return [max_priority - v for v in out] if reverse else out


def go_div(a: int, b: int) -> int:
    """Go's integer division truncates toward zero; Python's // floors."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q
