"""The scheduling queue's parts kschedx has (upstream's backend/queue):
the nominator of pending pods to nodes, and the queue's order."""

from __future__ import annotations

from ..state.types import PodInfo


class Nominator:
    """Pending pods nominated to nodes (status.nominatedNodeName)."""

    def __init__(self):
        self.by_node: dict[str, list[PodInfo]] = {}
        self._node_of: dict[str, str] = {}  # uid -> node: removal looks at one node only

    def add(self, pi: PodInfo, node: str) -> None:
        self.remove(pi)
        self.by_node.setdefault(node, []).append(pi)
        self._node_of[pi.uid] = node

    def is_nominated(self, pi: PodInfo) -> bool:
        return pi.uid in self._node_of

    def remove(self, pi: PodInfo) -> None:
        node = self._node_of.pop(pi.uid, None)
        if node is None:
            return
        kept = [p for p in self.by_node[node] if p.uid != pi.uid]
        if kept:
            self.by_node[node] = kept
        else:
            del self.by_node[node]

    def nominated_pods_for_node(self, node: str) -> list[PodInfo]:
        return self.by_node.get(node, [])



def queue_order(pods: list[PodInfo]) -> list[PodInfo]:
    """PrioritySort: higher priority first, then earlier queue timestamp
    (creationTimestamp; pods without one count as added now), then input order."""
    indexed = list(enumerate(pods))

    def key(item):
        i, pi = item
        ts = pi.creation_time
        return (-pi.priority, ts is None, ts.timestamp() if ts is not None else 0.0, i)

    return [pi for _, pi in sorted(indexed, key=key)]
