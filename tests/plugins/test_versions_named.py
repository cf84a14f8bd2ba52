"""Every plugin test names the Kubernetes version it holds its plugin to:
a plugin made without a framework gets a handle of that version
(builders.handle_at), a framework its features or version. The newest
version's defaults, which a plugin built without them reads, change when a
version is added, and a test's meaning with them."""

from __future__ import annotations

import ast
from pathlib import Path

from kschedx.plugins.registry import IN_TREE

HERE = Path(__file__).parent
PLUGIN_CLASSES = {d.factory.__name__ for d in IN_TREE if d.factory is not None}
# builders' ways to a framework: each takes features= or version=.
FRAMEWORK_BUILDERS = {"framework", "framework_for", "Env"}
# Modules whose own Env class builds its framework with their VERSION.
OWN_ENV = {"test_defaultpreemption.py"}


def _unnamed(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            keywords = {k.arg for k in node.keywords}
            if name in FRAMEWORK_BUILDERS and not keywords & {"features", "version"} and None not in keywords \
                    and not (name == "Env" and path.name in OWN_ENV):
                found.append(f"{path.name}:{node.lineno}: {name}(...) without features= or version=")
            if name == "build_snapshot" and len(node.args) < 2 and "features" not in keywords:
                found.append(f"{path.name}:{node.lineno}: build_snapshot(...) without features")
            if name in PLUGIN_CLASSES and node.args and isinstance(node.args[0], ast.Constant) \
                    and node.args[0].value is None:
                found.append(f"{path.name}:{node.lineno}: {name}(None): give it handle_at(version)")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            for arg, default in zip(args.args[len(args.args) - len(args.defaults):], args.defaults):
                if arg.arg in ("features", "version") and isinstance(default, ast.Constant) and default.value is None:
                    if not _passes_version(node):
                        found.append(f"{path.name}:{node.lineno}: {node.name}({arg.arg}=None) falls back to the "
                                     "newest version")
    return found


def _passes_version(fn) -> bool:
    """A helper whose `features=None` is given to a builder together with a version."""
    return any(isinstance(n, ast.Call) and {"features", "version"} <= {k.arg for k in n.keywords}
               for n in ast.walk(fn))


def test_every_plugin_test_names_its_version():
    found = [f for path in sorted(HERE.glob("test_*.py")) for f in _unnamed(path)]
    assert found == []


def test_the_check_finds_an_unnamed_version(tmp_path):
    path = tmp_path / "test_x.py"
    path.write_text("def test():\n    NodeName(None)\n    framework(node)\n    framework(node, version='1.35')\n"
                    "    build_snapshot(cluster)\n\n\ndef helper(features=None):\n    return framework(features=features)\n")
    assert sorted(line.split(": ", 1)[0] for line in _unnamed(path)) == ["test_x.py:2", "test_x.py:3", "test_x.py:5",
                                                                   "test_x.py:8"]
