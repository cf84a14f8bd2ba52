"""The `drain` object of a what-if document, and its answer lines: one line
a person can act on per drained node, then the totals."""

from __future__ import annotations


def _moves(nd) -> list[tuple[str, object]]:
    """(evicted pod, its replacement's report) of the pods that moved."""
    return [(key, r) for key, r in nd.pods.items() if r.action in ("Evicted", "Deleted") and not r.lost]


def _arrow(key: str, r) -> str:
    if r.replacement is None:
        return f"{key} → (its new pod was created before the drain)"
    where = r.replacement.get("placedNode") or "nowhere (Pending)"
    return f"{key} → {where}"


def _pending(r) -> bool:
    """A new pod made in the run that found no node."""
    return r.replacement is not None and not r.replacement.get("placedNode")


def node_answer(nd, budgets, force: bool) -> str:
    """The line for one node (see docs/whatif.md for every form)."""
    name = nd.node
    if nd.outcome == "Refused":
        refused = [r for r in nd.pods.values() if r.action == "Refused"]
        first = refused[0] if refused else None
        what = {"Unmanaged": "declares no controller", "LocalStorage": "has local storage (emptyDir)",
                "DaemonSet": "belongs to a DaemonSet that does not exist"}.get(first.reason if first else "",
                                                                               "cannot be deleted")
        who = ", ".join(r.key for r in refused if first is not None and r.reason == first.reason)
        errors = "; ".join(nd.errors)
        return f"{name} cannot be drained: {who} {what} ({errors}); nothing is evicted and {name} stays cordoned"
    if nd.outcome == "Blocked":
        blocked = [r for r in nd.pods.values() if r.action == "Blocked"]
        r = blocked[0]
        refusal = r.refusals[-1] if r.refusals else {}
        pdb = refusal.get("pdb")
        cause = refusal.get("cause") or refusal.get("message") or ""
        more = f" (and {len(blocked) - 1} more pod(s))" if len(blocked) > 1 else ""
        moved = _moves(nd)
        done = f"; {len(moved)} pod(s) evicted first: " + ", ".join(_arrow(k, m) for k, m in moved) if moved else ""
        return (f"{name} cannot be drained: evicting {r.key}{more} would violate PodDisruptionBudget {pdb} "
                f"({cause}); kubectl drain retries it every 5s and never finishes{done}")
    if nd.outcome == "Failed":
        key, line = nd.failed[0]
        r = nd.pods[key]
        refusal = r.refusals[-1] if r.refusals else {}
        extra = f" ({refusal['pdb']})" if refusal.get("pdb") else ""
        return f"{name} cannot be drained: evicting {key} fails: {refusal.get('message', line)}{extra}"
    moved = _moves(nd)
    lost = [(k, r) for k, r in nd.pods.items() if r.lost]
    pending = [(k, r) for k, r in moved if _pending(r)]
    head = f"{name} can be drained" + (" (--force)" if force and lost else "")
    if not moved and not lost:
        return f"{head}: no pod has to move (DaemonSet and mirror pods stay)"
    parts = []
    if moved:
        one_at_a_time = nd.rounds > 1 and len({r.round for _, r in moved}) > 1
        how = ""
        if one_at_a_time:
            pdbs = sorted({(r.budget or {}).get("pdb") for _, r in moved if r.budget})
            allowed = {(r.budget or {}).get("pdb"): (budgets.read.get((r.budget or {}).get("pdb")) or {}).get(
                "disruptionsAllowed") for _, r in moved if r.budget}
            if pdbs:
                how = " one at a time (" + ", ".join(
                    f"PodDisruptionBudget {p} allows {allowed.get(p, 0)} disruption{'' if allowed.get(p) == 1 else 's'}"
                    for p in pdbs) + ")"
        parts.append(f"{len(moved)} pod{'' if len(moved) == 1 else 's'} move{'s' if len(moved) == 1 else ''}{how}"
                     + (": " if how else ", ") + ", ".join(_arrow(k, r) for k, r in moved))
    if lost:
        parts.append(f"{len(lost)} pod{'' if len(lost) == 1 else 's'} {'is' if len(lost) == 1 else 'are'} lost: "
                     + ", ".join(f"{k} ({r.note})" for k, r in lost))
    text = f"{head}: " + "; ".join(parts)
    if pending:
        text = (f"{name} can be drained, but {len(pending)} pod{'' if len(pending) == 1 else 's'} "
                f"{'does' if len(pending) == 1 else 'do'} not come back: "
                + ", ".join(f"{k} is recreated as {(r.replacement or {}).get('pod')} and stays Pending" for k, r in pending)
                + "; " + "; ".join(parts))
    return text


def drain_document(play) -> dict:
    """The `drain` object (result-schema: drain)."""
    nodes = []
    moved = lost = pending = 0
    for nd in play.drains:
        answer = node_answer(nd, play.budgets, play.options.force)
        for r in nd.pods.values():
            if r.action in ("Evicted", "Deleted"):
                if r.lost:
                    lost += 1
                elif _pending(r):
                    pending += 1
                else:
                    moved += 1
        entry = {"node": nd.node, "outcome": nd.outcome, "answer": answer, "cordon": nd.cordon, "rounds": nd.rounds,
                 "raceOrder": nd.race, "pods": [r.document() for r in nd.pods.values()], "kubectl": list(nd.kubectl)}
        if nd.errors:
            entry["errors"] = list(nd.errors)
        if nd.outcome == "Blocked":
            entry["repeats"] = "every 5s"
        nodes.append(entry)
    drained = sum(1 for nd in play.drains if nd.outcome == "Drained")
    complete = drained == len(play.drains) and pending == 0
    answers = [n["answer"] for n in nodes]
    if len(nodes) > 1:
        answers.append(f"drained {drained} of {len(nodes)} nodes; {moved} pod(s) moved, {lost} lost, "
                       f"{pending} pending")
    return {"outcome": "Drained" if complete else "NotDrained", "answer": "\n".join(answers), "nodes": nodes,
            "budgets": play.budgets.report() if play.budgets is not None else [],
            "moved": moved, "lost": lost, "replacementsPending": pending}


def _names_by_template(nodes: list[dict]) -> list[str]:
    counts: dict[str, list[str]] = {}
    for n in nodes:
        counts.setdefault(n["template"], []).append(n["name"])
    return [f"{len(v)} of {t} ({', '.join(v)})" for t, v in counts.items()]


def _why_text(why: dict) -> str:
    reasons = "; ".join(why.get("reasons") or ()) or why.get("code") or ""
    return f"{why.get('plugin')}: {reasons}"


def add_nodes_document(found, added: list[dict], entries, templates, *, fixed: bool = False) -> dict:
    """The `addNodes` object: the answer, the nodes added with the pods each
    took, per template how many and why not, the pods no template fits,
    and how the search went. `added`: Play.added of the final run;
    `entries`: its pods (documents) in order."""
    placed_on: dict[str, list[str]] = {}
    for e in entries:
        if e.placed:
            placed_on.setdefault(e.placed, []).append(e.pi.key)
    nodes = [dict(n, pods=placed_on.get(n["name"], [])) for n in added]
    per_template: dict[str, int] = {}
    for n in nodes:
        per_template[n["template"]] = per_template.get(n["template"], 0) + 1
    total = len(entries)
    placed = sum(1 for e in entries if e.placed)
    classes = found.classes if found is not None else []
    rows = []
    for t in templates:
        row = {"template": t.name, "used": per_template.get(t.name, 0)}
        fits = [e.pi.key for c in classes if t.name in c["fits"] for e in c["pods"]]
        if fits:
            row["fits"] = fits
        why = [dict(c["why"][t.name], pods=[e.pi.key for e in c["pods"]]) for c in classes if t.name in c["why"]]
        if why:
            row["why"] = why
        rows.append(row)
    none_fit = [{"pods": [e.pi.key for e in c["pods"]],
                 "why": [dict(w, template=name) for name, w in c["why"].items()]}
                for c in classes if not c["fits"]]
    if fixed:
        head = "with " + (", ".join(_names_by_template(nodes)) if nodes else "no node added")
    elif found is not None and not found.targets:
        head = "no node needs adding"
    elif nodes:
        n = len(nodes)
        at_most = "" if found.proven else "at most "
        if len(per_template) == 1:
            t = next(iter(per_template))
            head = f"add {at_most}{n} node{'' if n == 1 else 's'} of {t} ({', '.join(x['name'] for x in nodes)})"
        else:
            head = f"add {at_most}{n} nodes: " + ", ".join(_names_by_template(nodes))
    elif found is not None and not found.found:
        head = "no nodes from these templates place every pod"
    else:
        head = "no node needs adding"
    if total == 0:
        tail = "no pod waits for a node"
    elif placed == total:
        tail = "the pod is placed" if total == 1 else f"all {total} pods are placed"
    else:
        tail = f"{placed} of {total} pods are placed"
    answer = f"{head}: {tail}"
    unused = [r for r in rows if not r["used"] and r.get("why")]
    if unused and nodes:
        answer += "; " + "; ".join(f"not {r['template']}: {_why_text(r['why'][0])} ({r['why'][0]['pods'][0]})"
                                   for r in unused)
    for entry in none_fit:
        answer += (f"; no template fits {entry['pods'][0]}"
                   + (f" and {len(entry['pods']) - 1} more" if len(entry["pods"]) > 1 else "") + " ("
                   + "; ".join(f"{w['template']}: {_why_text(w)}" for w in entry["why"]) + ")")
    doc = {"answer": answer, "nodes": nodes, "perTemplate": per_template, "templates": rows,
           "noTemplateFits": none_fit}
    if found is not None and not fixed:
        doc["search"] = {"pending": len(found.targets), "classes": len(found.classes), "lowerBound": found.lower,
                         "greedy": found.greedy, "runs": found.runs, "cycles": found.cycles, "proven": found.proven}
        if found.reason:
            doc["search"]["why"] = found.reason
    return doc
