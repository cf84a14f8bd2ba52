"""completions/ holds what the Click app generates today, and completing works."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from click.shell_completion import get_completion_class

from kschedx.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("completions_generate", ROOT / "completions" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATE = _generator()


@pytest.mark.parametrize("shell", GENERATE.SHELLS)
def test_completion_script_is_current(shell):
    path = GENERATE.path_for(shell)
    assert path.exists(), f"missing {path.name}: run python completions/generate.py"
    assert path.read_text() == GENERATE.script(shell), f"{path.name} is stale: run python completions/generate.py"


def test_scripts_call_back_into_kschedx():
    assert "_KSCHEDX_COMPLETE=bash_complete" in GENERATE.path_for("bash").read_text()
    assert "_KSCHEDX_COMPLETE=zsh_complete" in GENERATE.path_for("zsh").read_text()
    assert "_KSCHEDX_COMPLETE=fish_complete" in GENERATE.path_for("fish").read_text()


def _complete(args, incomplete):
    comp = get_completion_class("bash")(main, {}, "kschedx", "_KSCHEDX_COMPLETE")
    return [item.value for item in comp.get_completions(args, incomplete)]


def test_completes_commands_and_options():
    assert "explain" in _complete([], "ex")
    options = _complete(["explain"], "--")
    for opt in ("--snapshot", "--output", "--node", "--tie-break", "--seed"):
        assert opt in options
    assert _complete(["explain", "-o"], "") == ["human", "wide", "json", "yaml", "jsonl", "junit", "github", "tap"]


def test_completes_node_names_from_the_snapshot():
    cluster = str(ROOT / "fixtures" / "cluster")
    assert _complete(["explain", "--snapshot", cluster, "--node"], "worker-b") == ["worker-b1", "worker-b2"]
    assert _complete(["explain", "--snapshot", "/nonexistent", "--node"], "") == []
