"""docs/whatif.md's examples run as written on the bundled fixtures: each
`kschedx` line of a sh block ends normally (exit 0 or 1, never a usage, input
or internal error), and the text block after a sh block is what its last
command prints (each line of it found in the output)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "whatif.md"


def examples() -> list[tuple[list[str], list[str]]]:
    """(the sh block's kschedx commands, the text block after it, if any)."""
    blocks = re.findall(r"```(\w+)\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    out = []
    for i, (lang, body) in enumerate(blocks):
        if lang != "sh":
            continue
        commands = [line for line in body.splitlines() if line.startswith("kschedx ")]
        after = blocks[i + 1] if i + 1 < len(blocks) and blocks[i + 1][0] == "text" else None
        out.append((commands, after[1].splitlines() if after else []))
    return out


def test_the_page_has_examples():
    assert sum(len(c) for c, _ in examples()) >= 10


@pytest.mark.parametrize("commands, expected", examples(), ids=lambda v: v[0][:60] if v and isinstance(v[0], str) else "")
def test_examples_run_as_written(commands, expected):
    out = ""
    for command in commands:
        argv = shlex.split(command)
        proc = subprocess.run([sys.executable, "-m", "kschedx", *argv[1:]], capture_output=True, text=True,
                              cwd=ROOT)
        assert proc.returncode in (0, 1), f"{command}: exit {proc.returncode}\n{proc.stderr}"
        out = proc.stdout
    lines = [line.rstrip() for line in out.splitlines()]
    for want in expected:
        assert any(want.rstrip() in line for line in lines), f"{want!r} not in the output of {commands[-1]}:\n{out}"
