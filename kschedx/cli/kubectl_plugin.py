"""kschedx as a kubectl plugin: `kubectl-kschedx` (kubectl runs it for
`kubectl kschedx ...`) and `kubectl_complete-kschedx`, which kubectl (1.26+)
runs to complete `kubectl kschedx <TAB>`.

kubectl passes the words after `kschedx` unchanged, its own global flags
included (kubectl refuses flags before a plugin's name), so the plugin
understands the ones that make sense for it: --kubeconfig, --context,
-n/--namespace and --request-timeout, before or after the command.
"""

from __future__ import annotations

import sys

PROG = "kubectl kschedx"

# Cobra's ShellCompDirective bits, which kubectl reads from the last line.
DIRECTIVE_DEFAULT = 0  # the shell completes file names when nothing else is offered
DIRECTIVE_NO_SPACE = 2
DIRECTIVE_NO_FILE_COMP = 4
DIRECTIVE_FILTER_DIRS = 16


def main() -> None:
    from .main import run

    run(prog_name=PROG, complete_var="_KSCHEDX_COMPLETE")


def completions(args: list[str]) -> list[str]:
    """Cobra's `__complete` answer for `kubectl kschedx ARGS`: one choice per
    line (`value<TAB>description`), then `:<directive>`. The last of ARGS is
    the word being completed ("" for a new one)."""
    from click.shell_completion import ShellComplete

    from .main import main as cli

    words = list(args) or [""]
    incomplete = words.pop()
    comp = ShellComplete(cli, {}, PROG, "_KSCHEDX_COMPLETE")
    try:
        items = comp.get_completions(words, incomplete)
    except Exception:  # a half-typed command line: offer nothing rather than fail
        return [f":{DIRECTIVE_NO_FILE_COMP}"]
    lines, directive = [], DIRECTIVE_NO_FILE_COMP
    for item in items:
        if item.type == "file":
            directive = DIRECTIVE_DEFAULT
        elif item.type == "dir":
            directive = DIRECTIVE_FILTER_DIRS
        else:
            help_text = " ".join((item.help or "").split())
            lines.append(f"{item.value}\t{help_text}" if help_text else str(item.value))
    return lines + [f":{directive}"]


def complete() -> None:
    sys.stdout.write("\n".join(completions(sys.argv[1:])) + "\n")
