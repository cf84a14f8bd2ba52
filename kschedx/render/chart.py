"""The utilization chart of `simulate`: per node (or, above MAX_NODES nodes,
per node group) requested CPU and memory before → after as bars, from the
document's `utilization` alone.

A bar is made of segments told apart by their glyph, so it reads the same
without colour: what was requested before and stays, what the simulation
added, what it freed (preemption victims), and what is free. Rich adds
colour on a terminal; plain text uses ASCII glyphs (CI logs, pipes, NO_COLOR).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import units

MAX_NODES = 40  # above this many nodes, one row per node group
BAR_WIDTH = 20

KEPT, ADDED, FREED, FREE = "kept", "added", "freed", "free"
PLAIN_GLYPHS = {KEPT: "#", ADDED: "+", FREED: "-", FREE: "."}
RICH_GLYPHS = {KEPT: "█", ADDED: "▒", FREED: "╳", FREE: "·"}
RICH_STYLES = {KEPT: "blue", ADDED: "green", FREED: "red", FREE: "dim"}
LEGEND_WORDS = {KEPT: "requested before", ADDED: "added", FREED: "freed", FREE: "free"}


@dataclass
class Usage:
    before: int
    after: int
    allocatable: int

    def segments(self, width: int = BAR_WIDTH) -> list[tuple[str, int]]:
        """(kind, cells) adding up to `width`: before and after are rounded up
        to whole cells, so any use at all shows."""
        if self.allocatable <= 0:
            return [(FREE, width)]
        b, a = _cells(self.before, self.allocatable, width), _cells(self.after, self.allocatable, width)
        kept = min(a, b)
        out = [(KEPT, kept), (ADDED, max(0, a - b)), (FREED, max(0, b - a)), (FREE, width - max(a, b))]
        return [(k, n) for k, n in out if n]

    def percent(self) -> str:
        return f"{units.percent(self.before, self.allocatable)} -> {units.percent(self.after, self.allocatable)}"


def _cells(used: int, total: int, width: int) -> int:
    if used <= 0:
        return 0
    return min(width, (used * width + total - 1) // total)


@dataclass
class Row:
    label: str
    nodes: int
    cpu: Usage
    memory: Usage
    pods: tuple[int, int, int]  # before, after, allocatable

    @property
    def changed(self) -> bool:
        return (self.cpu.before, self.memory.before, self.pods[0]) != (self.cpu.after, self.memory.after, self.pods[1])

    def amounts(self, resource: str) -> str:
        u = getattr(self, resource)
        before, after, allocatable = units.amounts(resource, u.before, u.after, u.allocatable)
        return f"({before} -> {after} of {allocatable})"

    def pods_text(self) -> str:
        before, after, alloc = self.pods
        return f"{before} -> {after} of {alloc}" if alloc else f"{before} -> {after}"


def rows(doc: dict, wide: bool = False) -> tuple[list[Row], bool]:
    """The chart's rows and whether they are node groups. Without `wide`
    only rows whose requests changed are kept."""
    util = doc.get("utilization") or []
    grouped = len(util) > MAX_NODES
    if grouped:
        groups: dict[str, list[dict]] = {}
        for u in util:
            groups.setdefault(u.get("nodeGroup") or u["node"], []).append(u)
        out = [_row(f"{name} ({len(members)} nodes)", members) for name, members in sorted(groups.items())]
    else:
        out = [_row(u["node"], [u]) for u in util]
    if not wide:
        out = [r for r in out if r.changed]
    return out, grouped


def _row(label: str, members: list[dict]) -> Row:
    def total(part: str, resource: str) -> int:
        return sum(m[part].get(resource) or 0 for m in members)

    return Row(label, len(members),
               Usage(total("before", "cpu"), total("after", "cpu"), total("allocatable", "cpu")),
               Usage(total("before", "memory"), total("after", "memory"), total("allocatable", "memory")),
               (total("before", "pods"), total("after", "pods"), total("allocatable", "pods")))


def title(doc: dict, grouped: bool, wide: bool) -> str:
    what = "per node group (sums)" if grouped else "per node"
    which = "" if wide else " (changed only; -o wide: all)"
    return f"requested / allocatable, before -> after, {what}{which}"


def legend(glyphs: dict) -> str:
    return "  ".join(f"{glyphs[k]} {LEGEND_WORDS[k]}" for k in (KEPT, ADDED, FREED, FREE))


def plain_bar(usage: Usage) -> str:
    return "".join(PLAIN_GLYPHS[k] * n for k, n in usage.segments())


def plain_lines(doc: dict, wide: bool = False) -> list[str]:
    """The chart as text lines (nothing when no row is left)."""
    from tabulate import tabulate

    chart, grouped = rows(doc, wide)
    if not chart:
        return []
    table = [[r.label,
              f"{plain_bar(r.cpu)} {r.cpu.percent()} {r.amounts('cpu')}",
              f"{plain_bar(r.memory)} {r.memory.percent()} {r.amounts('memory')}",
              r.pods_text()] for r in chart]
    head = [title(doc, grouped, wide), legend(PLAIN_GLYPHS)]
    body = tabulate(table, headers=["node group" if grouped else "node", "cpu", "memory", "pods"],
                    disable_numparse=True).splitlines()
    return head + body


def rich_table(doc: dict, wide: bool = False, width: int = 120):
    """The chart as a Rich table for a terminal `width` columns wide, or None
    when no row is left. Bars shrink on narrow terminals; the absolute
    amounts come last and wrap."""
    from rich.table import Table
    from rich.text import Text

    chart, grouped = rows(doc, wide)
    if not chart:
        return None
    label_width = max(len(r.label) for r in chart)
    pct_width = max(len(r.cpu.percent()) for r in chart) + max(len(r.memory.percent()) for r in chart)
    room = width - label_width - pct_width - 12  # column gaps
    bar_width = max(8, min(BAR_WIDTH, (room - 28) // 2))

    def bar(usage: Usage) -> Text:
        text = Text()
        for kind, n in usage.segments(bar_width):
            text.append(RICH_GLYPHS[kind] * n, style=RICH_STYLES[kind])
        return text

    table = Table(title=title(doc, grouped, wide), caption=legend(RICH_GLYPHS), box=None, title_justify="left",
                  caption_justify="left", pad_edge=False, title_style="bold", caption_style="dim")
    table.add_column("node group" if grouped else "node", no_wrap=True)
    table.add_column("cpu", no_wrap=True)
    table.add_column("", no_wrap=True)
    table.add_column("memory", no_wrap=True)
    table.add_column("", no_wrap=True)
    table.add_column("cpu · memory · pods", overflow="fold", style="dim")
    for r in chart:
        table.add_row(r.label, bar(r.cpu), r.cpu.percent(), bar(r.memory), r.memory.percent(),
                      f"{r.amounts('cpu')} · {r.amounts('memory')} · {r.pods_text()}")
    return table
