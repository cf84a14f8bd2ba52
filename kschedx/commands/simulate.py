"""`kschedx simulate`: the pods one after another in queue order, each
placement or preemption applied to the snapshot before the next pod."""

from __future__ import annotations

from contextlib import ExitStack

from ..framework.dispatch import new_schedulers
from ..result.document import Tally
from ..result.node_group import node_group
from ..result.sink import DocumentSink, ResultSink
from .document import head, pod_document, tail
from .load import Workload
from .sequence import workload_field

def simulate(workload: Workload, *, tie_break: str = "random", seed: int | None = None, progress=None,
             detail: str = "full", config=None, sampling: str = "all", nodes=None, features=None,
             fix: bool = False) -> dict:
    """The pods one after another (see simulate_into): the whole document."""
    sink = DocumentSink()
    simulate_into(sink, workload, tie_break=tie_break, seed=seed, progress=progress, detail=detail, config=config,
                  sampling=sampling, nodes=nodes, features=features, fix=fix)
    return sink.doc


def simulate_into(sink: ResultSink, workload: Workload, *, tie_break: str = "random", seed: int | None = None,
                  progress=None, detail: str = "full", config=None, sampling: str = "all", nodes=None,
                  features=None, fix: bool = False) -> int:
    """The pods one after another in queue order, each outcome applied to the
    snapshot before the next pod, as kube-scheduler's cache would see it.

    - Scheduled: the pod is assumed on its node (NodeInfo updated in place).
    - Preemption: the victims are deleted (gone for good, not re-queued),
      lower-priority pods nominated to the node lose their nomination, and
      the preemptor is retried at once: nominated to the node, it is tried
      there first and placed.
    - Unschedulable: stays pending; a failed preemption clears its
      nomination, as upstream's PostFilterResult does.

    Each pod's result goes to `sink` as soon as it is final: at once, unless
    a later pod of higher priority could still preempt it (it would gain
    `preemptedBy`); queue order puts higher priorities first, so that wait
    is empty in practice. `progress(done, total)` is called after each pod.
    detail "placements" leaves out each pod's per-node verdicts and scores
    (every other field is kept); "failures" keeps them for the pods left
    unplaced only; `nodes` (--nodes) chooses among the records kept.
    Returns the exit code. `config`, `features`: as for explain_into.
    Node sampling's start index is carried from each scheduling cycle to the
    next, as kube-scheduler carries it (the run starting at 0).

    `fix` (the workload loaded with keep_raw): for each workload of the
    POD_FILEs, and each pod of its own, that the run leaves with a pod not
    placed, the first such pod's document gains the fixes that place all of
    its pods, each checked by placing every pod again (fixes/sequence.py);
    the run is then made in a trial and its pods are written once the
    searches are done.
    """
    from ..framework.simulation import Simulation, without_nomination

    scheds = new_schedulers(workload.cluster, tie_break=tie_break, seed=seed, config=config, sampling=sampling,
                            features=features)
    snapshot = scheds.snapshot
    sim = Simulation(scheds)
    queue = scheds.queue_order(list(workload.pods))
    original = list(queue)  # the queue before nominations were cleared: what a fix's check places again
    trial = ExitStack()
    if fix:
        # The run in a trial: the fix searches start from the cluster as it was.
        trial.enter_context(sim.trial())
    else:
        trial = None
    first_unplaced: dict = {}  # unit -> (position, PodInfo, document, PodResult) of its first pod not placed
    sink.begin(head(scheds, "simulate", nodes))
    before = node_usage(snapshot)
    position = {pi.uid: i for i, pi in enumerate(queue)}
    # Highest priority among the pods after position i: a placed pod of at
    # least that priority can no longer be preempted by this run.
    later_max = [0] * len(queue)
    highest = None
    for i in range(len(queue) - 1, -1, -1):
        later_max[i] = highest
        highest = queue[i].priority if highest is None else max(highest, queue[i].priority)
    held: dict[str, dict] = {}  # uid -> document of a placed pod a later pod could still preempt
    waiting: list[tuple[str, dict, int]] = []  # (uid, pod document, priority) not yet handed to the sink
    tally = Tally()
    encoder = getattr(sink, "node_records_encoder", None)
    summary = {"pods": 0, "placed": 0, "placedByPreemption": 0, "unschedulable": 0, "gated": 0, "errors": 0,
               "preemptions": 0, "victims": 0, "preemptionsCouldDiffer": 0}
    if config is not None:
        summary["noProfile"] = 0  # pods of schedulerNames no profile serves

    def release(i, final=False):
        # Hand over, in queue order, every pod no pod after position i can preempt.
        if trial is not None and not final:
            return  # --fix: the pods wait for their fixes
        while waiting:
            uid, p, priority = waiting[0]
            if p["placedNode"] and later_max[i] is not None and later_max[i] > priority:
                return
            waiting.pop(0)
            held.pop(uid, None)
            _count(summary, tally, p)
            sink.pod(p)

    for i in range(len(queue)):
        pi = queue[i]
        # Explanations are read before the snapshot changes; "failures" keeps
        # them only for pods that are not placed at once.
        settled = False

        def settle(r):
            nonlocal settled
            settled = detail == "full" or (detail == "failures" and r.status != "Scheduled")
            return settled

        unit = _unit(workload, pi) if trial is not None else None
        search_here = unit is not None and unit not in first_unplaced
        if search_here:
            # Its fix search reads every node's verdicts if it is not placed.
            settle_detail = settle

            def settle(r, settle_detail=settle_detail):
                return settle_detail(r) or r.status != "Scheduled"

        r = sim.step(pi, settle=settle)
        if r.status != "Scheduled" and r.nominated_node:
            summary["preemptions"] += 1
            summary["victims"] += len(r.victims)
            # kube-scheduler's candidate search could have nominated another node
            # or evicted other pods (preemption.search); the run goes on with this one.
            summary["preemptionsCouldDiffer"] += bool(((r.preemption or {}).get("search") or {}).get("couldDiffer"))
            for v in r.victims:
                earlier = held.get(v.uid)
                if earlier is not None:
                    earlier["preemptedBy"] = pi.key
                    if "source" in earlier:  # the pod's last key stays last
                        earlier["source"] = earlier.pop("source")
            for np in r.cleared_nominations:
                j = position.get(np.uid)
                if j is not None and j > i:
                    queue[j] = without_nomination(queue[j])
        if search_here and r.placed_node is None and r.status == "Unschedulable":
            # Every node's verdicts, for its fix search (narrowed after it).
            p = pod_document(r, "simulate", workload)
            first_unplaced[unit] = (i, pi, p, r)
        else:
            if detail == "placements" or (detail == "failures" and (r.placed_node or not settled)):
                r.drop_nodes()
            p = pod_document(r, "simulate", workload, nodes, encoder)
        del r
        member = workload.group_of.get(pi.uid)
        if member is not None:
            # Which workload of the POD_FILEs, which replica of how many.
            source = p.pop("source", None)
            p["workload"] = workload_field(member[0], member[1] + 1, len(member[0].pods))
            if source is not None:
                p["source"] = source
        if p["placedNode"]:
            held[pi.uid] = p
        waiting.append((pi.uid, p, pi.priority))
        del p
        release(i)
        if progress is not None:
            progress(i + 1, len(queue))

    after = node_usage(snapshot)
    utilization = _utilization(snapshot, before, after)
    if trial is not None:
        trial.close()
        _fixes(scheds, sim, workload, original, first_unplaced, waiting, detail, nodes)
        release(len(queue) - 1, final=True)
    extra = {"detail": detail, "summary": summary, "utilization": utilization}
    if workload.notes:
        extra["inputNotes"] = list(workload.notes)
    sink.end(tail(scheds, workload, extra))
    return tally.exit_code


def _unit(workload: Workload, pi):
    """What a pod's fixes are for in simulate: its workload of the POD_FILEs,
    else the pod itself."""
    hit = workload.group_of.get(pi.uid)
    return ("workload", id(hit[0])) if hit is not None else ("pod", pi.uid)


def _fixes(scheds, sim, workload: Workload, queue: list, first_unplaced: dict, waiting: list, detail: str,
           nodes) -> None:
    """simulate --fix: each unit's first pod not placed gains the fixes that
    place all the unit's pods when the whole run is made again (and keep
    every other pod placed before in its place)."""
    from ..fixes.sequence import sequence_fixes

    placed = {uid for uid, p, _ in waiting if p.get("placedNode")}
    for unit, (i, pi, doc, r) in first_unplaced.items():
        targets = [j for j, q in enumerate(queue) if _unit(workload, q) == unit]
        keep = frozenset(j for j, q in enumerate(queue) if q.uid in placed and j not in targets)
        unplaced = sum(1 for j in targets if queue[j].uid not in placed)
        sequence_fixes(doc, scheds, sim, queue[i], queue, workload, targets=targets, keep=keep, unplaced=unplaced)
        if detail == "placements":
            r.drop_nodes()
            doc["nodes"] = []
        elif nodes is not None and not nodes.is_all:
            keep_nodes = nodes.pick(r.outline(), r.selected_node)
            doc["nodes"] = [n for n in doc["nodes"] if n["name"] in keep_nodes]
        del r


def _count(summary: dict, tally: Tally, p: dict) -> None:
    """simulate's closing summary, one pod at a time. A pod placed and later
    preempted still counts as placed (its placedNode stays)."""
    tally.add(p)
    summary["pods"] += 1
    placed = bool(p["placedNode"])
    summary["placed"] += placed
    summary["placedByPreemption"] += placed and p["status"] != "Scheduled"
    summary["unschedulable"] += not placed and p["status"] == "Unschedulable"
    summary["gated"] += p["status"] == "Gated"
    summary["errors"] += p["status"] == "Error"
    if "noProfile" in summary:
        summary["noProfile"] += p["status"] == "NoProfile"


def node_usage(snapshot) -> dict[str, dict]:
    """Requested cpu (millicores), memory (bytes) and pod count per node."""
    return {
        ni.name: {"cpu": ni.requested.milli_cpu, "memory": ni.requested.memory, "pods": len(ni.pods)}
        for ni in snapshot.node_infos
    }


def _utilization(snapshot, before: dict, after: dict) -> list[dict]:
    out = []
    for ni in snapshot.node_infos:
        alloc = ni.allocatable
        out.append({
            "node": ni.name,
            "nodeGroup": node_group(ni.name, ni.labels),
            "allocatable": {"cpu": alloc.milli_cpu, "memory": alloc.memory, "pods": alloc.allowed_pod_number},
            # (a node added during the run had nothing before it)
            "before": before.get(ni.name) or {"cpu": 0, "memory": 0, "pods": 0},
            "after": after[ni.name],
        })
    return out
