"""NodePorts: host ports the pod asks for must be free on the node."""

from __future__ import annotations

from ..config import names
from ..framework.declaration import Declaration
from ..framework.events import ActionType as A, NODE, POD, Register
from ..framework.interface import Plugin
from ..framework.status import Code, Status

ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_KEY = "PreFilterNodePorts"


def fits_ports(want, used) -> bool:
    for ip, proto, port in want:
        if used.check_conflict(ip, proto, port):
            return False
    return True


class NodePorts(Plugin):
    name = names.NodePorts

    def pre_filter(self, state, pod_info, nodes):
        if not pod_info.host_ports:
            return None, Status(Code.SKIP)
        state.write(_KEY, pod_info.host_ports)
        return None, None

    def filter(self, state, pod_info, node_info):
        want = state.read(_KEY)
        if want is None:
            # A PreFilter that skips (no host ports) keeps Filter from running
            # at all, so a missing state means PreFilter is disabled by the
            # configuration: kube-scheduler errors rather than recompute.
            return Status.as_error(f'reading "{_KEY}" from cycleState: not found')
        if fits_ports(want, node_info.used_ports):
            return None
        conflicts = [f"{proto}/{port}" + (f" on {ip}" if ip != "0.0.0.0" else "")
                     for ip, proto, port in want if node_info.used_ports.check_conflict(ip, proto, port)]
        return Status(Code.UNSCHEDULABLE, ERR_REASON, details={"conflictingPorts": conflicts})


DECLARATION = Declaration(
    name=names.NodePorts,
    factory=NodePorts,
    points=frozenset({"preFilter", "filter"}),
    events=(Register(POD, A.Delete), Register(NODE, A.Add)),
    details="ports",
    node_local=True,
)
