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
# Live clusters: --kubeconfig/--context/--request-timeout (one `cluster` argument) and --all-pending.
from .cli_cluster import all_pending_option, cluster_options  # noqa: E402


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kschedx")
def main():
    """Dry-run and explain the Kubernetes scheduler (kube-scheduler v1.35).

    Exit codes: 0 every pod schedulable, 1 some pod unschedulable or gated,
    2 usage error, 3 input error, 4 cluster error.
    """


@main.command()
@click.argument("pod_files", nargs=-1, type=click.Path(allow_dash=True), metavar="[POD_FILE | NAMESPACE/NAME]...")
@click.option("--snapshot", "snapshot_paths", multiple=True, type=click.Path(allow_dash=True),
              help="Cluster fixture: a file, a directory, or - for stdin. Repeatable.")
@cluster_options
@all_pending_option
@output_option
@tie_break_option
@seed_option
@click.option("--node", "node", default=None, help="Show one node's whole story: every filter, every score.")
def explain(pod_files, snapshot_paths, output, tie_break, seed, node, cluster, all_pending):
    """Why does each pod go where it goes, or nowhere?

    POD_FILE pods (or, without POD_FILE, the snapshot's pending pods) are each
    evaluated against the same cluster state. Instead of --snapshot, read the
    live cluster (--kubeconfig, --context): then name the pods (POD_FILE,
    NAMESPACE/NAME of pending pods) or pass --all-pending.
    """
    from . import app
    from .cli_cluster import load_workload

    try:
        workload = load_workload(snapshot_paths, pod_files, cluster, all_pending)
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


# The commands that talk to a live cluster (snapshot, bind) live in cli_cluster.
from .cli_cluster import register as _register_cluster_commands  # noqa: E402

_register_cluster_commands(main)

if __name__ == "__main__":  # pragma: no cover
    main()
