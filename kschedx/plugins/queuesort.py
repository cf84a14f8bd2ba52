"""PrioritySort: the queue order (higher priority, then earlier timestamp)."""

from __future__ import annotations

from ..config import names
from ..framework.declaration import Declaration
from ..framework.interface import Plugin


class PrioritySort(Plugin):
    name = names.PrioritySort

    def less(self, a, b) -> bool:
        """a before b. Pods without a timestamp count as queued now (last)."""
        if a.priority != b.priority:
            return a.priority > b.priority
        ta, tb = a.creation_time, b.creation_time
        if ta is None or tb is None:
            return ta is not None and tb is None
        return ta < tb


DECLARATION = Declaration(
    name=names.PrioritySort,
    factory=PrioritySort,
    points=frozenset({"queueSort"}),
)
