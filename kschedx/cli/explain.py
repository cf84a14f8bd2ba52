"""`kschedx explain`: parse, load the workload, explain each pod, exit with its code."""

from __future__ import annotations

import os
import sys

import click

from .options import debug_option, fix_option, node_option, nodes_option, report_option, workload_options
from .output import check_node_choice, check_node_name, output_sink, warn_unused_seed

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
@report_option
@click.option("--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Worker processes evaluating pods (default: the number of CPUs); the output is the same. "
                   "With 1, a big snapshot is also read in one process.")
@click.option("--no-reuse", is_flag=True, default=False,
              help="Run every pod's cycle, even for pods identical to an earlier one (the output is the same).")
@debug_option
def explain(pod_files, snapshot_paths, output, tie_break, seed, node, nodes, fix, report, cluster, selection,
            all_pending, scheduler, sampling, jobs, no_reuse):
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
    """
    from ..commands import explain as explaining
    from .workload import load_workload

    warn_unused_seed(tie_break, seed)
    jobs = jobs if jobs is not None else default_jobs()
    # --jobs 1: one process, also for reading the snapshot.
    workload = load_workload(snapshot_paths, pod_files, cluster, all_pending, selection, keep_raw=fix,
                             read_ahead=jobs > 1)
    features, scheduler_config = scheduler.resolve(workload)
    where = "the snapshot" if snapshot_paths else "the cluster"
    check_node_name(node, workload.cluster, where)
    check_node_choice(nodes, workload.cluster, where)
    sys.exit(explaining.explain_into(output_sink(output, "explain", node, report), workload, tie_break=tie_break,
                                     seed=seed, config=scheduler_config, features=features, sampling=sampling, fix=fix,
                                     nodes=nodes.keeping(node), reuse=not no_reuse, jobs=jobs))


COMMAND = explain
