"""Where a command's result goes: stdout in the chosen format (a reader
that leaves early ends it quietly), the HTML report, warnings and errors on
stderr, and the checks of --node/--nodes against the cluster read."""

from __future__ import annotations

import os
import sys

import click

from ..result.sink import DocumentSink, ResultSink, Tee
from ..util.errors import KschedxError, one_line

class ReportSink(DocumentSink):
    """--report FILE.html: the whole document (the page shows every pod's
    nodes), written when the run ends."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path

    def end(self, tail: dict) -> None:
        super().end(tail)
        write_report(self.doc, self.path)


def write_report(doc: dict, path: str | None) -> None:
    """The HTML report, written atomically: the file appears only when complete."""
    if path is None:
        return
    from ..util.errors import InputError
    from ..render.html import to_html
    from ..sources.writer import Interrupted, write_atomically

    try:
        write_atomically(path, to_html(doc).encode("utf-8"))
    except Interrupted:
        raise KeyboardInterrupt from None
    except OSError as e:
        raise InputError(f"cannot write the report: {(e.strerror or str(e)).lower()}", source=path) from None
    click.echo(f"kschedx: report written to {path}", err=True)


def silence_stdout() -> None:
    silence(sys.stdout)


def silence(stream) -> None:
    """Whatever is written to `stream` from now on (and what it still
    buffers) goes to /dev/null: its reader has left."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


class ReaderMayLeave:
    """stderr for a run: when its reader leaves (`2>&1 | head -1`), what is
    still to say goes nowhere instead of raising BrokenPipeError, which
    would end the run with another exit code than its own. (stdout needs
    no such guard: its sinks stop writing quietly, and explain --watch
    stops when its reader leaves.)"""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            silence(self._stream)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            silence(self._stream)
            try:
                self._stream.flush()
            except OSError:
                pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


class StdoutSink(ResultSink):
    """Hands the result to the chosen format's sink; warnings go to stderr.

    A reader that leaves early (`kschedx explain ... | head`) ends the output
    quietly and the run goes on unwritten: the command still exits with the
    code of all its pods, so a script reading PIPESTATUS is not told a pod
    was unschedulable.
    """

    def __init__(self, inner: ResultSink, *, warn_tail: bool = True):
        self.inner = inner
        self.closed = False
        # False: the tail's warnings were said as they came (explain --watch).
        self.warn_tail = warn_tail
        self.nodes_encoder = getattr(inner, "nodes_encoder", None)
        self.node_records_encoder = getattr(inner, "node_records_encoder", None)
        self.node_records_view = getattr(inner, "node_records_view", None)
        # (Drawn by explain --jobs workers: without it they send every node's dicts.)
        self.body_renderer = getattr(inner, "body_renderer", None)
        self.reads_score_details = getattr(inner, "reads_score_details", True)
        forget = getattr(inner, "forget_texts", None)
        if forget is not None:
            self.forget_texts = forget

    def begin(self, head: dict) -> None:
        self._call(self.inner.begin, head)

    def pod(self, pod: dict) -> None:
        self._call(self.inner.pod, pod)

    def event(self, event: dict) -> None:
        self._call(self.inner.event, event)

    def end(self, tail: dict) -> None:
        for w in (tail.get("warnings") or ()) if self.warn_tail else ():
            click.echo(f"kschedx: warning: {w}", err=True)
        self._call(self.inner.end, tail)
        if not self.closed:
            self._call(sys.stdout.flush)

    def _call(self, method, *args) -> None:
        if self.closed:
            return
        try:
            method(*args)
        except BrokenPipeError:
            self.closed = True
            silence_stdout()


def output_sink(output: str, mode: str, node: str | None = None, report: str | None = None) -> ResultSink:
    """Where the run's result goes: stdout in the chosen format, and the
    HTML report when asked for (written last, so stdout streams first)."""
    from ..render.outputs import sink_for

    sink = StdoutSink(sink_for(output, mode, node=node))
    return sink if report is None else Tee(sink, ReportSink(report))


def warn_unused_seed(tie_break: str, seed) -> None:
    if seed is not None and tie_break == "name":
        click.echo("kschedx: warning: --seed has no effect with --tie-break name (nothing is left to chance)",
                   err=True)


def check_node_choice(choice, cluster, where: str = "the snapshot") -> None:
    """--nodes NAME,...: every name must be a node (exit 2, with close names)."""
    from ..result.node_choice import unknown_names

    missing = unknown_names(choice, [n["metadata"]["name"] for n in cluster.nodes])
    if missing:
        parts = []
        for name, close in missing:
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            parts.append(f"{name!r}{hint}")
        raise click.BadParameter(f"no node named {'; '.join(parts)} in {where}", param_hint="'--nodes'")


def check_node_name(node: str | None, cluster, where: str = "the snapshot") -> None:
    if node is None:
        return
    names = [n["metadata"]["name"] for n in cluster.nodes]
    if node not in names:
        import difflib

        close = difflib.get_close_matches(node, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise click.BadParameter(f"no node named {node!r} in {where}{hint}", param_hint="'--node'")


def fail(exc: KschedxError):
    for line in exc.lines():
        click.echo(f"kschedx: error: {one_line(line)}", err=True)
    sys.exit(exc.exit_code)


def warn(message: str) -> None:
    click.echo(f"kschedx: warning: {message}", err=True)


def check_drain_nodes(drain, cluster, where: str = "the snapshot") -> None:
    """--drain NODE: every name must be a node (exit 2, with close names)."""
    if drain is None:
        return
    import difflib

    names = [n["metadata"]["name"] for n in cluster.nodes]
    known = set(names)
    for node in drain.nodes:
        if node not in known:
            close = difflib.get_close_matches(node, names, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise click.BadParameter(f"no node named {node!r} in {where}{hint}", param_hint="'--drain'")


def load_templates(paths, cluster, validation=None, version: str | None = None) -> list:
    """--node-template FILEs read and checked (exit 3 names the file, object
    and field of a template that is not one; --validate as for the other
    files, against the run's version)."""
    if not paths:
        return []
    from ..sources.node_templates import read_templates

    return read_templates(paths, cluster.priority_classes, cluster.runtime_classes, validation, version)
