"""--report FILE.html: one self-contained page (inline CSS and JS, no network
at view time, enforced by its Content-Security-Policy) built from the
SchedulingResult document alone.

What reads well is written as HTML (verdicts, FailedScheduling messages,
score bars, utilization bars), so the page says the essentials without
JavaScript. What would be too big for the DOM, the per-node rows of the
filter heat map on clusters of thousands of nodes, travels as compact JSON
and is drawn by the page's script when a group is expanded.
"""

from __future__ import annotations

import json
from html import escape

from . import units
from .ci import outcome, pod_fails, scheduler_text
from .html_assets import SCRIPT, STYLE
from .report_filters import left_out_by_pre_filter, reported_failure
from .simulate import headline

# A filter verdict as one character in the page's data (and as a CSS class).
CODE_CHARS = {"Success": "S", "Skip": "-", "Unschedulable": "U", "UnschedulableAndUnresolvable": "X",
              "Error": "E"}
FAILING = {"U", "X", "E"}
SCORE_BARS = 10  # nodes shown with score breakdown bars
OPEN_POD_SECTIONS = 5  # with more pods, only failing pods' sections start open
# Node rows carried for the heat maps, over all pods (about 30 bytes each):
# past this, later pods' maps keep their group rows but not their nodes.
NODE_ROWS_BUDGET = 300_000
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac", "#1f77b4", "#8c564b", "#17becf", "#bcbd22")


def e(value) -> str:
    return escape(str(value), quote=True)


def _json_for_script(value) -> str:
    # Inside <script>, "</script>" or "<!--" in a pod name must not end it.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).replace("<", "\\u003c")


def verdict(pod: dict) -> tuple[str, str]:
    """(css class, text) of a pod's verdict, as the human output words it."""
    if not pod_fails(pod):
        return "ok", "✓ " + outcome(pod)
    return "fail", {"Gated": "‖ Gated", "Error": "! Error"}.get(pod["status"], "✗ " + pod["status"])


# -- the filter heat map ------------------------------------------------------------
def filter_plugins(pod: dict) -> tuple[list[str], list[str]]:
    """(plugins shown as columns, plugins PreFilter skipped on every node)."""
    order: dict[str, None] = {}
    checked: set[str] = set()
    for node in pod.get("nodes") or ():
        for f in node.get("filters") or ():
            order.setdefault(f["plugin"], None)
            if f["code"] != "Skip":
                checked.add(f["plugin"])
    return [p for p in order if p in checked], [p for p in order if p not in checked]


def _first_reasons(node: dict) -> tuple[str, ...]:
    """The reasons of the failure reported for the node (the human report's
    and the FailedScheduling message's): its code when it gives none."""
    _, reasons, code = reported_failure(node)
    return tuple(reasons) or (code,)


def heat_groups(pod: dict, plugins: list[str]) -> list[dict]:
    """Nodes grouped by the failure kube-scheduler reports (plugin and
    reasons), feasible nodes first, then the largest groups. A group's
    `reported` is the Filter plugin whose failure is the one reported:
    None for nodes the PreFilterResult left out (no Filter plugin decided)."""
    column = {p: i for i, p in enumerate(plugins)}
    groups: dict[tuple, dict] = {}
    for node in pod.get("nodes") or ():
        first = node.get("firstFailure")
        by_pre_filter = left_out_by_pre_filter(pod, node)
        key = (first or "", _first_reasons(node) if first else (), by_pre_filter)
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"first": first, "reasons": list(key[1]), "nodes": [],
                               "reported": None if by_pre_filter else first, "failing": [0] * len(plugins)}
        codes = ["-"] * len(plugins)
        reasons = {}
        for f in node.get("filters") or ():
            i = column.get(f["plugin"])
            if i is None:
                continue
            codes[i] = CODE_CHARS.get(f["code"], "E")
            if codes[i] in FAILING:
                g["failing"][i] += 1
                reasons[str(i)] = "; ".join(f.get("reasons") or ()) or f["code"]
        g["nodes"].append([node["name"], "".join(codes), reasons])
    return sorted(groups.values(), key=lambda g: (g["first"] is not None, -len(g["nodes"]), g["first"] or "",
                                                  g["reasons"]))


def _heat_map(index: int, pod: dict, keep_nodes: bool = True) -> tuple[str, dict | None]:
    plugins, skipped = filter_plugins(pod)
    nodes = pod.get("nodes") or []
    if not nodes:
        return "", None
    groups = heat_groups(pod, plugins)
    column_of = {p: i for i, p in enumerate(plugins)}
    head = "".join(f'<th scope="col" class="rot"><span>{e(p)}</span></th>' for p in plugins)
    rows = []
    for gi, g in enumerate(groups):
        n = len(g["nodes"])
        if g["first"] is None:
            label = f"{n} feasible node{'' if n == 1 else 's'}"
        else:
            label = f"{n} node{'' if n == 1 else 's'} · {g['first']} · {'; '.join(g['reasons'])}"
        cells = []
        for i, plugin in enumerate(plugins):
            count = g["failing"][i]
            first = g["reported"] is not None and column_of.get(g["reported"]) == i
            share = count / n if n else 0
            cls = "first" if first else ("also" if count else "pass")
            style = f' style="--share:{share:.3f}"' if count else ""
            text = str(count) if count else "✓"
            title = f"{plugin}: fails on {count} of {n} node(s)" + (" (the failure reported)" if first else "")
            cells.append(f'<td class="{cls}"{style} title="{e(title)}">{text}</td>')
        rows.append(f'<tr class="group" tabindex="0" role="button" aria-expanded="false" data-pod="{index}" '
                    f'data-group="{gi}"><th scope="row"><span class="twisty">▸</span> {e(label)}</th>'
                    f'{"".join(cells)}</tr>')
    note = ""
    if any(g["first"] is not None and g["reported"] is None for g in groups):
        note += ('<p class="muted">nodes PreFilter left out (not in its PreFilterResult) are reported as such: '
                 'kube-scheduler runs no Filter plugin on them; their cells are kschedx\'s verdicts, none '
                 'reached</p>')
    if skipped:
        note += f'<p class="muted">skipped on every node (PreFilter returned Skip): {e(", ".join(skipped))}</p>'
    html = (f'<h3>Filters: {len(nodes)} node{"" if len(nodes) == 1 else "s"} by the failure kube-scheduler '
            f'reports</h3><p class="muted">Click a group to list its nodes. Cells: nodes of the group failing '
            f'the plugin; <span class="key first">reported</span> is the failure kube-scheduler reports, '
            f'<span class="key also">also</span> failing but not reached.</p>'
            f'<div class="scroll"><table class="heat"><thead><tr><th scope="col">nodes</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>{note}')
    if keep_nodes:
        data = {"plugins": plugins, "groups": [{"reported": g["reported"], "nodes": g["nodes"]} for g in groups]}
    else:
        data = {"plugins": plugins, "groups": [{"reported": g["reported"], "nodes": [], "omitted": len(g["nodes"])}
                                               for g in groups]}
    return html, data


# -- score bars ---------------------------------------------------------------------
def _score_bars(pod: dict) -> str:
    scored = [n for n in pod.get("nodes") or () if n.get("scores") is not None]
    if not scored:
        return ""
    scored.sort(key=lambda n: (-(n.get("totalScore") or 0), n["name"]))
    top = scored[:SCORE_BARS]
    plugins: dict[str, None] = {}
    for n in top:
        for s in n["scores"]:
            if s.get("weighted"):
                plugins.setdefault(s["plugin"], None)
    color = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(plugins)}
    peak = max((n.get("totalScore") or 0) for n in top) or 1
    rows = []
    for n in top:
        segments = []
        for s in n["scores"]:
            if not s.get("weighted"):
                continue
            width = 100 * s["weighted"] / peak
            title = (f"{s['plugin']}: raw {s['raw']} → normalized {s['normalized']} × weight {s['weight']} "
                     f"= {s['weighted']}")
            segments.append(f'<span class="seg" style="width:{width:.2f}%;background:{color[s["plugin"]]}" '
                            f'title="{e(title)}"></span>')
        mark = " ★" if n["name"] == pod.get("selectedNode") else (" =" if n["name"] in (pod.get("topNodes") or ())
                                                                 else "")
        rows.append(f'<tr><th scope="row">{e(n["name"])}{mark}</th><td class="num">{n.get("totalScore")}</td>'
                    f'<td class="bar"><div class="stack">{"".join(segments)}</div></td></tr>')
    legend = "".join(f'<span class="legend"><span class="swatch" style="background:{c}"></span>{e(p)}</span>'
                     for p, c in color.items())
    more = f" (top {len(top)} of {len(scored)})" if len(scored) > len(top) else ""
    why = _why_winner(pod, scored)
    return (f'<h3>Scores{more}</h3><p class="muted">★ selected · = tied for the top score · bar segments: '
            f'weighted score per plugin (hover for raw → normalized × weight)</p>'
            f'<table class="scores"><thead><tr><th scope="col">node</th><th scope="col">total</th>'
            f'<th scope="col">breakdown</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'<div class="legends">{legend}</div>{why}')


def _why_winner(pod: dict, scored: list[dict]) -> str:
    """What the selected node gained over the best other node, plugin by plugin."""
    winner = next((n for n in scored if n["name"] == pod.get("selectedNode")), None)
    runner = next((n for n in scored if n is not winner), None)
    if winner is None or runner is None:
        return ""
    lead = (winner.get("totalScore") or 0) - (runner.get("totalScore") or 0)
    if lead == 0:
        ties = ", ".join(pod.get("topNodes") or ())
        return f'<p>tied for the top score: {e(ties)}; one was chosen by the tie-break</p>'
    theirs = {s["plugin"]: s["weighted"] for s in runner["scores"]}
    gains = [(s["plugin"], s["weighted"] - theirs.get(s["plugin"], 0)) for s in winner["scores"]]
    gains = ", ".join(f"{p} {d:+d}" for p, d in sorted(gains, key=lambda g: -abs(g[1])) if d)
    return (f'<p>why {e(winner["name"])}: it leads {e(runner["name"])} by {lead} '
            f'({e(gains)})</p>')


# -- --nodes: part of the nodes shown ------------------------------------------------
def _filter_summary(pod: dict, node_detail: str | None) -> str:
    """When --nodes left nodes out: how many are shown, and every node's
    Filter failures counted (filterSummary)."""
    counts = pod.get("nodeCounts")
    shown = len(pod.get("nodes") or ())
    if counts is None or shown >= counts.get("nodes", 0):
        return ""
    choice = f" (--nodes {e(node_detail)})" if node_detail else ""
    html = (f'<p class="muted">{counts["nodes"]} nodes · {counts.get("feasible", 0)} feasible · '
            f'{shown} shown below{choice}</p>')
    summary = pod.get("filterSummary") or {}
    if summary:
        rows = "".join(f'<tr><td class="num">{n}</td><th scope="row">{e(plugin)}</th><td>{e(reason)}</td></tr>'
                       for plugin, reasons in summary.items() for reason, n in reasons.items())
        # With a PreFilterResult, only its candidates ran Filter plugins.
        whose = "every node" if pod.get("preFilterResult") is None else "the candidate nodes PreFilter left"
        html += (f'<h3>Filter failures on {whose}</h3><table class="summary"><thead><tr><th scope="col">nodes'
                 '</th><th scope="col">plugin</th><th scope="col">reason</th></tr></thead>'
                 f'<tbody>{rows}</tbody></table>')
    return html


# -- one pod ------------------------------------------------------------------------
def _pre_filter_result(pod: dict) -> str:
    """The human report's line on the candidates a PreFilterResult left:
    the heat map groups the other nodes under it."""
    from .blocks import GROUP_NAMES, UNICODE
    from .texts import pre_filter_result_text

    text = pre_filter_result_text(pod, GROUP_NAMES * 2, UNICODE)
    return "" if text is None else f'<p class="prefilter">{e(text)}</p>'


def _pod_section(index: int, pod: dict, open_: bool, keep_nodes: bool = True,
                 node_detail: str | None = None) -> tuple[str, dict | None]:
    cls, text = verdict(pod)
    requests = ", ".join(f"{k} {v}" for k, v in (pod.get("requests") or {}).items()) or "nothing"
    parts = [f'<p class="meta">priority {e(pod.get("priority", 0))} · requests {e(requests)}']
    w = pod.get("workload")
    if w is not None:
        # A replica placed after the ones before it (explain judges its workload as a whole).
        parts[0] = (f'<p class="meta">replica {e(w["replica"])} of {e(w["replicas"])} of {e(w["kind"])} '
                    f'{e(w["namespace"])}/{e(w["name"])}' + (f' · placed on {e(pod["placedNode"])}'
                                                           if pod.get("placedNode") else " · not placed")
                    + f' · priority {e(pod.get("priority", 0))} · requests {e(requests)}')
    source = pod.get("source")
    if source:
        parts[0] += f' · from {e(source["file"])}' + (f':{source["line"]}' if source.get("line") else "")
    parts[0] += "</p>"
    if pod.get("message"):
        parts.append(f'<pre class="message">{e(pod["message"])}</pre>')
    parts.append(_pre_filter_result(pod))
    pre = pod.get("preemption") or {}
    if pre.get("nominatedNode"):
        victims = ", ".join(f'{v["pod"]} (priority {v["priority"]})' for v in pre.get("victims") or ()) or "none"
        parts.append(f'<p>preemption: nominated <b>{e(pre["nominatedNode"])}</b>, evicting {e(victims)}; '
                     f'{e(pre.get("pdbViolations", 0))} PodDisruptionBudget violation(s)</p>')
        parts.append(_preemption_alternatives(pre))
    if "fixes" in pod:
        parts.append(_fixes(pod))
    if pod.get("templates"):
        parts.append(_templates(pod))
    if pod.get("replacementFor"):
        r = pod["replacementFor"]
        parts.append(f'<p class="muted">replaces {e(r["pod"])}, evicted from {e(r["node"])} in round '
                     f'{e(r.get("round"))}; made by {e((r.get("controller") or {}).get("kind"))} '
                     f'{e((r.get("controller") or {}).get("name"))}</p>')
    for note in pod.get("notes") or ():
        parts.append(f'<p class="muted">{e(note)}</p>')
    if pod.get("sampling") and pod["status"] == "Scheduled":
        from .blocks import UNICODE
        from .texts import sampling_text

        parts.append(f'<p class="muted">{e(sampling_text(pod, 8, UNICODE))}</p>')
    summary = _filter_summary(pod, node_detail)
    parts.append(summary)
    heat, data = _heat_map(index, pod, keep_nodes)
    parts.append(heat)
    parts.append(_score_bars(pod))
    if not pod.get("nodes") and pod["status"] != "Gated" and not summary:
        parts.append('<p class="muted">per-node verdicts not kept (--detail placements)</p>')
    html = (f'<details class="pod {cls}" id="pod-{index}"{" open" if open_ else ""}>'
            f'<summary><span class="name">{e(pod["pod"])}</span> <span class="verdict {cls}">{e(text)}</span>'
            f'</summary>{"".join(parts)}</details>')
    return html, data


def _copyable(cls: str, text: str) -> str:
    return (f'<div class="copyable"><pre class="{cls}">{e(text)}</pre>'
            '<button type="button" class="copy" title="copy">copy</button></div>')


def _fixes(pod: dict) -> str:
    """explain --fix: each verified fix, its changes as JSON Patches and the
    kubectl commands, each copyable."""
    from . import fixes as words

    fixes = pod.get("fixes") or []
    if not fixes:
        head = f'<h3>Fixes</h3><p class="warn">none found: no change kschedx tried makes the pod schedulable ' \
               f'({e(words.search_words(pod))})</p>'
    else:
        head = (f'<h3>Fixes</h3><p class="muted">{e(words.checked_words(pod))}; '
                f'least widening first; {e(words.search_words(pod))}</p>')
    items = []
    for fix in fixes:
        body = [f'<span class="kind {e(fix["side"])}">{e(fix["kind"])}</span> {e(fix["description"])}']
        if "widens" in fix:
            body.append(f'<p class="{"warn" if fix["widens"] else "muted"}">{e(words.widens_text(fix))}</p>')
        for change in fix.get("changes") or ():
            body.append(f'<p class="muted">{e(words.change_line(change))}</p>')
            if change["action"] != "delete":
                value = change["patch"][0]["value"] if change["action"] == "create" else change["patch"]
                body.append(_copyable("patch", json.dumps(value, indent=2)))
            command = words.kubectl_command(change)
            if command is not None:
                body.append(_copyable("command", command))
        owner = fix.get("owner")
        if owner:
            body.append(f'<p class="muted">{e(words.owner_line(owner))}</p>')
            if owner.get("patch"):
                body.append(_copyable("patch", json.dumps(owner["patch"], indent=2)))
        items.append(f'<li>{"".join(body)}</li>')
    tail = "".join(f'<p class="muted">{e(t)}</p>' for t in words.uncovered_lines(pod) + words.advice_lines(pod))
    return f'<section class="fixes">{head}{"<ol>" + "".join(items) + "</ol>" if items else ""}{tail}</section>'


def _templates(pod: dict) -> str:
    """explain --node-template: which pools could take the pod, each
    template's verdict on its new node."""
    t = pod["templates"]
    rows = []
    for r in t["results"]:
        if r.get("feasible"):
            verdict_html = f'<td class="ok">✓ could take it (→ {e(r.get("selectedNode") or r.get("nodeName"))})</td>'
        else:
            reasons = "; ".join(r.get("reasons") or ()) or r.get("code") or ""
            also = f' (also {e(", ".join(r["alsoFailing"]))})' if r.get("alsoFailing") else ""
            verdict_html = f'<td class="fail">✗ {e(r.get("plugin"))}: {e(reasons)}{also}</td>'
        ds = ", ".join(d["pod"] for d in r.get("daemonSetPods") or ())
        rows.append(f'<tr><th scope="row">{e(r["template"])}</th>{verdict_html}<td class="muted">{e(ds)}</td></tr>')
    could = ", ".join(t["couldTake"]) or "none"
    return (f'<section class="templates"><h3>Node templates</h3><p>could take it: <b>{e(could)}</b> '
            '<span class="muted">(one new node of each, the pod\'s cycle run again with it)</span></p>'
            '<table><thead><tr><th scope="col">template</th><th scope="col">its new node</th>'
            f'<th scope="col">DaemonSet pods it runs</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
            '</section>')


def _changes(doc: dict) -> str:
    """simulate --drain / --add-nodes: the answers first, then each drained
    node's pods (what happened, where their replacements went, linked to
    their sections), kubectl drain's own lines folded, and the templates."""
    from . import whatif

    index = {p["pod"]: i for i, p in enumerate(doc["pods"])}
    parts = ["<h2>Cluster changes</h2>"]
    parts += [f'<p class="answer"><b>{e(line)}</b></p>' for line in whatif.answers(doc)]
    for node in (doc.get("drain") or {}).get("nodes") or ():
        rows = []
        for p in node.get("pods") or ():
            rep = (p.get("replacement") or {}).get("pod")
            link = f' (<a href="#pod-{index[rep]}">{e(rep)}</a>)' if rep in index else ""
            rows.append(f'<tr><th scope="row">{e(p["pod"])}</th><td>{e(whatif.pod_action(p))}{link}</td></tr>')
        notes = "".join(f'<p class="muted">{e(n)}</p>' for n in whatif.drain_notes(node))
        parts.append(f'<h3>{e(whatif.drain_title(node))}</h3><table><thead><tr><th scope="col">pod</th>'
                     f'<th scope="col">what happened</th></tr></thead><tbody>{"".join(rows)}</tbody></table>{notes}'
                     f'<details><summary>kubectl drain would print</summary><pre>'
                     f'{e(chr(10).join(node.get("kubectl") or ()))}</pre></details>')
    add = doc.get("addNodes")
    if add:
        rows = "".join(f'<tr><th scope="row">{e(a)}</th><td>{e(b)}</td><td>{e(c)}</td></tr>'
                       for a, b, c in whatif.template_rows(add))
        parts.append('<h3>Node templates</h3><table><thead><tr><th scope="col">template</th>'
                     '<th scope="col">nodes added</th><th scope="col">why not</th></tr></thead>'
                     f'<tbody>{rows}</tbody></table><p class="muted">{e(whatif.search_line(add))}</p>')
    return f'<section id="changes">{"".join(parts)}</section>'


def _preemption_alternatives(pre: dict) -> str:
    """When preemption's outcome could differ: the human output's line, and
    every outcome listed with its share of examination orders."""
    from .blocks import UNICODE
    from .texts import preemption_search_text, share_text

    text = preemption_search_text(pre, 8, UNICODE)
    if not text:
        return ""
    html = f'<p class="muted">{e(text)}</p>'
    alts = pre.get("alternatives") or []
    if alts:
        rows = []
        for a in alts:
            victims = a.get("victims") or ()
            chosen = '<td class="ok">chosen by kschedx</td>' if a.get("chosen") else "<td></td>"
            rows.append(f'<tr><th scope="row">{e(a["nominatedNode"])}</th><td class="num">{len(victims)}</td>'
                        f'<td>{e(", ".join(v["pod"] for v in victims))}</td>'
                        f'<td class="num">{e(a.get("pdbViolations", 0))}</td>'
                        f'<td class="num">{e(share_text(a.get("share", 0)))}</td>{chosen}</tr>')
        html += ('<table class="alternatives"><caption>possible preemption outcomes, with the share of '
                 'examination orders that reach each</caption><thead><tr><th scope="col">nominated node</th>'
                 '<th scope="col">victims</th><th scope="col">pods</th><th scope="col">PDB violations</th>'
                 '<th scope="col">share</th><th scope="col"></th></tr></thead>'
                 f'<tbody>{"".join(rows)}</tbody></table>')
    return html


# -- simulate -----------------------------------------------------------------------
def _pct(used: int, total: int) -> float:
    """The exact share, for bar widths and sorting; the number printed is
    units.percent, as in the terminal chart."""
    return 100 * used / total if total > 0 else 0.0


def _usage_cell(resource: str, before: int, after: int, alloc: int) -> str:
    b, a = _pct(before, alloc), _pct(after, alloc)
    shown = units.amounts(resource, before, after, alloc)
    title = f"{resource}: {shown[0]} → {shown[1]} of {shown[2]}"
    return (f'<td class="usage" data-sort="{a:.4f}" title="{e(title)}">'
            f'<span class="ubar"><span class="before" style="width:{min(b, 100):.2f}%"></span></span>'
            f'<span class="ubar"><span class="after" style="width:{min(a, 100):.2f}%"></span></span>'
            f'<span class="pct">{units.percent(before, alloc)} → {units.percent(after, alloc)}</span></td>')


def _utilization(doc: dict, table_id: str = "util-table", section_id: str = "utilization") -> str:
    rows = []
    for u in doc.get("utilization") or ():
        before, after, alloc = u["before"], u["after"], u["allocatable"]
        changed = "1" if before != after else "0"
        rows.append(f'<tr data-changed="{changed}"><th scope="row">{e(u["node"])}</th>'
                    f'{_usage_cell("cpu", before["cpu"], after["cpu"], alloc["cpu"])}'
                    f'{_usage_cell("memory", before["memory"], after["memory"], alloc["memory"])}'
                    f'<td class="num" data-sort="{after["pods"]}">{before["pods"]} → {after["pods"]}</td></tr>')
    if not rows:
        return ""
    return (f'<section id="{section_id}"><h2>Utilization: requested / allocatable, '
            'before → after</h2>'
            f'<div class="controls"><input type="search" class="filter" data-table="{table_id}" '
            'placeholder="filter nodes" aria-label="filter nodes"> <label><input type="checkbox" class="changed" '
            f'data-table="{table_id}"> changed nodes only</label></div>'
            f'<table class="sortable util" id="{table_id}"><thead><tr><th scope="col" data-type="text">node</th>'
            '<th scope="col" data-type="num">cpu (upper bar before, lower after)</th>'
            '<th scope="col" data-type="num">memory</th><th scope="col" data-type="num">pods</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></section>')


def _placements(doc: dict) -> str:
    rows = []
    for i, p in enumerate(doc["pods"], 1):
        cls, text = verdict(p)
        rows.append(f'<tr><td class="num" data-sort="{i}">{i}</td><th scope="row"><a href="#pod-{i - 1}">'
                    f'{e(p["pod"])}</a></th><td class="num" data-sort="{p.get("priority", 0)}">'
                    f'{e(p.get("priority", 0))}</td><td>{e(p.get("placedNode") or "-")}</td>'
                    f'<td class="{cls}">{e(text)}</td><td class="msg">{e(p.get("message") or "")}</td></tr>')
    line = headline(doc)
    return (f'<section id="placements"><h2>Placements</h2><p>{e(line)}</p>'
            '<div class="controls"><input type="search" class="filter" data-table="placement-table" '
            'placeholder="filter pods, nodes, messages" aria-label="filter placements"></div>'
            '<table class="sortable" id="placement-table"><thead><tr><th scope="col" data-type="num">#</th>'
            '<th scope="col" data-type="text">pod</th><th scope="col" data-type="num">priority</th>'
            '<th scope="col" data-type="text">node</th><th scope="col" data-type="text">outcome</th>'
            '<th scope="col" data-type="text">why not placed</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></section>')


def _capacity(t: dict, i: int) -> str:
    """kschedx capacity: one pod template's count, limit and utilization (its
    first copy that does not fit is in the Pods section, with its heat map)."""
    limit = t.get("limitedBy")
    per_node = ", ".join(f"{n} on {node}" for node, n in (t.get("perNode") or {}).items()) or "none"
    parts = [f'<p class="summary"><b>{e(t["count"])}</b> cop{"y fits" if t["count"] == 1 else "ies fit"} · '
             f'stopped: {e(t["stop"])}</p><p class="meta">per node: {e(per_node)}</p>']
    if t.get("drain"):
        parts.insert(0, "".join(f'<p class="answer"><b>{e(line)}</b></p>'
                                for line in t["drain"]["answer"].splitlines()))
    if limit:
        what = limit.get("resource") or limit["reason"]
        parts.append(f'<p>limited by: <b>{e(limit["plugin"])}</b>, {e(what)}, on {e(limit["nodes"])} of '
                     f'{e(limit["totalNodes"])} nodes</p>')
    if t.get("message"):
        parts.append(f'<pre class="message">{e(t["message"])}</pre>')
    parts.append(_utilization({"utilization": t.get("utilization")}, f"util-table-{i}", f"utilization-{i}"))
    workload = f" ({t['workload']})" if t.get("workload") else ""
    return f'<section id="capacity-{i}"><h2>Capacity: {e(t["template"])}{e(workload)}</h2>{"".join(parts)}</section>'


# -- the page -------------------------------------------------------------------------
def to_html(doc: dict) -> str:
    mode = doc.get("mode", "explain")
    pods = doc["pods"]
    counts: dict[str, int] = {}
    for p in pods:
        counts[p["status"]] = counts.get(p["status"], 0) + 1
    failing = sum(1 for p in pods if pod_fails(p))
    badges = "".join(f'<span class="badge {e(k.lower())}">{v} {e(k)}</span>' for k, v in counts.items())
    head = [f'<header><h1>kschedx {e(mode)}</h1><p class="meta">profile {e(doc.get("profile"))} · '
            f'{e(scheduler_text(doc))} · tie-break '
            f'{e(doc.get("tieBreak"))}</p><p class="summary">{len(pods)} pod(s), '
            f'{failing} cannot be scheduled {badges}</p></header>']
    notices = []
    if doc.get("notEvaluated"):
        notices.append(f'<li class="warn">not evaluated (result incomplete): {e(", ".join(doc["notEvaluated"]))}</li>')
    notices += [f"<li>{e(w)}</li>" for w in doc.get("warnings") or ()]
    notices += [f"<li>{e(n)}</li>" for n in doc.get("inputNotes") or ()]
    if notices:
        head.append(f'<ul class="notices">{"".join(notices)}</ul>')
    body = []
    if mode == "simulate":
        if doc.get("drain") or doc.get("addNodes"):
            body.append(_changes(doc))
        body.append(_placements(doc))
        body.append(_utilization(doc))
    elif mode == "capacity":
        body.extend(_capacity(t, i) for i, t in enumerate(doc.get("capacity") or ()))
    # Failing pods' node lists first, while the budget lasts.
    keep, budget = set(), NODE_ROWS_BUDGET
    for i in sorted(range(len(pods)), key=lambda i: (not pod_fails(pods[i]), i)):
        n = len(pods[i].get("nodes") or ())
        if n <= budget:
            keep.add(i)
            budget -= n
    sections, data = [], []
    for i, p in enumerate(pods):
        html, pod_data = _pod_section(i, p, open_=len(pods) <= OPEN_POD_SECTIONS or pod_fails(p),
                                      keep_nodes=i in keep, node_detail=doc.get("nodeDetail"))
        sections.append(html)
        data.append(pod_data)
    body.append(f'<section id="pods"><h2>Pods</h2>{"".join(sections) or "<p>no pods</p>"}</section>')
    csp = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    return ("<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<link rel="icon" href="data:,"><title>kschedx {e(mode)}: {len(pods)} pod(s)</title>'
            f"<style>{STYLE}</style></head><body>{''.join(head)}<main>{''.join(body)}</main>"
            f'<script type="application/json" id="kschedx-data">{_json_for_script({"pods": data})}</script>'
            f"<script>{SCRIPT}</script></body></html>\n")
