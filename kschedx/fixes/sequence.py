"""Fixes checked on a sequence of pods rather than one cycle: a workload
`explain` judges as a whole (a Deployment, StatefulSet, Job, CronJob or
DaemonSet of a POD_FILE), and the pods a `simulate` run leaves unplaced.

The search starts from the first pod of the unit (the workload's
replicas, or one pod) that was not placed, its Filter results taken as the
sequence left the cluster at its turn (what keeps it off each node: the
siblings' anti-affinity, the room they took...). Every candidate is checked
by placing the whole sequence again, from the cluster as it was, one pod
after another with simulate's step (framework/simulation.py), the change
made (the workload's template patched, so each replica carries it; the pod
patched; or the cluster changed): a fix is verified only when every pod of
the unit is placed and every other pod placed before still is. A check
stops at the first pod that breaks that; when it is one of the unit's, its
cycle is what the chained search reads (combine.py).
"""

from __future__ import annotations

import random
from contextlib import ExitStack

from ..framework.simulation import without_nomination
from ..sources.admission import stable_uid
from ..state.types import PodInfo
from ..util.errors import KschedxError
from .jsonpatch import PatchError, apply_patch
from .verify import Verifier

# Whole-sequence checks one unit's search may run, and the cycles they may
# take in all (a check of N pods is up to N cycles).
MAX_SEQUENCES = 24
MAX_SEQUENCE_CYCLES = 2000


class Placed:
    """A check where every pod of the unit was placed (and no other pod lost
    its place)."""

    status = "Scheduled"

    def __init__(self, nodes: list[str], by_preemption: int, victims: list[dict], index: int, workload: bool,
                 kept: int):
        self.nodes = nodes  # each of the unit's pods' node, in order
        self.by_preemption = by_preemption
        self.victims = victims
        self.index = index  # the unit's pod the search started from
        self.workload = workload
        self.kept = kept  # other pods placed before, and still

    def outcome(self) -> dict:
        distinct = list(dict.fromkeys(self.nodes))
        out = {"status": "Scheduled", "selectedNode": self.nodes[min(self.index, len(self.nodes) - 1)],
               "nodeCount": len(distinct), "nodes": distinct[:5]}
        if self.workload:
            out["replicas"] = out["placed"] = len(self.nodes)
        if self.kept:
            out["othersKeptPlaced"] = self.kept
        if self.by_preemption:
            out["placedByPreemption"] = self.by_preemption
            out["victims"] = self.victims
        return out


class SequenceVerifier(Verifier):
    """A Verifier whose check places the whole sequence (`members`, the
    PodInfos in order) instead of one pod's cycle. `targets`: positions in
    `members` of the unit's pods (the change applies to them, each must be
    placed); `keep`: positions of other pods that must stay placed;
    `pod_info`: the unit's first pod not placed; `ref`: the unit's
    WorkloadRef (None: a pod of its own); `sim`: the run's Simulation,
    whose trials undo each check."""

    sequence = True

    def __init__(self, fw, raw_pod: dict, pod_info: PodInfo, ref, sim, members: list[PodInfo],
                 targets: list[int] | None = None, keep: frozenset = frozenset(), unplaced: int | None = None):
        super().__init__(fw, raw_pod, pod_info, workload=ref)
        self.sim = sim
        self.members = members
        self.targets = list(range(len(members))) if targets is None else targets
        self.keep = keep
        self.index = next(k for k, i in enumerate(self.targets) if members[i].uid == pod_info.uid)
        # The unit's pods a change must make room for (add-node's count).
        self.unplaced = len(self.targets) - self.index if unplaced is None else unplaced
        self.cycles = 0
        self._patches: dict[int, tuple] = {}  # id(PodInfo) -> (it, the patch it was made with)

    def exhausted(self) -> bool:
        return self.cycles >= MAX_SEQUENCE_CYCLES

    def patched_pod(self, patch: list[dict]) -> PodInfo | None:
        pi = super().patched_pod(patch)
        if pi is not None:
            self._patches[id(pi)] = (pi, patch)
        return pi

    def replicas(self, patch: list[dict]) -> tuple[list[PodInfo], list] | None:
        """Every pod the workload with its template patched expands into,
        as the API server stores them, each with the name and uid of the
        replica in its place (a DaemonSet's: of its node), and the objects
        the expansion made that the cluster lacks; None when the patch does
        not apply or the API server would refuse a pod."""
        from ..sources.workloads import expand_again_all
        from ..state.cluster import obj_key
        from .workload_target import map_patch

        ref = self.workload
        mapped = map_patch(patch, ref.template_pointer)
        if mapped is None:
            return None
        try:
            pods, made = expand_again_all(ref, apply_patch(ref.raw, mapped))
            mine = [self.members[i] for i in self.targets]
            by_place = {_place(m.pod, ref.kind, k): m for k, m in enumerate(mine)}
            out = []
            for k, pod in enumerate(pods):
                self._admission.pod(pod, "fix")
                same = by_place.get(_place(pod, ref.kind, k))
                meta = pod["metadata"]
                if same is not None:
                    meta["uid"], meta["name"] = same.uid, same.name
                    claims = (same.pod.get("status") or {}).get("resourceClaimStatuses")
                    if claims:
                        pod["status"] = dict(pod.get("status") or {}, resourceClaimStatuses=claims)
                elif not meta.get("uid"):
                    meta["uid"] = stable_uid("Pod", meta.get("namespace") or "default", meta["name"])
                out.append(PodInfo(pod))
        except (PatchError, KschedxError, KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None
        return out, [(o["kind"], obj_key(o), o) for o in made]

    def _sequence(self, pi: PodInfo | None):
        """(the pods in order, which positions are the unit's, the objects
        to add for the check) with the change the candidate made to `pi`;
        None when the change cannot be made."""
        members, targets = self.members, self.targets
        entry = self._patches.get(id(pi)) if pi is not None else None
        if entry is None or entry[0] is not pi:
            return members, targets, []
        if self.workload is None:
            # A pod of its own: its patched copy in its place.
            (at,) = targets
            return members[:at] + [pi] + members[at + 1:], targets, self._made_for(pi)
        got = self.replicas(entry[1])
        if got is None:
            return None
        new, made = got
        # The unit's pods where they were, in the new expansion's order (one
        # more or fewer, as a DaemonSet on more nodes: at the end of its run).
        out, positions, it = [], [], iter(new)
        last = targets[-1]
        for i, m in enumerate(members):
            if i in self._target_set:
                nxt = next(it, None)
                if nxt is not None:
                    positions.append(len(out))
                    out.append(nxt)
                if i == last:
                    for rest in it:
                        positions.append(len(out))
                        out.append(rest)
            else:
                out.append(m)
        return out, positions, made

    @property
    def _target_set(self) -> frozenset:
        s = self.__dict__.get("_targets_frozen")
        if s is None:
            s = self.__dict__["_targets_frozen"] = frozenset(self.targets)
        return s

    def _made_for(self, pi) -> list:
        made = self._made.get(id(pi))
        return made[1] if made is not None and made[0] is pi else []

    def run(self, pi: PodInfo | None = None, *, preemption: bool = False):
        """The sequence placed in turn (preemption as explain and simulate
        apply it): a Placed when every pod of the unit is placed and every
        pod to keep still is; else the PodResult of the unit's first pod not
        placed (its explanations computed before the trial is undone), or
        a Displaced."""
        self.runs += 1
        got = self._sequence(pi)
        if got is None:
            return Displaced(None)
        members, targets, made = got
        members = list(members)
        targets_set = frozenset(targets)
        # Positions of the pods to keep, in the new order (they did not move
        # unless the unit changed size before them).
        shift = len(members) - len(self.members)
        keep = frozenset(i if i < self.targets[0] else i + shift for i in self.keep)
        fw = self.fw
        rng, fw.rng = fw.rng, random.Random(0)
        sampling = getattr(fw, "sampling", None)
        start = sampling.next_start_node_index if sampling is not None else None
        search, fw.preemption_search = getattr(fw, "preemption_search", True), False
        position = {m.uid: i for i, m in enumerate(members)}
        # Past the last pod of the unit and the last to keep, nothing decides
        # the check unless a later pod may preempt one of them (a higher
        # priority: not in PrioritySort's queue order).
        last = max(max(targets, default=0), max(keep, default=0))
        watched = [members[i].priority for i in targets] + [members[i].priority for i in keep if i < len(members)]
        if any(m.priority > min(watched, default=0) for m in members[last + 1:]):
            last = len(members) - 1
        try:
            with ExitStack() as stack:
                if made:
                    stack.enter_context(self.objects_changed(made))
                stack.enter_context(self.sim.trial())
                if sampling is not None:
                    sampling.next_start_node_index = 0
                nodes: list[str] = []
                by_preemption = 0
                victims: list[dict] = []
                kept = 0
                for i in range(last + 1):
                    mine = i in targets_set
                    self.cycles += 1
                    r = self.sim.step(members[i], settle=(lambda r: r.status != "Scheduled") if mine else None)
                    for np in r.cleared_nominations:
                        j = position.get(np.uid)
                        if j is not None and j > i:
                            members[j] = without_nomination(members[j])
                    if r.placed_node is None:
                        if mine:
                            return r
                        if i in keep:
                            return Displaced(members[i])
                        continue
                    if mine:
                        nodes.append(r.placed_node)
                        if r.status != "Scheduled":
                            by_preemption += 1
                            victims += [{"pod": v.key, "priority": v.priority} for v in r.victims]
                    elif i in keep:
                        kept += 1
                    del r
                return Placed(nodes, by_preemption, victims, self.index, self.workload is not None, kept)
        finally:
            fw.rng = rng
            fw.preemption_search = search
            if sampling is not None:
                sampling.next_start_node_index = start

    def verdict(self, result, preemption: bool = False) -> dict | None:
        return result.outcome() if isinstance(result, Placed) else None


class Displaced:
    """A check that failed on no pod of the unit: a pod placed before lost
    its place (or the change could not be made)."""

    status = "Displaced"

    def __init__(self, pi):
        self.pod_info = pi


def _place(pod: dict, kind: str, i: int):
    """What makes a replica the same one in another expansion: a DaemonSet
    pod's node, any other's position."""
    if kind != "DaemonSet":
        return i
    try:
        terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        return terms["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
    except (KeyError, IndexError, TypeError):
        return i


def sequence_fixes(doc: dict, scheds, sim, pi: PodInfo, members: list[PodInfo], workload, *,
                   targets: list[int] | None = None, keep: frozenset = frozenset(),
                   unplaced: int | None = None, templates=()) -> None:
    """Add to the document of the unit's first pod not placed (`pi`) the
    fixes that place every pod of the unit (`targets` in `members`; all of
    them when None), each checked by placing the whole sequence again.
    `templates` (--node-template): add-node's nodes come from them."""
    from .find import find_fixes

    raw = workload.raw_pods.get(pi.key)
    ref = workload.workload_refs.get(pi.key)
    fw = scheds.framework_for(pi)
    if raw is None or fw is None:
        return
    verifier = SequenceVerifier(fw, raw, pi, ref, sim, members, targets, keep, unplaced)
    found = find_fixes(fw, pi, doc, raw, workload=ref, verifier=verifier, max_runs=MAX_SEQUENCES,
                       templates=templates)
    source = doc.pop("source", None)
    doc.update(found)
    if source is not None:
        doc["source"] = source
