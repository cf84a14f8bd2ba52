"""A small cluster on the test API server, and the CLI runner, shared by the
tests of the cluster commands (explain --kubeconfig, snapshot, bind)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import kubeapi_objects as ko
from kschedx.cli import main


@pytest.fixture(autouse=True)
def no_ambient_config(monkeypatch, tmp_path):
    """Never pick up the developer's own cluster."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)


def small_cluster(api):
    """n1: 2 CPUs, half used; n2: 4 CPUs, free, tainted; n3: 4 CPUs, 500m used.
    Pending: default/web (500m), default/big (3.8 CPUs, fits nowhere),
    team/tolerant (tolerates n2's taint)."""
    api.add(ko.node("n1", cpu="2", labels={"zone": "a"}),
            ko.node("n2", cpu="4", labels={"zone": "b"},
                    spec={"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}),
            ko.node("n3", cpu="4", labels={"zone": "b"}))
    api.add(ko.pod("busy-1", node_name="n1", cpu="1"),
            ko.pod("busy-2", node_name="n3", cpu="500m", namespace="team"),
            ko.pod("web", cpu="500m"), ko.pod("big", cpu="3800m"))
    tolerant = ko.pod("tolerant", namespace="team", cpu="100m")
    tolerant["spec"]["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    api.add(tolerant)
    api.add(ko.simple("Namespace", "v1", "default"), ko.simple("Namespace", "v1", "team"))
