"""Regenerate the shell completion scripts from the Click app.

    python completions/generate.py          # rewrite completions/kschedx.{bash,zsh,fish}
    python completions/generate.py --check  # exit 1 if a script is out of date

Each script is exactly what `_KSCHEDX_COMPLETE=<shell>_source kschedx` prints:
a small function that asks kschedx itself for completions, so option names,
file paths and node names (from --snapshot) stay current as the app changes.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROG = "kschedx"
COMPLETE_VAR = "_KSCHEDX_COMPLETE"
SHELLS = ("bash", "zsh", "fish")


def script(shell: str) -> str:
    from click.shell_completion import ShellComplete, get_completion_class

    from kschedx.cli.main import main

    comp = get_completion_class(shell)(main, {}, PROG, COMPLETE_VAR)
    # ShellComplete.source, not BashComplete.source: the latter also probes the
    # local bash version, which says nothing about the script's text.
    text = ShellComplete.source(comp)
    return text if text.endswith("\n") else text + "\n"


def path_for(shell: str) -> Path:
    return HERE / f"{PROG}.{shell}"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE.parent))
    check = "--check" in argv
    stale = []
    for shell in SHELLS:
        text = script(shell)
        path = path_for(shell)
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(HERE.parent)}")
    if stale:
        print(f"out of date: {', '.join(stale)} (run: python completions/generate.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
