"""kschedx command line: parse, call one function, render, exit.

Heavy modules (the kubernetes client, Rich) are imported inside the commands
that need them, so `kschedx explain` on a small fixture starts fast.
"""

from __future__ import annotations

import os
import sys

import click

from . import __version__
from .errors import KschedxError

OUTPUT_FORMATS = ("human", "wide", "json", "yaml")


def _fail(exc: KschedxError) -> None:
    click.echo(f"kschedx: error: {exc}", err=True)
    sys.exit(exc.exit_code)


def _emit(doc: dict, output: str, node: str | None) -> None:
    if output == "json":
        from .render.machine import to_json

        sys.stdout.write(to_json(doc))
    elif output == "yaml":
        from .render.machine import to_yaml

        sys.stdout.write(to_yaml(doc))
    else:
        from .render.human import render

        render(doc, wide=(output == "wide"), node=node)


def _warn(doc: dict) -> None:
    for w in doc.get("warnings") or ():
        click.echo(f"kschedx: warning: {w}", err=True)


output_option = click.option(
    "-o",
    "--output",
    type=click.Choice(OUTPUT_FORMATS),
    default="human",
    show_default=True,
    help="human: tables for people; wide: every column; json/yaml: the SchedulingResult document.",
)
tie_break_option = click.option(
    "--tie-break",
    type=click.Choice(("random", "name")),
    default="random",
    show_default=True,
    help="How one node is chosen among equal top scores: random like kube-scheduler, or the smallest name.",
)
seed_option = click.option("--seed", type=int, default=None, help="Seed for --tie-break random (reproducible runs).")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kschedx")
def main():
    """Dry-run and explain the Kubernetes scheduler (kube-scheduler v1.35).

    Exit codes: 0 every pod schedulable, 1 some pod unschedulable or gated,
    2 usage error, 3 input error, 4 cluster error.
    """


@main.command()
@click.argument("pod_files", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--snapshot", "snapshot_paths", multiple=True, type=click.Path(allow_dash=True),
              help="Cluster fixture: a file, a directory, or - for stdin. Repeatable.")
@output_option
@tie_break_option
@seed_option
@click.option("--node", "node", default=None, help="Show one node's whole story: every filter, every score.")
def explain(pod_files, snapshot_paths, output, tie_break, seed, node):
    """Why does each pod go where it goes, or nowhere?

    POD_FILE pods (or, without POD_FILE, the snapshot's pending pods) are each
    evaluated against the same cluster state.
    """
    from . import app

    if not snapshot_paths:
        raise click.UsageError("--snapshot is required (a cluster fixture file or directory)")
    try:
        workload = app.load_workload(snapshot_paths, pod_files)
        doc = app.explain(workload, tie_break=tie_break, seed=seed)
    except KschedxError as exc:
        _fail(exc)
    if node is not None and not any(n["name"] == node for p in doc["pods"] for n in p["nodes"]):
        if not any(p["nodes"] for p in doc["pods"]) or True:
            names = {n["name"] for p in doc["pods"] for n in p["nodes"]}
            if names and node not in names:
                raise click.BadParameter(f"no node named {node!r} in the snapshot", param_hint="--node")
    _warn(doc)
    _emit(doc, output, node)
    from .result import exit_code

    sys.exit(exit_code(doc))


@main.command()
@click.argument("pod_files", nargs=-1, type=click.Path(allow_dash=True))
@click.option("--snapshot", "snapshot_paths", multiple=True, type=click.Path(allow_dash=True),
              help="Cluster fixture: a file, a directory, or - for stdin. Repeatable.")
@output_option
@tie_break_option
@seed_option
@click.option("--detail", type=click.Choice(("full", "placements")), default=None,
              help="json/yaml: full (default) keeps every pod's per-node verdicts and scores; "
                   "placements keeps the rest only (small documents on large clusters).")
def simulate(pod_files, snapshot_paths, output, tie_break, seed, detail):
    """Place many pods one after another, as the scheduler would.

    POD_FILE pods (Deployments, ReplicaSets, StatefulSets, Jobs, CronJobs and
    DaemonSets are expanded into the pods their controllers create) or,
    without POD_FILE, the snapshot's pending pods are scheduled in queue order;
    each placement, and each preemption (victims deleted, preemptor placed on
    the nominated node), is applied before the next pod.
    """
    from . import app

    if not snapshot_paths:
        raise click.UsageError("--snapshot is required (a cluster fixture file or directory)")
    try:
        workload = app.load_workload(snapshot_paths, pod_files)
        if detail is None:
            # The human tables never show per-node verdicts: do not keep them.
            detail = "full" if output in ("json", "yaml") else "placements"
        with _progress(len(workload.pods)) as progress:
            doc = app.simulate(workload, tie_break=tie_break, seed=seed, progress=progress, detail=detail)
    except KschedxError as exc:
        _fail(exc)
    _warn(doc)
    if output in ("json", "yaml"):
        _emit(doc, output, None)
    else:
        from .render.simulate import render_simulate

        render_simulate(doc, wide=(output == "wide"))
    from .result import exit_code

    sys.exit(exit_code(doc))


PROGRESS_THRESHOLD = 50


class _NoProgress:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _progress(total: int):
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


if __name__ == "__main__":  # pragma: no cover
    main()
