"""The blocks the human report is made of (render/layout.py builds them,
render/human.py and render/plain.py draw them): lines of spans, tables,
blank lines, and the symbols they use. Styles name a meaning (pass, fail,
later, ...), never a colour; every distinction a style makes is also made
by a symbol or by the words, so the plain renderer (no colour) says the
same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Meanings a span can carry; the Rich renderer maps them to colours.
PASS = "pass"  # a filter passed, the pod is scheduled
FAIL = "fail"  # the failure kube-scheduler reports
LATER = "later"  # also failing, but kube-scheduler stopped before it
WARN = "warn"  # the result is incomplete, or needs attention
MUTED = "muted"  # context: skipped plugins, hints
STRONG = "strong"  # names the reader looks for: pod, selected node
HEADER = "header"

# Node names shown per group of the grouped list without -o wide.
GROUP_NAMES = 3


@dataclass(frozen=True)
class Symbols:
    ok: str
    fail: str
    star: str
    tie: str
    gated: str
    error: str
    warn: str
    arrow: str
    times: str
    dot: str
    ellipsis: str
    minus: str


UNICODE = Symbols("✓", "✗", "★", "=", "⏸", "!", "⚠", "→", "×", "·", "…", "−")
ASCII = Symbols("ok", "x", "*", "=", "||", "!", "!", "->", "x", "-", "...", "-")


def symbols_for(encoding: str | None) -> Symbols:
    """Unicode marks when the output can carry them, else ASCII ones."""
    try:
        "".join(v for v in UNICODE.__dict__.values()).encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return ASCII
    return UNICODE


@dataclass(frozen=True)
class Span:
    text: str
    style: str | None = None


Cell = list  # list[Span]; a cell's text may hold newlines


@dataclass
class Line:
    spans: list[Span]
    indent: int = 0

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.spans)


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    align: list[str] = field(default_factory=list)  # "left" | "right" per column
    indent: int = 2


@dataclass
class Blank:
    pass


def line_of(*parts, indent: int = 0) -> Line:
    """Line("text", ("text", STYLE), ...)"""
    spans = [p if isinstance(p, Span) else Span(p) if isinstance(p, str) else Span(*p) for p in parts]
    return Line(spans, indent)


def cell_of(*parts) -> Cell:
    return line_of(*parts).spans


def plural(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else word + 's'}"


def names_text(names, limit: int | None, sym: Symbols) -> str:
    names = list(names)
    if limit is None or len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f", {sym.ellipsis} (+{len(names) - limit})"

