"""Shared pytest fixtures, and the shared test helpers (builders/,
golden_compare.py, kubeapi*.py) made importable from every test directory."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# ---- a local HTTPS Kubernetes API server (tests/kubeapi.py) ----------------------------


@pytest.fixture(scope="session")
def kube_tls(tmp_path_factory):
    """A throwaway CA and a server certificate for 127.0.0.1, made once per session."""
    from kubeapi_tls import make_server_material

    return make_server_material(tmp_path_factory.mktemp("kube-tls"))


@pytest.fixture
def kube_api(kube_tls, tmp_path):
    """A running test API server, empty; `kube_api.kubeconfig` is a kubeconfig for it
    (CA inline, token user, context `kschedx-test`) in tmp_path."""
    from kubeapi import KubeAPIServer

    server = KubeAPIServer(kube_tls, removal_delay=0.2).start()
    server.kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    try:
        yield server
    finally:
        server.stop()
    assert not server.internal_errors, server.internal_errors[0]
