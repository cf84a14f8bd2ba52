"""`kschedx explain`: parse, load the workload, explain each pod, exit with its code."""

from __future__ import annotations

import os
import sys

import click

from .connection import Duration
from .options import (debug_option, fix_option, node_option, node_template_option, nodes_option, report_option,
                      workload_options)
from .output import check_node_choice, check_node_name, load_templates, output_sink, warn_unused_seed

def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@click.command()
@workload_options
@node_option
@nodes_option
@fix_option
@node_template_option
@report_option
@click.option("--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Worker processes evaluating pods (default: the number of CPUs); the output is the same. "
                   "With 1, a big snapshot is also read in one process.")
@click.option("--no-reuse", is_flag=True, default=False,
              help="Run every pod's cycle, even for pods identical to an earlier one (the output is the same).")
@click.option("-w", "--watch/--once", "watch", default=False,
              help="--watch: read the live cluster once, then follow it: explain each pending pod as it appears, "
                   "again when something that can change its verdict changes, and report each pod bound, deleted "
                   "or finished with what kschedx had predicted; until Ctrl-C or SIGTERM (a summary, exit 0). "
                   "-o human or -o jsonl. --once (the default): answer once and exit.")
@click.option("--settle", type=Duration(allow_zero=True), default=None, metavar="DURATION",
              help="With --watch: how long a new pending pod (or a change) waits before it is explained, so that "
                   "a burst of pods or changes is one batch (default 2s; 0: at once).")
@click.option("--metrics-addr", default=None, metavar="[HOST]:PORT",
              help="With --watch: serve Prometheus metrics on HOST:PORT at /metrics (:9090 for every interface); "
                   "needs pip install 'kschedx[metrics]'.")
@debug_option
def explain(pod_files, snapshot_paths, output, tie_break, seed, node, nodes, fix, node_templates, report, cluster,
            selection, all_pending, scheduler, sampling, validate, jobs, no_reuse, watch, settle, metrics_addr):
    """Why does each pod go where it goes, or nowhere?

    POD_FILE pods (or, without POD_FILE, the snapshot's pending pods) are each
    evaluated against the same cluster state. Instead of --snapshot, read the
    live cluster (--kubeconfig, --context): then name the pods (POD_FILE,
    NAMESPACE/NAME of pending pods) or pass --all-pending.

    \b
    Examples:
      kschedx explain fixtures/pods/web.yaml --snapshot fixtures/cluster/
      kschedx explain pod.yaml --snapshot cluster/ --node worker-a1
      kschedx explain --snapshot cluster/ -o json
      kschedx explain pod.yaml --snapshot cluster/ --fix
      kschedx explain pod.yaml --snapshot cluster/ --node-template pools/
      kschedx explain --watch -A -o jsonl
    """
    from ..commands import explain as explaining
    from ..sources.strict import Validation
    from .workload import load_workload

    warn_unused_seed(tie_break, seed)
    if watch and node_templates:
        raise click.UsageError("--node-template is not available with --watch")
    if watch:
        sys.exit(_watch(pod_files, snapshot_paths, output, tie_break, seed, node, nodes, fix, report, cluster,
                        selection, all_pending, scheduler, sampling, jobs, no_reuse, settle, metrics_addr))
    if settle is not None or metrics_addr is not None:
        raise click.UsageError(f"{'--settle' if settle is not None else '--metrics-addr'} needs --watch")
    jobs = jobs if jobs is not None else default_jobs()
    # --jobs 1: one process, also for reading the snapshot.
    workload = load_workload(snapshot_paths, pod_files, cluster, all_pending, selection, keep_raw=fix,
                             read_ahead=jobs > 1, controllers=bool(node_templates),
                             validation=Validation(validate, scheduler.kube_version))
    features, scheduler_config = scheduler.resolve(workload)
    where = "the snapshot" if snapshot_paths else "the cluster"
    check_node_name(node, workload.cluster, where)
    check_node_choice(nodes, workload.cluster, where)
    templates = load_templates(node_templates, workload.cluster, Validation(validate, scheduler.kube_version),
                               features.version)
    for t in templates:
        for w in t.warnings:
            click.echo(f"kschedx: warning: {w}", err=True)
    sys.exit(explaining.explain_into(output_sink(output, "explain", node, report), workload, tie_break=tie_break,
                                     seed=seed, config=scheduler_config, features=features, sampling=sampling, fix=fix,
                                     nodes=nodes.keeping(node), reuse=not no_reuse, jobs=jobs, templates=templates))


def _watch(pod_files, snapshot_paths, output, tie_break, seed, node, nodes, fix, report, cluster, selection,
           all_pending, scheduler, sampling, jobs, no_reuse, settle, metrics_addr) -> int:
    from ..api.selection import PodSelection
    from .watch import check_watch_options, run_watch
    from .workload import split_pod_arguments

    selection = selection or PodSelection()
    files, refs = split_pod_arguments(pod_files)
    check_watch_options(snapshot_paths=snapshot_paths, files=files, output=output, fix=fix, report=report, jobs=jobs)
    if metrics_addr is not None:
        from .metrics import parse_addr, require_client

        parse_addr(metrics_addr)
        require_client()
    take_pending = all_pending or selection.filters or (not refs and selection.given)
    if not (refs or take_pending):
        raise click.UsageError("which pods? name pending pods (NAME with -n, or NAMESPACE/NAME), or take them "
                               "with --all-pending, -A, -n or a selector (-l, --field-selector)")
    if nodes is not None and not nodes.is_all and nodes.names:
        raise click.UsageError("--nodes NAME,... is not available with --watch (nodes come and go): "
                               "use --nodes failing or --nodes top=N")
    return run_watch(cluster, refs=refs, take_pending=take_pending, selection=selection, output=output, node=node,
                     nodes=nodes.keeping(node), tie_break=tie_break, seed=seed, scheduler=scheduler,
                     sampling=sampling, reuse=not no_reuse, settle=2.0 if settle is None else settle,
                     metrics_addr=metrics_addr)


COMMAND = explain
