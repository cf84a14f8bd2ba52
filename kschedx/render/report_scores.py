"""The report's Score section: the best nodes with each plugin's weighted
score, and what separates the winner from the next."""

from __future__ import annotations

import heapq

from ..result.node_view import NodeView
from .blocks import GROUP_NAMES, MUTED, PASS, STRONG, WARN, Blank, Table, cell_of, line_of, names_text, plural

# Score rows shown without -o wide.
SCORE_ROWS = 10


class ScoreSections:
    """Report's Score section (a mixin of render/layout.py's Report)."""

    def scores(self, pod: dict) -> None:
        sym = self.sym
        nodes = pod.get("nodes") or []
        view = nodes if isinstance(nodes, NodeView) and not self.wide else None
        if view is not None:
            count = view.scored_count()
            scored = view.best(max(SCORE_ROWS, 2)) if count else []  # the rows shown and the two best
        else:
            scored = [n for n in nodes if n.get("scores") is not None]
            count = len(scored)
        if not scored:
            for note in pod.get("notes") or ():
                self.add(line_of(("note: " + note, MUTED), indent=2))
            return
        if view is None:
            scored = sorted(scored, key=_rank) if self.wide else _best(scored, max(SCORE_ROWS, 2))
        known = _view_columns(view, scored[0]) if view is not None else None
        plugins, weights, skipped_everywhere, zero_everywhere = (known or _columns(nodes, scored[0])
                                                                 or _columns_in_rank(nodes))
        columns = plugins if self.wide else [p for p in plugins
                                             if p not in skipped_everywhere and p not in zero_everywhere]
        top = pod.get("topNodes") or []
        selected = pod.get("selectedNode")
        table = Table(["Score", "", "total"] + [f"{p} {sym.times}{weights[p]}" for p in columns],
                      align=["left", "left", "right"] + ["right"] * len(columns))
        shown = scored if self.wide else scored[:SCORE_ROWS]
        for n in shown:
            mark = ""
            if n["name"] == selected:
                mark = sym.star
            elif len(top) > 1 and n["name"] in top:
                mark = sym.tie
            by_plugin = {s["plugin"]: s for s in n["scores"]}
            row = [cell_of((n["name"], STRONG if n["name"] == selected else None)), cell_of((mark, PASS)),
                   cell_of((str(n.get("totalScore")), STRONG if n["name"] == selected else None))]
            for p in columns:
                s = by_plugin.get(p)
                if s is None or s.get("skipped"):
                    row.append(cell_of(("skip" if s is not None else "", MUTED)))
                elif self.wide:
                    row.append(cell_of(f"{s['weighted']} ({s['raw']}{sym.arrow}{s['normalized']})"))
                else:
                    row.append(cell_of(str(s["weighted"])))
            table.rows.append(row)
        self.add(Blank())
        self.add(table)
        if len(shown) < count:
            self.add(line_of((f"{sym.ellipsis} {plural(count - len(shown), 'more scored node')} "
                            "(-o wide shows all)", MUTED), indent=2))
        legend = [f"{sym.star} selected"]
        if len(top) > 1:
            legend.append(f"{sym.tie} tied for the top score")
        legend.append(f"cells: weighted score (normalized {sym.times} weight)")
        if self.wide:
            legend.append(f"(raw {sym.arrow} normalized)")
        self.add(line_of((f" {sym.dot} ".join(legend), MUTED), indent=2))
        if zero_everywhere and not self.wide:
            self.add(line_of((f"0 on every node: {', '.join(zero_everywhere)}", MUTED), indent=2))
        if skipped_everywhere and not self.wide:
            self.add(line_of((f"not scoring this pod (PreScore returned Skip): {', '.join(skipped_everywhere)}", MUTED),
                           indent=2))

        # ties, coverage, and why the winner won
        best = scored[0].get("totalScore")
        limit = None if self.wide else GROUP_NAMES
        if len(top) > 1:
            tie_break = self.doc.get("tieBreak", "random")
            self.add(line_of((f"tie: {plural(len(top), 'node')} share the top score {best} "
                            f"({names_text(top, limit, sym)}); tie-break {tie_break} chose {selected}", WARN),
                           ((" (at random, as kube-scheduler: --tie-break name or --seed N choose the same "
                             "node every run)") if tie_break == "random" else "", MUTED), indent=2))
            coverage = self.coverage(nodes, count, pod)
        else:
            coverage = f"ties: none {sym.dot} " + self.coverage(nodes, count, pod)
        self.add(line_of(coverage, indent=2))
        if len(top) == 1 and count > 1 and selected == scored[0]["name"]:
            self.add(line_of(self.margin(scored[0], scored[1]), indent=2))
        for note in pod.get("notes") or ():
            self.add(line_of(("note: " + note, MUTED), indent=2))

    def coverage(self, nodes: list[dict], scored: int, pod: dict | None = None) -> str:
        """`scored`: how many of `nodes` were scored."""
        if pod is not None and self.shown_part(pod):
            # The shown nodes are a choice (--nodes): counting them says nothing.
            return f"scores shown for {plural(scored, 'node')} (--nodes {self.doc.get('nodeDetail') or ''})"
        out = f"nodes scored: {scored} of {len(nodes)}"
        if isinstance(nodes, NodeView):
            by_plugin = nodes.unscored()
        else:
            by_plugin: dict[str, list[str]] = {}
            for n in nodes:
                if n.get("scores") is None:
                    reason = n.get("firstFailure") or ("feasible, not scored" if n.get("feasible") else "?")
                    by_plugin.setdefault(reason, []).append(n["name"])
        if not by_plugin:
            return out
        parts = []
        for plugin, names in sorted(by_plugin.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            if len(names) <= GROUP_NAMES or self.wide:
                parts.append(f"{', '.join(names)} ({plugin})")
            else:
                parts.append(f"{len(names)} nodes ({plugin})")
        return out + f" {self.sym.dot} filtered out: " + "; ".join(parts)

    def margin(self, first: dict, second: dict) -> str:
        """Why the winner won: its lead over the runner-up, plugin by plugin."""
        sym = self.sym
        a = {s["plugin"]: s["weighted"] for s in first["scores"]}
        b = {s["plugin"]: s["weighted"] for s in second["scores"]}
        diffs = [(p, a.get(p, 0) - b.get(p, 0)) for p in a]
        diffs = sorted((d for d in diffs if d[1]), key=lambda d: -d[1])
        lead = (first.get("totalScore") or 0) - (second.get("totalScore") or 0)
        parts = ", ".join(f"{p} {'+' if d > 0 else sym.minus}{abs(d)}" for p, d in diffs)
        return f"why {first['name']}: it leads {second['name']} by {lead}" + (f" ({parts})" if parts else "")


def _rank(n: dict):
    """Best first: the highest total, then the name."""
    return -(n.get("totalScore") or 0), n["name"]


def _best(scored: list[dict], n: int) -> list[dict]:
    """sorted(scored, key=_rank)[:n], without sorting thousands of nodes for
    ten rows: only the nodes whose total reaches the n-th best total can be
    among them, and only they are sorted."""
    if len(scored) <= n:
        return sorted(scored, key=_rank)
    totals = [s.get("totalScore") or 0 for s in scored]
    floor = heapq.nlargest(n, totals)[-1]
    return sorted([s for s, t in zip(scored, totals) if t >= floor], key=_rank)[:n]


def _columns(nodes: list[dict], best: dict):
    """(plugins, weights, skipped everywhere, 0 everywhere) of the scored
    nodes when each lists the same plugins in the same order (the runner's
    records always do), read a plugin's column at a time: its entries are
    mostly shared objects, each looked at once; the weights are the best
    node's (`best`), as _columns_in_rank takes them. None otherwise."""
    lists = [n["scores"] for n in nodes if n.get("scores") is not None]
    if len(set(map(len, lists))) != 1:
        return None
    plugins, weights, skipped, zero = [], {}, [], []
    for column in zip(*lists):
        entries = list(dict(zip(map(id, column), column)).values())
        names = {s["plugin"] for s in entries}
        if len(names) != 1:
            return None
        p = entries[0]["plugin"]
        if p in weights:
            return None
        plugins.append(p)
        weights[p] = None
        if all(s.get("skipped") for s in entries):
            skipped.append(p)
        elif all(not s.get("skipped") and not s.get("weighted") for s in entries):
            zero.append(p)
    for s in best["scores"]:
        weights[s["plugin"]] = s.get("weight", 1)
    return plugins, weights, skipped, zero


def _view_columns(view: NodeView, best: dict):
    """_columns, from a NodeView's tables; None where it cannot tell."""
    columns = view.score_columns()
    if columns is None:
        return None
    plugins, skipped, zero = columns
    weights = dict.fromkeys(plugins)
    for s in best["scores"]:
        weights[s["plugin"]] = s.get("weight", 1)
    return plugins, weights, skipped, zero


def _columns_in_rank(nodes: list[dict]):
    """_columns for nodes whose lists differ: every entry in rank order
    (plugins in order of first appearance, each weight from its first)."""
    ranked = sorted((n for n in nodes if n.get("scores") is not None), key=_rank)
    by_plugin: dict[str, list] = {}
    for n in ranked:
        for s in n["scores"]:
            by_plugin.setdefault(s["plugin"], []).append(s)
    plugins = list(by_plugin)
    weights = {}
    skipped, zero = [], []  # zero: e.g. DynamicResources for a pod without claims, a column of 0s says nothing
    for p in plugins:
        entries = by_plugin[p]
        weights[p] = entries[0].get("weight", 1)
        if all(s.get("skipped") for s in entries):
            skipped.append(p)
        elif all(not s.get("skipped") and not s.get("weighted") for s in entries):
            zero.append(p)
    return plugins, weights, skipped, zero
