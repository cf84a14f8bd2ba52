"""The command line of live clusters: connection options, the choice between a
fixture and a cluster, progress on a terminal, and the `snapshot` and `bind`
commands. Like cli.py it only parses, prompts and renders; reading is in
sources/cluster.py and app.py, binding in bind.py.

Commands reuse the option groups here: `@cluster_options` adds --kubeconfig,
--context and --request-timeout (passed as one `cluster` argument),
`@all_pending_option` adds --all-pending, and `load_workload()` turns the
arguments of explain or simulate into a Workload from either source.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass

import click

from .cli_config import config_options
from .errors import KschedxError, UsageError, one_line

# ---- options ---------------------------------------------------------------------------

_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)(h|ms|m|s))")


def parse_duration(text: str) -> float:
    """Seconds from kubectl's duration syntax (`30s`, `1m30s`, `500ms`) or a bare number."""
    text = str(text).strip()
    try:
        value = float(text)
    except ValueError:
        parts = _DURATION.findall(text)
        if not parts or "".join(a + b for a, b in parts) != text:
            raise ValueError(f"{text!r} is not a duration (like 30s, 2m, 1m30s or 500ms)") from None
        scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
        value = sum(float(a) * scale[b] for a, b in parts)
    if not 0 < value < float("inf"):
        raise ValueError(f"{text!r}: must be a finite time of more than zero")
    return value


class Duration(click.ParamType):
    name = "duration"

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        try:
            return parse_duration(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


@dataclass(frozen=True)
class ClusterOptions:
    kubeconfig: str | None = None
    context: str | None = None
    request_timeout: float = 30.0

    @property
    def given(self) -> bool:
        """Whether the user pointed at a cluster explicitly."""
        return bool(self.kubeconfig or self.context)

    def connect(self):
        from .sources.cluster import connect

        # A command is a one-shot process: what it reads lives until it exits,
        # so the reads may be frozen out of the cyclic collector's way.
        return connect(self.kubeconfig, self.context, self.request_timeout, freeze_reads=True)


_CLUSTER_OPTIONS = (
    click.option("--kubeconfig", metavar="FILE", default=None,
                 help="Read a live cluster through this kubeconfig (default: $KUBECONFIG, "
                      "merged like kubectl, else ~/.kube/config, else the pod's service account)."),
    click.option("--context", metavar="NAME", default=None,
                 help="The kubeconfig context to use (default: its current-context)."),
    click.option("--request-timeout", metavar="DURATION", type=Duration(), default="30s",
                 show_default=True, help="Give up on an API request after this long (30s, 2m)."),
)


def cluster_options(f):
    """--kubeconfig, --context and --request-timeout, passed to the command as
    `cluster=ClusterOptions(...)`."""

    @functools.wraps(f)
    def wrapper(*args, kubeconfig, context, request_timeout, **kwargs):
        return f(*args, cluster=ClusterOptions(kubeconfig, context, request_timeout), **kwargs)

    for option in reversed(_CLUSTER_OPTIONS):
        wrapper = option(wrapper)
    return wrapper


all_pending_option = click.option(
    "--all-pending", is_flag=True, default=False,
    help="Schedule every pending pod in the namespace (-n; -A: all namespaces).")


def _check_label_selector(_ctx, _param, value):
    if value is not None:
        from .labels import SelectorError, parse_selector

        try:
            parse_selector(value)
        except SelectorError as e:
            raise click.BadParameter(str(e)) from None
    return value


def _check_field_selector(_ctx, _param, value):
    if value is not None:
        from .selection import FieldSelectorError, parse_field_selector

        try:
            parse_field_selector(value)
        except FieldSelectorError as e:
            raise click.BadParameter(str(e)) from None
    return value


def _check_namespace(_ctx, _param, value):
    if value is not None and not _DNS_LABEL.fullmatch(value):
        raise click.BadParameter(f"{value!r} is not a namespace name (a DNS-1123 label: lower-case "
                                 "letters, digits and '-', at most 63)")
    return value


def _complete(kind: str):
    def complete(ctx, param, incomplete):
        from .completion import complete_names

        return complete_names(ctx, kind, incomplete)

    return complete


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")

namespace_option = click.option(
    "-n", "--namespace", metavar="NAMESPACE", default=None, callback=_check_namespace,
    shell_complete=_complete("Namespace"),
    help="The namespace of pods named without one and of the pending pods taken (default: the "
         "kubeconfig context's namespace on a cluster, every namespace of a snapshot).")
_SELECTION_OPTIONS = (
    namespace_option,
    click.option("-A", "--all-namespaces", is_flag=True, default=False,
                 help="Take pending pods from every namespace (overrides -n)."),
    click.option("-l", "--selector", metavar="SELECTOR", default=None, callback=_check_label_selector,
                 help="Take the pending pods whose labels match, in kubectl's syntax: "
                      "'app=web,tier!=db', 'env in (prod,qa)', '!canary'."),
    click.option("--field-selector", metavar="SELECTOR", default=None, callback=_check_field_selector,
                 help="Take the pending pods whose fields match: metadata.name, metadata.namespace, "
                      "spec.nodeName, spec.schedulerName, status.phase... with =, == or !=, joined by commas."),
)


def selection_options(f):
    """-n, -A, -l and --field-selector, passed to the command as
    `selection=PodSelection(...)`."""
    from .selection import PodSelection

    @functools.wraps(f)
    def wrapper(*args, namespace, all_namespaces, selector, field_selector, **kwargs):
        return f(*args, selection=PodSelection(namespace, all_namespaces, selector, field_selector), **kwargs)

    for option in reversed(_SELECTION_OPTIONS):
        wrapper = option(wrapper)
    return wrapper

# A pod named on the command line: NAMESPACE/NAME, each a DNS-1123 name.
_POD_REF = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


# A pod named alone, as kubectl names it: its namespace comes from -n.
_POD_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


def split_pod_arguments(args) -> tuple[list[str], list[str]]:
    """POD_FILE arguments and pod names, told apart: an existing path, `-`, or
    a name ending like a fixture file (.yaml, .yml, .json, .gz: a missing file
    deserves "no such file") is a file; `namespace/name` and a bare pod `name`
    (in the -n namespace) are pods."""
    from .sources.fixtures import FIXTURE_SUFFIXES

    files, refs = [], []
    for arg in args:
        looks_like_file = arg.endswith(FIXTURE_SUFFIXES + (".gz",))
        is_name = _POD_REF.fullmatch(arg) or _POD_NAME.fullmatch(arg)
        if arg == "-" or looks_like_file or os.path.exists(arg) or not is_name:
            files.append(arg)
        else:
            refs.append(arg)
    return files, refs


# ---- reading ---------------------------------------------------------------------------


def load_workload(snapshot_paths, args, cluster: ClusterOptions, all_pending: bool = False, selection=None,
                  keep_raw: bool = False, read_ahead: bool = True):
    """The Workload of explain or simulate: from --snapshot files, or from the live
    cluster when --kubeconfig/--context, a pod name, --all-pending or a selection
    flag (-n, -A, -l, --field-selector) asks for it.

    Pending pods are taken (besides POD_FILEs and named pods) with --all-pending
    or a selector (-l, --field-selector), and when nothing else names pods: a
    snapshot's pending pods, or on a cluster those -n / -A point at."""
    from . import app
    from .selection import PodSelection

    selection = selection or PodSelection()
    files, refs = split_pod_arguments(args)
    take_pending = all_pending or selection.filters or (not (files or refs) and selection.given)
    if snapshot_paths:
        if cluster.given:
            raise click.UsageError("--snapshot reads a fixture, --kubeconfig/--context a live cluster: "
                                   "give one of them")
        # A snapshot has no current namespace: -n names one, else pods are taken from all.
        workload = app.load_workload(snapshot_paths, files, namespace=selection.namespace, keep_raw=keep_raw,
                                     read_ahead=read_ahead)
        if refs or take_pending:
            app.select_pods(workload, refs, all_pending=take_pending, keep=bool(files),
                            where=f"the snapshot ({', '.join(snapshot_paths)})", selection=selection)
        return workload
    if not (cluster.given or refs or take_pending):
        raise click.UsageError("--snapshot is required (a cluster fixture file or directory), or read a "
                               "live cluster with --kubeconfig/--context, pod names, --all-pending, "
                               "-n, -A or -l")
    if not (files or refs or take_pending):
        raise click.UsageError("which pods? give POD_FILEs, pod names (NAME with -n, or NAMESPACE/NAME), "
                               "--all-pending, -A, or a selector (-l, --field-selector)")
    conn = cluster.connect()
    try:
        with read_progress(conn) as progress:
            workload = app.load_workload_from_cluster(conn, files, refs, take_pending, progress=progress,
                                                      selection=selection, keep_raw=keep_raw)
    finally:
        conn.close()
    return workload


def _stderr_is_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


@contextmanager
def read_progress(conn, enabled: bool | None = None):
    """A Rich display of what has been read so far (nodes, pods, and the other
    kinds together) on stderr when it is a terminal; yields the progress
    callback for ClusterConnection.read_objects, or None."""
    if enabled is None:
        enabled = _stderr_is_terminal()
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from .sources.cluster import KINDS

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


# ---- errors ----------------------------------------------------------------------------


def fail(exc: KschedxError):
    click.echo(f"kschedx: error: {one_line(str(exc))}", err=True)
    sys.exit(exc.exit_code)


def warn(message: str) -> None:
    click.echo(f"kschedx: warning: {message}", err=True)


# ---- snapshot --------------------------------------------------------------------------


@click.command()
@click.option("-o", "--output", "path", required=True, metavar="FILE",
              help="Where to write: FILE.yaml, FILE.yml or FILE.json, optionally .gz.")
@click.option("--full", is_flag=True, default=False,
              help="Keep every field. By default only what scheduling reads is kept "
                   "(no env values, command, args, probes, managedFields, last-applied annotations).")
@cluster_options
def snapshot(path, full, cluster):
    """Write the live cluster as a fixture for explain/simulate --snapshot.

    Reads every kind the scheduler uses (never Secrets or ConfigMaps) and
    writes them in a fixed order: the same cluster state gives the same file.
    The file appears only when complete. For big clusters prefer .json.gz:
    much faster to write and to read back than YAML.

    \b
    Examples:
      kschedx snapshot -o cluster.yaml
      kschedx snapshot -o prod.json.gz --context prod
    """
    from . import app
    from .snapshot_writer import Interrupted, check_writable, output_format

    try:
        output_format(path)
        check_writable(path)
    except UsageError as e:
        raise click.BadParameter(str(e), param_hint="'-o' / '--output'") from None
    replaced = os.path.exists(path)
    try:
        conn = cluster.connect()
        try:
            with read_progress(conn) as progress:
                summary = app.snapshot(conn, path, full=full, progress=progress)
        finally:
            conn.close()
    except Interrupted as e:
        click.echo(f"kschedx: interrupted ({e}); {path} not written", err=True)
        sys.exit(128 + e.signum)
    except KeyboardInterrupt:
        click.echo(f"kschedx: interrupted; {path} not written", err=True)
        sys.exit(130)
    except KschedxError as e:
        fail(e)
    for w in summary.warnings:
        warn(w)
    counts = summary.counts
    other = sum(n for k, n in counts.items() if k not in ("Node", "Pod"))
    click.echo(f"wrote {path}{' (replacing the previous file)' if replaced else ''}: {counts.get('Node', 0):,} nodes, {counts.get('Pod', 0):,} pods, {other:,} other "
               f"objects ({'all fields' if full else 'fields scheduling reads'}, {_size(summary.size)})",
               err=True)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


# ---- bind ------------------------------------------------------------------------------


def _interactive() -> bool:
    """A person can answer a prompt: stdin and stderr are terminals."""
    return bool(sys.stdin.isatty() and _stderr_is_terminal())


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
         scheduler_config, sampling):
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
    from . import bind as binding

    if _POD_NAME.fullmatch(pod_ref) and "/" not in pod_ref:
        pod_ref = f"{namespace}/{pod_ref}" if namespace else pod_ref
    elif not _POD_REF.fullmatch(pod_ref):
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
                                    seed=seed, progress=progress, config=scheduler_config, sampling=sampling)
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
                                          config=scheduler_config, sampling=sampling)
        finally:
            conn.close()
    except KschedxError as e:
        fail(e)
    via = f" through extender {outcome.binder}" if outcome.binder else ""
    say(f"bound {plan.key} to node {outcome.node}{via}")
    _finish(plan, output, bound=True, dry_run=False, outcome=outcome)
    sys.exit(0)


def _render(doc: dict, output: str, node: str | None) -> None:
    from .render.human import render

    render(doc, wide=(output == "wide"), node=node)


def _finish(plan, output: str, *, bound: bool, dry_run: bool, outcome=None) -> None:
    if output not in ("json", "yaml"):
        return
    doc = dict(plan.doc, bind=plan.summary(bound=bound, dry_run=dry_run, outcome=outcome))
    if output == "json":
        from .render.machine import to_json

        sys.stdout.write(to_json(doc))
    else:
        from .render.machine import to_yaml

        sys.stdout.write(to_yaml(doc))
    sys.stdout.flush()


@contextmanager
def wait_progress(total: int):
    """A Rich bar while evicted pods terminate, on a terminal (yields a callback or None)."""
    if not total or not _stderr_is_terminal():
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


def register(group: click.Group) -> None:
    group.add_command(snapshot)
    group.add_command(bind)
