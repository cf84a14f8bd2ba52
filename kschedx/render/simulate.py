"""Plain-text rendering of `simulate` results and of preemption outcomes.

Reads only the SchedulingResult document. Tables are plain (tabulate) so
they read the same in a terminal, a pipe or a CI log.
"""

from __future__ import annotations

import sys

from tabulate import tabulate

from ..result.document import scheduler_text
from ..result.sink import ResultSink


def _outcome(p: dict) -> tuple[str, str]:
    """(node or '-', how) for one pod of a simulate document."""
    placed = p.get("placedNode")
    pre = p.get("preemption") or {}
    if p.get("preemptedBy"):
        return placed or "-", f"placed, then preempted by {p['preemptedBy']}"
    if placed and p["status"] == "Scheduled":
        return placed, "scheduled"
    if placed:
        return placed, f"preempted {len(pre.get('victims') or ())} pod(s)"
    if pre.get("nominatedNode"):
        return "-", f"nominated to {pre['nominatedNode']}"
    return "-", p["status"].lower()


def placement_rows(doc: dict, wide: bool = False) -> tuple[list[list], dict[str, list[int]]]:
    """The placement table, and the messages of pods left pending: each
    distinct message once ({message: [reference, pods]}), referenced from the
    table, so a long FailedScheduling message is never cut (its end says what
    preemption found). -o wide keeps every message in its row instead."""
    rows = []
    reasons: dict[str, list[int]] = {}
    suffix = {}
    if doc.get("drain") or doc.get("addNodes"):
        # (a plain run does not load the what-if wording)
        from .whatif import node_suffix

        suffix = node_suffix(doc)
    for i, p in enumerate(doc["pods"], 1):
        node, how = _outcome(p)
        if node in suffix:
            node += suffix[node]
        if p.get("replacementFor"):
            how += f" (replaces {p['replacementFor']['pod']})"
        message = p.get("message") or ""
        note = ""
        if message and not p.get("placedNode"):
            if wide:
                note = message
            else:
                ref = reasons.setdefault(message, [len(reasons) + 1, 0])
                ref[1] += 1
                note = f"[{ref[0]}]"
        rows.append([i, p["pod"], p.get("priority", 0), node, how, note])
    return rows, reasons


def fix_lines(pods: list[dict]) -> list[str]:
    """simulate --fix: per workload (or pod of its own) left with a pod not
    placed, the fixes that place all its pods, each with its changes."""
    from . import fixes as words

    lines = ["fixes (what places every pod of each workload, and each pod of its own, the run leaves unplaced; "
             "each checked by simulating again with it; least widening first)"]
    for p in pods:
        w = p.get("workload")
        unit = f"{w['kind']} {w['namespace']}/{w['name']} (replica {w['replica']} of {w['replicas']}, {p['pod']}, " \
               "is the first not placed)" if w else p["pod"]
        lines.append("")
        lines.append(f"{unit}: {words.search_words(p)}")
        if not p["fixes"]:
            lines.append("  none found: no change kschedx tried places them all")
        for i, fix in enumerate(p["fixes"], 1):
            lines.append(f"  {i}. [{fix['kind']}] {fix['description']}")
            lines.append(f"     {words.widens_text(fix)}")
            for change in fix.get("changes") or ():
                lines.append(f"     {words.change_line(change)}")
                command = words.kubectl_command(change)
                if command is not None:
                    lines.append(f"       $ {command}")
        lines += [f"  {t}" for t in words.uncovered_lines(p) + words.advice_lines(p)]
    return lines


def victim_rows(pods: list[dict]) -> list[list]:
    rows = []
    for p in pods:
        pre = p.get("preemption") or {}
        for v in pre.get("victims") or ():
            rows.append([p["pod"], pre.get("nominatedNode"), v["pod"], v["priority"], pre.get("pdbViolations", 0)])
    return rows


def _write_chart(doc: dict, wide: bool, out, color: bool | None) -> None:
    """The utilization chart: Rich with colour on a terminal, plain text otherwise."""
    from . import chart

    if color is None:
        from .human import use_color

        color = use_color(out)
    if color:
        from rich.console import Console

        console = Console(file=out, highlight=False)
        table = chart.rich_table(doc, wide, console.width)
        if table is None:
            return
        out.write("\n")
        out.flush()
        console.print(table)
        return
    lines = chart.plain_lines(doc, wide)
    if lines:
        out.write("\n" + "\n".join(lines) + "\n")


class SimulateSink(ResultSink):
    """The simulate report. Its tables are aligned over every pod and it
    opens with the totals, so it is written once the run is over; each pod
    is kept without its per-node records (which the report never shows)."""

    def __init__(self, *, wide: bool = False, out=None):
        self.wide = wide
        self.out = out
        self.doc: dict = {}

    def begin(self, head: dict) -> None:
        self.doc = dict(head, pods=[])

    def pod(self, pod: dict) -> None:
        self.doc["pods"].append({k: v for k, v in pod.items() if k != "nodes"})

    def end(self, tail: dict) -> None:
        self.doc.update(tail)
        render_simulate(self.doc, wide=self.wide, out=self.out)


def headline(doc: dict) -> str:
    """The counts of a run in one sentence ("3 pod(s): 2 placed (...), 0
    unschedulable, 0 gated, 1 noprofile"), shared by the terminal and the HTML
    report. Errors and pods no profile serves are named only when there are
    some, so the counts always add up to the pods and explain the exit code."""
    s = doc.get("summary") or {}
    differ = s.get("preemptionsCouldDiffer")
    text = (f"{s.get('pods', len(doc['pods']))} pod(s): {s.get('placed', 0)} placed "
            f"({s.get('placedByPreemption', 0)} by preemption, {s.get('victims', 0)} victim(s)"
            + (f"; {differ} preemption(s) could have gone otherwise" if differ else "") + "), "
            f"{s.get('unschedulable', 0)} unschedulable, {s.get('gated', 0)} gated")
    # The words of the placement table's outcome column (its status, lower case).
    if s.get("errors"):
        text += f", {s['errors']} error(s)"
    if s.get("noProfile"):
        text += f", {s['noProfile']} noprofile"
    return text


def render_simulate(doc: dict, wide: bool = False, out=None, color: bool | None = None) -> None:
    out = out or sys.stdout
    w = out.write
    s = doc.get("summary") or {}
    if scheduler_text(doc):
        w(f"{scheduler_text(doc)}\n")
    if doc.get("drain") or doc.get("addNodes"):
        _write_changes(doc, wide, w)
    differ = s.get("preemptionsCouldDiffer")
    w(f"simulated {headline(doc)}\n")
    for note in doc.get("inputNotes") or ():
        w(f"  {note}\n")
    w("\n")
    rows, reasons = placement_rows(doc, wide)
    w(tabulate(rows, headers=["#", "pod", "priority", "node", "outcome", "why not placed"]) + "\n")
    if reasons:
        w("\nwhy not placed\n")
        for message, (ref, count) in reasons.items():
            w(f"[{ref}] {count} pod{'' if count == 1 else 's'}: {message}\n")
    fixed = [p for p in doc["pods"] if "fixes" in p]
    if fixed:
        w("\n" + "\n".join(fix_lines(fixed)) + "\n")
    victims = victim_rows([p for p in doc["pods"] if p.get("placedNode")])
    if victims:
        w("\npreemptions\n")
        w(tabulate(victims, headers=["preemptor", "node", "victim", "priority", "PDB violations"]) + "\n")
    if wide:
        # Every candidate node of each preemption and why it lost.
        for p in doc["pods"]:
            if (p.get("preemption") or {}).get("candidates"):
                w(f"\npreemption candidates for {p['pod']}\n" + "\n".join(candidate_lines(p["preemption"])) + "\n")
    if differ:
        w(f"\npreemption: {differ} of {s.get('preemptions', 0)} preemption(s) could have gone otherwise: kube-scheduler "
          "compares only some candidate nodes, in a random order, or equal candidates tie; the run follows kschedx's "
          "choice; -o json lists the other outcomes (preemption.alternatives)\n")
    sampled = [p for p in doc["pods"] if (p.get("sampling") or {}).get("couldBeMissed") and p.get("placedNode")]
    if sampled:
        # Node sampling: kube-scheduler looks at a share of the feasible nodes only.
        k = sampled[0]["sampling"]["numFeasibleNodesToFind"]
        w(f"\nsampling: {len(sampled)} placement(s) could differ under kube-scheduler's node sampling (it stops at "
          f"{k} feasible nodes): it may pick another well-scoring node; --sampling upstream follows its search\n")
    elif any((p.get("sampling") or {}).get("mode") == "upstream" for p in doc["pods"]):
        w("\nsampling (upstream): each pod was placed on the best of the feasible nodes kube-scheduler's search "
          "finds, from its rotating start index\n")
    _write_chart(doc, wide, out, color)
    if doc.get("notEvaluated"):
        w(f"\nnot evaluated (result incomplete): {', '.join(doc['notEvaluated'])}\n")


def preemption_text(p: dict, wide: bool = False) -> str:
    """What DefaultPreemption did for one pod: nominated node and victims
    table; with wide, every candidate node and why it lost."""
    pre = p.get("preemption")
    if not pre or (not pre.get("nominatedNode") and not wide):
        return ""
    lines = []
    if pre.get("nominatedNode"):
        lines.append(f"  preemption: nominated {pre['nominatedNode']}, evicting {len(pre.get('victims') or ())} pod(s), "
                     f"{pre.get('pdbViolations', 0)} PodDisruptionBudget violation(s)")
        rows = [[v["pod"], v["priority"], v.get("node", pre["nominatedNode"])] for v in pre.get("victims") or ()]
        table = tabulate(rows, headers=["victim", "priority", "node"])
        lines.extend("    " + line for line in table.splitlines())
    if wide:
        lines.extend(candidate_lines(pre))
    return "\n".join(lines) + ("\n" if lines else "")


def candidate_lines(pre: dict) -> list[str]:
    """Every candidate node of one preemption, the criterion on which each
    lost, and the dry runs that found no candidate."""
    lines = []
    cands = pre.get("candidates") or []
    if cands:
        rows = [[c["node"], "nominated" if c["selected"] else "lost: " + (c.get("lostOn") or "?"),
                 c["pdbViolations"], c["highestPriority"], c["prioritySum"],
                 f"{c['numVictims']}: " + ", ".join(c.get("victims") or ()), c.get("earliestStartTime") or "-"]
                for c in cands]
        table = tabulate(rows, headers=["candidate", "result", "PDB violations", "highest priority", "priority sum",
                                        "victims", "earliest start (top victims)"], disable_numparse=True,
                         colalign=("left", "left", "right", "right", "right", "left", "left"))
        lines.extend("    " + line for line in table.splitlines())
    sampling = pre.get("sampling")
    if sampling:
        lines.append(f"    dry runs: {sampling['evaluatedNodes']} of {sampling['potentialNodes']} node(s) "
                     f"where removing pods may help (offset {sampling['offset']}, "
                     f"looking for {sampling['numCandidates']} candidate(s))")
    for f in pre.get("dryRunFailures") or ():
        lines.append(f"    {f['node']}: {', '.join(f['reasons'])}")
    return lines


def _write_changes(doc: dict, wide: bool, w) -> None:
    """The what-if answers first, then what happened to each pod of each
    drained node (-o wide: kubectl drain's own lines) and each template."""
    from . import whatif

    for line in whatif.answers(doc):
        w(f"{line}\n")
    for node in (doc.get("drain") or {}).get("nodes") or ():
        w(f"\n{whatif.drain_title(node)}\n")
        w(tabulate(whatif.drain_rows(node), headers=["pod", "what happened"]) + "\n")
        for note in whatif.drain_notes(node):
            w(f"  {note}\n")
        if wide:
            w("kubectl drain would print:\n" + "".join(f"  {line}\n" for line in node.get("kubectl") or ()))
    budgets = (doc.get("drain") or {}).get("budgets") or []
    if budgets and wide:
        w("\n" + tabulate([[b["pdb"], _budget_text(b["read"]), _budget_text(b["final"]), b["evictions"],
                            b["refusals"]] for b in budgets],
                          headers=["PodDisruptionBudget", "as read", "at the end", "evictions", "refused"]) + "\n")
    add = doc.get("addNodes")
    if add:
        w("\n" + tabulate(whatif.template_rows(add), headers=["node template", "nodes added", "why not"]) + "\n")
        line = whatif.search_line(add)
        if line:
            w(f"{line}\n")
        for n in add.get("nodes") or ():
            for ds in n.get("daemonSetPods") or ():
                if ds.get("placedNode") != n["name"]:
                    w(f"  {ds['pod']} (DaemonSet) does not fit on {n['name']}: {ds.get('message')}\n")
    if not wide and (doc.get("drain") or {}).get("nodes"):
        w("(-o wide: kubectl drain's own output)\n")
    w("\n")


def _budget_text(status: dict) -> str:
    return (f"{status['currentHealthy']} healthy of {status['desiredHealthy']} needed, "
            f"{status['disruptionsAllowed']} allowed")
