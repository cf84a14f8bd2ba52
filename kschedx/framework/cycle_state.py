"""CycleState: what plugins keep between extension points of one cycle."""

from __future__ import annotations

import copy


class CycleState:
    __slots__ = ("data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self):
        self.data: dict = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def write(self, key, value) -> None:
        self.data[key] = value

    def read(self, key):
        return self.data.get(key)

    def clone(self) -> "CycleState":
        """Copy for preemption dry-runs and nominated pods: plugin states that
        change under AddPod/RemovePod provide their own clone()."""
        c = CycleState()
        for k, v in self.data.items():
            clone = getattr(v, "clone", None)
            c.data[k] = clone() if clone is not None else copy.copy(v)
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        return c
