"""NodeName: a pod that names its node fits only there."""

from __future__ import annotations

from ..config import names
from ..framework.declaration import Declaration
from ..framework.events import ActionType as A, NODE, Register
from ..framework.interface import Plugin, PreFilterResult
from ..framework.status import Code, Status

ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod_info, node_info) -> bool:
    wanted = pod_info.spec.get("nodeName")
    return not wanted or wanted == node_info.name


class NodeName(Plugin):
    name = names.NodeName

    def pre_filter(self, state, pod_info, nodes):
        """From 1.37: a pod that names its node is evaluated there only."""
        wanted = pod_info.spec.get("nodeName")
        if wanted:
            return PreFilterResult(frozenset({wanted})), None
        return None, None

    def filter(self, state, pod_info, node_info):
        if not fits(pod_info, node_info):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)
        return None

    def filter_all(self, state, pod_info, nodes):
        if not pod_info.spec.get("nodeName"):
            return None
        return [self.filter(state, pod_info, ni) for ni in nodes]


DECLARATION = Declaration(
    name=names.NodeName,
    factory=NodeName,
    points=frozenset({"filter"}),
    points_from=(("1.37", frozenset({"preFilter"})),),
    events=(Register(NODE, A.Add),),
    node_local=True,
)
