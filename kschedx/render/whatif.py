"""What every output format says of a what-if run: the drain's and the added
nodes' answers (one line each, first), then, for people, what happened to
each pod of a drained node and why each template was or was not used.
Reads only the result document (its `drain` and `addNodes`)."""

from __future__ import annotations


def answers(doc: dict) -> list[str]:
    """The answer lines, drain first."""
    out = []
    drain = doc.get("drain")
    if drain:
        out.extend(drain["answer"].splitlines())
    add = doc.get("addNodes")
    if add:
        out.append(add["answer"])
    return out


def _refusals_text(refusals: list[dict]) -> str:
    if not refusals:
        return ""
    codes = sorted({str(r.get("code")) for r in refusals})
    pdbs = sorted({r["pdb"] for r in refusals if r.get("pdb")})
    times = "once" if len(refusals) == 1 else f"{len(refusals)} times"
    return f"refused {times} ({', '.join(codes)}{', PDB ' + ', '.join(pdbs) if pdbs else ''})"


def pod_action(p: dict) -> str:
    """What happened to one pod of a drained node, in words."""
    action = p["action"]
    reason = p.get("reason") or ""
    if action == "Stays":
        return f"stays ({reason})" if reason else "stays"
    if action == "Refused":
        return {"Unmanaged": "refused: declares no controller (--force deletes it)",
                "LocalStorage": "refused: has emptyDir volumes (--delete-emptydir-data evicts it)",
                "DaemonSet": "refused: its DaemonSet does not exist (--force deletes it)"}.get(reason,
                                                                                              f"refused ({reason})")
    if action == "NotEvicted":
        return "not evicted (the node was refused)"
    if action == "Blocked":
        return "blocked: " + (_refusals_text(p.get("refusals") or []) or "refused") + ", retried forever"
    if action == "Failed":
        last = (p.get("refusals") or [{}])[-1]
        return f"eviction failed ({last.get('code')}): {last.get('message', '')}"
    parts = []
    refused = _refusals_text(p.get("refusals") or [])
    if refused:
        parts.append(refused)
    verb = "deleted" if action == "Deleted" else "evicted"
    when = f" in round {p['round']}" if p.get("round") else ""
    budget = p.get("budget")
    how = f" (PDB {budget['pdb']}: {budget['disruptionsAllowed']} → {budget['disruptionsAllowed'] - 1})" \
        if budget else f" ({reason})" if reason and action == "Deleted" else ""
    parts.append(f"{verb}{when}{how}")
    text = ", ".join(parts)
    if p.get("lost"):
        return f"{text}: lost, {p.get('note') or 'nothing recreates it'}"
    rep = p.get("replacement")
    if rep:
        where = f"on {rep['placedNode']}" if rep.get("placedNode") else "not placed (Pending)"
        text += f" → {rep['pod']} {where}"
    return text


def drain_rows(node: dict) -> list[list[str]]:
    return [[p["pod"], pod_action(p)] for p in node.get("pods") or ()]


def drain_title(node: dict) -> str:
    rounds = node.get("rounds") or 0
    return (f"drain {node['node']}: {node['outcome']} ({node.get('cordon', 'cordoned')}"
            + (f", {rounds} round{'' if rounds == 1 else 's'}" if rounds else "") + ")")


def drain_notes(node: dict) -> list[str]:
    notes = []
    if node.get("raceOrder"):
        notes.append("several pods share a budget that cannot let them all go at once: which goes first is a race "
                     "between kubectl drain's evictions; kschedx evicts them in kubectl's list order")
    if node.get("outcome") == "Blocked":
        notes.append("kubectl drain retries a refused eviction every 5s and never finishes; with --timeout it gives "
                     "up on the node (kschedx goes on with the next node, as it would then)")
    return notes


def template_rows(add: dict) -> list[list[str]]:
    rows = []
    for t in add.get("templates") or ():
        names = [n["name"] for n in add.get("nodes") or () if n["template"] == t["template"]]
        used = f"{t['used']} ({', '.join(names)})" if names else str(t["used"])
        why = "; ".join(f"{w.get('plugin')}: {', '.join(w.get('reasons') or ()) or w.get('code')} ({_pods(w['pods'])})"
                        for w in t.get("why") or ())
        rows.append([t["template"], used, why])
    return rows


def _pods(pods: list[str]) -> str:
    return pods[0] + (f" and {len(pods) - 1} more" if len(pods) > 1 else "")


def search_line(add: dict) -> str:
    s = add.get("search")
    if not s:
        return ""
    head = f"search: {s['pending']} pending pod(s) in {s['classes']} class(es); "
    work = f"{s['runs']} whole run(s), {s['cycles']} cycle(s)"
    if not s["pending"]:
        return "search: the run leaves no pod Unschedulable, no node is tried"
    # A lower bound of 0 means no class fits any template: the search stopped
    # after the probe, with no bound, no greedy pass and no run to report.
    if not s["lowerBound"]:
        return f"{head}{s.get('why') or 'no template fits any of them'}; {work}"
    greedy = s.get("greedy")
    bounds = (f"at least {s['lowerBound']} node(s), "
              f"a greedy placement needs {greedy if greedy is not None else 'more than kschedx tries'}; ")
    if s.get("why"):
        verdict = s["why"]
    elif s.get("proven"):
        verdict = "proven the fewest"
    else:
        verdict = "not proven the fewest (the search's budget ended)"
    return f"{head}{bounds}{work}; {verdict}"


def node_suffix(doc: dict) -> dict[str, str]:
    """Node names the run added or drained, with what to write after them."""
    out = {}
    for n in (doc.get("addNodes") or {}).get("nodes") or ():
        out[n["name"]] = f" (new: {n['template']})"
    for n in (doc.get("drain") or {}).get("nodes") or ():
        out[n["node"]] = " (drained)" if n["outcome"] == "Drained" else " (cordoned)"
    return out


def templates_lines(pod: dict) -> list[str]:
    """explain --node-template: under an unschedulable pod, each template's
    verdict on its new node."""
    t = pod.get("templates")
    if not t:
        return []
    out = ["node templates (one new node each, the pod's cycle run again with it):"]
    width = max(len(r["template"]) for r in t["results"]) if t["results"] else 0
    for r in t["results"]:
        if r.get("feasible"):
            where = r.get("selectedNode") or r.get("nodeName")
            out.append(f"  {r['template']:<{width}}  ✓ could take it (→ {where})")
        else:
            reasons = "; ".join(r.get("reasons") or ()) or r.get("code") or ""
            also = f"  (also {', '.join(r['alsoFailing'])})" if r.get("alsoFailing") else ""
            out.append(f"  {r['template']:<{width}}  ✗ {r.get('plugin')}: {reasons}{also}")
    return out


def templates_summary(pod: dict) -> str:
    """One line for CI formats: which templates could take the pod."""
    t = pod.get("templates")
    if not t:
        return ""
    if t["couldTake"]:
        return f"node templates that could take it: {', '.join(t['couldTake'])}"
    return "no node template could take it"


def checks(doc: dict) -> list[dict]:
    """The what-if answers as CI checks, before the pods': one per drained
    node, one for the nodes added. Each: name, ok, kind (the failure's
    type), message (the answer) and lines (kubectl drain's, the search's)."""
    out = []
    for node in (doc.get("drain") or {}).get("nodes") or ():
        pending = [p for p in node.get("pods") or () if (p.get("replacement") or {}).get("pod")
                   and not (p.get("replacement") or {}).get("placedNode")]
        kind = node["outcome"] if node["outcome"] != "Drained" else "ReplacementsPending" if pending else ""
        out.append({"name": f"drain {node['node']}", "ok": not kind, "kind": kind or node["outcome"],
                    "message": node["answer"], "lines": list(node.get("kubectl") or ())})
    add = doc.get("addNodes")
    if add:
        # A pod no template fits, or no plan that places every pod.
        failing = bool(add.get("noTemplateFits")) or add["answer"].startswith("no nodes")
        lines = [search_line(add)] if add.get("search") else []
        out.append({"name": "add nodes", "ok": not failing, "kind": "NoTemplateFits" if failing else "Added",
                    "message": add["answer"], "lines": [x for x in lines if x]})
    return out


def checks_summary(doc: dict) -> str:
    """"; drained 1 of 2 nodes" for a CI format's closing line."""
    nodes = (doc.get("drain") or {}).get("nodes") or ()
    if not nodes:
        return ""
    drained = sum(1 for n in nodes if n["outcome"] == "Drained")
    return f"; drained {drained} of {len(nodes)} node{'' if len(nodes) == 1 else 's'}"
