"""`kschedx simulate`: parse, load the workload, place the pods one after another, exit with the code."""

from __future__ import annotations

import sys

import click

from ..render.outputs import DOCUMENT_FORMATS
from .options import (add_nodes_option, debug_option, drain_options, node_template_option, nodes_option,
                      report_option, simulate_fix_option, workload_options)
from .output import check_drain_nodes, check_node_choice, load_templates, output_sink, warn_unused_seed
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
@drain_options
@node_template_option
@add_nodes_option
@debug_option
def simulate(pod_files, snapshot_paths, output, tie_break, seed, detail, nodes, fix, report, cluster, selection,
             all_pending, scheduler, sampling, validate, drain, node_templates, add_nodes):
    """Place many pods one after another, as the scheduler would.

    POD_FILE pods (Deployments, ReplicaSets, StatefulSets, Jobs, CronJobs and
    DaemonSets are expanded into the pods their controllers create) or,
    without POD_FILE, the snapshot's pending pods are scheduled in queue order;
    each placement, and each preemption (victims deleted, preemptor placed on
    the nominated node), is applied before the next pod. With --fix, what
    places the pods it leaves unplaced, checked by simulating again.

    With --drain the nodes are drained first, as kubectl drain would (their
    pods evicted through the PodDisruptionBudgets and recreated by their
    controllers); with --node-template and --add-nodes, nodes of those pools
    are added for the pods left pending.

    \b
    Examples:
      kschedx simulate fixtures/simulate/deploy.yaml --snapshot fixtures/simulate/cluster.yaml
      kschedx simulate --snapshot cluster/ --tie-break name -o json
      kschedx simulate deploy.yaml --snapshot cluster/ --fix
      kschedx simulate --snapshot fixtures/whatif/drain/cluster.yaml --drain n4
      kschedx simulate fixtures/whatif/add-nodes/web.yaml --snapshot fixtures/whatif/add-nodes/cluster.yaml \\
          --node-template fixtures/whatif/add-nodes/templates/pool-c.yaml --add-nodes auto
    """
    from ..commands import simulate as simulating
    from ..sources.strict import Validation
    from .workload import load_workload

    warn_unused_seed(tie_break, seed)
    if add_nodes is not None and not node_templates:
        raise click.UsageError("--add-nodes needs --node-template (the pools nodes are added from)")
    if node_templates and add_nodes is None:
        raise click.UsageError("--node-template needs --add-nodes with simulate (auto, or TEMPLATE=N): which "
                               "nodes to add")
    if fix and (drain is not None or node_templates):
        # A drain's or an added pool's answer is its own fix search; mixing
        # the two would verify fixes against a cluster no run showed.
        raise click.UsageError("--fix cannot be combined with --drain or --add-nodes: run the drain or the "
                               "added nodes first, then --fix on the pods they leave unplaced")
    workload = load_workload(snapshot_paths, pod_files, cluster, all_pending, selection, keep_raw=fix,
                             controllers=bool(drain or node_templates), pods_optional=drain is not None,
                             validation=Validation(validate, scheduler.kube_version))
    features, scheduler_config = scheduler.resolve(workload)
    where = "the snapshot" if snapshot_paths else "the cluster"
    check_node_choice(nodes, workload.cluster, where)
    change = None
    if drain is not None or node_templates:
        from ..commands.whatif import Change

        check_drain_nodes(drain, workload.cluster, where)
        templates = load_templates(node_templates, workload.cluster, Validation(validate, scheduler.kube_version),
                               features.version)
        if isinstance(add_nodes, dict):
            known = [t.name for t in templates]
            for name in add_nodes:
                if name not in known:
                    raise click.BadParameter(f"no node template named {name!r} (the templates: "
                                             f"{', '.join(known)})", param_hint="'--add-nodes'")
        change = Change(drain=drain, templates=templates, add_nodes=add_nodes)
    if detail is None:
        # The human tables and CI reports never show per-node verdicts: do
        # not compute them. The HTML report shows them for pods left unplaced
        # (all of them, on thousands of nodes, would make a multi-GB page).
        detail = "full" if output in DOCUMENT_FORMATS else "failures" if report else "placements"
    # A document streams to stdout as pods are placed: no bar to draw over it.
    with placing_progress(0 if output in DOCUMENT_FORMATS else len(workload.pods)) as progress:
        if change is not None:
            from ..commands.whatif import simulate_changed

            code = simulate_changed(output_sink(output, "simulate", report=report), workload, change,
                                    tie_break=tie_break, seed=seed, progress=progress, detail=detail,
                                    config=scheduler_config, features=features, sampling=sampling, nodes=nodes)
        else:
            code = simulating.simulate_into(output_sink(output, "simulate", report=report), workload,
                                            tie_break=tie_break, seed=seed, progress=progress, detail=detail,
                                            config=scheduler_config, features=features, sampling=sampling,
                                            nodes=nodes, fix=fix)
    sys.exit(code)


COMMAND = simulate
