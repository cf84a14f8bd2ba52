"""Progress on a terminal (stderr), never in a pipe: a cluster being read,
pods being placed, evicted pods terminating."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

def stderr_is_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


@contextmanager
def read_progress(conn, enabled: bool | None = None):
    """A Rich display of what has been read so far (nodes, pods, and the other
    kinds together) on stderr when it is a terminal; yields the progress
    callback for ClusterConnection.read_objects, or None."""
    if enabled is None:
        enabled = stderr_is_terminal()
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from ..sources.kinds import KINDS

    console = Console(stderr=True, highlight=False)
    display = Progress(SpinnerColumn(finished_text="[green]✓"), TextColumn("{task.description:<12}"),
                       TextColumn("{task.fields[count]:>9}"), TimeElapsedColumn(),
                       console=console, transient=True)
    optional = [k.kind for k in KINDS if not k.required]
    tasks = {kind: display.add_task(label, total=None, count="", start=kind == "Node")
             for kind, label in (("Node", "nodes"), ("Pod", "pods"), ("other", "other kinds"))}
    counts: dict[str, int] = {}
    done: set[str] = set()
    start = time.monotonic()

    def update(kind: str, count: int, finished: bool) -> None:
        counts[kind] = count
        if finished:
            done.add(kind)
        row = kind if kind in ("Node", "Pod") else "other"
        display.start_task(tasks[row])
        if row == "other":
            n = sum(1 for k in optional if k in done)
            objects = sum(counts.get(k, 0) for k in optional)
            display.update(tasks[row], count=f"{objects:,}", description=f"other kinds {n}/{len(optional)}")
            if n == len(optional):
                display.update(tasks[row], total=1, completed=1)
        else:
            display.update(tasks[row], count=f"{count:,}")
            if finished:
                display.update(tasks[row], total=1, completed=1)
                if kind == "Node":
                    display.start_task(tasks["Pod"])

    with display:
        yield update
    other = sum(n for k, n in counts.items() if k not in ("Node", "Pod"))
    console.print(f"read {counts.get('Node', 0):,} nodes, {counts.get('Pod', 0):,} pods and {other:,} "
                  f"other objects from {conn.server} in {time.monotonic() - start:.1f}s", style="dim")


@contextmanager
def wait_progress(total: int):
    """A Rich bar while evicted pods terminate, on a terminal (yields a callback or None)."""
    if not total or not stderr_is_terminal():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    display = Progress(TextColumn("waiting for evicted pods to terminate"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    task = display.add_task("wait", total=total)
    started = []

    def update(gone: int, _total: int) -> None:
        if not started:
            display.start()
            started.append(True)
        display.update(task, completed=gone)

    try:
        yield update
    finally:
        if started:
            display.stop()


PROGRESS_THRESHOLD = 50


class _NoProgress:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def placing_progress(total: int):
    """A Rich progress bar on stderr while many pods are placed and stdout is
    a terminal; nothing otherwise."""
    if total <= PROGRESS_THRESHOLD or not sys.stdout.isatty():
        return _NoProgress()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    class _Bar:
        def __enter__(self):
            from rich.console import Console

            self.progress = Progress("placing pods", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                                     console=Console(stderr=True), transient=True)
            self.progress.__enter__()
            self.task = self.progress.add_task("simulate", total=total)
            return self.update

        def update(self, done, _total):
            self.progress.update(self.task, completed=done)

        def __exit__(self, *exc):
            return self.progress.__exit__(*exc)

    return _Bar()
