"""`kschedx capacity`: parse, count the copies that fit (commands/capacity.py), render, exit."""

from __future__ import annotations

import sys

import click

from .options import (complete_pod_files, cluster_options, config_options, debug_option, drain_options,
                      report_option, seed_option, snapshot_option, tie_break_option, validate_option)
from .output import check_drain_nodes, silence_stdout, warn_unused_seed

CAPACITY_FORMATS = ("human", "wide", "json", "yaml", "jsonl")


@click.command()
@click.argument("pod_files", nargs=-1, required=True, type=click.Path(allow_dash=True),
                metavar="POD_FILE | [NAMESPACE/]NAME...", shell_complete=complete_pod_files)
@snapshot_option
@cluster_options
@click.option("-n", "--namespace", metavar="NAMESPACE", default=None,
              help="The namespace of POD_FILE objects without one, and of pods named without one.")
@click.option("--max", "max_copies", type=int, default=None, metavar="N",
              help="Stop after N copies of each pod template (default: until one does not fit).")
@click.option("--min", "min_copies", type=int, default=1, show_default=True,
              metavar="N", help="Exit 0 when at least N copies of every pod template fit, else 1.")
@click.option("--allow-preemption", is_flag=True, default=False,
              help="Let copies preempt lower-priority pods, as kube-scheduler would (default: a copy that "
                   "would have to evict a pod is where capacity ends).")
@click.option("--with-pending", is_flag=True, default=False,
              help="Place the snapshot's pending pods first, in queue order (default: they take no room, "
                   "as in cluster-capacity).")
@click.option("-o", "--output", type=click.Choice(CAPACITY_FORMATS), default="human", show_default=True,
              help="human: count, reason and per-node chart; wide: every node in the chart; json/yaml: the "
                   "CapacityResult document; jsonl: one CapacityResult line per pod template.")
@tie_break_option
@seed_option
@config_options
@validate_option
@report_option
@drain_options
@debug_option
def capacity(pod_files, snapshot_paths, cluster, namespace, max_copies, min_copies, allow_preemption,
             with_pending, output, tie_break, seed, scheduler, sampling, validate, report, drain):
    """How many more replicas of a pod fit, and what stops them?

    Copies of each pod template (a Pod, or the template of a Deployment,
    ReplicaSet, StatefulSet or Job in POD_FILE; or a pending pod named
    NAMESPACE/NAME) are placed one after another through the whole
    scheduling pipeline, as `simulate` places pods, until one does not
    fit. Prints the count, the count per node, and the FailedScheduling
    message of the first copy that does not fit with the plugin and
    resource that limit it.

    With --drain the nodes are drained first, as kubectl drain would (their
    pods recreated by their controllers and placed), and the count is of the
    cluster the drain leaves.

    \b
    Exit codes: 0 at least --min copies of every template fit (and the
    drain completes), 1 fewer, 2 usage error, 3 input error, 4 cluster error.

    \b
    Examples:
      kschedx capacity fixtures/capacity/web.yaml --snapshot fixtures/capacity/cluster.yaml
      kschedx capacity deploy.yaml --snapshot cluster/ --min 3 -o json
      kschedx capacity fixtures/whatif/drain/web.yaml --snapshot fixtures/whatif/drain/cluster.yaml --drain n1
    """
    from ..api.selection import PodSelection
    from ..commands import capacity as cap
    from ..commands.load import NoPodsToEvaluate
    from ..sources.strict import Validation
    from .workload import load_workload

    warn_unused_seed(tie_break, seed)
    options = cap.Options(max=max_copies, min=min_copies, allow_preemption=allow_preemption,
                          with_pending=with_pending, drain=drain)
    options.check()
    try:
        workload = load_workload(snapshot_paths, pod_files, cluster, False, PodSelection(namespace=namespace),
                                 controllers=drain is not None,
                                 validation=Validation(validate, scheduler.kube_version))
    except NoPodsToEvaluate as e:
        # A DaemonSet, or a workload of zero replicas, alone in the POD_FILEs:
        # the same words as beside another pod.
        cap.refuse_workloads_without_pods(e.notes)
        raise
    check_drain_nodes(drain, workload.cluster, "the snapshot" if snapshot_paths else "the cluster")
    features, scheduler_config = scheduler.resolve(workload)
    failures = [] if report is not None else None
    doc = cap.capacity(workload, options, tie_break=tie_break, seed=seed, config=scheduler_config,
                       features=features, sampling=sampling, failures=failures)
    for w in doc.get("warnings") or ():
        click.echo(f"kschedx: warning: {w}", err=True)
    try:
        render(doc, output)
    except BrokenPipeError:
        # `| head`: the reader has what it wanted; the exit code stays the count's
        silence_stdout()
    if report is not None:
        from ..render.capacity import report_document
        from .output import write_report

        write_report(report_document(doc, failures), report)
    sys.exit(doc["exitCode"])


def render(doc: dict, output: str, out=None) -> None:
    from ..render import capacity as view
    from ..render.outputs import Utf8Writer

    out = out if out is not None else sys.stdout
    if output in ("human", "wide"):
        view.render_human(doc, out=out, wide=output == "wide")
        return
    writer = Utf8Writer(out)
    if output == "json":
        from ..render.machine import to_json

        writer.write(to_json(doc))
    elif output == "yaml":
        from ..render.machine import to_yaml

        writer.write(to_yaml(doc))
    else:
        writer.write(view.to_jsonl(doc))
    writer.flush()


COMMAND = capacity
