"""kschedx capacity for people, and -o jsonl: read the CapacityResult alone.

Per pod template: how many copies fit, why the next one does not (its exact
FailedScheduling message, the limiting plugin and resource), and a chart,
per node (per node group above chart.MAX_NODES nodes, unless -o wide), of the
copies placed and of the chart resource requested before -> after. Bars
are told apart by glyph, so the report reads the same without colour; Rich
adds colour on a terminal, plain text everywhere else.
"""

from __future__ import annotations

import json
import sys

from . import units
from .chart import ADDED, BAR_WIDTH, FREE, FREED, KEPT, LEGEND_WORDS, MAX_NODES, PLAIN_GLYPHS, RICH_GLYPHS, Usage
from .blocks import Blank, FAIL, HEADER, Line, MUTED, PASS, Span, STRONG, Table, WARN
from ..result.document import scheduler_text

# What a bar segment means, as a layout style (the Rich renderer colours it).
_SEGMENT_STYLES = {KEPT: STRONG, ADDED: PASS, FREED: FAIL, FREE: MUTED}
COPY_GLYPHS = {False: "o", True: "■"}
COPY_BAR_WIDTH = 10  # narrower than the resource bar: the row fits 80 columns

STOP_WORDS = {
    "Unschedulable": "the next copy fits on no node",
    "NeedsPreemption": "the next copy fits only by preempting (--allow-preemption lets it)",
    "Max": "--max reached",
    "Gated": "the pod has scheduling gates: no copy is tried",
    "Error": "the next copy's scheduling cycle ended in an error",
    "NoProfile": "no profile of --config serves the pod's schedulerName",
}


def to_jsonl(doc: dict) -> str:
    """One line per pod template: a CapacityResult holding that template."""
    head = {k: v for k, v in doc.items() if k not in ("templates", "warnings", "exitCode")}
    return "".join(json.dumps(dict(head, templates=[t]), ensure_ascii=False) + "\n" for t in doc["templates"])


def report_document(doc: dict, failures: list[dict]) -> dict:
    """What the HTML report (render/html.py) draws for capacity: the
    SchedulingResult head, each template's count, limit and utilization
    (`capacity`), and as `pods` the first copy of each template that did not
    fit, with every node's verdicts (the heat map)."""
    head = {k: v for k, v in doc.items() if k not in ("kind", "templates", "exitCode", "options")}
    return dict(head, kind="SchedulingResult", mode="capacity", pods=list(failures), capacity=doc["templates"])


def render_human(doc: dict, *, out=None, wide: bool = False, color: bool | None = None) -> None:
    from .human import LossyWriter, render_rich, use_color
    from .blocks import ASCII, symbols_for

    out = out if out is not None else sys.stdout
    color = use_color(out) if color is None else color
    ascii_only = symbols_for(getattr(out, "encoding", None) or "utf-8") is ASCII
    if ascii_only:
        out = LossyWriter(out)
    blocks = report_blocks(doc, wide=wide, rich=color and not ascii_only)
    if color:
        render_rich(blocks, out)
    else:
        from .plain import render_blocks

        render_blocks(blocks, out)
    out.flush()


def report_blocks(doc: dict, *, wide: bool = False, rich: bool = False) -> list:
    blocks: list = []
    if scheduler_text(doc):
        blocks += [_line((scheduler_text(doc), MUTED)), Blank()]
    for i, t in enumerate(doc["templates"]):
        if i:
            blocks.append(Blank())
        drain = t.get("drain")
        if drain:
            # The count is of the cluster the drain leaves: say first what it did.
            style = None if drain.get("outcome") == "Drained" else WARN
            for line in drain["answer"].splitlines():
                blocks.append(_line((line, style) if style else line))
            if drain.get("outcome") != "Drained":
                blocks.append(_line(("the count is of the cluster as the drain left it", MUTED)))
            blocks.append(Blank())
        blocks.extend(template_blocks(t, doc, wide=wide, rich=rich))
    return blocks


def _line(*parts, indent: int = 0) -> Line:
    return Line([p if isinstance(p, Span) else Span(p) if isinstance(p, str) else Span(*p) for p in parts], indent)


def template_blocks(t: dict, doc: dict, *, wide: bool, rich: bool) -> list:
    minimum = (doc.get("options") or {}).get("min", 1)
    count = t["count"]
    enough = count >= minimum
    what = f" ({t['workload']})" if t.get("workload") else ""
    requests = ", ".join(f"{k} {v}" for k, v in (t.get("requests") or {}).items()) or "none"
    out = [
        _line((t["template"], STRONG), what, "  ", (f"{count} {'copy fits' if count == 1 else 'copies fit'}",
                                                     PASS if enough else FAIL),
              (f"  (--min {minimum})" if minimum != 1 or not enough else "", MUTED),
              (f"   priority {t.get('priority', 0)} · requests {requests}", MUTED)),
    ]
    per_node = t.get("perNode") or {}
    if per_node:
        shown = sorted(per_node.items(), key=lambda kv: (-kv[1], kv[0]))
        cut = shown if wide or len(shown) <= 8 else shown[:8]
        text = ", ".join(f"{n} on {node}" for node, n in cut)
        if len(cut) < len(shown):
            text += f", ... ({len(shown) - len(cut)} more nodes; -o wide: all)"
        out.append(_line(("per node: ", MUTED), text, indent=2))
    if t.get("pending"):
        p = t["pending"]
        out.append(_line(("placed first: ", MUTED), f"{p['placed']} of {p['pods']} pending pod(s) (--with-pending)",
                         indent=2))
    if t.get("placedByPreemption"):
        out.append(_line(("by preemption: ", MUTED), f"{t['placedByPreemption']} copies, evicting "
                         f"{len(t.get('victims') or ())} pod(s)", indent=2))
    out.append(_line(("stopped: ", MUTED), STOP_WORDS.get(t["stop"], t["stop"]), indent=2))
    if t.get("message"):
        out.append(_line(("copy ", MUTED), (str(count + 1), MUTED), (f" {t['status']}: ", MUTED),
                         (t["message"], FAIL if t["stop"] != "NeedsPreemption" else WARN), indent=2))
    limit = t.get("limitedBy")
    if limit:
        out.append(_line(("limited by: ", HEADER), (limit_line(limit), STRONG), indent=2))
        others = limit.get("reasons", [])[1:]
        if others:
            rest = "; ".join(f"{r['plugin']}, {r.get('resource') or r['reason']}, on {r['nodes']} "
                             f"node{'' if r['nodes'] == 1 else 's'}"
                             for r in others[: None if wide else 3])
            if not wide and len(others) > 3:
                rest += f"; ... ({len(others) - 3} more)"
            out.append(_line(("also: ", MUTED), (rest, MUTED), indent=2))
    pre = t.get("preemption")
    if pre and pre.get("nominatedNode"):
        victims = ", ".join(v.get("pod", "?") for v in pre.get("victims") or ())
        out.append(_line(("would preempt: ", MUTED), f"on {pre['nominatedNode']}: {victims or 'no pod'}", indent=2))
    chart = chart_blocks(t, wide=wide, rich=rich)
    if chart:
        out.append(Blank())
        out.extend(chart)
    return out


def chart_rows(t: dict, wide: bool = False) -> tuple[list[tuple[str, int, Usage]], bool]:
    """(label, copies, chart-resource usage) per node, or per node group when
    there are more than MAX_NODES nodes and not `wide`; and whether grouped."""
    resource = t.get("chartResource") or "cpu"
    util = t.get("utilization") or []
    grouped = len(util) > MAX_NODES and not wide
    if grouped:
        groups: dict[str, list[dict]] = {}
        for u in util:
            groups.setdefault(u.get("nodeGroup") or u["node"], []).append(u)
        items = [(f"{name} ({len(m)} nodes)", m) for name, m in sorted(groups.items())]
    else:
        items = [(u["node"], [u]) for u in util]
    rows = []
    for label, members in items:
        copies = sum(m.get("copies", 0) for m in members)
        usage = Usage(sum(m["before"].get(resource, 0) for m in members),
                      sum(m["after"].get(resource, 0) for m in members),
                      sum(m["allocatable"].get(resource, 0) for m in members))
        rows.append((label, copies, usage))
    return rows, grouped


def _copy_cells(copies: int, most: int, width: int) -> int:
    if copies <= 0 or most <= 0:
        return 0
    return max(1, (copies * width + most - 1) // most) if copies < most else width


def chart_blocks(t: dict, *, wide: bool, rich: bool) -> list:
    rows, grouped = chart_rows(t, wide)
    if not rows:
        return []
    resource = t.get("chartResource") or "cpu"
    glyphs = RICH_GLYPHS if rich else PLAIN_GLYPHS
    copy_glyph = COPY_GLYPHS[rich]
    most = max(c for _, c, _ in rows)
    width = BAR_WIDTH
    limit = t.get("limitedBy") or {}
    why = "limiting resource" if limit.get("resource") == resource else "chart resource"
    title = (f"copies placed, and {resource} requested / allocatable before -> after the copies ({why}), "
             f"{'per node group (sums)' if grouped else 'per node'}")
    legend = (f"{copy_glyph} copies   " + "  ".join(f"{glyphs[k]} {LEGEND_WORDS[k]}" for k in (KEPT, ADDED, FREED, FREE)))
    table = Table(["node group" if grouped else "node", "copies", resource, ""], align=["left", "left", "left", "left"])
    for label, copies, usage in rows:
        bar = [Span(copy_glyph * _copy_cells(copies, most, COPY_BAR_WIDTH), PASS), Span(f" {copies}")]
        res = [Span(glyphs[k] * n, _SEGMENT_STYLES[k]) for k, n in usage.segments(width)]
        res.append(Span(f" {usage.percent()}"))
        before, after, allocatable = units.amounts(resource, usage.before, usage.after, usage.allocatable)
        amounts = f"{before} -> {after} of {allocatable}"
        table.rows.append([[Span(label)], bar, res, [Span(amounts, MUTED)]])
    return [_line((title, HEADER), indent=2), _line((legend, MUTED), indent=2), table]


def limit_line(limit: dict | None) -> str | None:
    """"NodeResourcesFit, memory, on 38 of 40 nodes"."""
    if limit is None:
        return None
    what = limit.get("resource") or limit["reason"]
    return f"{limit['plugin']}, {what}, on {limit['nodes']} of {limit['totalNodes']} nodes"
