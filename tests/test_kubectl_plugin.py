"""kschedx as a kubectl plugin, against the local HTTPS test API server: kubectl
itself running `kubectl-kschedx` (and asking `kubectl_complete-kschedx` for
completions) where kubectl is installed, the entry points directly otherwise;
kubectl's global flags; completion of namespaces, pods and nodes from a live
cluster."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from click.shell_completion import get_completion_class
from click.testing import CliRunner

from builders import api_node, api_pod, metadata, served
from cluster_scenarios import no_ambient_config  # noqa: F401 (fixture)
from kschedx.cli import kubectl_plugin
from kschedx.cli.main import main

KUBECTL = shutil.which("kubectl")


def shop_cluster(api):
    """n1 (2 CPUs) and n2 (4 CPUs); pending: shop/web (500m), shop/huge (8 CPUs,
    fits nowhere), shop/api (priority 100: first in queue order), team/job."""
    api.add(api_node("n1", cpu="2"), api_node("n2", cpu="4"))
    api.add(api_pod("web", namespace="shop", cpu="500m"), api_pod("huge", namespace="shop", cpu="8"),
            api_pod("job", namespace="team", cpu="100m"))
    first = api_pod("api", namespace="shop", cpu="100m")
    first["spec"]["priority"] = 100
    api.add(first)
    api.add(served("v1", "Namespace", metadata("shop")), served("v1", "Namespace", metadata("team")),
            served("v1", "Namespace", metadata("default")))


def _plugin_dir(tmp_path: Path) -> Path:
    """A directory holding kubectl-kschedx and kubectl_complete-kschedx: the
    installed console scripts, or small launchers of this interpreter when the
    package was installed before they existed."""
    scripts = Path(sysconfig.get_path("scripts"))
    if (scripts / "kubectl-kschedx").exists() and (scripts / "kubectl_complete-kschedx").exists():
        return scripts
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, func in (("kubectl-kschedx", "main"), ("kubectl_complete-kschedx", "complete")):
        path = bin_dir / name
        path.write_text(f"#!{sys.executable}\nfrom kschedx.kubectl_plugin import {func}\n{func}()\n")
        path.chmod(0o755)
    return bin_dir


def _kubectl(args, kubeconfig, tmp_path):
    env = dict(os.environ, KUBECONFIG=str(kubeconfig), HOME=str(tmp_path / "home"),
               PATH=f"{_plugin_dir(tmp_path)}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([KUBECTL, *args], env=env, capture_output=True, text=True, timeout=120)


def _entry_point(args, kubeconfig, monkeypatch):
    """What kubectl would run, in-process: the plugin's prog name, KUBECONFIG set."""
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    return CliRunner().invoke(main, list(args), prog_name=kubectl_plugin.PROG, catch_exceptions=False)


def test_kubectl_kschedx_explain_all_pending_in_a_namespace(kube_api, tmp_path, monkeypatch):
    shop_cluster(kube_api)
    args = ["kschedx", "explain", "--all-pending", "-n", "shop", "-o", "json", "--tie-break", "name"]
    if KUBECTL:
        r = _kubectl(args, kube_api.kubeconfig, tmp_path)
        stdout, code = r.stdout, r.returncode
        assert code == 1, r.stderr  # shop/huge fits nowhere
    else:  # pragma: no cover - machines without kubectl
        r = _entry_point(args[1:], kube_api.kubeconfig, monkeypatch)
        stdout, code = r.stdout, r.exit_code
    doc = json.loads(stdout)
    # Only shop's pending pods, in queue order (priority first, then age, then the API's order).
    assert [p["pod"] for p in doc["pods"]] == ["shop/api", "shop/huge", "shop/web"]
    assert [p["status"] for p in doc["pods"]] == ["Scheduled", "Unschedulable", "Scheduled"]
    assert code == 1


@pytest.mark.skipif(not KUBECTL, reason="kubectl is not installed: the entry point is tested directly")
def test_kubectl_runs_the_plugin_with_kubectl_style_flags(kube_api, tmp_path):
    shop_cluster(kube_api)
    r = _kubectl(["kschedx", "--namespace=team", "explain", "--all-pending", "-o", "json"],
                 kube_api.kubeconfig, tmp_path)
    assert r.returncode == 0, r.stderr
    assert [p["pod"] for p in json.loads(r.stdout)["pods"]] == ["team/job"]
    r = _kubectl(["kschedx", "explain", "--help"], kube_api.kubeconfig, tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("Usage: kubectl kschedx explain")


def test_global_flags_before_the_command(kube_api, tmp_path, monkeypatch):
    shop_cluster(kube_api)
    kc = str(kube_api.kubeconfig)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    r = CliRunner().invoke(main, ["--kubeconfig", kc, "-n", "team", "--request-timeout", "10s",
                                  "explain", "--all-pending", "-o", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    assert [p["pod"] for p in json.loads(r.stdout)["pods"]] == ["team/job"]
    # The command's own flag wins over the one before it.
    r = CliRunner().invoke(main, ["--kubeconfig", kc, "-n", "team", "explain", "-n", "shop", "web",
                                  "-o", "json"], catch_exceptions=False)
    assert [p["pod"] for p in json.loads(r.stdout)["pods"]] == ["shop/web"]


def test_the_context_namespace_is_the_default(kube_api, tmp_path, monkeypatch):
    shop_cluster(kube_api)
    kc = kube_api.write_kubeconfig(tmp_path / "kc-team", namespace="team")
    r = _entry_point(["explain", "--all-pending", "-o", "json", "--kubeconfig", str(kc)], kc, monkeypatch)
    assert [p["pod"] for p in json.loads(r.stdout)["pods"]] == ["team/job"]
    r = _entry_point(["explain", "job", "-o", "json", "--kubeconfig", str(kc)], kc, monkeypatch)
    assert [p["pod"] for p in json.loads(r.stdout)["pods"]] == ["team/job"]
    r = _entry_point(["explain", "-A", "-l", "", "-o", "json", "--kubeconfig", str(kc), "--tie-break", "name"],
                     kc, monkeypatch)
    assert [p["pod"] for p in json.loads(r.stdout)["pods"]] == ["shop/api", "shop/huge", "shop/web", "team/job"]


def test_in_cluster_namespace_comes_from_pod_namespace(monkeypatch):
    from kschedx.sources import kubeconfig as source

    monkeypatch.setenv("POD_NAMESPACE", "ops")
    assert source._in_cluster_namespace() == "ops"
    monkeypatch.delenv("POD_NAMESPACE")
    monkeypatch.setattr(source, "SERVICE_ACCOUNT_NAMESPACE", "/nonexistent/namespace")
    assert source._in_cluster_namespace() == "default"


# ---- completion ----------------------------------------------------------------------------


def _complete(args, incomplete):
    comp = get_completion_class("bash")(main, {}, "kschedx", "_KSCHEDX_COMPLETE")
    return [item.value for item in comp.get_completions(args, incomplete) if item.type == "plain"]


def test_completes_namespaces_pods_and_nodes_from_the_live_cluster(kube_api):
    shop_cluster(kube_api)
    kc = str(kube_api.kubeconfig)
    assert _complete(["explain", "--kubeconfig", kc, "-n"], "") == ["default", "shop", "team"]
    assert _complete(["explain", "--kubeconfig", kc, "--node"], "n") == ["n1", "n2"]
    assert _complete(["explain", "--kubeconfig", kc], "shop/") == ["shop/api", "shop/huge", "shop/web"]
    assert _complete(["explain", "--kubeconfig", kc, "-n", "shop"], "h") == ["huge"]
    assert _complete(["bind", "--kubeconfig", kc], "team/") == ["team/job"]
    assert _complete(["--kubeconfig", kc, "simulate"], "te") == ["team/job"]  # a global flag


def test_completes_from_the_snapshot():
    cluster = str(Path(__file__).resolve().parent.parent / "fixtures" / "cluster")
    assert "shop" in _complete(["explain", "--snapshot", cluster, "-n"], "")
    assert _complete(["explain", "--snapshot", cluster], "shop/") == ["shop/search-indexer-5f6c7d8b9-r2x4z"]
    assert _complete(["explain", "--snapshot", cluster, "--node"], "worker-a") == ["worker-a1", "worker-a2"]


def test_completion_of_an_unreachable_cluster_is_empty(tmp_path, no_ambient_config):  # noqa: F811
    assert _complete(["explain", "--kubeconfig", str(tmp_path / "missing"), "-n"], "") == []


def test_kubectl_complete_speaks_cobras_protocol():
    cluster = str(Path(__file__).resolve().parent.parent / "fixtures" / "cluster")
    assert kubectl_plugin.completions(["explain", "--snapshot", cluster, "--node", "worker-b"]) == [
        "worker-b1", "worker-b2", ":4"]
    lines = kubectl_plugin.completions(["ex"])
    assert lines[0].startswith("explain\t") and lines[-1] == ":4"
    # A POD_FILE place: the shell's own file completion (directive 0) besides the pods.
    assert kubectl_plugin.completions(["explain", "--snapshot", cluster, "sh"]) == [
        "shop/search-indexer-5f6c7d8b9-r2x4z", ":0"]
    lines = kubectl_plugin.completions(["explain", "-o", ""])
    assert lines[:4] == ["human", "wide", "json", "yaml"] and lines[-1] == ":4"


@pytest.mark.skipif(not KUBECTL, reason="kubectl is not installed")
def test_kubectl_asks_the_completion_helper(kube_api, tmp_path):
    shop_cluster(kube_api)
    r = _kubectl(["__complete", "kschedx", "explain", "-n", "shop", "w"], kube_api.kubeconfig, tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "web" in lines and lines[-1].startswith(":")
