"""`kschedx simulate`: parse, load the workload, place the pods one after another, exit with the code."""

from __future__ import annotations

import sys

import click

from ..render.outputs import DOCUMENT_FORMATS
from .options import debug_option, nodes_option, report_option, simulate_fix_option, workload_options
from .output import check_node_choice, output_sink, warn_unused_seed
from .progress import placing_progress

@click.command()
@workload_options
@click.option("--detail", type=click.Choice(("full", "failures", "placements")), default=None,
              help="json/yaml: full (default) keeps every pod's per-node verdicts and scores; "
                   "failures keeps them for pods left unplaced only (the default with --report); "
                   "placements keeps the rest only (small documents on large clusters).")
@nodes_option
@simulate_fix_option
@report_option
@debug_option
def simulate(pod_files, snapshot_paths, output, tie_break, seed, detail, nodes, fix, report, cluster, selection,
             all_pending, scheduler, sampling):
    """Place many pods one after another, as the scheduler would.

    POD_FILE pods (Deployments, ReplicaSets, StatefulSets, Jobs, CronJobs and
    DaemonSets are expanded into the pods their controllers create) or,
    without POD_FILE, the snapshot's pending pods are scheduled in queue order;
    each placement, and each preemption (victims deleted, preemptor placed on
    the nominated node), is applied before the next pod. With --fix, what
    places the pods it leaves unplaced, checked by simulating again.

    \b
    Examples:
      kschedx simulate fixtures/simulate/deploy.yaml --snapshot fixtures/simulate/cluster.yaml
      kschedx simulate --snapshot cluster/ --tie-break name -o json
      kschedx simulate deploy.yaml --snapshot cluster/ --fix
    """
    from ..commands import simulate as simulating
    from .workload import load_workload

    warn_unused_seed(tie_break, seed)
    workload = load_workload(snapshot_paths, pod_files, cluster, all_pending, selection, keep_raw=fix)
    features, scheduler_config = scheduler.resolve(workload)
    check_node_choice(nodes, workload.cluster, "the snapshot" if snapshot_paths else "the cluster")
    if detail is None:
        # The human tables and CI reports never show per-node verdicts: do
        # not compute them. The HTML report shows them for pods left unplaced
        # (all of them, on thousands of nodes, would make a multi-GB page).
        detail = "full" if output in DOCUMENT_FORMATS else "failures" if report else "placements"
    # A document streams to stdout as pods are placed: no bar to draw over it.
    with placing_progress(0 if output in DOCUMENT_FORMATS else len(workload.pods)) as progress:
        code = simulating.simulate_into(output_sink(output, "simulate", report=report), workload, tie_break=tie_break,
                                        seed=seed, progress=progress, detail=detail, config=scheduler_config,
                                        features=features, sampling=sampling, nodes=nodes, fix=fix)
    sys.exit(code)


COMMAND = simulate
