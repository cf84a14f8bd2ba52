"""kschedx command line: parse, call one function, render, exit.

Heavy modules (the kubernetes client, Rich, tabulate) are imported inside the
commands that need them, so `kschedx explain` on a small fixture starts fast.

Errors: a KschedxError ends the command with one line on stderr and its exit
code (InputError 3, ClusterError 4, UsageError 2); Click's usage errors exit
2; anything else is a bug, reported in one line (exit 70) unless --debug asks
for the traceback. All of it lives in KschedxGroup.invoke, so every command
gets the same handling.
"""

from __future__ import annotations

import os
import sys

import click

from . import __version__
from .errors import KschedxError, one_line
from .sink import DocumentSink, ResultSink, Tee

from .render.outputs import DOCUMENT_FORMATS, OUTPUT_FORMATS  # noqa: E402  (a table, no renderer)
# The README's sections, by their GitHub anchors (tests/test_readme.py checks
# each one exists): `kschedx --help` points at them.
README_SECTIONS = (
    ("commands", "the commands and their options"),
    ("output", "human, wide, json, yaml, jsonl and CI formats"),
    ("exit-codes", "what each exit status means"),
    ("use-it-on-your-cluster", "kubeconfig, -n, -l, snapshot, bind"),
    ("as-a-kubectl-plugin", "kubectl kschedx, pipx, completion"),
    ("fixture-format", "the YAML kschedx reads"),
    ("preemption-and-simulate", "victims, queue order, charts"),
    ("fidelity", "how exactly it follows v1.35"),
    ("project-layout", "where the code is"),
)
README_EPILOG = "\b\nDocumentation: the README (README.md; the project page on PyPI):\n" + "\n".join(
    f"  README.md#{anchor:<24} {what}" for anchor, what in README_SECTIONS)
EXIT_INTERNAL_ERROR = 70  # sysexits EX_SOFTWARE: distinct from every documented outcome
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


# -- options shared by commands (other commands reuse these decorators) --------
def _set_debug(ctx, _param, value):
    if value:
        ctx.find_root().meta["kschedx.debug"] = True
    return value


debug_option = click.option(
    "--debug",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_set_debug,
    help="Show the full traceback of an internal error.",
)
snapshot_option = click.option(
    "--snapshot",
    "snapshot_paths",
    multiple=True,
    type=click.Path(allow_dash=True),
    help="Cluster fixture: a file, a directory, or - for stdin. Repeatable.",
)
output_option = click.option(
    "-o",
    "--output",
    type=click.Choice(OUTPUT_FORMATS),
    default="human",
    show_default=True,
    help="human: tables for people; wide: every column and node name; json/yaml: the SchedulingResult document, "
         "written as each pod is done; jsonl: one line per pod, then a closing summary line; "
         "junit, github (Actions annotations), tap: CI reports, one test per pod.",
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
from .cli_cluster import all_pending_option, cluster_options, selection_options  # noqa: E402
from .cli_config import config_options  # noqa: E402


def _complete_node(ctx, _param, incomplete):
    """Node names of the --snapshot given so far, or of the live cluster (shell completion)."""
    from .completion import complete_names

    return complete_names(ctx, "Node", incomplete)


def _complete_pod_argument(ctx, _param, incomplete):
    """Files, and the pending pods of the snapshot or the live cluster (shell completion)."""
    from .completion import complete_pod_argument

    return complete_pod_argument(ctx, incomplete)


node_option = click.option(
    "--node",
    "node",
    default=None,
    metavar="NAME",
    shell_complete=_complete_node,
    help="Show one node's whole story: every filter verdict with details, every score raw → normalized × weight.",
)


def _complete_node_choice(ctx, _param, incomplete):
    """--nodes: the keywords, then node names (after the last comma of a list)."""
    from .completion import complete_names

    head, comma, last = incomplete.rpartition(",")
    keywords = [] if comma else [k for k in ("all", "failing", "top=") if k.startswith(incomplete)]
    return keywords + [head + comma + n for n in complete_names(ctx, "Node", last)]


def _parse_node_choice(_ctx, _param, value):
    from .node_choice import NodeChoiceError, parse_node_choice

    try:
        return parse_node_choice(value)
    except NodeChoiceError as e:
        raise click.BadParameter(f"{e} (all, failing, top=N, or node names separated by commas)") from None


nodes_option = click.option(
    "--nodes",
    "nodes",
    default="all",
    show_default=True,
    metavar="all|failing|top=N|NAME,...",
    callback=_parse_node_choice,
    shell_complete=_complete_node_choice,
    help="Which nodes each pod's `nodes` list keeps: all; failing (not feasible, and the selected node); "
         "top=N (the N best-scored feasible nodes, the selected one among them); or the named nodes. "
         "Every other field, and filterSummary (plugin → reason → nodes), still covers every node.",
)


def _check_report_path(_ctx, _param, path):
    """Fail before scheduling anything rather than after it."""
    if path is not None:
        from .errors import UsageError
        from .snapshot_writer import check_writable

        try:
            check_writable(path)
        except UsageError as e:
            raise click.BadParameter(str(e), param_hint="'--report'") from None
    return path


report_option = click.option(
    "--report",
    "report",
    default=None,
    metavar="FILE.html",
    type=click.Path(dir_okay=False),
    callback=_check_report_path,
    help="Also write a self-contained HTML report (verdicts, filter heat map, score bars; "
         "for simulate, utilization before/after) to FILE.html.",
)


class ReportSink(DocumentSink):
    """--report FILE.html: the whole document (the page shows every pod's
    nodes), written when the run ends."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path

    def end(self, tail: dict) -> None:
        super().end(tail)
        write_report(self.doc, self.path)


def write_report(doc: dict, path: str | None) -> None:
    """The HTML report, written atomically: the file appears only when complete."""
    if path is None:
        return
    from .errors import InputError
    from .render.html import to_html
    from .snapshot_writer import Interrupted, write_atomically

    try:
        write_atomically(path, to_html(doc).encode("utf-8"))
    except Interrupted:
        raise KeyboardInterrupt from None
    except OSError as e:
        raise InputError(f"cannot write the report: {(e.strerror or str(e)).lower()}", source=path) from None
    click.echo(f"kschedx: report written to {path}", err=True)


def workload_options(f):
    """The pods and cluster of explain and simulate (POD_FILE / NAMESPACE/NAME
    arguments, --snapshot or a live cluster, --all-pending) and how the result
    is shown and ties broken (-o, --tie-break, --seed)."""
    decorators = (
        click.argument("pod_files", nargs=-1, type=click.Path(allow_dash=True),
                       metavar="[POD_FILE | [NAMESPACE/]NAME]...", shell_complete=_complete_pod_argument),
        snapshot_option,
        cluster_options,
        selection_options,
        all_pending_option,
        output_option,
        tie_break_option,
        seed_option,
        config_options,
    )
    for decorator in reversed(decorators):  # applied bottom-up, as stacked decorators are
        f = decorator(f)
    return f


# -- the group: one place for error handling -----------------------------------
class KschedxGroup(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KschedxError as exc:
            click.echo(f"kschedx: error: {one_line(str(exc))}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            # `kschedx explain ... | head`: the reader left; stop quietly.
            _silence_stdout()
            ctx.exit(1)
        except KeyboardInterrupt:
            # Ctrl-C: not Click's "Aborted!" with exit 1, which reads as
            # "a pod is unschedulable"; 130 is what shells report for SIGINT.
            click.echo("\nkschedx: interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        except Exception as exc:
            if ctx.meta.get("kschedx.debug"):
                raise
            click.echo(f"kschedx: internal error: {type(exc).__name__}: {one_line(str(exc))}", err=True)
            click.echo("kschedx: this is a bug in kschedx; rerun with --debug to see the traceback, "
                       "and please report it", err=True)
            ctx.exit(EXIT_INTERNAL_ERROR)


def run(prog_name: str = "kschedx", **extra) -> None:
    """The entry point of the console scripts and `python -m kschedx`:
    main(), then the end of the process without freeing its data one
    object at a time, which for a 150,000-pod snapshot costs half a second
    when the work is done (end_process). Tests call `main` itself."""
    try:
        main.main(prog_name=prog_name, **extra)
        code = 0
    except SystemExit as exc:
        code = exc.code
    end_process(code)


def end_process(code) -> None:
    """Exit with `code` as Python would, minus the teardown: exit handlers
    run and the output is flushed, then os._exit. Where Python's own exit
    would do more (a message as the code, another thread still running, an
    output that cannot be flushed, which it reports), it exits as usual."""
    if code is None:
        code = 0
    if not isinstance(code, int):
        raise SystemExit(code)
    threading = sys.modules.get("threading")
    if threading is not None and any(t is not threading.main_thread() and not t.daemon
                                     for t in threading.enumerate()):
        raise SystemExit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    import atexit

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code & 0xFF)  # what the C exit() makes of any int, as Python's own exit


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _global_option(ctx, param, value):
    """kubectl's global flags before the command (`kubectl kschedx --context prod
    explain ...`) become the defaults of the command's own options."""
    if value is None:
        return value
    defaults = ctx.default_map = dict(ctx.default_map or {})
    for name, command in ctx.command.commands.items():
        if any(p.name == param.name for p in command.params):
            defaults[name] = dict(defaults.get(name) or {}, **{param.name: value})
    return value


_GLOBAL_OPTIONS = (
    click.option("--kubeconfig", metavar="FILE", default=None, expose_value=False, callback=_global_option,
                 help="For the command after it, as if given to it (kubectl's global flag)."),
    click.option("--context", metavar="NAME", default=None, expose_value=False, callback=_global_option,
                 help="For the command after it, as if given to it."),
    click.option("-n", "--namespace", metavar="NAMESPACE", default=None, expose_value=False,
                 callback=_global_option, help="For the command after it, as if given to it."),
    click.option("--request-timeout", metavar="DURATION", default=None, expose_value=False,
                 callback=_global_option, help="For the command after it, as if given to it."),
)


def global_options(f):
    for option in reversed(_GLOBAL_OPTIONS):
        f = option(f)
    return f


@click.group(cls=KschedxGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=README_EPILOG)
@click.version_option(__version__, prog_name="kschedx")
@global_options
@debug_option
def main():
    """Dry-run and explain the Kubernetes scheduler (kube-scheduler v1.35).

    Exit codes: 0 every pod schedulable, 1 some pod unschedulable or gated,
    2 usage error, 3 input error, 4 cluster error, 70 internal error,
    130 interrupted.
    """


# -- output ---------------------------------------------------------------------
class StdoutSink(ResultSink):
    """Hands the result to the chosen format's sink; warnings go to stderr.

    A reader that leaves early (`kschedx explain ... | head`) ends the output
    quietly and the run goes on unwritten: the command still exits with the
    code of all its pods, so a script reading PIPESTATUS is not told a pod
    was unschedulable.
    """

    def __init__(self, inner: ResultSink):
        self.inner = inner
        self.closed = False
        self.nodes_encoder = getattr(inner, "nodes_encoder", None)
        self.node_records_encoder = getattr(inner, "node_records_encoder", None)
        self.reads_score_details = getattr(inner, "reads_score_details", True)

    def begin(self, head: dict) -> None:
        self._call(self.inner.begin, head)

    def pod(self, pod: dict) -> None:
        self._call(self.inner.pod, pod)

    def end(self, tail: dict) -> None:
        for w in tail.get("warnings") or ():
            click.echo(f"kschedx: warning: {w}", err=True)
        self._call(self.inner.end, tail)
        if not self.closed:
            self._call(sys.stdout.flush)

    def _call(self, method, *args) -> None:
        if self.closed:
            return
        try:
            method(*args)
        except BrokenPipeError:
            self.closed = True
            _silence_stdout()


def output_sink(output: str, mode: str, node: str | None = None, report: str | None = None) -> ResultSink:
    """Where the run's result goes: stdout in the chosen format, and the
    HTML report when asked for (written last, so stdout streams first)."""
    from .render.outputs import sink_for

    sink = StdoutSink(sink_for(output, mode, node=node))
    return sink if report is None else Tee(sink, ReportSink(report))


def warn_unused_seed(tie_break: str, seed) -> None:
    if seed is not None and tie_break == "name":
        click.echo("kschedx: warning: --seed has no effect with --tie-break name (nothing is left to chance)",
                   err=True)


def check_node_choice(choice, cluster, where: str = "the snapshot") -> None:
    """--nodes NAME,...: every name must be a node (exit 2, with close names)."""
    from .node_choice import unknown_names

    missing = unknown_names(choice, [n["metadata"]["name"] for n in cluster.nodes])
    if missing:
        parts = []
        for name, close in missing:
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            parts.append(f"{name!r}{hint}")
        raise click.BadParameter(f"no node named {'; '.join(parts)} in {where}", param_hint="'--nodes'")


def check_node_name(node: str | None, cluster, where: str = "the snapshot") -> None:
    if node is None:
        return
    names = [n["metadata"]["name"] for n in cluster.nodes]
    if node not in names:
        import difflib

        close = difflib.get_close_matches(node, names, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise click.BadParameter(f"no node named {node!r} in {where}{hint}", param_hint="'--node'")


# -- commands -------------------------------------------------------------------
def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


fix_option = click.option(
    "--fix",
    "fix",
    is_flag=True,
    help="For each unschedulable pod, the smallest changes (to the pod or the cluster) that make it fit, each "
         "checked by running the scheduling cycle again with it: a numbered list, `fixes` in json/yaml.",
)


@main.command()
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
            all_pending, scheduler_config, sampling, jobs, no_reuse):
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
    from . import app

    from .cli_cluster import load_workload

    warn_unused_seed(tie_break, seed)
    jobs = jobs if jobs is not None else default_jobs()
    # --jobs 1: one process, also for reading the snapshot.
    workload = load_workload(snapshot_paths, pod_files, cluster, all_pending, selection, keep_raw=fix,
                             read_ahead=jobs > 1)
    where = "the snapshot" if snapshot_paths else "the cluster"
    check_node_name(node, workload.cluster, where)
    check_node_choice(nodes, workload.cluster, where)
    sys.exit(app.explain_into(output_sink(output, "explain", node, report), workload, tie_break=tie_break,
                              seed=seed, config=scheduler_config, sampling=sampling, fix=fix,
                              nodes=nodes.keeping(node), reuse=not no_reuse, jobs=jobs))


@main.command()
@workload_options
@click.option("--detail", type=click.Choice(("full", "failures", "placements")), default=None,
              help="json/yaml: full (default) keeps every pod's per-node verdicts and scores; "
                   "failures keeps them for pods left unplaced only (the default with --report); "
                   "placements keeps the rest only (small documents on large clusters).")
@nodes_option
@report_option
@debug_option
def simulate(pod_files, snapshot_paths, output, tie_break, seed, detail, nodes, report, cluster, selection,
             all_pending, scheduler_config, sampling):
    """Place many pods one after another, as the scheduler would.

    POD_FILE pods (Deployments, ReplicaSets, StatefulSets, Jobs, CronJobs and
    DaemonSets are expanded into the pods their controllers create) or,
    without POD_FILE, the snapshot's pending pods are scheduled in queue order;
    each placement, and each preemption (victims deleted, preemptor placed on
    the nominated node), is applied before the next pod.

    \b
    Examples:
      kschedx simulate fixtures/simulate/deploy.yaml --snapshot fixtures/simulate/cluster.yaml
      kschedx simulate --snapshot cluster/ --tie-break name -o json
    """
    from . import app

    from .cli_cluster import load_workload

    warn_unused_seed(tie_break, seed)
    workload = load_workload(snapshot_paths, pod_files, cluster, all_pending, selection)
    check_node_choice(nodes, workload.cluster, "the snapshot" if snapshot_paths else "the cluster")
    if detail is None:
        # The human tables and CI reports never show per-node verdicts: do
        # not compute them. The HTML report shows them for pods left unplaced
        # (all of them, on thousands of nodes, would make a multi-GB page).
        detail = "full" if output in DOCUMENT_FORMATS else "failures" if report else "placements"
    # A document streams to stdout as pods are placed: no bar to draw over it.
    with _progress(0 if output in DOCUMENT_FORMATS else len(workload.pods)) as progress:
        code = app.simulate_into(output_sink(output, "simulate", report=report), workload, tie_break=tie_break,
                                 seed=seed, progress=progress, detail=detail, config=scheduler_config,
                                 sampling=sampling, nodes=nodes)
    sys.exit(code)


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


# The commands that talk to a live cluster (snapshot, bind) live in cli_cluster.
from .cli_cluster import register as _register_cluster_commands  # noqa: E402

_register_cluster_commands(main)

from .cli_capacity import register as _register_capacity_command  # noqa: E402

_register_capacity_command(main)

if __name__ == "__main__":  # pragma: no cover
    main()
