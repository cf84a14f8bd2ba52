"""`kschedx explain --watch`: the options checked, the cluster connected
for a long run, signals, the metrics server, and commands.watch's loop.

SIGINT, SIGTERM and SIGHUP end the watch cleanly: the current pod is
finished, the summary written, exit 0. A second Ctrl-C ends it at once (130).
A cluster that cannot be reached at start is tried again with backoff, said
once: in a Deployment, an API server restart must not crash-loop the pod.
"""

from __future__ import annotations

import signal
import sys
import threading

import click

from .output import StdoutSink, warn


def check_watch_options(*, snapshot_paths, files, output, fix, report, jobs) -> None:
    """What --watch cannot do, said before anything is read (exit 2)."""
    from ..render.outputs import WATCH_FORMATS

    if snapshot_paths:
        raise click.UsageError("--watch follows a live cluster (--kubeconfig, --context): it cannot read --snapshot")
    if files:
        raise click.UsageError(f"--watch explains the cluster's pending pods: POD_FILEs ({', '.join(files)}) are "
                               "not watched; name pending pods (NAMESPACE/NAME) or select them (-n, -A, -l)")
    if output not in WATCH_FORMATS:
        raise click.UsageError(f"-o {output} writes one document, and a watch never ends: use "
                               + " or ".join(f"-o {f}" for f in WATCH_FORMATS) + " with --watch")
    if fix:
        raise click.UsageError("--fix is not available with --watch: run `kschedx explain --fix` on a pod")
    if report:
        raise click.UsageError("--report writes one page when a run ends, and a watch never ends: "
                               "run `kschedx explain --report` instead")
    if jobs is not None and jobs != 1:
        warn("--jobs has no effect with --watch: pods are explained one batch at a time, in this process")


class _Signals:
    """SIGINT, SIGTERM, SIGHUP: set `stop`; a second SIGINT interrupts at once."""

    def __init__(self, stop: threading.Event):
        self.stop = stop
        self.previous: dict = {}

    def __enter__(self):
        if threading.current_thread() is not threading.main_thread():
            return self
        for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None:
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, _frame):
        if self.stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        if not getattr(self.stop, "reason", None):
            self.stop.reason = signal.Signals(signum).name  # the summary's stopReason
        self.stop.set()

    def __exit__(self, *exc):
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


def run_watch(cluster, *, refs, take_pending: bool, selection, output: str, node, nodes, tie_break, seed,
              scheduler, sampling, reuse: bool, settle: float, metrics_addr: str | None) -> int:
    from ..commands.watch import watch_into
    from ..render.outputs import watch_sink_for
    from ..util.gc_policy import long_running
    from .progress import read_progress

    observer = None
    if metrics_addr is not None:
        from .metrics import PrometheusObserver, parse_addr, require_client

        host, port = parse_addr(metrics_addr)
        require_client()
        observer = PrometheusObserver(host, port)
        click.echo(f"kschedx: serving metrics on {observer.url}", err=True)
    long_running()
    stop = threading.Event()
    sink = StdoutSink(watch_sink_for(output, node=node), warn_tail=False)

    def notice(text: str) -> None:
        click.echo(f"kschedx: warning: {text}", err=True)

    with _Signals(stop):
        conn = cluster.connect(long_running=True)
        try:
            started = {}

            def on_run(run):
                started["run"] = run
                what = ("the named pods" if run.named is not None
                        else f"pending pods {selection.describe(conn.namespace)}")
                click.echo(f"kschedx: watching {what} on cluster {conn.server} "
                           f"({len(run.live.snapshot.node_infos):,} nodes, {len(run.live.pods):,} pods, "
                           f"{len(run.live.pending):,} pending); Ctrl-C to stop", err=True)

            code = _with_retries(lambda progress: watch_into(
                sink, conn, refs=refs, all_pending=take_pending, selection=selection, tie_break=tie_break,
                seed=seed, choose=scheduler.resolve, sampling=sampling, nodes=nodes, reuse=reuse, settle=settle,
                observer=observer, stop=stop, progress=progress, notice=notice, on_run=on_run),
                conn, stop, read_progress, started)
        finally:
            conn.close()
            if observer is not None:
                observer.close()
    return code


def _with_retries(start, conn, stop: threading.Event, read_progress, started: dict) -> int:
    """start(progress), tried again while the cluster cannot be reached at first
    (a transient failure of the first read), with backoff, said once."""
    from ..sources.watch import Backoff
    from ..util.errors import ClusterError

    backoff = Backoff(1.0, 30.0)
    said = False
    while True:
        try:
            with read_progress(conn) as progress:
                return start(progress)
        except ClusterError as e:
            if not e.transient or started.get("run") is not None or stop.is_set():
                raise
            if not said:
                said = True
                click.echo(f"kschedx: warning: {e}; retrying (every 30s at most)", err=True)
            if stop.wait(backoff.next()):
                sys.exit(0)
