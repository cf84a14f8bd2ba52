"""kschedx.sources.cluster through the official client against the local test API server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from builders import api_node, api_pdb, api_pod, metadata, served
from cluster_scenarios import closed_port, in_cluster, no_ambient_config  # noqa: F401 (fixture)
from kubeapi_tls import make_ca
from kschedx.util.errors import ClusterError, InputError
from kschedx.sources import cluster, kinds, transport
from kschedx.sources.transport import BindConflict, ClusterAPIError, EvictionBlocked

ROOT = Path(__file__).resolve().parents[1]


def connect(server, **kw):
    kw.setdefault("request_timeout", 5.0)
    return cluster.connect(str(server.kubeconfig), **kw)


def names(objs, kind=None):
    return sorted(o["metadata"]["name"] for o in objs if kind is None or o["kind"] == kind)


# ---- reading ---------------------------------------------------------------------------


def test_pagination_follows_continue_tokens_across_many_pages(kube_api, monkeypatch):
    monkeypatch.setattr(cluster, "PAGE_SIZE", 7)
    kube_api.add(*[api_node(f"node-{i:02}") for i in range(10)])
    kube_api.add(*[api_pod(f"p-{i:03}", namespace=f"ns-{i % 3}", node_name="node-01")
                   for i in range(100)])
    seen = []
    read = connect(kube_api).read_objects(progress=lambda *a: seen.append(a))

    assert names(read.objects, "Pod") == sorted(f"p-{i:03}" for i in range(100))
    assert names(read.objects, "Node") == sorted(f"node-{i:02}" for i in range(10))
    pod_requests = [r for r in kube_api.requests if r.path == "/api/v1/pods"]
    assert len(pod_requests) == 15  # ceil(100 / 7)
    assert all(r.query["limit"] == "7" for r in pod_requests)
    assert "continue" not in pod_requests[0].query
    assert all(r.query.get("continue") for r in pod_requests[1:])
    # progress: every page of the required kinds, then one final call per optional kind
    pod_progress = [a for a in seen if a[0] == "Pod"]
    assert pod_progress[0] == ("Pod", 7, False) and pod_progress[-1] == ("Pod", 100, True)
    assert {a[0] for a in seen if a[2]} == {k.kind for k in kinds.KINDS}


def test_every_kind_is_read_and_items_get_kind_and_api_version(kube_api):
    objs = [api_node("n1"), api_pod("p1", node_name="n1")]
    for kind in kinds.KINDS[2:]:
        ns = None if kind.kind in ("Namespace", "PersistentVolume", "StorageClass", "CSINode",
                                   "CSIDriver", "VolumeAttachment", "PriorityClass",
                                   "RuntimeClass", "ResourceSlice", "DeviceClass") else "default"
        objs.append(served(kind.api_version, kind.kind, metadata(f"x-{kind.plural}", ns)))
    objs[1]["metadata"]["managedFields"] = [{"manager": "kubelet", "operation": "Update"}]
    kube_api.add(*objs)
    # The wire format really omits them in list items: the client must add them.
    assert b'"kind"' not in kube_api.store.get_raw("Pod", "default", "p1")

    read = connect(kube_api).read_objects()

    assert not read.warnings and not read.unreadable
    got = {(o["kind"], o["apiVersion"]) for o in read.objects}
    assert got == {(k.kind, k.api_version) for k in kinds.KINDS}
    pod = next(o for o in read.objects if o["kind"] == "Pod")
    assert "managedFields" not in pod["metadata"]
    assert pod["spec"]["nodeName"] == "n1"


def test_terminal_pods_are_skipped(kube_api):
    kube_api.add(api_node("n1"), api_pod("running", node_name="n1"), api_pod("pending"),
                 api_pod("done", node_name="n1", phase="Succeeded"),
                 api_pod("crashed", node_name="n1", phase="Failed"))
    read = connect(kube_api).read_objects()
    assert names(read.objects, "Pod") == ["pending", "running"]
    [first] = [r for r in kube_api.requests if r.path == "/api/v1/pods"]
    assert first.query["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"


def test_terminal_pods_are_skipped_even_if_the_server_ignores_the_selector():
    items = [{"metadata": {"name": "a"}, "status": {"phase": "Failed"}},
             {"metadata": {"name": "b"}, "status": {"phase": "Running"}}]
    out = []
    cluster._adopt_items(items, kinds.POD, out)
    assert [o["metadata"]["name"] for o in out] == ["b"]


def test_forbidden_optional_kind_is_a_warning(kube_api):
    kube_api.add(api_node("n1"))
    kube_api.inject("/apis/policy/v1/poddisruptionbudgets", 403)
    read = connect(kube_api).read_objects()
    assert set(read.unreadable) == {"PodDisruptionBudget"}
    assert 'cannot list resource "poddisruptionbudgets" in API group "policy"' in \
        read.unreadable["PodDisruptionBudget"]
    # What it costs the results (a warning, notEvaluated) is the cluster state's to say.
    assert not read.warnings
    assert names(read.objects, "Node") == ["n1"]


def test_group_not_served_is_a_warning_per_kind(kube_api):
    kube_api.disable_group("resource.k8s.io/v1")
    read = connect(kube_api).read_objects()
    assert set(read.unreadable) == {"ResourceSlice", "DeviceClass", "ResourceClaim",
                                    "ResourceClaimTemplate"}
    assert all("not served" in why for why in read.unreadable.values())


def test_forbidden_pods_is_a_cluster_error_naming_verb_and_resource(kube_api):
    kube_api.inject("/api/v1/pods", 403)
    with pytest.raises(ClusterError) as exc:
        connect(kube_api).read_objects()
    msg = str(exc.value)
    assert kube_api.url in msg and 'context "kschedx-test"' in msg
    assert 'cannot list resource "pods"' in msg and "at the cluster scope" in msg
    assert "\n" not in msg and exc.value.exit_code == 4


def test_bad_token_is_401(kube_api, tmp_path):
    kc = kube_api.write_kubeconfig(tmp_path / "bad", token="not-the-token")
    with pytest.raises(ClusterError, match="401 Unauthorized") as exc:
        cluster.connect(str(kc)).read_objects()
    assert kube_api.url in str(exc.value)


def test_unreachable_server_fails_fast(kube_api, tmp_path):
    kc = kube_api.write_kubeconfig(tmp_path / "closed", server=f"https://127.0.0.1:{closed_port()}")
    start = time.monotonic()
    with pytest.raises(ClusterError, match="connection refused") as exc:
        cluster.connect(str(kc)).read_objects()
    assert time.monotonic() - start < 2
    assert "127.0.0.1" in str(exc.value)


def test_unknown_host_is_a_dns_error(kube_api, tmp_path):
    kc = kube_api.write_kubeconfig(tmp_path / "dns", server="https://kschedx-no-such-host.invalid:6443")
    with pytest.raises(ClusterError, match="DNS|resolve"):
        cluster.connect(str(kc), request_timeout=3).read_objects()


def test_wrong_ca_is_a_tls_error(kube_api, tmp_path):
    other_ca, _ = make_ca(tmp_path / "other-ca", name="someone-else")
    import base64

    kc = kube_api.write_kubeconfig(tmp_path / "wrong-ca",
                                   ca_data=base64.b64encode(other_ca.read_bytes()).decode())
    with pytest.raises(ClusterError) as exc:
        cluster.connect(str(kc)).read_objects()
    msg = str(exc.value)
    assert "TLS" in msg and "certificate" in msg and "\n" not in msg
    deadline = time.monotonic() + 2
    while not kube_api.tls_failures and time.monotonic() < deadline:  # the server's thread may lag
        time.sleep(0.02)
    assert kube_api.tls_failures  # the server saw the handshake fail


def test_429_with_retry_after_is_retried(kube_api):
    kube_api.add(api_node("n1"))
    kube_api.inject("/api/v1/nodes", 429, retry_after=1, times=1)
    start = time.monotonic()
    read = connect(kube_api).read_objects()
    assert time.monotonic() - start >= 1.0
    assert names(read.objects, "Node") == ["n1"]
    assert kube_api.request_count("/api/v1/nodes") == 2


@pytest.mark.parametrize("fault", [{"status": 500}, {"status": 503}, {"reset": True}])
def test_transient_failures_are_retried(kube_api, fault):
    kube_api.add(api_node("n1"), api_pod("p1", node_name="n1"))
    kube_api.inject("/api/v1/pods", times=2, **fault)
    read = connect(kube_api).read_objects()
    assert names(read.objects, "Pod") == ["p1"]
    assert kube_api.request_count("/api/v1/pods") == 3


def test_retries_stop_when_the_budget_is_spent(kube_api):
    kube_api.inject("/api/v1/nodes", 503)
    start = time.monotonic()
    with pytest.raises(ClusterError, match="503"):
        connect(kube_api, retry_budget=1.0).read_objects()
    assert time.monotonic() - start < 3
    assert kube_api.request_count("/api/v1/nodes") >= 2


def test_slow_server_times_out(kube_api):
    kube_api.inject("/api/v1/nodes", delay=2.0)
    start = time.monotonic()
    with pytest.raises(ClusterError, match="timed out") as exc:
        connect(kube_api, request_timeout=0.5).read_objects()
    assert time.monotonic() - start < 1.8
    assert "listing nodes" in str(exc.value)


def test_expired_continue_token_restarts_the_list(kube_api, monkeypatch):
    monkeypatch.setattr(cluster, "PAGE_SIZE", 10)
    kube_api.add(api_node("n1"), *[api_pod(f"p-{i:02}", node_name="n1") for i in range(35)])
    list_page = kube_api.store.list_page
    expired = []

    def compact_after_first_page(resource, *args, **kw):
        page = list_page(resource, *args, **kw)
        if resource.kind == "Pod" and not expired:  # etcd compacts the list's revision
            kube_api.store.expire_snapshots()
            expired.append(True)
        return page

    monkeypatch.setattr(kube_api.store, "list_page", compact_after_first_page)
    read = connect(kube_api).read_objects()
    assert names(read.objects, "Pod") == [f"p-{i:02}" for i in range(35)]
    statuses = [r.status for r in kube_api.requests if r.path == "/api/v1/pods"]
    assert statuses == [200, 410, 200, 200, 200, 200]


def test_pending_pods_and_single_reads(kube_api):
    kube_api.add(api_node("n1"), api_pod("bound", node_name="n1"), api_pod("waiting"),
                 api_pod("failed", phase="Failed"))
    conn = connect(kube_api)
    assert names(conn.list_pending_pods()) == ["waiting"]
    pod = conn.get_pod("default", "bound")
    assert pod["kind"] == "Pod" and pod["apiVersion"] == "v1"
    assert conn.get_pod("default", "nope") is None
    assert conn.node_exists("n1") and not conn.node_exists("n2")
    assert conn.server == kube_api.url and conn.context_name == "kschedx-test"


def test_secrets_and_configmaps_are_never_requested(kube_api):
    kube_api.add(api_node("n1"), api_pod("p", node_name="n1"), api_pod("q"),
                 served("v1", "Secret", metadata("s", "default"), data={"k": "djE="}),
                 served("v1", "ConfigMap", metadata("c", "default"), data={"k": "v"}))
    conn = connect(kube_api)
    conn.read_objects()
    conn.list_pending_pods()
    conn.get_pod("default", "p")
    conn.bind_pod(conn.get_pod("default", "q"), "n1")
    assert kube_api.requests
    assert not [r.path for r in kube_api.requests if "secret" in r.path or "configmap" in r.path]
    with pytest.raises(ValueError):
        conn._t.request("GET", "/api/v1/secrets", what="x")


# ---- writes ------------------------------------------------------------------------------


def test_bind_posts_a_binding_like_the_default_binder(kube_api):
    [pod] = kube_api.add(api_pod("web"))
    connect(kube_api).bind_pod({**pod, "kind": "Pod"}, "node-a")

    [req] = [r for r in kube_api.requests if r.path.endswith("/binding")]
    assert req.method == "POST" and req.path == "/api/v1/namespaces/default/pods/web/binding"
    assert json.loads(req.body) == {
        "kind": "Binding", "apiVersion": "v1",
        "metadata": {"name": "web", "namespace": "default", "uid": pod["metadata"]["uid"]},
        "target": {"kind": "Node", "name": "node-a"}}
    assert req.status == 201
    stored = kube_api.get("Pod", "default", "web")
    assert stored["spec"]["nodeName"] == "node-a"  # the server does not check the node exists
    assert {"type": "PodScheduled", "status": "True"}.items() <= stored["status"]["conditions"][-1].items()


def test_bind_already_bound_is_a_conflict_with_the_server_message(kube_api):
    [pod] = kube_api.add(api_pod("web", node_name="n1"))
    with pytest.raises(BindConflict) as exc:
        connect(kube_api).bind_pod(pod, "n2")
    assert exc.value.status == 409 and exc.value.exit_code == 4
    assert exc.value.api_message == ('Operation cannot be fulfilled on pods/binding "web": '
                                     'pod web is already assigned to node "n1"')
    assert exc.value.api_message in str(exc.value)


def test_bind_with_stale_uid_is_a_conflict(kube_api):
    [pod] = kube_api.add(api_pod("web"))
    stale = {**pod, "metadata": {**pod["metadata"], "uid": "00000000-dead-beef-0000-000000000000"}}
    with pytest.raises(BindConflict, match="Precondition failed: UID in precondition"):
        connect(kube_api).bind_pod(stale, "n1")
    assert "nodeName" not in kube_api.get("Pod", "default", "web")["spec"]


def test_bind_is_not_retried_after_a_server_error(kube_api):
    [pod] = kube_api.add(api_pod("web"))
    kube_api.inject(r".*/binding", 500, times=1)
    with pytest.raises(ClusterAPIError, match="500"):
        connect(kube_api).bind_pod(pod, "n1")
    assert kube_api.request_count(r".*/binding") == 1


def test_evict_then_wait_until_gone(kube_api):
    kube_api.removal_delay = 0.6
    [pod] = kube_api.add(api_pod("victim", node_name="n1"))
    conn = connect(kube_api)
    assert conn.evict_pod(pod) is True
    [req] = [r for r in kube_api.requests if r.path.endswith("/eviction")]
    body = json.loads(req.body)
    assert body["kind"] == "Eviction" and body["apiVersion"] == "policy/v1"
    assert body["deleteOptions"]["preconditions"]["uid"] == pod["metadata"]["uid"]
    terminating = conn.get_pod("default", "victim")
    assert terminating["metadata"]["deletionTimestamp"]

    seen = []
    assert conn.wait_pods_gone([pod], timeout=5, progress=lambda g, t: seen.append((g, t)),
                               poll_interval=0.1) == []
    assert seen[0] == (0, 1) and seen[-1] == (1, 1)
    assert conn.get_pod("default", "victim") is None
    assert conn.evict_pod(pod) is False  # already gone


def test_evict_blocked_by_pdb(kube_api):
    [pod] = kube_api.add(api_pod("db-0", node_name="n1", labels={"app": "db"}))
    kube_api.add(api_pdb("db-pdb", match_labels={"app": "db"}, disruptions_allowed=0,
                         desired_healthy=3, current_healthy=3))
    with pytest.raises(EvictionBlocked) as exc:
        connect(kube_api).evict_pod(pod)
    e = exc.value
    assert e.status == 429 and isinstance(e, ClusterError)
    assert e.api_message == "Cannot evict pod as it would violate the pod's disruption budget."
    assert e.budget_messages == ["The disruption budget db-pdb needs 3 healthy pods and has 3 currently"]
    assert "deletionTimestamp" not in kube_api.get("Pod", "default", "db-0")["metadata"]
    assert kube_api.request_count(r".*/eviction") == 1  # a PDB refusal is not retried


def test_evict_pdb_not_yet_observed(kube_api):
    [pod] = kube_api.add(api_pod("db-0", node_name="n1", labels={"app": "db"}))
    kube_api.add(api_pdb("db-pdb", match_labels={"app": "db"}, disruptions_allowed=1,
                         generation=2, observed_generation=1))
    with pytest.raises(EvictionBlocked) as exc:
        connect(kube_api).evict_pod(pod)
    assert exc.value.budget_messages == [
        "The disruption budget db-pdb is still being processed by the server."]
    assert exc.value.retry_after == 10


def test_evict_pending_pod_ignores_pdb(kube_api):
    [pod] = kube_api.add(api_pod("db-0", labels={"app": "db"}))
    kube_api.add(api_pdb("db-pdb", match_labels={"app": "db"}, disruptions_allowed=0))
    conn = connect(kube_api)
    assert conn.evict_pod(pod) is True
    assert conn.get_pod("default", "db-0") is None  # unscheduled: deleted at once


def test_evict_allowed_by_pdb_decrements_it(kube_api):
    [pod] = kube_api.add(api_pod("db-0", node_name="n1", labels={"app": "db"}))
    kube_api.add(api_pdb("db-pdb", match_labels={"app": "db"}, disruptions_allowed=1))
    assert connect(kube_api).evict_pod(pod) is True
    assert kube_api.get("PodDisruptionBudget", "default", "db-pdb")["status"]["disruptionsAllowed"] == 0


def test_evict_stale_uid_is_a_conflict(kube_api):
    [pod] = kube_api.add(api_pod("web", node_name="n1"))
    stale = {**pod, "metadata": {**pod["metadata"], "uid": "other"}}
    with pytest.raises(ClusterAPIError, match="Precondition failed") as exc:
        connect(kube_api).evict_pod(stale)
    assert exc.value.status == 409 and not isinstance(exc.value, EvictionBlocked)


def test_evict_throttled_by_priority_and_fairness_is_retried(kube_api):
    [pod] = kube_api.add(api_pod("web", node_name="n1"))
    kube_api.inject(r".*/eviction", 429, retry_after=1, times=1)
    assert connect(kube_api).evict_pod(pod) is True
    assert kube_api.request_count(r".*/eviction") == 2


def test_set_nominated_node(kube_api):
    [pod] = kube_api.add(api_pod("web"))
    conn = connect(kube_api)
    updated = conn.set_nominated_node(pod, "n7")
    assert updated["status"]["nominatedNodeName"] == "n7" and updated["kind"] == "Pod"
    assert kube_api.get("Pod", "default", "web")["status"]["nominatedNodeName"] == "n7"
    [req] = [r for r in kube_api.requests if r.path.endswith("/status")]
    assert req.method == "PATCH" and req.content_type == "application/strategic-merge-patch+json"
    assert json.loads(req.body) == {"status": {"nominatedNodeName": "n7"}}
    conn.set_nominated_node(pod, None)
    assert "nominatedNodeName" not in kube_api.get("Pod", "default", "web")["status"]


def test_wait_pods_gone_matches_by_uid_and_times_out(kube_api):
    [old] = kube_api.add(api_pod("sts-0", node_name="n1"))
    [stay] = kube_api.add(api_pod("stays", node_name="n1"))
    kube_api.delete("Pod", "default", "sts-0")
    kube_api.add(api_pod("sts-0", node_name="n1"))  # re-created: a new UID
    conn = connect(kube_api)
    start = time.monotonic()
    left = conn.wait_pods_gone([old, stay], timeout=0.5, poll_interval=0.1)
    assert [p["metadata"]["name"] for p in left] == ["stays"]
    assert 0.5 <= time.monotonic() - start < 2


# ---- configuration ------------------------------------------------------------------------


def _split_kubeconfig(server, tmp_path: Path) -> tuple[Path, Path]:
    """File A: cluster, user and context `a` (current). File B: context `b` that uses
    A's cluster, a same-named cluster pointing nowhere, and current-context `b`."""
    full = yaml.safe_load(server.write_kubeconfig(tmp_path / "full").read_text())
    a = {**full, "contexts": [{"name": "a", "context": {"cluster": "kschedx-test", "user": "kschedx-test"}}],
         "current-context": "a"}
    b = {"apiVersion": "v1", "kind": "Config",
         "clusters": [{"name": "kschedx-test", "cluster": {"server": f"https://127.0.0.1:{closed_port()}"}}],
         "users": [],
         "contexts": [{"name": "b", "context": {"cluster": "kschedx-test", "user": "kschedx-test"}}],
         "current-context": "b"}
    pa, pb = tmp_path / "a.yaml", tmp_path / "b.yaml"
    pa.write_text(yaml.safe_dump(a))
    pb.write_text(yaml.safe_dump(b))
    return pa, pb


def test_kubeconfig_env_merges_files_first_wins(kube_api, tmp_path, monkeypatch):
    kube_api.add(api_node("n1"))
    pa, pb = _split_kubeconfig(kube_api, tmp_path)
    monkeypatch.setenv("KUBECONFIG", f"{pa}:{tmp_path / 'missing.yaml'}:{pb}")
    conn = cluster.connect()
    assert conn.context_name == "a"  # the first file's current-context wins
    assert conn.server == kube_api.url
    conn_b = cluster.connect(context="b")  # context from B, cluster "kschedx-test" from A
    assert conn_b.server == kube_api.url
    assert names(conn_b.read_objects().objects, "Node") == ["n1"]


def test_default_kubeconfig_location(kube_api, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    kube_api.write_kubeconfig(home / ".kube" / "config")
    assert cluster.connect().server == kube_api.url


def test_kubeconfig_problems_are_input_errors(kube_api, tmp_path, monkeypatch):
    with pytest.raises(InputError, match="no such file") as exc:
        cluster.connect(str(tmp_path / "nope"))
    assert exc.value.exit_code == 3
    bad = tmp_path / "bad.yaml"
    bad.write_text("clusters: [unclosed\n")
    with pytest.raises(InputError, match="YAML"):
        cluster.connect(str(bad))
    with pytest.raises(InputError, match='context "other" not found'):
        cluster.connect(str(kube_api.kubeconfig), context="other")
    with pytest.raises(InputError, match="no kubeconfig"):
        cluster.connect()
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    with pytest.raises(InputError, match="KUBECONFIG"):
        cluster.connect()


def test_in_cluster_configuration(kube_api, monkeypatch, tmp_path):
    in_cluster(kube_api, monkeypatch, tmp_path)
    kube_api.add(api_node("n1"))
    conn = cluster.connect()  # no kubeconfig anywhere: HOME is empty
    assert conn.context_name is None and conn.server == kube_api.url
    assert names(conn.read_objects().objects, "Node") == ["n1"]


def test_insecure_skip_tls_verify_is_one_warning(kube_api, tmp_path):
    config = yaml.safe_load(kube_api.kubeconfig.read_text())
    config["clusters"][0]["cluster"] = {"server": kube_api.url, "insecure-skip-tls-verify": True}
    path = tmp_path / "insecure"
    path.write_text(yaml.safe_dump(config))
    read = cluster.connect(str(path)).read_objects()
    assert [w for w in read.warnings if "insecure-skip-tls-verify" in w]


def test_importing_the_module_does_not_import_the_client():
    code = ("import sys, kschedx.sources.cluster; "
            "sys.exit(1 if any(m == 'kubernetes' or m.startswith('kubernetes.') "
            "for m in sys.modules) else 0)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


def test_failing_credentials_plugin_explains_the_401(kube_api, tmp_path, capfd):
    config = yaml.safe_load(kube_api.kubeconfig.read_text())
    config["users"][0]["user"] = {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
        "args": ["-c", "import sys; sys.stderr.write('token expired, run login'); sys.exit(1)"],
        "interactiveMode": "Never"}}
    path = tmp_path / "exec"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ClusterError, match="401 Unauthorized.*exec: process returned 1"):
        cluster.connect(str(path)).read_objects()
    assert "exec:" not in capfd.readouterr().err  # no stray log line


# ---- the test server's own semantics (raw HTTP), which other tests rely on --------------------


@pytest.fixture
def raw(kube_api):
    import urllib3

    http = urllib3.PoolManager(ca_certs=str(kube_api.tls.ca_cert), retries=False)

    def call(method, path, body=None, content_type="application/json", token=kube_api.token):
        headers = {"Authorization": f"Bearer {token}"}
        if body is not None:
            headers["Content-Type"] = content_type
            body = json.dumps(body)
        r = http.request(method, kube_api.url + path, body=body, headers=headers)
        return r.status, json.loads(r.data), r.headers

    return call


def test_server_lists_namespaced_and_gets_single_objects(kube_api, raw):
    kube_api.add(api_node("n1"), api_pod("a", namespace="ns1"), api_pod("b", namespace="ns2"),
                 api_pod("c", namespace="ns1-x"))
    status, body, _ = raw("GET", "/api/v1/namespaces/ns1/pods")
    assert status == 200 and body["kind"] == "PodList" and body["apiVersion"] == "v1"
    assert [i["metadata"]["name"] for i in body["items"]] == ["a"]
    assert "kind" not in body["items"][0]
    status, body, _ = raw("GET", "/api/v1/nodes/n1")
    assert status == 200 and body["kind"] == "Node" and body["metadata"]["name"] == "n1"
    status, body, _ = raw("GET", "/api/v1/namespaces/ns1/pods/zz")
    assert status == 404 and body["message"] == 'pods "zz" not found'
    status, body, _ = raw("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1,status.podIP%3Dx")
    assert status == 400 and "field label not supported: status.podIP" in body["message"]


def test_server_status_patch_put_and_conflicts(kube_api, raw):
    [pod] = kube_api.add(api_pod("web"))
    path = "/api/v1/namespaces/default/pods/web/status"
    status, body, _ = raw("PATCH", path, {"status": {"nominatedNodeName": "n1"},
                                          "spec": {"nodeName": "ignored"}},
                          content_type="application/merge-patch+json")
    assert status == 200 and body["status"]["nominatedNodeName"] == "n1"
    assert "nodeName" not in body["spec"]  # the status subresource changes status only
    body["status"]["phase"] = "Pending"
    status, _, _ = raw("PUT", path, {**body, "metadata": {**body["metadata"], "resourceVersion": "1"}})
    assert status == 409
    status, body, _ = raw("PUT", path, body)
    assert status == 200
    status, _, _ = raw("PATCH", path, {"status": {}}, content_type="application/json-patch+json")
    assert status == 415


def test_server_graceful_delete_and_injected_faults(kube_api, raw):
    kube_api.removal_delay = 0.3
    kube_api.add(api_pod("web", node_name="n1"))
    status, body, _ = raw("DELETE", "/api/v1/namespaces/default/pods/web")
    assert status == 200 and body["metadata"]["deletionTimestamp"]
    assert kube_api.get("Pod", "default", "web") is not None
    time.sleep(0.4)
    assert raw("GET", "/api/v1/namespaces/default/pods/web")[0] == 404

    assert raw("GET", "/api/v1/nodes", token="wrong")[1]["reason"] == "Unauthorized"
    kube_api.inject("/api/v1/nodes", 429, retry_after=3, times=1)
    status, body, headers = raw("GET", "/api/v1/nodes")
    assert status == 429 and headers["Retry-After"] == "3"
    assert body["details"]["retryAfterSeconds"] == 3
    kube_api.inject("/api/v1/namespaces/default/pods/web/binding", 403, times=1)
    status, body, _ = raw("POST", "/api/v1/namespaces/default/pods/web/binding", {})
    assert body["message"] == ('pods "web" is forbidden: User "x" cannot create resource '
                               '"pods/binding" in API group "" in the namespace "default"')
    assert kube_api.paths()["/api/v1/nodes"] == 2


def test_kubeconfig_syntax_error_names_line_and_problem(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nclusters: [unclosed\n")
    with pytest.raises(InputError) as exc:
        cluster.connect(str(bad))
    assert str(exc.value).startswith(f"{bad}: not valid YAML: line 3, column 1: ")
    assert "\n" not in str(exc.value)
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match="not UTF-8 text"):
        cluster.connect(str(binary))


@pytest.mark.parametrize("text, detail", [
    ("SSLError(SSLCertVerificationError(1, \"[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: IP address "
     "mismatch, certificate is not valid for '10.0.0.1'. (_ssl.c:1006)\"))",
     "IP address mismatch, certificate is not valid for '10.0.0.1'"),
    ("Caused by SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
     "self-signed certificate in certificate chain (_ssl.c:1006)'))",
     "self-signed certificate in certificate chain"),
])
def test_tls_failure_keeps_the_name_the_certificate_lacks(text, detail):
    assert transport._tls_detail(text) == detail + " (check certificate-authority in the kubeconfig)"
