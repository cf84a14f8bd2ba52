"""Human output: Rich on a terminal, plain text (tabulate) everywhere else.

Both draw the same blocks (render/layout.py), built from the result
document alone. Rich and tabulate are imported only here, when a human
report is actually printed.
"""

from __future__ import annotations

import os
import re
import sys

from ..result.node_view import node_view
from ..result.sink import ResultSink
from .blocks import ASCII, Blank, FAIL, HEADER, LATER, Line, MUTED, PASS, STRONG, symbols_for, Table, WARN
from .layout import RenderedBody, Report

STYLES = {
    PASS: "green",
    FAIL: "bold red",
    LATER: "dim",
    WARN: "yellow",
    MUTED: "dim",
    STRONG: "bold",
    HEADER: "bold",
}


def use_color(out) -> bool:
    """Colour only for a terminal, and never when NO_COLOR is set (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


def render(doc: dict, *, wide: bool = False, node: str | None = None, out=None, color: bool | None = None) -> None:
    sink = HumanSink(wide=wide, node=node, out=out, color=color)
    sink.begin({k: v for k, v in doc.items() if k != "pods"})
    for pod in doc.get("pods") or ():
        sink.pod(pod)
    sink.end({})


class HumanSink(ResultSink):
    """The explain report, written pod by pod as results arrive."""

    def __init__(self, *, wide: bool = False, node: str | None = None, out=None, color: bool | None = None):
        out = out if out is not None else sys.stdout
        self.color = use_color(out) if color is None else color
        self.sym = symbols_for(getattr(out, "encoding", None) or "utf-8")
        self.out = LossyWriter(out) if self.sym is ASCII else out
        self.wide = wide
        self.node = node
        # Score explanations are shown in --node's story only.
        self.reads_score_details = node is not None
        # The report of every node reads groups, counts and its best rows,
        # taken from the records (-o wide and --node read every dict).
        self.node_records_view = node_view if not wide and node is None else None
        self.report = None
        self._console = None
        # The last pod's blocks drawn with Rich: id -> (block, width, text).
        self._drawn: dict = {}

    def begin(self, head: dict) -> None:
        self.report = Report(head, wide=self.wide, node=self.node, sym=self.sym)
        self.report.begin()

    def pod(self, pod: dict) -> None:
        self.report.next_pod(pod)
        self._flush()

    def body_renderer(self, pod: dict) -> dict:
        """The pod's document with its body drawn (everything under its
        header line, which stays the parent's: a shared result gets another
        name). Run by explain --jobs workers, after begin()."""
        report = Report(self.report.doc, wide=self.wide, node=self.node, sym=self.sym)
        report.body(pod)
        out = dict(pod)
        out["nodes"] = RenderedBody(report.blocks)
        return out

    def end(self, tail: dict) -> None:
        self.report.end()
        self._flush()

    def _rich_text(self, blocks) -> str:
        """rich_text(blocks), each block drawn once: a pod that takes an
        identical earlier pod's result shares its body's blocks
        (render/layout.py: blocks are never changed once built), and a block
        drawn at the same width is the same text."""
        if self._console is None:
            self._console = _console(self.out)
        width = self._console.width
        drawn = {}
        parts = []
        for block in blocks:
            hit = self._drawn.get(id(block))
            if hit is not None and hit[0] is block and hit[1] == width:
                text = hit[2]
            else:
                text = rich_text([block], self._console)
            drawn[id(block)] = (block, width, text)
            parts.append(text)
        self._drawn = drawn
        return "".join(parts)

    def _flush(self) -> None:
        blocks = self.report.take_blocks()
        if not blocks:
            return
        if self.color:
            self.out.write(self._rich_text(blocks))
        else:
            from .plain import render_blocks

            render_blocks(blocks, self.out)
        self.out.flush()


# Marks some renderers spell in Unicode (the DRA device story, details), and
# their ASCII forms, for an output that cannot carry them (PYTHONIOENCODING=ascii,
# a latin-1 terminal).
_TO_ASCII = str.maketrans({"✓": "ok", "✗": "x", "·": "-", "→": "->", "×": "x", "…": "...", "★": "*", "⏸": "||",
                           "⚠": "!", "−": "-", "≤": "<=", "≥": ">="})


class LossyWriter:
    """Writes to a stream whose encoding lacks some characters: marks become
    ASCII, anything else unencodable becomes '?', never an exception."""

    def __init__(self, out):
        self.out = out
        self.encoding = getattr(out, "encoding", None) or "ascii"

    def write(self, text: str) -> int:
        safe = text.translate(_TO_ASCII).encode(self.encoding, "replace").decode(self.encoding)
        return self.out.write(safe)

    def flush(self) -> None:
        self.out.flush()

    def isatty(self) -> bool:
        isatty = getattr(self.out, "isatty", None)
        return bool(isatty and isatty())

    def fileno(self) -> int:
        return self.out.fileno()


def _text(spans):
    from rich.text import Text

    text = Text()
    for span in spans:
        text.append(span.text, style=STYLES.get(span.style) if span.style else None)
    return text


def render_rich(blocks, out) -> None:
    out.write(rich_text(blocks, _console(out)))


def _console(out):
    from rich.console import Console

    return Console(file=out, force_terminal=True, highlight=False, markup=False, emoji=False)


def rich_text(blocks, console) -> str:
    """The blocks drawn by Rich on `console`, as text; each block's text
    ends its last line, so blocks drawn one by one join into this text."""
    with console.capture() as captured:
        _print_blocks(console, blocks)
    # Rich pads wrapped lines to the width of their block: drop the trailing
    # spaces, which copy-paste would otherwise carry along.
    return _TRAILING.sub(lambda m: "".join(_ANSI.findall(m.group(0))) + "\n", captured.get())


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TRAILING = re.compile(r"(?: |\x1b\[[0-9;]*m)+\n")  # spaces (and style codes among them) before a line end


def _print_blocks(console, blocks) -> None:
    from rich.padding import Padding
    from rich.table import Table as RichTable

    for block in blocks:
        if isinstance(block, Blank):
            console.print()
        elif isinstance(block, Line):
            console.print(Padding(_text(block.spans), (0, 0, 0, block.indent), expand=False))
        elif isinstance(block, Table):
            table = RichTable(box=None, show_header=True, header_style=STYLES[HEADER], pad_edge=False,
                              padding=(0, 2, 0, 0))
            for i, header in enumerate(block.headers):
                align = block.align[i] if i < len(block.align) else "left"
                # Names stay whole (copy-pasteable); reasons wrap.
                table.add_column(header, justify=align, overflow="fold", no_wrap=(i == 0))
            for row in block.rows:
                table.add_row(*[_text(cell) for cell in row])
            if len(block.headers) > STACK_ABOVE_COLUMNS and _too_wide(console, table, block.indent):
                table = _stacked(block)
            console.print(Padding(table, (0, 0, 0, block.indent), expand=False))


# A table of more columns than this that does not fit the terminal is drawn
# row by row ("name  column value; column value; ..."): squeezed into 80
# columns, a filter matrix folds plugin names mid-word and reasons into
# one-word lines.
STACK_ABOVE_COLUMNS = 3


def _too_wide(console, table, indent: int) -> bool:
    from rich.measure import Measurement

    return Measurement.get(console, console.options, table).maximum > console.width - indent


def _stacked(block):
    """The same table, one row per line: the first cell, then each other
    column as "header value" (wrapping under itself, not under the name)."""
    from rich.table import Table as RichTable
    from rich.text import Text

    table = RichTable(box=None, show_header=True, header_style=STYLES[HEADER], pad_edge=False, padding=(0, 2, 0, 0))
    table.add_column(block.headers[0], no_wrap=True)
    table.add_column("", overflow="fold")
    for row in block.rows:
        text = Text()
        passed = None
        bare = False  # the previous value had no header (a mark): a space, not "; "
        for header, cell in zip(block.headers[1:], row[1:]):
            value = _text(cell)
            if not value.plain:
                continue
            if header and _is_pass_mark(cell):
                passed = passed or value  # a bare ✓ under a plugin name: say it once per row
                continue
            if text.plain:
                text.append(" " if bare else "; ")
            if header:
                text.append(header + " ", style=STYLES[MUTED])
            text.append_text(value)
            bare = not header
        if not text.plain and passed is not None:
            text = passed
        table.add_row(_text(row[0]), text)
    return table


def _is_pass_mark(cell) -> bool:
    return len(cell) == 1 and cell[0].style == PASS and len(cell[0].text) <= 2
