"""NodeUnschedulable: cordoned nodes, unless the pod tolerates the cordon taint."""

from __future__ import annotations

from itertools import compress

from ..config import names
from ..framework.declaration import Declaration
from ..framework.events import ActionType as A, NODE, POD, Register
from ..framework.interface import Plugin, features_of
from ..framework.status import Code, Status
from ..api.taints import tolerations_tolerate_taint

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_CORDON_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


class NodeUnschedulable(Plugin):
    name = names.NodeUnschedulable

    def __init__(self, handle, args=None):
        super().__init__(handle, args)
        self.comparison_operators = features_of(handle).enable_taint_toleration_comparison_operators

    def pre_filter(self, state, pod_info, nodes):
        """From 1.37; it skips only pods of a deferred resize
        (InPlacePodVerticalScalingSchedulerPreemption, not reproduced), so
        every pending pod passes it."""
        return None, None

    def filter(self, state, pod_info, node_info):
        if not node_info.unschedulable:
            return None
        if tolerations_tolerate_taint(pod_info.spec.get("tolerations"), _CORDON_TAINT, self.comparison_operators):
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def filter_all(self, state, pod_info, nodes):
        out = None
        for i in compress(range(len(nodes)), [ni.unschedulable for ni in nodes]):
            st = self.filter(state, pod_info, nodes[i])
            if st is not None:
                if out is None:
                    out = [None] * len(nodes)
                out[i] = st
        return out


DECLARATION = Declaration(
    name=names.NodeUnschedulable,
    factory=NodeUnschedulable,
    points=frozenset({"filter"}),
    points_from=(("1.37", frozenset({"preFilter"})),),
    events=(Register(NODE, A.Add | A.UpdateNodeTaint), Register(POD, A.UpdatePodToleration)),
    gates=frozenset({"TaintTolerationComparisonOperators"}),
    node_local=True,
)
