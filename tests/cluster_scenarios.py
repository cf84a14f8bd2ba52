"""What the tests of live clusters share (the cluster source, explain
--kubeconfig, snapshot, bind): no ambient kubeconfig, the CLI runner, the
in-cluster configuration, a port nothing listens on, and a small cluster on
the test API server."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner

from builders import api_node, api_pod, metadata, served
from kschedx.cli.main import main


@pytest.fixture(autouse=True)
def no_ambient_config(monkeypatch, tmp_path):
    """Never pick up the developer's own cluster."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)


def in_cluster(api, monkeypatch, tmp_path) -> None:
    """Be a pod of the test API server's cluster: its service account token
    and CA where the client looks for them, KUBERNETES_SERVICE_* set."""
    from kubernetes.config import incluster_config

    token = tmp_path / "token"
    token.write_text(api.token)
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(api.tls.ca_cert))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(api.port))


def closed_port() -> int:
    """A local port nothing listens on (it was free a moment ago)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def small_cluster(api):
    """n1: 2 CPUs, half used; n2: 4 CPUs, free, tainted; n3: 4 CPUs, 500m used.
    Pending: default/web (500m), default/big (3.8 CPUs, fits nowhere),
    team/tolerant (tolerates n2's taint)."""
    api.add(api_node("n1", cpu="2", labels={"zone": "a"}),
            api_node("n2", cpu="4", labels={"zone": "b"},
                     spec={"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}),
            api_node("n3", cpu="4", labels={"zone": "b"}))
    api.add(api_pod("busy-1", node_name="n1", cpu="1"),
            api_pod("busy-2", node_name="n3", cpu="500m", namespace="team"),
            api_pod("web", cpu="500m"), api_pod("big", cpu="3800m"))
    tolerant = api_pod("tolerant", namespace="team", cpu="100m")
    tolerant["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    api.add(tolerant)
    api.add(served("v1", "Namespace", metadata("default")), served("v1", "Namespace", metadata("team")))
