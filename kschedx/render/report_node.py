"""The report's `--node` story: one node's every verdict and score, with
each plugin's details in its own words."""

from __future__ import annotations

from .blocks import FAIL, MUTED, PASS, STRONG, WARN, Blank, Cell, Span, Table, cell_of, line_of, plural
from .details import detail_lines
from .texts import node_preemption_text

# Details longer than this go below the --node tables instead of in a cell.
INLINE_DETAIL_LINES = 3


class NodeStory:
    """Report's `--node` story (a mixin of render/layout.py's Report)."""

    def node_story(self, pod: dict, name: str) -> None:
        sym = self.sym
        node = next((n for n in pod.get("nodes") or () if n["name"] == name), None)
        self.add(Blank())
        if node is None:
            self.add(line_of(f"node {name}: not evaluated for this pod", indent=2))
            return
        st = node.get("status") or {}
        if node.get("feasible"):
            verdict = (f"{sym.ok} feasible", PASS)
        else:
            reasons = ", ".join(st.get("reasons") or [])
            verdict = (f"{sym.fail} filtered out by {node.get('firstFailure') or st.get('plugin') or '?'}"
                       + (f": {reasons}" if reasons else ""), FAIL)
        self.add(line_of("node ", (name, STRONG), ": ", verdict, indent=2))
        sampling = pod.get("sampling")
        if sampling and node.get("feasible"):
            k = sampling["numFeasibleNodesToFind"]
            if sampling["mode"] == "upstream" and node.get("scores") is None:
                text = (f"not scored: kube-scheduler's search (node sampling) kept {k} feasible nodes "
                        f"before reaching it")
            elif "upstreamCouldPick" in sampling:
                text = ("kube-scheduler's node sampling could pick it (it is the best of some "
                        f"{k} consecutive feasible nodes)" if name in sampling["upstreamCouldPick"] else
                        f"kube-scheduler's node sampling never picks it: every {k} consecutive feasible nodes "
                        "around it hold a better one")
            else:
                text = None
            if text:
                self.add(line_of((text, WARN), indent=4))
        if node.get("preemption") is not None:
            self.add(line_of((node_preemption_text(pod, node), WARN), indent=4))
        if self._reported_by_pre_filter(pod, node):
            pfr = pod["preFilterResult"]
            self.add(line_of(f"not among the {plural(len(pfr.get('nodeNames') or []), 'candidate')} PreFilter "
                           f"({', '.join(pfr.get('plugins') or [])}) left; the Filter verdicts below were "
                           "evaluated for the explanation only", indent=4))

        below: list[tuple[str, list[str]]] = []  # (plugin, lines) too long for a cell

        def details_cell(plugin, details) -> Cell:
            lines = detail_lines(plugin, details)
            if len(lines) > INLINE_DETAIL_LINES:
                below.append((plugin, lines))
                return cell_of(("(below)", MUTED))
            return cell_of(("\n".join(lines), MUTED))

        filters = node.get("filters") or []
        if filters:
            table = Table(["Filter", "verdict", "details"], align=["left", "left", "left"])
            for f in filters:
                reported = node.get("firstFailure") == f["plugin"] and not self._reported_by_pre_filter(pod, node)
                cell = self.verdict_cell(f, reported)
                if f["code"] not in ("Success", "Skip"):
                    cell = cell + [Span(f"  [{f['code']}]", MUTED)]
                table.rows.append([cell_of(f["plugin"]), cell, details_cell(f["plugin"], f.get("details"))])
            self.add(Blank())
            self.add(table)
        elif st:
            self.add(line_of(f"no Filter plugin ran: PreFilter {st.get('plugin') or ''} rejected the pod", indent=4))

        scores = node.get("scores")
        if scores is not None:
            self.score_story(pod, node, scores, details_cell)
        for plugin, lines in below:
            self.add(Blank())
            self.add(line_of((f"{plugin} details", STRONG), indent=2))
            for line in lines:
                self.add(line_of((line, MUTED), indent=4))
        self.preemption_alternatives(pod, name)

    def score_story(self, pod: dict, node: dict, scores: list[dict], details_cell) -> None:
        sym = self.sym
        name = node["name"]
        table = Table(["Score", "raw", sym.arrow + " normalized", sym.times + " weight", "= weighted", "details"],
                      align=["left", "right", "right", "right", "right", "left"])
        for s in scores:
            if s.get("skipped"):
                table.rows.append([cell_of(s["plugin"]), cell_of(("skip", MUTED)), cell_of(""),
                                   cell_of(f"{sym.times}{s['weight']}"), cell_of("0"),
                                   cell_of(("PreScore returned Skip", MUTED))])
                continue
            table.rows.append([cell_of(s["plugin"]), cell_of(str(s["raw"])), cell_of(str(s["normalized"])),
                               cell_of(f"{sym.times}{s['weight']}"), cell_of(str(s["weighted"])),
                               details_cell(s["plugin"], s.get("details"))])
        scored = sorted((n for n in pod.get("nodes") or () if n.get("scores") is not None),
                        key=lambda n: (-(n.get("totalScore") or 0), n["name"]))
        rank = next(i for i, n in enumerate(scored, 1) if n["name"] == name)
        mark = ""
        if pod.get("selectedNode") == name:
            mark = f" {sym.star} selected"
        elif name in (pod.get("topNodes") or ()):
            mark = f" {sym.tie} tied for the top score"
        table.rows.append([cell_of(("total", STRONG)), cell_of(""), cell_of(""), cell_of(""),
                           cell_of((str(node.get("totalScore")), STRONG)),
                           cell_of(f"rank {rank} of {len(scored)}{mark}")])
        self.add(Blank())
        self.add(table)

