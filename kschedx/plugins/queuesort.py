"""PrioritySort: the queue order (higher priority, then earlier timestamp)."""

from __future__ import annotations

from ..framework.interface import Plugin


class PrioritySort(Plugin):
    name = "PrioritySort"

    def less(self, a, b) -> bool:
        """a before b. Pods without a timestamp count as queued now (last)."""
        if a.priority != b.priority:
            return a.priority > b.priority
        ta, tb = a.creation_time, b.creation_time
        if ta is None or tb is None:
            return ta is not None and tb is None
        return ta < tb


PLUGIN = PrioritySort
