"""helper.BuildBrokenLinearFunction: a score shape over utilization, as
NodeResourcesFit's RequestedToCapacityRatio and VolumeBinding's capacity
scoring use it."""

from __future__ import annotations


def broken_linear_function(shape):
    """The function through (utilization, score) points; Go's integer
    division truncates toward zero, so a falling segment rounds up."""
    def f(p: int) -> int:
        for i, (u, score) in enumerate(shape):
            if p <= u:
                if i == 0:
                    return shape[0][1]
                pu, ps = shape[i - 1]
                return ps + go_div((score - ps) * (p - pu), u - pu)
        return shape[-1][1]

    return f


def go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q
