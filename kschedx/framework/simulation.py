"""Pods placed one after another on one snapshot, each outcome applied before
the next pod: the one placement step behind `simulate` and `capacity`.

Only what the scheduler's cache and queue would change is changed here (the
snapshot's NodeInfos and indexes, in place; the nominator; plugins' Reserve
state). Documents, streaming and summaries stay with the commands.
"""

from __future__ import annotations

from ..state import cache
from .records import PodResult
from ..state.types import PodInfo


class Simulation:
    """One run over the frameworks of `scheds` (dispatch.Schedulers)."""

    # The tests record every retry in full (the reference of the shortcut).
    record_retries = False

    def __init__(self, scheds):
        self.scheds = scheds
        self.snapshot = scheds.snapshot
        self.nominator = scheds.nominator

    def step(self, pi: PodInfo, *, settle=None, preempt: bool = True) -> PodResult:
        """One pod's scheduling cycle, its outcome applied to the snapshot.

        - Scheduled: the pod is assumed on its node (NodeInfo updated in
          place) and Reserve plugins keep what the placement took; a Reserve
          rejection un-assumes it and is reported as a FitError over that node.
        - Preemption (only with `preempt`): the victims are deleted (gone for
          good, not re-queued), lower-priority pods nominated to the node lose
          their nomination, and the preemptor is retried at once: nominated to
          the node, it is tried there first and placed.
        - Unschedulable: stays pending; a failed preemption clears its
          nomination, as upstream's PostFilterResult does.

        `settle(result)`, when given, says whether to compute the result's
        explanations now, before the snapshot changes. The result carries
        `placed_node` (None when not placed) and, for the caller, `victims`
        and `cleared_nominations`. Without `preempt` a pod that could only be
        placed by preempting is left unplaced and nothing is evicted.
        """
        scheds = self.scheds
        fw = scheds.framework_for(pi)
        r = scheds.schedule(pi)
        if settle is not None and settle(r):
            r.settle()
        r.placed_node = None
        if r.status == "Scheduled":
            self._place(fw, r, pi, r.selected_node, r)
        elif r.status == "Unschedulable" and r.nominated_node and preempt:
            node = r.nominated_node
            for v in r.victims:
                cache.forget_pod(self.snapshot, v)
                self.nominator.remove(v)
            for np in r.cleared_nominations:
                self.nominator.remove(np)
            retry_pi = with_nomination(pi, node)
            self.nominator.add(retry_pi, node)
            # Only its outcome is read: the cycle stops at the nominated node
            # when it fits, as kube-scheduler's does.
            retry = fw.schedule(retry_pi, record=Simulation.record_retries)
            deleted = (f"preemption: deleted {len(r.victims)} victim(s) [{', '.join(v.key for v in r.victims)}] "
                       f"on {node}")
            if retry.status == "Scheduled":
                self._place(fw, r, retry_pi, retry.selected_node, retry)
                r.notes.append(f"{deleted}; retried at once: placed on {retry.selected_node}")
            else:
                r.notes.append(f"{deleted}; retried at once: still {retry.status}: {retry.message}")
        elif r.nominated_node == "":
            self.nominator.remove(pi)
        return r

    def _place(self, fw, result: PodResult, pi: PodInfo, node: str, cycle: PodResult) -> None:
        cache.assume_pod(self.snapshot, pi, node)
        st = None
        if cycle.cycle_state is not None:
            st = fw.run_reserve_plugins_reserve(cycle.cycle_state, cycle.pod_info, node)
        if st is not None:
            cache.forget_pod(self.snapshot, pi)
            result.selected_node = None
            result.top_nodes = []
            if st.is_rejected():
                result.status = "Unschedulable"
                result.message = "0/1 nodes are available: " + ", ".join(sorted(f"1 {r}" for r in st.reasons)) + "."
            else:
                result.status = "Error"
                result.message = st.message()
            return
        self.nominator.remove(pi)
        result.placed_node = node


def with_nomination(pi: PodInfo, node: str) -> PodInfo:
    pod = dict(pi.pod)
    pod["status"] = dict(pod.get("status") or {}, nominatedNodeName=node)
    return PodInfo(pod)


def without_nomination(pi: PodInfo) -> PodInfo:
    status = (pi.pod.get("status") or {})
    if not status.get("nominatedNodeName"):
        return pi
    pod = dict(pi.pod)
    pod["status"] = {k: v for k, v in status.items() if k != "nominatedNodeName"}
    return PodInfo(pod)
