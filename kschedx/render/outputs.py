"""-o FORMAT: which sink writes a SchedulingResult in that format.

Each entry makes a ResultSink (result/sink.py) for a mode ("explain" or
"simulate"). Renderers are imported only when chosen, so this table costs
nothing to import. A new format is one more entry.
"""

from __future__ import annotations

import sys

from ..result.sink import ResultSink


def _human(wide: bool):
    def make(mode: str, *, node: str | None = None, out=None):
        if mode == "simulate":
            from .simulate import SimulateSink

            return SimulateSink(wide=wide, out=out)
        from .human import HumanSink

        return HumanSink(wide=wide, node=node, out=out)

    return make


def _machine(name: str):
    def make(mode: str, *, node: str | None = None, out=None):
        from . import machine

        return getattr(machine, name)(out if out is not None else Utf8Writer(sys.stdout))

    return make


class WholeDocument(ResultSink):
    """For a renderer of the whole document (the CI reports: their counts
    come first): keeps each pod without its per-node records, which they
    never show, and renders when the run ends."""

    def __init__(self, render, out):
        self.render = render
        self.out = out
        self.doc: dict = {}

    def begin(self, head: dict) -> None:
        self.doc = dict(head, pods=[])

    def pod(self, pod: dict) -> None:
        self.doc["pods"].append({k: v for k, v in pod.items() if k != "nodes"})

    def end(self, tail: dict) -> None:
        self.doc.update(tail)
        self.out.write(self.render(self.doc))
        self.out.flush()


def _ci(module: str, function: str):
    def make(mode: str, *, node: str | None = None, out=None):
        import importlib

        render = getattr(importlib.import_module(f".{module}", __package__), function)
        return WholeDocument(render, out if out is not None else Utf8Writer(sys.stdout))

    return make


SINKS = {
    "human": _human(wide=False),
    "wide": _human(wide=True),
    "json": _machine("JsonSink"),
    "yaml": _machine("YamlSink"),
    "jsonl": _machine("JsonlSink"),
    "junit": _ci("junit", "to_junit"),
    "github": _ci("github", "to_github"),
    "tap": _ci("tap", "to_tap"),
}
OUTPUT_FORMATS = tuple(SINKS)
# Formats that write the document itself, per-node records included.
DOCUMENT_FORMATS = ("json", "yaml", "jsonl")


def sink_for(output: str, mode: str, *, node: str | None = None, out=None):
    return SINKS[output](mode, node=node, out=out)


class Utf8Writer:
    """A text stream's bytes as UTF-8 whatever the locale says (a label value
    with an accent must not fail on an ASCII terminal)."""

    def __init__(self, stream):
        self.stream = stream
        self.buffer = getattr(stream, "buffer", None)
        if self.buffer is not None:
            stream.flush()

    def write(self, text: str) -> None:
        if self.buffer is None:
            self.stream.write(text)
        else:
            self.buffer.write(text.encode("utf-8"))

    def flush(self) -> None:
        (self.buffer or self.stream).flush()


# explain --watch: the formats a run that never ends can write as it goes.
WATCH_FORMATS = ("human", "jsonl")


def watch_sink_for(output: str, *, node: str | None = None, out=None):
    """The sink of explain --watch for -o human or jsonl (render/watch.py)."""
    from . import watch

    if output == "jsonl":
        return watch.WatchJsonlSink(out if out is not None else Utf8Writer(sys.stdout))
    return watch.WatchHumanSink(node=node, out=out)
