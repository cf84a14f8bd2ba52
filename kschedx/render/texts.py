"""Texts of one line the report and the HTML report share: a pod's node
sampling, the candidates its PreFilterResult leaves, a preemption's search
and its outcomes, what preemption makes of one candidate node."""

from __future__ import annotations

from .blocks import Symbols, names_text, plural


def sampling_text(pod: dict, limit: int | None, sym: Symbols) -> str:
    """The pod's `sampling` field in one line: where kube-scheduler's node
    sampling stops, and (mode all) whether it could pick another node."""
    s = pod["sampling"]
    pct = s["percentageOfNodesToScore"]
    share = f"percentageOfNodesToScore {pct}" + (" = adaptive" if pct == 0 else "")
    k, start = s["numFeasibleNodesToFind"], s["startIndex"]
    if s["mode"] == "upstream":
        return (f"sampling (upstream): scored the first {s['foundNodes']} feasible nodes found from start index "
                f"{start} ({share}; {s['processedNodes']} of {s['nodes']} nodes checked, next cycle starts at "
                f"{s['nextStartIndex']})")
    head = f"sampling: kube-scheduler stops at {k} feasible nodes of {s['nodes']} ({share})"
    if not s.get("couldBeMissed"):
        return head + f"; only {s['feasibleNodes']} are feasible, so it finds them all: same pick"
    picks = s.get("upstreamCouldPick") or []
    others = [n for n in picks if n != pod.get("selectedNode")]
    return (head + f"; from start index {start} its best are {names_text(s.get('startWindowBest') or [], 3, sym)}"
            f" {sym.dot} {pod.get('selectedNode')} could be missed: from other starts it could pick "
            f"{plural(len(others), 'other node')} ({names_text(others, limit, sym)})")


def pre_filter_result_text(pod: dict, limit: int | None, sym: Symbols) -> str | None:
    """The pod's `preFilterResult` in one line: which PreFilter plugins
    narrowed the candidates, to which nodes; None without one."""
    pfr = pod.get("preFilterResult")
    if pfr is None:
        return None
    names = pfr.get("nodeNames") or []
    who = ", ".join(pfr.get("plugins") or []) or "PreFilter"
    return (f"PreFilter ({who}) narrowed the candidates to {plural(len(names), 'node')}"
            + (f": {names_text(names, limit, sym)}" if names else ""))


def share_text(share: float) -> str:
    """A share of examination orders as a percentage: 43%, <1%."""
    pct = share * 100
    if 0 < pct < 1:
        return "<1%"
    return f"{round(pct)}%"


def outcome_text(a: dict) -> str:
    """One preemption outcome of `alternatives`: its node, victims, share."""
    n = len(a.get("victims") or ())
    extra = f", {plural(a['pdbViolations'], 'PDB violation')}" if a.get("pdbViolations") else ""
    return f"{a['nominatedNode']} ({plural(n, 'victim')}{extra}, {share_text(a.get('share', 0))})"


def preemption_search_text(pre: dict, limit: int | None, sym: Symbols) -> str | None:
    """The `search` of a preemption in one line when its outcome could
    differ: why (kube-scheduler examines some nodes only, from a random
    offset; or equal candidates), the other possible outcomes with their
    shares, and this one's. None when it could not differ."""
    search = pre.get("search") or {}
    if not search.get("couldDiffer"):
        return None
    sampling = pre.get("sampling") or {}
    potential, wanted = search["potentialNodes"], search["candidatesWanted"]
    examined = sampling.get("evaluatedNodes", potential)
    if search["nodesWithVictims"] <= wanted:
        head = (f"preemption: {search['outcomes']} candidates tie on every criterion and kube-scheduler "
                "nominates any of them")
    elif examined < potential:
        head = f"preemption examined {examined} of {potential} potential nodes from a random offset"
    else:
        head = (f"preemption examined all {potential} potential nodes but keeps the first {wanted} candidates it "
                "finds (all violate a PodDisruptionBudget)")
    others = search["outcomes"] - 1
    if search.get("alternativesOmitted"):
        return head + f"; other outcomes are possible (not computed: {search['alternativesOmitted']})"
    alts = pre.get("alternatives") or []
    rest = [a for a in alts if not a.get("chosen")]
    chosen = next((a for a in alts if a.get("chosen")), None)
    names = [outcome_text(a) for a in rest]
    shown = names if limit is None else names[:limit]
    text = f"{head}; {plural(others, 'other outcome')} {'is' if others == 1 else 'are'} possible: " + ", ".join(shown)
    if others > len(shown):
        text += f", {sym.ellipsis} (+{others - len(shown)})"
    if chosen is not None:
        text += f"; this one {share_text(chosen.get('share', 0))}"
    return text + f" {sym.dot} --node/-o json for all"


def node_preemption_text(pod: dict, node: dict) -> str:
    """What preemption makes of one candidate node (its record's
    `preemption`): nominated, a possible nomination, or never nominated."""
    rec = node["preemption"]
    pre = pod.get("preemption") or {}
    search = pre.get("search") or {}
    evicting = f"evicting {plural(rec['numVictims'], 'pod')}"
    if rec.get("pdbViolations"):
        evicting += f" ({plural(rec['pdbViolations'], 'PodDisruptionBudget violation')})"
    if pre.get("nominatedNode") == node["name"]:
        text = f"preemption nominates it, {evicting}"
        if search.get("couldDiffer"):
            others = search["outcomes"] - 1
            text += (f": {share_text(rec['share'])} of kube-scheduler's examination orders do "
                     f"({plural(others, 'other outcome')} possible)")
        return text
    if rec.get("couldBeNominated"):
        return (f"preemption could nominate it instead, {evicting}, in {share_text(rec['share'])} of "
                "kube-scheduler's examination orders")
    return (f"a preemption candidate, {evicting}, but never nominated: whatever the order, the candidates "
            "kube-scheduler finds with it hold a better one")
