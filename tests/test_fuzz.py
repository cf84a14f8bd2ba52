"""Hostile input never reaches a traceback: a fixed-seed, time-bounded slice
of the fuzzing suite (tests/fuzz.py) over the golden fixtures, kubeconfigs
and objects served by a live API server. The README gives the long run."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import strategies as st

import fuzz
from kschedx.cli.main import main

GOLDEN = sorted((Path(__file__).resolve().parent / "golden" / "cases").glob("*.yaml"))
_LOADED = {}


def _golden(path: Path) -> list[dict]:
    if path not in _LOADED:
        _LOADED[path] = [d for d in yaml.safe_load_all(path.read_text()) if d]
    return yaml.safe_load(yaml.safe_dump(_LOADED[path]))  # a fresh deep copy, no aliases


def _run(args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=True)


def _dump(docs, path: Path) -> None:
    path.write_text(yaml.safe_dump_all(docs, allow_unicode=True))


@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_mutated_golden_fixtures_never_crash(command):
    budget = fuzz.Budget()

    def prop(case, data, output):
        budget.count()
        docs = _golden(case)
        changes = fuzz.mutate(data, docs)
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "cluster.yaml"
            _dump(docs, f)
            r = _run([command, "--snapshot", f, "-o", output, "--tie-break", "name"])
        fuzz.assert_clean(r, {0, 1, 3}, f"{case.name} {changes}")

    budget.run(prop, f"test_mutated_golden_fixtures_never_crash[{command}]", case=st.sampled_from(GOLDEN),
               data=st.data(), output=st.sampled_from(["json", "yaml", "wide"]))
    assert budget.runs > 0


def test_mutated_pod_files_never_crash():
    """The same rule for POD_FILE (pods given beside a good snapshot)."""
    budget = fuzz.Budget(fuzz.SECONDS / 2)
    cluster = GOLDEN[0].parent / "hand-01-resources-taint.yaml"

    def prop(case, data):
        budget.count()
        pods = [d for d in _golden(case) if d.get("kind") == "Pod" and not d.get("spec", {}).get("nodeName")]
        if not pods:
            return
        changes = fuzz.mutate(data, pods)
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "pods.yaml"
            _dump(pods, f)
            r = _run(["explain", f, "--snapshot", cluster, "-o", "json"])
        fuzz.assert_clean(r, {0, 1, 3}, f"{case.name} {changes}")

    budget.run(prop, "test_mutated_pod_files_never_crash", case=st.sampled_from(GOLDEN), data=st.data())


KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}}],
    "users": [{"name": "u", "user": {"token": "t"}}],
    "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "default"}}],
    "current-context": "x",
    "preferences": {},
}


def test_mutated_kubeconfigs_never_crash(monkeypatch, tmp_path):
    """A kubeconfig kschedx cannot use is exit 3; one that parses but whose
    cluster cannot be reached (nothing listens on port 1) is exit 4."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    budget = fuzz.Budget(fuzz.SECONDS / 2)

    def prop(data):
        budget.count()
        docs = [yaml.safe_load(yaml.safe_dump(KUBECONFIG))]
        changes = fuzz.mutate(data, docs, protect=())
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "kubeconfig"
            _dump(docs, f)
            r = _run(["explain", "--all-pending", "--kubeconfig", f, "--request-timeout", "2s", "-o", "json"])
        fuzz.assert_clean(r, {3, 4}, f"kubeconfig {changes}")

    budget.run(prop, "test_mutated_kubeconfigs_never_crash", data=st.data())
    assert budget.runs > 0


def test_served_objects_of_any_shape_never_crash_and_snapshot_leaves_nothing(kube_tls, monkeypatch, tmp_path):
    """Objects of the wrong shape from the API server: exit 4 naming the
    object (or a clean run when the change is harmless); `snapshot` writes its
    file completely or not at all."""
    from kubeapi import KubeAPIServer

    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    budget = fuzz.Budget(fuzz.SECONDS / 2)
    cases = [c for c in GOLDEN if c.name.startswith(("hand-", "dra-2-1."))]

    def prop(case, data):
        budget.count()
        docs = [d for d in _golden(case) if d.get("kind") != "Namespace"]
        changes = fuzz.mutate(data, docs, protect=("kind", "apiVersion", "metadata", "name", "namespace"))
        with tempfile.TemporaryDirectory() as tmp:
            server = KubeAPIServer(kube_tls).start()
            try:
                for obj in docs:
                    try:
                        server.add(obj)
                    except Exception:  # noqa: BLE001 - the test server cannot store it: nothing to serve
                        pass
                kubeconfig = server.write_kubeconfig(Path(tmp) / "kubeconfig")
                out = Path(tmp) / "out" / "snap.yaml"
                out.parent.mkdir()
                r = _run(["snapshot", "-o", out, "--kubeconfig", kubeconfig])
                fuzz.assert_clean(r, {0, 4}, f"snapshot {case.name} {changes}")
                left = sorted(p.name for p in out.parent.iterdir())
                assert left == (["snap.yaml"] if r.exit_code == 0 else []), (left, changes)
                r = _run(["explain", "--all-pending", "--kubeconfig", kubeconfig, "-o", "json"])
                fuzz.assert_clean(r, {0, 1, 3, 4}, f"explain {case.name} {changes}")
            finally:
                server.stop()

    budget.run(prop, "test_served_objects_of_any_shape_never_crash_and_snapshot_leaves_nothing",
               case=st.sampled_from(cases), data=st.data())


CONFIGS = sorted([*(GOLDEN[0].parent.parent.parent / "golden-config" / "configs").glob("*.yaml"),
                  *(GOLDEN[0].parent.parent.parent.parent / "fixtures" / "config").glob("*.yaml"),
                  *(GOLDEN[0].parent.parent.parent / "config").glob("*.yaml")])


def test_mutated_scheduler_configs_never_crash(tmp_path):
    """A KubeSchedulerConfiguration kschedx cannot use is exit 3 naming the
    file and field; one it can use runs (exit 0 or 1)."""
    budget = fuzz.Budget(fuzz.SECONDS / 2)
    cluster = GOLDEN[0].parent / "hand-04-topology-spread.yaml"

    def prop(config, data):
        budget.count()
        docs = [yaml.safe_load(config.read_text())]
        changes = fuzz.mutate(data, docs)
        with tempfile.TemporaryDirectory() as tmp:
            f = Path(tmp) / "config.yaml"
            _dump(docs, f)
            r = _run(["simulate", "--snapshot", cluster, "--config", f, "-o", "json", "--tie-break", "name"])
        fuzz.assert_clean(r, {0, 1, 3}, f"{config.name} {changes}")

    budget.run(prop, "test_mutated_scheduler_configs_never_crash", config=st.sampled_from(CONFIGS),
               data=st.data())
    assert budget.runs > 0
