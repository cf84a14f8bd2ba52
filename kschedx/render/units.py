"""Resource amounts as people write them: the integers the scheduler works
with (milli-CPU, bytes) shown as `1500m`, `2`, `512Mi`, `9.6Gi`.

Exact where the amount is a whole number of the unit (which is how requests
are usually written), rounded to one decimal otherwise: these strings are for reading,
the JSON document keeps the integers. Shares of allocatable are whole percents,
floored, the same number in every renderer.
"""

from __future__ import annotations

_BINARY = (("Ei", 1 << 60), ("Pi", 1 << 50), ("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10))
# Resources counted in bytes (kube-scheduler keeps them as Value()).
_BYTES = ("memory", "ephemeral-storage")


def is_bytes(resource: str) -> bool:
    return resource in _BYTES or resource.startswith("hugepages-")


def cpu(milli: int) -> str:
    """Milli-CPU as a quantity: 1500 -> 1500m, 2000 -> 2."""
    if milli % 1000 == 0:
        return str(milli // 1000)
    return f"{milli}m"


def size(n: int) -> str:
    """Bytes in the largest binary unit not above them: exact when the unit
    divides them (12Gi), else one decimal (9.6Gi)."""
    if n < 0:
        return "-" + size(-n)
    for unit, factor in _BINARY:
        if n >= factor:
            if n % factor == 0:
                return f"{n // factor}{unit}"
            return f"{n / factor:.1f}{unit}"
    return str(n)


def amount(resource: str, value: int, *, milli_cpu: bool = True) -> str:
    """One resource amount as the scheduler holds it: cpu in milli-units (as
    NodeResourcesFit reports it), byte resources in bytes, others as counts."""
    if resource == "cpu" and milli_cpu:
        return cpu(value)
    if is_bytes(resource):
        return size(value)
    return str(value)


def amounts(resource: str, *values: int) -> tuple[str, ...]:
    """Amounts of one resource read side by side (before -> after of
    allocatable). CPU takes one unit for all of them: whole cores only when
    every amount is whole, else milli-CPU throughout, so `150 -> 150500m`
    never reads as a thousandfold jump. Byte amounts each keep their own
    binary suffix, which always shows."""
    if resource == "cpu" and any(v % 1000 for v in values):
        return tuple(f"{v}m" if v else "0" for v in values)  # nothing needs no unit
    return tuple(amount(resource, v) for v in values)


def percent(used: int, total: int) -> str:
    """`used` as a share of `total` in whole percent, floored as kubectl
    describe node does, so a node never reads fuller than it is. A sliver of
    use is "<1%" (its bar shows something, so does the number); "-" when there
    is no total to divide by."""
    if total <= 0:
        return "-"
    if 0 < used * 100 < total:
        return "<1%"
    return f"{used * 100 // total}%"
