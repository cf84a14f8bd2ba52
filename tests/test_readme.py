"""The README's first commands are the ones that work, and CI runs the same test
command; the README and `kschedx --help` link to sections that exist; the
project layout in docs/layout.md lists every module and folder."""

from __future__ import annotations

import re
import tomllib
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"


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


def test_readme_is_a_front_page():
    lines = README.splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines: the rest belongs in docs/"


def test_readme_gives_each_dependency_its_reason():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    section = README[README.index("## Dependencies"):]
    named = set()
    for row in re.findall(r"^\| (.+?) \| .+ \|$", section, flags=re.M):
        named.update(name.strip() for name in row.split(","))
    for requirement in requirements:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
        assert name in named, f"README 'Dependencies' does not say why {name} is needed"


# ---- links: README.md#anchor and docs/page.md#anchor resolve ------------------------------

def _headings(text: str) -> list[str]:
    """A Markdown page's headings, in order, outside fenced code blocks."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return re.findall(r"^#{1,6} (.+?)#*$", text, flags=re.M)


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _site_anchor(heading: str) -> str:
    """MkDocs' anchor of a heading (Python-Markdown's toc slugify): code marks
    dropped, ASCII only, punctuation but '-' and '_' dropped, lower case, each
    run of spaces and '-' one '-'."""
    text = unicodedata.normalize("NFKD", heading.replace("`", ""))
    text = text.encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(text: str, slug, repeat: str) -> set[str]:
    """Every anchor a page's headings make; a repeated one gets a number
    (GitHub: 'name-1', MkDocs: 'name_1')."""
    anchors = set()
    for heading in _headings(text):
        anchor, n = slug(heading), 0
        while anchor in anchors:
            n += 1
            anchor = f"{slug(heading)}{repeat}{n}"
        anchors.add(anchor)
    return anchors


def _resolves(target: str, base: str = "README.md") -> bool:
    """Whether a relative link from `base` (README.md: the repository's root)
    names a file that exists and, with '#anchor', a heading of it. An anchor in
    docs/ must be the same on GitHub and on the MkDocs site, where both show
    the page."""
    path, _, anchor = target.partition("#")
    path = path or base
    page = ROOT / path
    if not page.is_file():
        return False
    if not anchor:
        return True
    text = page.read_text()
    if path == "README.md":
        return anchor in _anchors(text, _anchor, "-")
    return anchor in _anchors(text, _anchor, "-") and anchor in _anchors(text, _site_anchor, "_")


def test_anchor_helpers_follow_github_and_mkdocs():
    assert _anchor("Choosing pods: namespaces and selectors") == "choosing-pods-namespaces-and-selectors"
    assert _site_anchor("Choosing pods: namespaces and selectors") == "choosing-pods-namespaces-and-selectors"
    assert _anchor("`explain --fix`") == "explain---fix" and _site_anchor("`explain --fix`") == "explain-fix"
    assert _anchors("# A\n## A\n```\n# not a heading\n```\n", _site_anchor, "_") == {"a", "a_1"}


def test_readme_links_resolve():
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", README) if "://" not in t]
    assert any(t.startswith("docs/") for t in targets)
    for target in targets:
        assert _resolves(target), f"README.md links {target}, which no file or heading makes"


def test_help_epilog_links_existing_sections():
    from kschedx.cli.main import HELP_EPILOG, HELP_LINKS

    assert HELP_LINKS
    for target, what in HELP_LINKS:
        assert what.strip(), target
        assert target.startswith(("README.md", "docs/")), target
        assert _resolves(target), f"kschedx --help links {target}, which no file or heading makes"
        assert target in HELP_EPILOG, target


# ---- docs/layout.md lists every module and folder ---------------------------------------------

_IGNORED_DIRS = {"__pycache__", "out"}  # build output; benchmarks/out is git-ignored


def _layout_paths() -> set[str]:
    """The paths docs/layout.md's tree names: indentation (two spaces a
    level) gives each name its parent folder."""
    layout = (DOCS / "layout.md").read_text()
    section = layout[layout.index("## Modules and folders"):]
    block = re.findall(r"```text\n(.*?)```", section, flags=re.S)[0]
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
    levels deep (but build output: build/, dist/, MkDocs' site/)."""
    required = set()
    for path in (ROOT / "kschedx").rglob("*"):
        rel = path.relative_to(ROOT).as_posix()
        if any(part in _IGNORED_DIRS or part.endswith(".egg-info") for part in path.parts):
            continue
        if path.is_dir() or (path.suffix == ".py" and path.name != "__init__.py"):
            required.add(rel)
    for path in ROOT.glob("*/"):
        if path.is_dir() and (not path.name.startswith(".") or path.name == ".ci") \
                and path.name not in ("build", "dist", "site") and not path.name.endswith(".egg-info"):
            required.add(path.name)
            for sub in path.iterdir():
                if sub.is_dir() and sub.name not in _IGNORED_DIRS and not sub.name.startswith("."):
                    required.add(f"{path.name}/{sub.name}")
    return required


def test_project_layout_lists_every_module_and_folder():
    listed = _layout_paths()
    missing = sorted(_required_paths() - listed)
    assert not missing, f"docs/layout.md lacks a line for: {', '.join(missing)}"
    gone = sorted(p for p in listed if not (ROOT / p).exists())
    assert not gone, f"docs/layout.md names what does not exist: {', '.join(gone)}"
