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

from .. import __version__
from ..util.errors import KschedxError, one_line
from . import bind, capacity, explain, simulate, snapshot
from .options import debug_option
from .output import ReaderMayLeave, silence, silence_stdout

# Where the documentation says more: the README's sections and docs/ pages
# (tests/test_readme.py checks every target exists); `kschedx --help` lists them.
HELP_LINKS = (
    ("README.md#commands", "the commands, in a short tour"),
    ("docs/explain.md", "explain: options, choosing pods (-n, -A, -l)"),
    ("docs/fix.md", "explain --fix: verified fixes, ranked"),
    ("docs/simulate.md", "simulate: queue order, preemption, charts"),
    ("docs/capacity.md", "capacity: how many more replicas fit"),
    ("docs/output.md", "human, wide, json, yaml, jsonl, CI formats, --report"),
    ("docs/exit-codes.md", "what each exit status means"),
    ("docs/live-clusters.md", "kubeconfig, snapshot, bind, RBAC"),
    ("docs/live-clusters.md#as-a-kubectl-plugin", "kubectl kschedx, pipx, completion"),
    ("docs/configuration.md", "--config, versions and feature gates, plugin args"),
    ("docs/fixtures.md", "the YAML kschedx reads"),
    ("docs/fidelity.md", "how exactly it follows kube-scheduler"),
    ("docs/layout.md", "where the code is"),
)
HELP_EPILOG = "\b\nDocumentation (README.md, and docs/, also built as a site with MkDocs):\n" + "\n".join(
    f"  {target:<42} {what}" for target, what in HELP_LINKS)
EXIT_INTERNAL_ERROR = 70  # sysexits EX_SOFTWARE: distinct from every documented outcome
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


# -- the group: one place for error handling -----------------------------------
class KschedxGroup(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KschedxError as exc:
            for line in exc.lines():
                click.echo(f"kschedx: error: {one_line(line)}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            # `kschedx explain ... | head`: the reader left; stop quietly.
            silence_stdout()
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
    if not isinstance(sys.stderr, ReaderMayLeave) and sys.stderr is not None:
        sys.stderr = ReaderMayLeave(sys.stderr)
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
        _flush_for_exit()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    import atexit

    atexit._run_exitfuncs()
    try:
        _flush_for_exit()
    except (OSError, ValueError):
        pass
    os._exit(code & 0xFF)  # what the C exit() makes of any int, as Python's own exit


def _flush_for_exit() -> None:
    """Flush stdout and stderr; a reader that has left (`| head -1`) costs
    what was still buffered for it, never the exit code."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            silence(stream)
            stream.flush()


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
             epilog=HELP_EPILOG)
@click.version_option(__version__, prog_name="kschedx")
@global_options
@debug_option
def main():
    """Dry-run and explain the Kubernetes scheduler.

    Reproduces kube-scheduler v1.37.2, v1.36.3 and v1.35.4: by default the
    version of the cluster read (its API server, or the one a snapshot
    recorded), else v1.37; --kube-version chooses, --feature-gates sets
    gates as kube-scheduler's own flag does.

    Exit codes: 0 every pod schedulable, 1 some pod unschedulable or gated,
    2 usage error, 3 input error, 4 cluster error, 70 internal error,
    130 interrupted.
    """


for _module in (explain, simulate, capacity, snapshot, bind):
    main.add_command(_module.COMMAND)
