"""Node templates on a run's snapshot: a node of a template added for one
check (its slices, static and DaemonSet pods with it), a pod's cycle with
it, and what the new node's record says; then everything taken back.

`explain --node-template` asks it per unschedulable pod ("which pools could
take it"), `simulate --add-nodes auto` per class of pending pods (whatif/
add_nodes.py)."""

from __future__ import annotations

from ..framework.journal import Journal
from ..framework.simulation import probe_cycle
from ..result.document import pod_dict
from ..result.node_choice import NodeChoice
from ..sources.node_templates import make_node, node_name


def new_node(snapshot, template, extra_taken=()):
    """The next node of `template` (T-1, T-2...: the first name no node has)."""
    name, n = node_name(template, lambda name: snapshot.get(name) is not None or name in extra_taken)
    return make_node(template, name, n)


def joined(journal: Journal, fw, made) -> list[dict]:
    """`made` joins the snapshot through `journal`; its DaemonSet pods are
    each placed by their cycle (assumed, no Reserve: the check is undone)."""

    def run_pod(pi):
        r = probe_cycle(fw, pi)
        r.placed_node = None
        if r.status == "Scheduled":
            journal.assume_pod(pi, r.selected_node)
            r.placed_node = r.selected_node
        return r

    return journal.join_node(made, run_pod)


def probe(scheds, pi, template, *, record: bool = True) -> dict:
    """The pod's cycle (no PostFilter) with one node of `template` added:
    {"template", "node" (the new node's record), "status", "selectedNode",
    "daemonSetPods"}; the snapshot is left as it was."""
    fw = scheds.framework_for(pi)
    journal = Journal(scheds.snapshot, scheds.frameworks)
    made = new_node(scheds.snapshot, template)
    try:
        ds = joined(journal, fw, made)
        r = probe_cycle(fw, pi)
        out = {"template": template.name, "nodeName": made.name, "status": r.status,
               "selectedNode": r.selected_node, "daemonSetPods": ds}
        out.update(verdict(r, made.name, record=record))
        return out
    finally:
        journal.rollback()


def verdict(r, name: str, record: bool = True) -> dict:
    """What the cycle says of node `name`: feasible, or its failing plugin,
    code and reasons (kube-scheduler's reported failure); with `record`
    the node's whole record as the document writes it."""
    doc = pod_dict(r, "explain", NodeChoice("names", names=(name,)))
    node = next((n for n in doc["nodes"] if n["name"] == name), None)
    out: dict = {}
    if node is None:
        # PreFilter rejected the pod before any node (its status is every node's).
        pre = next((s for s in doc["preFilter"] if s.get("code") not in ("Success", "Skip")), None)
        out.update(feasible=False, plugin=(pre or {}).get("plugin"), code=(pre or {}).get("code"),
                   reasons=list((pre or {}).get("reasons") or ()))
        return out
    out["feasible"] = bool(node.get("feasible"))
    if not out["feasible"]:
        first = node.get("firstFailure")
        failing = next((f for f in node.get("filters") or () if f["plugin"] == first), None)
        status = node.get("status") or {}
        out.update(plugin=first, code=(failing or status).get("code"),
                   reasons=list((failing or status).get("reasons") or ()))
        also = [f["plugin"] for f in node.get("filters") or ()
                if f["plugin"] != first and f["code"] not in ("Success", "Skip")]
        if also:
            out["alsoFailing"] = also
    if record:
        out["node"] = node
    return out


def add_templates(p: dict, scheds, pi, templates) -> None:
    """A pod document's "templates": which pools could take the pod (explain
    and a workload's replicas alike)."""
    if not templates:
        return
    source = p.pop("source", None)
    p["templates"] = templates_answer(scheds, pi, templates)
    if source is not None:
        p["source"] = source  # the pod's last key stays last


def templates_answer(scheds, pi, templates) -> dict:
    """explain's `templates` for an unschedulable pod: which templates could
    take it, and each one's verdict on its new node."""
    results = [probe(scheds, pi, t) for t in templates]
    return {"couldTake": [r["template"] for r in results if r["feasible"]], "results": results}
