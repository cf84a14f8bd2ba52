"""SchedulingGates: a pod with spec.schedulingGates never leaves PreEnqueue."""

from __future__ import annotations

from ..config import names
from ..framework.declaration import Declaration
from ..framework.events import ActionType as A, POD, Register
from ..framework.interface import Plugin
from ..framework.status import Code, Status


class SchedulingGates(Plugin):
    name = names.SchedulingGates

    def pre_enqueue(self, pod_info):
        gates = pod_info.spec.get("schedulingGates") or ()
        if not gates:
            return None
        names = " ".join(g.get("name", "") for g in gates)
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"waiting for scheduling gates: [{names}]")


DECLARATION = Declaration(
    name=names.SchedulingGates,
    factory=SchedulingGates,
    points=frozenset({"preEnqueue"}),
    events=(Register(POD, A.UpdatePodSchedulingGatesEliminated),),
)
