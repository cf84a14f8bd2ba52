"""Fixes of a whole workload (`explain --fix` on a Deployment, StatefulSet,
Job, CronJob or DaemonSet of a POD_FILE).

The search starts from the first replica that was not placed, its Filter
results taken with the replicas before it in place (what keeps it off each
node: the siblings' anti-affinity, the room they took...). Every candidate
is checked by placing all the replicas again, from the cluster as it was,
one after another with simulate's step (framework/simulation.py), the
change made (the workload's template patched, so each replica carries it;
or the cluster changed): a fix is verified only when every replica is
placed. A check stops at the first replica that is not placed; its cycle
is then what the chained search reads (combine.py).
"""

from __future__ import annotations

import random
from contextlib import ExitStack

from ..sources.admission import stable_uid
from ..state.types import PodInfo
from ..util.errors import KschedxError
from .jsonpatch import PatchError, apply_patch
from .verify import Verifier

# Whole-sequence checks one workload's search may run, and the cycles they
# may take in all (a check of N replicas is up to N cycles).
MAX_SEQUENCES = 24
MAX_SEQUENCE_CYCLES = 2000


class Placed:
    """A check where every replica was placed."""

    status = "Scheduled"

    def __init__(self, nodes: list[str], by_preemption: int, victims: list[dict], index: int):
        self.nodes = nodes  # each replica's node, in order
        self.by_preemption = by_preemption
        self.victims = victims
        self.index = index  # the replica the search started from

    def outcome(self) -> dict:
        distinct = list(dict.fromkeys(self.nodes))
        out = {"status": "Scheduled", "replicas": len(self.nodes), "placed": len(self.nodes),
               "selectedNode": self.nodes[self.index] if self.index < len(self.nodes) else None,
               "nodeCount": len(distinct), "nodes": distinct[:5]}
        if self.by_preemption:
            out["placedByPreemption"] = self.by_preemption
            out["victims"] = self.victims
        return out


class SequenceVerifier(Verifier):
    """A Verifier whose check places every replica of the workload
    (`members`, the PodInfos in the controller's order) instead of one
    pod's cycle. `pod_info` is the first replica not placed; `sim` the
    run's Simulation, its trials undo each check."""

    sequence = True

    def __init__(self, fw, raw_pod: dict, pod_info: PodInfo, ref, sim, members: list[PodInfo]):
        super().__init__(fw, raw_pod, pod_info, workload=ref)
        self.sim = sim
        self.members = members
        self.index = next(i for i, m in enumerate(members) if m.uid == pod_info.uid)
        self.cycles = 0
        self._patches: dict[int, tuple] = {}  # id(PodInfo) -> (it, the patch it was made with)

    @property
    def unplaced(self) -> int:
        """Replicas from the first not placed on: what a change must make room for."""
        return len(self.members) - self.index

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
            by_place = {_place(m.pod, ref.kind, i): m for i, m in enumerate(self.members)}
            out = []
            for i, pod in enumerate(pods):
                self._admission.pod(pod, "fix")
                same = by_place.get(_place(pod, ref.kind, i))
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

    def run(self, pi: PodInfo | None = None, *, preemption: bool = False):
        """Every replica placed in turn (preemption as explain applies it):
        a Placed when all are, else the PodResult of the first that is not
        (its explanations computed before the trial is undone)."""
        self.runs += 1
        made: list = []
        members = self.members
        index = self.index
        entry = self._patches.get(id(pi)) if pi is not None else None
        if entry is not None and entry[0] is pi:
            got = self.replicas(entry[1])
            if got is None:
                return _Refused(pi)
            members, made = got
        fw = self.fw
        rng, fw.rng = fw.rng, random.Random(0)
        sampling = getattr(fw, "sampling", None)
        start = sampling.next_start_node_index if sampling is not None else None
        search, fw.preemption_search = getattr(fw, "preemption_search", True), False
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
                for replica in members:
                    self.cycles += 1
                    r = self.sim.step(replica, settle=lambda r: r.status != "Scheduled")
                    if r.placed_node is None:
                        return r
                    nodes.append(r.placed_node)
                    if r.status != "Scheduled":
                        by_preemption += 1
                        victims += [{"pod": v.key, "priority": v.priority} for v in r.victims]
                    del r
                return Placed(nodes, by_preemption, victims, min(index, max(len(nodes) - 1, 0)))
        finally:
            fw.rng = rng
            fw.preemption_search = search
            if sampling is not None:
                sampling.next_start_node_index = start

    def verdict(self, result, preemption: bool = False) -> dict | None:
        return result.outcome() if isinstance(result, Placed) else None


class _Refused:
    """A patched workload the API server would refuse: nothing placed."""

    status = "Refused"

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


def sequence_fixes(doc: dict, scheds, sim, pi: PodInfo, members: list[PodInfo], workload) -> None:
    """Add the workload's fixes to the document of its first replica not
    placed (`pi`): each checked by placing every replica again."""
    from .find import find_fixes

    raw = workload.raw_pods.get(pi.key)
    ref = workload.workload_refs.get(pi.key)
    if raw is None or ref is None:
        return
    fw = scheds.framework_for(pi)
    if fw is None:
        return
    verifier = SequenceVerifier(fw, raw, pi, ref, sim, members)
    found = find_fixes(fw, pi, doc, raw, workload=ref, verifier=verifier, max_runs=MAX_SEQUENCES)
    source = doc.pop("source", None)
    doc.update(found)
    if source is not None:
        doc["source"] = source
