"""The README's first commands are the ones that work, and CI runs the same test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _code_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, flags=re.S)


def test_readme_opens_with_install_and_run_then_tests():
    first, second = _code_blocks(README)[:2]
    assert first.strip().startswith("python3 -m venv .venv && . .venv/bin/activate && pip install . && kschedx explain ")
    assert "--snapshot fixtures/cluster/" in first
    for path in re.findall(r"fixtures/\S+", first):
        assert (ROOT / path).exists(), path
    assert "pytest" in second


def test_ci_runs_exactly_the_readme_test_command():
    test_command = _code_blocks(README)[1].strip()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci
    assert ci[0] == "#!/usr/bin/env bash" and "set -euo pipefail" in ci


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_help_epilog_links_existing_sections():
    from kschedx.cli import README_EPILOG, README_SECTIONS

    anchors = {_anchor(h) for h in re.findall(r"^#{2,4} (.+)$", README, flags=re.M)}
    for anchor, _ in README_SECTIONS:
        assert anchor in anchors, f"kschedx --help links README.md#{anchor}, which no heading makes"
        assert f"README.md#{anchor}" in README_EPILOG
