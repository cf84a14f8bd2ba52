"""explain: a workload judged as a whole.

The pods a Deployment, ReplicaSet, StatefulSet, Job, CronJob or DaemonSet
of a POD_FILE expands into reach the scheduler one after another, in the
order its controller creates them, and each meets the cluster with the
replicas before it already placed. So explain places them the same way,
with simulate's step (framework/simulation.py: the one runner, every
placement assumed, a preemption's victims deleted and the preemptor placed
on its node), inside a trial that is undone afterwards: the next pod or
workload is judged against the cluster as it was.

Each replica's document gains `placedNode` (where it was placed for the
replicas after it; null when it was not) and `workload` (which workload,
which replica of how many). The run's `workloads` (after the pods) say per
workload how many replicas were placed and which is the first that was not.

A replica that is not placed leaves the cluster as it was: the next
replica identical to it for scheduling takes its result (commands/reuse.py),
so the replicas after the first that does not fit cost nothing. With
--fix, the first replica that is not placed gets the workload's fixes,
each checked by placing every replica again (fixes/sequence.py).
"""

from __future__ import annotations

from .document import pod_document


def units(pods, workload) -> list:
    """The pods in queue order, each workload's replicas gathered where its
    first one is: a PodInfo, or (group, its PodInfos in the controller's
    order)."""
    group_of = workload.group_of
    if not group_of:
        return list(pods)
    out = []
    members: dict[int, list] = {}
    for pi in pods:
        hit = group_of.get(pi.uid)
        if hit is None:
            out.append(pi)
            continue
        group, index = hit
        mine = members.get(id(group))
        if mine is None:
            mine = members[id(group)] = []
            out.append((group, mine))
        mine.append((index, pi))
    return [u if not isinstance(u, tuple) else (u[0], [pi for _, pi in sorted(u[1], key=lambda x: x[0])])
            for u in out]


def workload_field(group, replica: int, replicas: int) -> dict:
    return {"kind": group.kind, "namespace": group.namespace, "name": group.name, "replica": replica,
            "replicas": replicas}


def _set_fields(doc: dict, placed: str | None, field: dict) -> dict:
    """A replica's own fields, before its `source` (the pod's last key)."""
    source = doc.pop("source", None)
    doc["placedNode"] = placed
    doc["workload"] = field
    if source is not None:
        doc["source"] = source
    return doc


def explain_workload(explainer, group, members: list):
    """The documents of a workload's replicas, in the controller's order,
    each judged with the replicas before it placed; the workload's summary
    is added to explainer.workloads."""
    from ..fixes.sequence import sequence_fixes
    from .reuse import ResultReuse

    scheds = explainer.scheds
    workload = explainer.workload
    sim = explainer.simulation()
    rng = scheds.rng
    n = len(members)
    summary = {"kind": group.kind, "apiVersion": group.api_version, "namespace": group.namespace,
               "name": group.name, "replicas": n, "placed": 0, "placedByPreemption": 0, "victims": 0,
               "fits": True, "firstUnplaced": None}
    first_source = workload.sources.get(members[0].uid) if members else None
    if first_source:
        summary["source"] = dict(first_source)
    explainer.workloads.append(summary)
    reuse = ResultReuse(scheds, workload) if explainer.reuse is not None else None
    fix = explainer.fix
    held: list[dict] = []  # with --fix: the documents from the first replica not placed on
    first = None  # (replica's PodInfo, its document, its PodResult)
    first_unplaced = None  # the first replica not placed
    score_details = explainer.score_details

    def settle(r):
        # Its explanations now, before the snapshot changes (the next replica).
        r.settle(score_details)
        return False

    with sim.trial():
        scheds.sampling.next_start_node_index = 0
        for i, pi in enumerate(members):
            field = workload_field(group, i + 1, n)
            key = reuse.key(pi) if reuse is not None else None
            hit = reuse.document(key, pi) if key is not None else None
            if hit is not None:
                doc, placed = hit[0], None
            else:
                before = rng.draws
                r = sim.step(pi, settle=settle)
                placed = r.placed_node
                # The first replica not placed gets the workload's fixes (as a pod, only when Unschedulable).
                whole = fix and placed is None and first is None and r.status == "Unschedulable"
                doc = pod_document(r, "explain", workload, None if whole else explainer.nodes,
                                   None if whole else explainer.encoder)
                if placed is not None or r.victims:
                    if reuse is not None:
                        reuse.templates.clear()  # the cluster changed: no earlier result holds
                elif key is not None and not whole:
                    # (The document --fix searches keeps every node: the next one is shared.)
                    reuse.remember(key, pi, False, doc, rng.draws - before)
                if whole:
                    first = (pi, doc, r)
                if placed is None and first_unplaced is None and r.status == "Unschedulable" and explainer.templates:
                    # Which pools could take it: with the replicas before it in
                    # place, as the pod's own cycle saw the cluster.
                    from ..whatif.templates import add_templates

                    add_templates(doc, scheds, pi, explainer.templates)
                if placed is None and first_unplaced is None:
                    first_unplaced = i
                del r
            _set_fields(doc, placed, field)
            if placed is not None:
                summary["placed"] += 1
                if doc["status"] != "Scheduled":
                    summary["placedByPreemption"] += 1
                    summary["victims"] += len((doc.get("preemption") or {}).get("victims") or ())
            elif summary["firstUnplaced"] is None:
                summary["fits"] = False
                summary["firstUnplaced"] = {"replica": i + 1, "pod": doc["pod"], "status": doc["status"],
                                            "message": doc.get("message")}
            if fix and summary["firstUnplaced"] is not None:
                held.append(doc)
            else:
                yield doc
            del doc
    if first is not None:
        pi, doc, r = first
        sequence_fixes(doc, scheds, sim, pi, members, workload, templates=explainer.templates)
        explainer.choose_nodes(doc, r)
        del r, first
    yield from held
