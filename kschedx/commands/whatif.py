"""simulate and capacity when the cluster changes (--drain, --node-template,
--add-nodes): the what-if run (whatif/) on the run's snapshot, its pods'
documents and the `drain` and `addNodes` answers in the one result
document. A run without these options never comes here."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..framework.dispatch import new_schedulers
from ..result.document import Tally
from ..result.sink import ResultSink
from .document import head, tail
from .load import Workload


@dataclass
class Change:
    """The changes asked for: a drain (whatif.drain.DrainOptions), node
    templates (sources.node_templates.NodeTemplate) and how many nodes of
    them to add: "auto", or {template: count}."""

    drain: object = None
    templates: list = field(default_factory=list)
    add_nodes: object = None

    def head(self) -> dict:
        return {"drain": self.drain.document() if self.drain is not None else None,
                "nodeTemplates": [t.name for t in self.templates],
                "addNodes": self.add_nodes}

    @property
    def warnings(self) -> list[str]:
        return [w for t in self.templates for w in t.warnings]


def simulate_changed(sink: ResultSink, workload: Workload, change: Change, *, tie_break: str = "random",
                     seed: int | None = None, progress=None, detail: str = "full", config=None,
                     sampling: str = "all", nodes=None, features=None) -> int:
    """simulate with the changes: the drain and the pending pods, then the
    nodes added; each pod's document is its last cycle. The exit code is 1
    when a pod is left unplaced (or unschedulable) or the drain does not
    complete."""
    from ..whatif import add_nodes
    from ..whatif.play import Play
    from .simulate import node_usage

    def new_run():
        return new_schedulers(workload.cluster, tie_break=tie_break, seed=seed, config=config, sampling=sampling,
                              features=features)

    found = None
    plan: list[str] = []
    if change.add_nodes == "auto":
        found = add_nodes.search(workload, new_run, change.templates, change.drain)
        plan = found.plan
    elif isinstance(change.add_nodes, dict):
        for t in change.templates:
            plan += [t.name] * change.add_nodes.get(t.name, 0)
    scheds = new_run()
    play = Play(workload, scheds, detail=detail, nodes=nodes, encoder=getattr(sink, "node_records_encoder", None))
    snapshot = scheds.snapshot
    before = node_usage(snapshot)
    doc_head = head(scheds, "simulate", nodes)
    doc_head["whatIf"] = change.head()
    sink.begin(doc_head)
    made = add_nodes.made_nodes(snapshot, change.templates, plan) if plan else []
    try:
        return _simulated(sink, workload, change, scheds, play, made, found, before, detail, config, progress)
    finally:
        play.close()


def _simulated(sink, workload, change, scheds, play, made, found, before, detail, config, progress) -> int:
    from ..whatif import report
    from .simulate import _count, _utilization, node_usage

    snapshot = scheds.snapshot
    play.run(change.drain, made)
    tally = Tally()
    summary = {"pods": 0, "placed": 0, "placedByPreemption": 0, "unschedulable": 0, "gated": 0, "errors": 0,
               "preemptions": 0, "victims": 0, "preemptionsCouldDiffer": 0}
    if config is not None:
        summary["noProfile"] = 0
    docs = play.documents()
    for p in docs:
        pre = p.get("preemption") or {}
        if pre.get("nominatedNode") and p["status"] != "Scheduled":
            summary["preemptions"] += 1
            summary["victims"] += len(pre.get("victims") or ())
            summary["preemptionsCouldDiffer"] += bool((pre.get("search") or {}).get("couldDiffer"))
    for p in docs:
        _count(summary, tally, p)
        sink.pod(p)
    if progress is not None:
        progress(len(docs), len(docs))
    after = node_usage(snapshot)
    extra: dict = {"detail": detail, "summary": summary}
    utilization = _utilization(snapshot, before, after)
    drained = {nd.node for nd in play.drains}
    added = {n["name"]: n["template"] for n in play.added}
    for u in utilization:
        if u["node"] in drained:
            u["cordoned"] = True
        if u["node"] in added:
            u["addedFrom"] = added[u["node"]]
    extra["utilization"] = utilization
    code = tally.exit_code
    if change.drain is not None:
        drain = report.drain_document(play)
        extra["drain"] = drain
        summary["replacements"] = sum(1 for p in docs if p.get("replacementFor"))
        summary["lost"] = drain["lost"]
        if drain["outcome"] != "Drained":
            code = 1
    if change.add_nodes is not None:
        add = report.add_nodes_document(found, play.added, sorted(play.entries, key=lambda e: e.seq) + [
            e for e in play.pending if e not in play.entries], change.templates, fixed=found is None)
        extra["addNodes"] = add
        if found is not None and not found.found:
            code = 1
    if workload.notes:
        extra["inputNotes"] = list(workload.notes)
    t = tail(scheds, workload, extra)
    warnings = list(t.get("warnings") or []) + change.warnings + play.warnings
    if warnings:
        # Warnings stay before the mode's own fields (result-schema.md's order).
        t = {"warnings": warnings, **{k: v for k, v in t.items() if k != "warnings"}}
    sink.end(t)
    return code


def drained_for_capacity(workload: Workload, scheds, drain, pending=()):
    """capacity --drain: the drain played on the capacity run's fresh
    snapshot (its replacements placed), before any copy is counted: the
    `drain` object of the CapacityResult, and the run, to close() once the
    count is done. `pending` (--with-pending: the snapshot's pending pods)
    are queued in the drain's run, as simulate --drain queues them: kube-
    scheduler's queue holds them with the drained pods' new pods, so the
    drain's answer is simulate's."""
    from ..whatif import report
    from ..whatif.play import Play

    queued = Workload(workload.cluster, list(pending), sources=workload.sources)
    play = Play(queued, scheds, detail="placements")
    play.run(drain)
    doc = report.drain_document(play)
    doc["replacements"] = [{"pod": p["pod"], "replacementFor": p["replacementFor"]["pod"],
                            "status": p["status"], "placedNode": p.get("placedNode"), "message": p.get("message")}
                           for p in play.documents() if p.get("replacementFor")]
    if play.warnings:
        doc["warnings"] = list(play.warnings)
    return doc, play
