"""Pods placed one after another on one snapshot, each outcome applied before
the next pod: the one placement step behind `simulate` and `capacity`.

Only what the scheduler's cache and queue would change is changed here (the
snapshot's NodeInfos and indexes, in place; the nominator; plugins' Reserve
state). Documents, streaming and summaries stay with the commands.

A trial (`Simulation.trial()`) undoes every step made inside it, exactly:
`explain` places a workload's replicas one after another and then judges
the next pod against the snapshot as it was, and a fix of a workload is
checked by placing all its replicas again.
"""

from __future__ import annotations

from contextlib import contextmanager

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
        self._journal: _Journal | None = None  # while a trial is open

    @contextmanager
    def trial(self):
        """Every step made inside is undone on leaving: the pods placed are
        forgotten (their Reserve undone), the victims come back in their
        places (each node's pod lists in their former order), the
        nominations and the DRA allocations in flight are as they were.
        Trials do not nest."""
        if self._journal is not None:
            raise RuntimeError("a simulation trial is already open")
        journal = self._journal = _Journal(self)
        try:
            yield self
        finally:
            self._journal = None
            journal.undo()

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
            if self._journal is not None:
                self._journal.removing(r.victims)
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
        journal = self._journal
        if journal is not None:
            journal.placing(pi, node)
        cache.assume_pod(self.snapshot, pi, node)
        st = None
        if cycle.cycle_state is not None:
            st = fw.run_reserve_plugins_reserve(cycle.cycle_state, cycle.pod_info, node)
            if st is None and journal is not None:
                journal.reserved(fw, cycle, node)
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


class _Journal:
    """What the steps of one trial changed, to undo it (Simulation.trial)."""

    def __init__(self, sim: Simulation):
        self.snapshot = sim.snapshot
        self.nominator = sim.nominator
        nom = sim.nominator
        self.nominated = ({node: list(pods) for node, pods in nom.by_node.items()}, dict(nom._node_of))
        dra = getattr(self.snapshot, "dra", None)
        self.dra = (dra, dict(dra.in_flight)) if dra is not None else None
        self.lists: dict[str, tuple] = {}  # node -> its pod lists before the trial first changed them
        self.done: list[tuple] = []  # ("placed", uid, stored before) | ("reserved", fw, state, pod, node) | ("removed", pods)

    def _keep_lists(self, node: str) -> None:
        if node not in self.lists:
            ni = self.snapshot.by_name[node]
            self.lists[node] = (list(ni.pods), list(ni.pods_with_affinity), list(ni.pods_with_required_anti_affinity))

    def placing(self, pi: PodInfo, node: str) -> None:
        self._keep_lists(node)
        self.done.append(("placed", pi.uid, self.snapshot.pod_infos.get(pi.uid)))

    def reserved(self, fw, cycle: PodResult, node: str) -> None:
        # Only what Unreserve reads: the whole result (every node's verdicts
        # and scores) kept per replica would grow a trial by megabytes each.
        self.done.append(("reserved", fw, cycle.cycle_state, cycle.pod_info, node))

    def removing(self, victims) -> None:
        snap = self.snapshot
        removed = []
        for v in victims:
            node = snap.assigned_pod_node.get(v.uid)
            if node is not None:
                self._keep_lists(node)
                removed.append((snap.pod_infos.get(v.uid, v), node))
        self.done.append(("removed", removed))

    def undo(self) -> None:
        snap = self.snapshot
        for entry in reversed(self.done):
            if entry[0] == "placed":
                _, uid, before = entry
                stored = snap.pod_infos.get(uid)
                if stored is not None and uid in snap.assigned_pod_node:
                    cache.forget_pod(snap, stored)
                if before is not None:
                    snap.pod_infos[uid] = before
            elif entry[0] == "reserved":
                _, fw, state, pod_info, node = entry
                fw.run_reserve_plugins_unreserve(state, pod_info, node)
            else:
                for stored, node in reversed(entry[1]):
                    cache.assume_pod(snap, stored, node)
        for node, (pods, affinity, anti) in self.lists.items():
            ni = snap.by_name[node]
            ni.pods[:] = pods
            ni.pods_with_affinity[:] = affinity
            ni.pods_with_required_anti_affinity[:] = anti
        by_node, node_of = self.nominated
        self.nominator.by_node.clear()
        self.nominator.by_node.update(by_node)
        self.nominator._node_of.clear()
        self.nominator._node_of.update(node_of)
        if self.dra is not None:
            dra, in_flight = self.dra
            if dra.in_flight != in_flight:
                dra.in_flight.clear()
                dra.in_flight.update(in_flight)
                # Never back to an earlier revision: caches keyed on a later one
                # were made for other allocations.
                dra.revision += 1
        elif getattr(snap, "dra", None) is not None and snap.dra.in_flight:
            # Made during the trial (a pod with claims): nothing was in flight before.
            snap.dra.in_flight.clear()
            snap.dra.revision += 1


def probe_cycle(fw, pi: PodInfo, *, post_filter: bool = False):
    """One cycle of `pi` that leaves the run as it was: ties broken by a
    random source of its own, node sampling from the first node, no
    preemption search beyond the one kschedx follows (and, by default, no
    PostFilter): for checks that ask "would it fit so" (a fix, a node
    template) between the run's own cycles."""
    import random

    rng, fw.rng = fw.rng, random.Random(0)
    sampling = getattr(fw, "sampling", None)
    start = sampling.next_start_node_index if sampling is not None else None
    if sampling is not None:
        sampling.next_start_node_index = 0
    search, fw.preemption_search = getattr(fw, "preemption_search", True), False
    try:
        return fw.schedule(pi, post_filter=post_filter)
    finally:
        fw.rng = rng
        fw.preemption_search = search
        if sampling is not None:
            sampling.next_start_node_index = start
