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
    from kschedx.cli.main import README_EPILOG, README_SECTIONS

    anchors = {_anchor(h) for h in re.findall(r"^#{2,4} (.+)$", README, flags=re.M)}
    for anchor, _ in README_SECTIONS:
        assert anchor in anchors, f"kschedx --help links README.md#{anchor}, which no heading makes"
        assert f"README.md#{anchor}" in README_EPILOG


# ---- "Project layout" lists every module and folder -----------------------------------------

_IGNORED_DIRS = {"__pycache__", "out"}  # build output; benchmarks/out is git-ignored


def _layout_paths() -> set[str]:
    """The paths the README's layout tree names: indentation (two spaces a
    level) gives each name its parent folder."""
    section = README[README.index("## Project layout"):]
    block = _code_blocks(section.replace("```\n", "```sh\n", 1))[0]
    paths, stack = set(), []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 2 == 0, f"layout line indented by {indent}: {line!r}"
        level = indent // 2
        name = line.split()[0]
        del stack[level:]
        assert len(stack) == level, f"layout line without its parent folder: {line!r}"
        path = "/".join(stack + [name.rstrip("/")])
        paths.add(path)
        if name.endswith("/"):
            stack.append(name.rstrip("/"))
    return paths


def _required_paths() -> set[str]:
    """Every module of the package (its folders stand for the __init__.py),
    every folder of the package, and every folder of the repository two
    levels deep."""
    required = set()
    for path in (ROOT / "kschedx").rglob("*"):
        rel = path.relative_to(ROOT).as_posix()
        if any(part in _IGNORED_DIRS or part.endswith(".egg-info") for part in path.parts):
            continue
        if path.is_dir() or (path.suffix == ".py" and path.name != "__init__.py"):
            required.add(rel)
    for path in ROOT.glob("*/"):
        if path.is_dir() and (not path.name.startswith(".") or path.name == ".ci") \
                and path.name not in ("build", "dist") and not path.name.endswith(".egg-info"):
            required.add(path.name)
            for sub in path.iterdir():
                if sub.is_dir() and sub.name not in _IGNORED_DIRS and not sub.name.startswith("."):
                    required.add(f"{path.name}/{sub.name}")
    return required


def test_project_layout_lists_every_module_and_folder():
    listed = _layout_paths()
    missing = sorted(_required_paths() - listed)
    assert not missing, f"README 'Project layout' lacks a line for: {', '.join(missing)}"
    gone = sorted(p for p in listed if not (ROOT / p).exists())
    assert not gone, f"README 'Project layout' names what does not exist: {', '.join(gone)}"
