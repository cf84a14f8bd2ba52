"""`kschedx bind`: parse, plan, show, confirm, bind (commands/bind.py does the work)."""

from __future__ import annotations

import functools
import sys

import click

from ..util.errors import KschedxError
from .connection import Duration
from .options import cluster_options, config_options, namespace_option
from .output import fail, silence_stdout, warn
from .progress import stderr_is_terminal, read_progress, wait_progress
from .workload import POD_NAME, POD_REF

def _interactive() -> bool:
    """A person can answer a prompt: stdin and stderr are terminals."""
    return bool(sys.stdin.isatty() and stderr_is_terminal())


def _complete_pending_pod(ctx, _param, incomplete):
    """NAMESPACE/NAME of the cluster's pending pods, and NAME in the -n namespace
    (shell completion); never fails loudly."""
    from .completion import complete_pod_argument

    return [item for item in complete_pod_argument(ctx, incomplete) if item.type != "file"]


@click.command()
@click.argument("pod_ref", metavar="[NAMESPACE/]NAME", shell_complete=_complete_pending_pod)
@click.option("--node", "node", metavar="NODE", default=None,
              help="Bind to this node instead of kube-scheduler's choice; only if it passes every Filter.")
@click.option("--preempt", is_flag=True, default=False,
              help="When only preemption makes room: evict the victims (Eviction API, PDBs honoured), "
                   "nominate the node, wait for the victims to go, re-check, then bind.")
@click.option("--dry-run", is_flag=True, default=False, help="Everything but the writes.")
@click.option("-y", "--yes", is_flag=True, default=False, help="Do not ask for confirmation.")
@click.option("--timeout", type=Duration(), default="2m", show_default=True, metavar="DURATION",
              help="With --preempt: how long to wait for the victims to terminate.")
@click.option("-o", "--output", type=click.Choice(("human", "wide", "json", "yaml")), default="human",
              show_default=True, help="How to show the explanation; json/yaml add a `bind` section.")
@click.option("--tie-break", type=click.Choice(("random", "name")), default="random", show_default=True,
              help="How one node is chosen among equal top scores.")
@click.option("--seed", type=int, default=None, help="Seed for --tie-break random.")
@cluster_options
@namespace_option
@config_options
def bind(pod_ref, node, preempt, dry_run, yes, timeout, output, tie_break, seed, cluster, namespace,
         scheduler, sampling):
    """Schedule one pending pod of the live cluster, and bind it.

    Takes a fresh snapshot, runs the scheduling cycle, shows the explanation
    and the decision, asks for confirmation (unless --yes), then binds the pod
    as kube-scheduler's DefaultBinder does (a pods/binding with the pod's UID).
    Nothing is ever bound twice: a pod bound, changed or deleted meanwhile, or
    a node gone, aborts with exit status 4.

    A kube-scheduler serving the pod's schedulerName may bind it first; give
    pods you bind by hand a schedulerName no scheduler serves.

    \b
    Examples:
      kschedx bind default/web --dry-run
      kschedx bind default/web --node worker-2 --yes
      kschedx bind batch/urgent --preempt --timeout 5m
    """
    from ..commands import bind as binding

    if POD_NAME.fullmatch(pod_ref) and "/" not in pod_ref:
        pod_ref = f"{namespace}/{pod_ref}" if namespace else pod_ref
    elif not POD_REF.fullmatch(pod_ref):
        raise click.BadParameter("must be NAMESPACE/NAME, or NAME with -n, of a pending pod",
                                 param_hint="[NAMESPACE/]NAME")
    elif namespace and pod_ref.partition("/")[0] != namespace:
        raise click.BadParameter(f"{pod_ref} is not in the namespace {namespace} given with -n",
                                 param_hint="[NAMESPACE/]NAME")
    if not (dry_run or yes or _interactive()):
        raise click.UsageError("not on a terminal, so no one can confirm: pass --yes to bind "
                               "(or --dry-run to only see the decision)")
    machine = output in ("json", "yaml")
    say = functools.partial(click.echo, err=machine)
    try:
        conn = cluster.connect()
        if "/" not in pod_ref:  # NAME alone: in the context's namespace, as kubectl takes it
            pod_ref = f"{conn.namespace}/{pod_ref}"
        try:
            with read_progress(conn) as progress:
                plan = binding.plan(conn, pod_ref, node=node, preempt=preempt, tie_break=tie_break,
                                    seed=seed, progress=progress, sampling=sampling, choose=scheduler.resolve)
            for w in plan.doc.get("warnings") or ():
                warn(w)
            if not machine:
                _render(plan.doc, output, plan.node if node else None)
            for line in plan.describe():
                say(line)
            if not plan.bindable or dry_run:
                if dry_run and plan.bindable:
                    say("dry run: nothing was changed")
                _finish(plan, output, bound=False, dry_run=dry_run)
                sys.exit(0 if plan.bindable else 1)
            if plan.binder is not None and not yes:
                # An extender's bind verb is a write kschedx cannot preview: only on --yes.
                say(f"not bound: extender {plan.binder.name} binds this pod; kschedx calls its bind verb only "
                    "with --yes")
                _finish(plan, output, bound=False, dry_run=False)
                sys.exit(1)
            if not yes and not click.confirm(plan.question(), default=False, err=True):
                say("not bound")
                _finish(plan, output, bound=False, dry_run=False)
                sys.exit(1)
            with wait_progress(len(plan.victims)) as waited:
                outcome = binding.execute(conn, plan, timeout=timeout, events=lambda m: say(m),
                                          wait_progress=waited, tie_break=tie_break, seed=seed,
                                          sampling=sampling)
        finally:
            conn.close()
    except KschedxError as e:
        fail(e)
    via = f" through extender {outcome.binder}" if outcome.binder else ""
    say(f"bound {plan.key} to node {outcome.node}{via}")
    _finish(plan, output, bound=True, dry_run=False, outcome=outcome)
    sys.exit(0)


def _render(doc: dict, output: str, node: str | None) -> None:
    from ..render.human import render

    try:
        render(doc, wide=(output == "wide"), node=node)
    except BrokenPipeError:
        silence_stdout()  # a reader that left changes nothing that follows


def _finish(plan, output: str, *, bound: bool, dry_run: bool, outcome=None) -> None:
    if output not in ("json", "yaml"):
        return
    doc = dict(plan.doc, bind=plan.summary(bound=bound, dry_run=dry_run, outcome=outcome))
    if output == "json":
        from ..render.machine import to_json

        text = to_json(doc)
    else:
        from ..render.machine import to_yaml

        text = to_yaml(doc)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()


COMMAND = bind
