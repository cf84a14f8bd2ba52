"""The package's layers: imports point only down, and no modules import each
other in a circle.

Read with the standard library's `ast` rather than an import checker: the
rule is two lines of data (LAYERS) and a graph walk, every import counts
(those inside functions and under TYPE_CHECKING too, since they tie modules
just the same), and nothing has to be installed or configured for it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kschedx"

# Top to bottom. A package may import its own modules and any package on a
# lower line; packages on one line are siblings and must not import each other.
LAYERS = (
    ("cli",),
    ("render", "commands"),
    ("fixes", "whatif"),
    ("result",),
    ("plugins",),
    ("framework",),
    ("extenders",),
    ("config",),
    ("state",),
    ("storage",),
    ("sources",),
    ("api",),
    ("features",),
    ("util",),
)
# kschedx/__init__.py holds only the version strings: every layer may read it.
ROOT_MODULES = {"kschedx"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports, wherever the import stands."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from pkg import module` imports the module; `from mod import name` the module.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer_of(module: str) -> tuple[int, str] | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None
    for depth, names in enumerate(LAYERS):
        if parts[1] in names:
            return depth, parts[1]
    return None


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_every_package_has_a_layer():
    top = {m.split(".")[1] for m in _modules() if m.count(".") >= 1}
    known = {name for names in LAYERS for name in names} | {"__main__"}
    assert top <= known, f"packages (or modules) at the top of kschedx/ without a layer: {sorted(top - known)}"


def test_only_packages_at_the_top():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert not loose, f"modules at the top of kschedx/ (each belongs in the package of its layer): {loose}"


def test_no_import_circles():
    assert _circles(_graph()) == []


def test_imports_point_only_down_the_layers():
    upward = []
    for module, targets in _graph().items():
        mine = _layer_of(module)
        if mine is None:
            continue
        for target in sorted(targets):
            theirs = _layer_of(target)
            if theirs is None or theirs[1] == mine[1]:
                continue
            if theirs[0] <= mine[0]:
                upward.append(f"{module} -> {target}")
    assert upward == [], "imports that do not point down the layers:\n" + "\n".join(upward)


# ---- the checker itself ------------------------------------------------------------------


def test_circles_are_found_through_several_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("source, expected", [
    ("from ..state.snapshot import PodInfo", {"kschedx.state.snapshot"}),
    ("from ..state import snapshot", {"kschedx.state.snapshot"}),
    ("def f():\n    from ..util.errors import InputError", {"kschedx.util.errors"}),
    ("import kschedx.api.labels", {"kschedx.api.labels"}),
    ("from . import KUBERNETES_REFERENCE", {"kschedx.cli"}),  # the package's own __init__
])
def test_imports_are_read_wherever_they_stand(tmp_path, source, expected):
    path = tmp_path / "explain.py"
    path.write_text(source)
    modules = dict.fromkeys(["kschedx.state.snapshot", "kschedx.state", "kschedx.util.errors",
                             "kschedx.api.labels", "kschedx.cli", "kschedx.cli.explain"])
    assert _imports("kschedx.cli.explain", path, modules) == expected


def test_the_layout_page_shows_these_layers():
    """docs/layout.md's table of layers is LAYERS, in order."""
    import re

    page = (PACKAGE.parent / "docs" / "layout.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| (.+?) \|", page, flags=re.M)
    shown: dict[int, tuple] = {}
    for number, packages in rows:
        shown[int(number)] = shown.get(int(number), ()) + tuple(re.findall(r"`(\w+)/`", packages))
    assert [tuple(sorted(shown[n])) for n in sorted(shown)] == [tuple(sorted(names)) for names in LAYERS]
