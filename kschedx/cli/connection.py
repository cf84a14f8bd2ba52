"""How a command reaches a live cluster: --kubeconfig, --context and
--request-timeout as one ClusterOptions, and kubectl's durations."""

from __future__ import annotations

import re
from dataclasses import dataclass

import click

_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)(h|ms|m|s))")


def parse_duration(text: str, *, allow_zero: bool = False) -> float:
    """Seconds from kubectl's duration syntax (`30s`, `1m30s`, `500ms`) or a bare number."""
    text = str(text).strip()
    try:
        value = float(text)
    except ValueError:
        parts = _DURATION.findall(text)
        if not parts or "".join(a + b for a, b in parts) != text:
            raise ValueError(f"{text!r} is not a duration (like 30s, 2m, 1m30s or 500ms)") from None
        scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
        value = sum(float(a) * scale[b] for a, b in parts)
    if allow_zero and value == 0:
        return 0.0
    if not 0 < value < float("inf"):
        raise ValueError(f"{text!r}: must be a finite time of more than zero"
                         + (" (or 0)" if allow_zero else ""))
    return value


class Duration(click.ParamType):
    name = "duration"

    def __init__(self, allow_zero: bool = False):
        self.allow_zero = allow_zero

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        try:
            return parse_duration(value, allow_zero=self.allow_zero)
        except ValueError as e:
            self.fail(str(e), param, ctx)


@dataclass(frozen=True)
class ClusterOptions:
    kubeconfig: str | None = None
    context: str | None = None
    request_timeout: float = 30.0

    @property
    def given(self) -> bool:
        """Whether the user pointed at a cluster explicitly."""
        return bool(self.kubeconfig or self.context)

    def connect(self, *, long_running: bool = False):
        from ..sources.cluster import connect
        from ..sources.kinds import KINDS

        if long_running:
            # explain --watch: what it reads changes for hours (nothing frozen), and
            # it keeps one connection per watched kind, plus relists.
            return connect(self.kubeconfig, self.context, self.request_timeout, pool_size=len(KINDS) + 4)
        # A command is a one-shot process: what it reads lives until it exits,
        # so the reads may be frozen out of the cyclic collector's way.
        return connect(self.kubeconfig, self.context, self.request_timeout, freeze_reads=True)
