"""explain --kubeconfig, snapshot and bind against the local HTTPS test API server
(tests/kubeapi.py): real requests through the official client, no mocks."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import yaml

from builders import api_node, api_pdb, api_pod, metadata, served
from cluster_scenarios import closed_port, in_cluster, no_ambient_config, run, small_cluster  # noqa: F401 (fixture)
from kschedx.cli import connection as cli_connection
from kschedx.cli import progress as cli_progress
from kschedx.cli import workload as cli_workload

POD_FILE = """\
apiVersion: v1
kind: Pod
metadata: {name: probe, namespace: default}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "1500m"}}}]
"""


def doc_of(result) -> dict:
    assert result.exit_code in (0, 1), result.output + result.stderr
    return json.loads(result.stdout)


def pods(doc) -> dict:
    return {p["pod"]: p for p in doc["pods"]}


def without_warnings(doc: dict) -> dict:
    """The result without what depends on where it was read from: warnings,
    and each pod's `source` (a snapshot's pending pods name its file)."""
    out = {k: v for k, v in doc.items() if k != "warnings"}
    out["pods"] = [{k: v for k, v in p.items() if k != "source"} for p in doc["pods"]]
    return out


# ---- explain --kubeconfig -------------------------------------------------------------------


def test_explain_a_pending_pod_by_name(kube_api):
    small_cluster(kube_api)
    r = run("explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "-o", "json", "--tie-break", "name")
    doc = doc_of(r)
    assert r.exit_code == 0
    [web] = doc["pods"]
    assert web["pod"] == "default/web" and web["status"] == "Scheduled"
    n2 = next(n for n in web["nodes"] if n["name"] == "n2")
    assert n2["firstFailure"] == "TaintToleration"
    assert not [p for p in kube_api.paths() if "secret" in p or "configmap" in p]


def test_explain_all_pending_and_pod_files(kube_api, tmp_path):
    small_cluster(kube_api)
    kc = kube_api.kubeconfig
    doc = doc_of(run("explain", "--all-pending", "-A", "--kubeconfig", kc, "-o", "json", "--tie-break", "name"))
    assert sorted(pods(doc)) == ["default/big", "default/web", "team/tolerant"]
    assert pods(doc)["default/big"]["status"] == "Unschedulable"
    # Without -A, like kubectl: the kubeconfig context's namespace ("default").
    doc = doc_of(run("explain", "--all-pending", "--kubeconfig", kc, "-o", "json", "--tie-break", "name"))
    assert sorted(pods(doc)) == ["default/big", "default/web"]

    pod_file = tmp_path / "probe.yaml"
    pod_file.write_text(POD_FILE)
    doc = doc_of(run("explain", pod_file, "team/tolerant", "--kubeconfig", kc, "-o", "json"))
    assert sorted(pods(doc)) == ["default/probe", "team/tolerant"]
    probe = pods(doc)["default/probe"]
    assert [n["name"] for n in probe["nodes"] if n["feasible"]] == ["n3"]  # n1 is half full, n2 tainted


def test_context_alone_reads_the_default_kubeconfig(kube_api, tmp_path, monkeypatch):
    small_cluster(kube_api)
    monkeypatch.setenv("KUBECONFIG", str(kube_api.kubeconfig))
    doc = doc_of(run("explain", "default/web", "--context", "kschedx-test", "-o", "json"))
    assert [p["pod"] for p in doc["pods"]] == ["default/web"]
    doc = doc_of(run("explain", "default/web", "-o", "json"))  # NAMESPACE/NAME: the cluster
    assert [p["pod"] for p in doc["pods"]] == ["default/web"]


@pytest.mark.parametrize("args, message", [
    (("explain", "default/nope"), "pod default/nope not found in the cluster"),
    (("explain", "default/busy-1"), "already bound to node n1"),
])
def test_explain_names_a_pod_that_is_not_pending(kube_api, args, message):
    small_cluster(kube_api)
    r = run(*args, "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 3 and message in r.stderr


@pytest.mark.parametrize("args, message", [
    (("explain", "--kubeconfig", "KC"), "which pods?"),
    (("explain", "pod.yaml"), "--snapshot is required"),
    (("explain", "--all-pending", "--snapshot", "x.yaml", "--kubeconfig", "KC"), "give one of them"),
    (("explain", "--all-pending", "--request-timeout", "soon"), "not a duration"),
    (("snapshot", "-o", "cluster.txt", "--kubeconfig", "KC"), ".yaml, .yml or .json"),
    (("bind", "Web!"), "NAMESPACE/NAME"),
    (("bind", "default/web"), "pass --yes"),
])
def test_usage_errors(kube_api, args, message):
    args = [str(kube_api.kubeconfig) if a == "KC" else a for a in args]
    r = run(*args)
    assert r.exit_code == 2, r.stderr
    assert message in r.stderr
    assert not kube_api.requests  # refused before any request


def test_forbidden_optional_kinds_are_warnings_and_not_evaluated(kube_api):
    small_cluster(kube_api)
    kube_api.inject("/apis/policy/v1/poddisruptionbudgets", 403)
    kube_api.inject("/apis/storage.k8s.io/v1/csinodes", 403)
    r = run("explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "-o", "json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert {"DefaultPreemption", "NodeVolumeLimits", "VolumeBinding"} <= set(doc["notEvaluated"])
    assert pods(doc)["default/web"]["status"] == "Scheduled"
    assert ('PodDisruptionBudget objects could not be read (forbidden: poddisruptionbudgets.policy is '
            'forbidden: User "x" cannot list resource "poddisruptionbudgets" in API group "policy" at '
            'the cluster scope): DefaultPreemption is listed in notEvaluated') in r.stderr
    assert "CSINode objects could not be read" in r.stderr
    assert "NodeVolumeLimits, VolumeBinding are listed in notEvaluated" in r.stderr


def test_an_unreadable_kind_puts_its_plugins_in_not_evaluated(kube_api, monkeypatch):
    """A kind the cluster does not let kschedx read: the plugins that read
    it (their declarations say) still run, but the result lists them in
    notEvaluated, and a warning says why."""
    small_cluster(kube_api)
    kube_api.inject("/apis/policy/v1/poddisruptionbudgets", 403)
    r = run("explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "-o", "json")
    doc = doc_of(r)
    assert doc["notEvaluated"] == ["DefaultPreemption"]
    assert any(w.startswith("PodDisruptionBudget objects could not be read (forbidden")
               and w.endswith(": DefaultPreemption is listed in notEvaluated") for w in doc["warnings"]), doc["warnings"]
    web = pods(doc)["default/web"]
    assert {f["plugin"] for n in web["nodes"] for f in n["filters"]} >= {"NodeResourcesFit"}


def test_every_optional_kind_is_read_by_a_plugin_or_admission():
    """What a live read lists is what the plugins' declarations read (or
    admission of POD_FILE pods: PriorityClass, RuntimeClass), no more, no less."""
    from kschedx.plugins.registry import IN_TREE
    from kschedx.sources.kinds import KINDS
    from kschedx.sources.fixtures import CLASS_KINDS

    declared = {k for d in IN_TREE for k in d.kinds_read()}
    assert {k.kind for k in KINDS if not k.required} == declared | set(CLASS_KINDS)


# ---- connection errors: one line, exit 4 ---------------------------------------------------------


def test_unreachable_server(kube_api, tmp_path):
    kc = kube_api.write_kubeconfig(tmp_path / "closed", server=f"https://127.0.0.1:{closed_port()}")
    for args in (("explain", "--all-pending"), ("snapshot", "-o", tmp_path / "s.yaml"), ("bind", "a/b", "--yes")):
        r = run(*args, "--kubeconfig", kc)
        assert r.exit_code == 4, (args, r.stderr)
        assert "connection refused" in r.stderr and "127.0.0.1" in r.stderr
        assert 'context "kschedx-test"' in r.stderr
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "s.yaml").exists()


def test_forbidden_pods_names_verb_and_resource(kube_api, tmp_path):
    kube_api.add(api_node("n1"))
    kube_api.inject("/api/v1/pods", 403)
    r = run("snapshot", "-o", tmp_path / "s.yaml", "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 4
    assert 'cannot list resource "pods" in API group "" at the cluster scope' in r.stderr
    assert kube_api.url in r.stderr


def test_bad_credentials_tls_and_timeout(kube_api, tmp_path):
    import base64

    from kubeapi_tls import make_ca

    kube_api.add(api_node("n1"))
    bad_token = kube_api.write_kubeconfig(tmp_path / "token", token="wrong")
    r = run("explain", "--all-pending", "--kubeconfig", bad_token)
    assert r.exit_code == 4 and "401 Unauthorized" in r.stderr

    other_ca, _ = make_ca(tmp_path / "ca", name="someone-else")
    wrong_ca = kube_api.write_kubeconfig(tmp_path / "ca.yaml",
                                         ca_data=base64.b64encode(other_ca.read_bytes()).decode())
    r = run("explain", "--all-pending", "--kubeconfig", wrong_ca)
    assert r.exit_code == 4 and "TLS certificate verification failed" in r.stderr

    kube_api.inject("/api/v1/nodes", delay=1.5)
    r = run("explain", "--all-pending", "--kubeconfig", kube_api.kubeconfig, "--request-timeout", "300ms")
    assert r.exit_code == 4 and "timed out: no answer within 0.3s" in r.stderr


def test_missing_kubeconfig_is_an_input_error(tmp_path):
    r = run("explain", "--all-pending", "--kubeconfig", tmp_path / "nope")
    assert r.exit_code == 3 and "no such file" in r.stderr
    r = run("explain", "--all-pending", "--context", "prod")  # HOME is empty
    assert r.exit_code == 3 and "no kubeconfig" in r.stderr


# ---- snapshot ------------------------------------------------------------------------------------


def _with_bulk(api):
    """A pod carrying everything scheduling never reads."""
    pod = api_pod("noisy", node_name="n1", cpu="100m")
    c = pod["spec"]["containers"][0]
    c.update(env=[{"name": "PASSWORD", "value": "hunter2"}], command=["/bin/app"], args=["--secret=s3"],
             livenessProbe={"httpGet": {"path": "/", "port": 80}},
             volumeMounts=[{"name": "cfg", "mountPath": "/etc/cfg"}])
    pod["spec"]["volumes"] = [{"name": "cfg", "configMap": {"name": "app-config"}},
                              {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    pod["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update"}]
    pod["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": '{"spec": "..."}', "team": "web"}
    pod["status"]["containerStatuses"] = [{"name": "app", "ready": True, "restartCount": 0,
                                           "imageID": "sha256:abc", "state": {"running": {}}}]
    pod["status"]["conditions"].append({"type": "DisruptionTarget", "status": "True",
                                        "reason": "PreemptionByScheduler"})
    api.add(pod)


@pytest.mark.parametrize("name", ["cluster.yaml", "cluster.yml", "cluster.json", "cluster.yaml.gz",
                                  "cluster.json.gz"])
def test_snapshot_round_trip_gives_the_same_result_as_the_cluster(kube_api, tmp_path, name):
    small_cluster(kube_api)
    _with_bulk(kube_api)
    kube_api.inject("/apis/policy/v1/poddisruptionbudgets", 403)
    kc = kube_api.kubeconfig
    path = tmp_path / name
    r = run("snapshot", "-o", path, "--kubeconfig", kc)
    assert r.exit_code == 0, r.stderr
    assert f"wrote {path}: 3 nodes, 6 pods" in r.stderr
    assert "PodDisruptionBudget objects could not be read" in r.stderr
    data = path.read_bytes()
    if name.endswith(".gz"):
        data = gzip.decompress(data)
    text = data.decode()
    if ".json" in name:
        assert json.loads(text)["kind"] == "List"
    else:
        assert text.startswith("---\napiVersion: kschedx/v1\nkind: SnapshotInfo\n")

    args = ["default/web", "default/big", "team/tolerant", "-o", "json", "--tie-break", "name"]
    live = doc_of(run("explain", *args, "--kubeconfig", kc))
    offline = doc_of(run("explain", *args, "--snapshot", path))
    assert without_warnings(offline) == without_warnings(live)
    assert "DefaultPreemption" in offline["notEvaluated"]
    assert offline["warnings"] == live["warnings"]
    # and without names: the snapshot's pending pods are those of the cluster
    everything = doc_of(run("explain", "--snapshot", path, "-o", "json", "--tie-break", "name"))
    assert without_warnings(everything) == without_warnings(live)


# Read rights to nodes, pods and services only: every other kind is forbidden.
CORE_READER = [{"apiGroups": [""], "resources": ["nodes", "pods", "services"], "verbs": ["get", "list", "watch"]}]
CONTROLLER_WARNINGS = [f"{kind} objects could not be read (forbidden" for kind in ("DaemonSet", "Deployment", "Job")]


def _controller_warnings(warnings: list[str]) -> list[str]:
    return [w for w in warnings if w.startswith(tuple(CONTROLLER_WARNINGS))]


def test_snapshot_warns_about_controllers_only_where_a_live_read_would_read_them(kube_api, tmp_path):
    """`kschedx snapshot` always lists Deployments, DaemonSets and Jobs and
    records them when forbidden; explain reads them live only for
    --node-template, so explaining the file warns what explaining the
    cluster warns, and the file keeps what it recorded."""
    small_cluster(kube_api)
    kube_api.authorize(CORE_READER)
    kc = kube_api.kubeconfig
    path = tmp_path / "cluster.yaml"
    r = run("snapshot", "-o", path, "--kubeconfig", kc)
    assert r.exit_code == 0, r.stderr
    info = next(yaml.safe_load_all(path.read_text()))
    assert {"DaemonSet", "Deployment", "Job"} <= set(info["unreadableKinds"])

    args = ["-A", "-o", "json", "--tie-break", "name"]
    live = run("explain", *args, "--kubeconfig", kc)
    offline = run("explain", *args, "--snapshot", path)
    assert without_warnings(doc_of(offline)) == without_warnings(doc_of(live))
    assert doc_of(offline)["warnings"] == doc_of(live)["warnings"]
    assert not _controller_warnings(doc_of(offline)["warnings"])
    assert "DaemonSet objects could not be read" not in offline.stderr
    # The other forbidden kinds are still said, from the file as from the cluster.
    assert any(w.startswith("PodDisruptionBudget objects could not be read (forbidden")
               for w in doc_of(offline)["warnings"])


def test_snapshot_still_warns_about_controllers_for_a_drain(kube_api, tmp_path):
    """simulate --drain reads the pods' controllers live (kubectl's DaemonSet
    check): from a snapshot that could not read them it says so, as live."""
    small_cluster(kube_api)
    kube_api.authorize(CORE_READER)
    kc = kube_api.kubeconfig
    path = tmp_path / "cluster.yaml"
    assert run("snapshot", "-o", path, "--kubeconfig", kc).exit_code == 0
    args = ["simulate", "--drain", "n3", "-o", "json", "--tie-break", "name"]
    live = doc_of(run(*args, "--kubeconfig", kc))
    offline = doc_of(run(*args, "--snapshot", path))
    assert len(_controller_warnings(offline["warnings"])) == 3
    assert _controller_warnings(offline["warnings"]) == _controller_warnings(live["warnings"])


def test_snapshot_keeps_only_what_scheduling_reads_unless_full(kube_api, tmp_path):
    small_cluster(kube_api)
    _with_bulk(kube_api)
    kc = kube_api.kubeconfig
    run("snapshot", "-o", tmp_path / "lean.json", "--kubeconfig", kc)
    run("snapshot", "-o", tmp_path / "full.json", "--kubeconfig", kc, "--full")
    lean = {o["metadata"]["name"]: o for o in json.loads((tmp_path / "lean.json").read_text())["items"]}
    full = {o["metadata"]["name"]: o for o in json.loads((tmp_path / "full.json").read_text())["items"]}

    noisy = lean["noisy"]
    assert noisy["spec"]["containers"] == [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]
    assert noisy["spec"]["volumes"] == [{"name": "cfg", "configMap": {}},
                                        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    assert noisy["metadata"]["annotations"] == {"team": "web"}
    assert "managedFields" not in noisy["metadata"]
    # Ready (whether it holds: a drain's budgets count Ready pods) and DisruptionTarget.
    assert noisy["status"] == {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True"},
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}
    assert "hunter2" not in (tmp_path / "lean.json").read_text()
    assert lean["snapshot"]["fields"] == "scheduling"

    kept = full["noisy"]
    assert kept["spec"]["containers"][0]["env"] == [{"name": "PASSWORD", "value": "hunter2"}]
    assert kept["spec"]["containers"][0]["args"] == ["--secret=s3"]
    assert "last-applied-configuration" in json.dumps(kept["metadata"]["annotations"])
    assert "managedFields" not in kept["metadata"]  # never kept: kubectl hides them too
    assert full["snapshot"]["fields"] == "full"


def test_snapshot_is_deterministic_and_ordered(kube_api, tmp_path):
    small_cluster(kube_api)
    kube_api.add(served("scheduling.k8s.io/v1", "PriorityClass", metadata("high"), value=1000),
                 api_pdb("web-pdb", match_labels={"app": "web"}))
    kc = kube_api.kubeconfig
    for name in ("a.yaml.gz", "b.yaml.gz", "a.json", "b.json"):
        assert run("snapshot", "-o", tmp_path / name, "--kubeconfig", kc).exit_code == 0
    assert (tmp_path / "a.yaml.gz").read_bytes() == (tmp_path / "b.yaml.gz").read_bytes()
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    items = json.loads((tmp_path / "a.json").read_text())["items"]
    order = [(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in items]
    assert order == [
        ("SnapshotInfo", "", "snapshot"),
        ("Namespace", "", "default"), ("Namespace", "", "team"),
        ("PriorityClass", "", "high"),
        ("Node", "", "n1"), ("Node", "", "n2"), ("Node", "", "n3"),
        ("PodDisruptionBudget", "default", "web-pdb"),
        ("Pod", "default", "big"), ("Pod", "default", "busy-1"), ("Pod", "default", "web"),
        ("Pod", "team", "busy-2"), ("Pod", "team", "tolerant"),
    ]
    assert all(list(o)[:2] == ["apiVersion", "kind"] for o in items)
    assert items[0]["unreadableKinds"] == {} and items[0]["source"]["server"] == kube_api.url
    # one object per line: greppable, diffable
    assert len((tmp_path / "a.json").read_text().splitlines()) == len(items) + 2


def test_interrupted_snapshot_leaves_no_file(kube_api, tmp_path, monkeypatch):
    from kschedx.sources import writer as snapshot_writer

    small_cluster(kube_api)
    target = tmp_path / "cluster.json"
    target.write_text("the previous snapshot")
    real = snapshot_writer._write_json

    def interrupted(out, info, objects):
        real(out, info, objects[:3])
        raise KeyboardInterrupt  # Ctrl-C half-way through

    monkeypatch.setattr(snapshot_writer, "_write_json", interrupted)
    r = run("snapshot", "-o", target, "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 130 and "not written" in r.stderr
    assert target.read_text() == "the previous snapshot"
    assert sorted(os.listdir(tmp_path)) == ["cluster.json", "kubeconfig"]  # no partial file


def test_sigterm_while_writing_removes_the_partial_file(tmp_path):
    import signal

    from kschedx.sources import writer as snapshot_writer
    from kschedx.sources.snapshot_info import snapshot_info

    target = tmp_path / "c.yaml"
    objects = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}} for i in range(50)]

    class Bomb(dict):
        """Delivers SIGTERM to this process while it is being written."""

    def represent(dumper, data):
        os.kill(os.getpid(), signal.SIGTERM)
        return dumper.represent_dict(dict(data))

    yaml.add_representer(Bomb, represent, Dumper=yaml.CSafeDumper)
    objects.insert(20, Bomb(apiVersion="v1", kind="Node", metadata={"name": "n19x"}))
    info = snapshot_info(server="https://x", context=None, unreadable={}, fields="scheduling")
    with pytest.raises(snapshot_writer.Interrupted):
        snapshot_writer.write_snapshot(str(target), objects, info)
    assert os.listdir(tmp_path) == []
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_snapshot_never_reads_secrets_or_configmaps(kube_api, tmp_path):
    small_cluster(kube_api)
    kube_api.add(served("v1", "Secret", metadata("s", "default"), data={"k": "djE="}),
                 served("v1", "ConfigMap", metadata("c", "default"), data={"k": "v"}))
    assert run("snapshot", "-o", tmp_path / "s.yaml", "--kubeconfig", kube_api.kubeconfig).exit_code == 0
    assert not [p for p in kube_api.paths() if "secret" in p or "configmap" in p]
    assert "djE=" not in (tmp_path / "s.yaml").read_text()


# ---- progress ------------------------------------------------------------------------------------


def test_progress_display_on_a_terminal(kube_api, capsys):
    small_cluster(kube_api)
    conn = cli_connection.ClusterOptions(str(kube_api.kubeconfig)).connect()
    with cli_progress.read_progress(conn, enabled=True) as progress:
        read = conn.read_objects(progress)
    assert len([o for o in read.objects if o["kind"] == "Pod"]) == 5
    assert f"read 3 nodes, 5 pods and 2 other objects from {kube_api.url}" in capsys.readouterr().err
    with cli_progress.read_progress(conn, enabled=False) as progress:
        assert progress is None


@pytest.mark.parametrize("text, seconds", [("30s", 30), ("2m", 120), ("1m30s", 90), ("500ms", 0.5),
                                           ("1h", 3600), ("45", 45), ("0.25", 0.25)])
def test_durations(text, seconds):
    assert cli_connection.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "-1", "5x", "1m-2s", "s", "inf", "nan"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        cli_connection.parse_duration(text)


def test_pod_arguments_are_files_or_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("pods").mkdir()
    Path("pods/web.yaml").write_text(POD_FILE)
    files, refs = cli_workload.split_pod_arguments(["pods/web.yaml", "default/web", "-", "web.yaml",
                                                   "team/api-0", "missing/pod.json.gz", "pods"])
    assert files == ["pods/web.yaml", "-", "web.yaml", "missing/pod.json.gz", "pods"]
    assert refs == ["default/web", "team/api-0"]


def test_pod_names_select_pods_of_a_snapshot_too(tmp_path):
    snap = tmp_path / "c.yaml"
    snap.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
         "status": {"capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "x"},
         "spec": {"containers": [{"name": "c", "image": "i"}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b", "namespace": "x"},
         "spec": {"containers": [{"name": "c", "image": "i"}]}}]))
    doc = doc_of(run("explain", "x/b", "--snapshot", snap, "-o", "json"))
    assert [p["pod"] for p in doc["pods"]] == ["x/b"]
    r = run("explain", "x/c", "--snapshot", snap)
    assert r.exit_code == 3 and "pod x/c not found in the snapshot" in r.stderr


def test_pods_keep_their_priority_when_the_class_cannot_be_read(kube_api):
    """PriorityClasses forbidden (or a class deleted since): stored pods carry
    spec.priority already, as the API server's admission set it."""
    small_cluster(kube_api)
    kube_api.store.update("Pod", "default", "web", lambda p: {
        **p, "spec": {**p["spec"], "priorityClassName": "business-critical", "priority": 5000}})
    kube_api.inject("/apis/scheduling.k8s.io/v1/priorityclasses", 403)
    r = run("explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["pods"][0]["priority"] == 5000
    assert "PriorityClass objects could not be read" in r.stderr and "results ignore them" in r.stderr


def test_in_cluster_configuration(kube_api, monkeypatch, tmp_path):
    small_cluster(kube_api)
    in_cluster(kube_api, monkeypatch, tmp_path)
    doc = doc_of(run("explain", "default/web", "-o", "json"))  # no kubeconfig anywhere
    assert [p["pod"] for p in doc["pods"]] == ["default/web"]


def test_snapshot_file_is_private_and_replaces_an_older_one(kube_api, tmp_path):
    import stat

    small_cluster(kube_api)
    target = tmp_path / "c.json"
    target.write_text("old")
    assert run("snapshot", "-o", target, "--kubeconfig", kube_api.kubeconfig).exit_code == 0
    assert json.loads(target.read_text())["kind"] == "List"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    r = run("snapshot", "-o", tmp_path, "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 2  # a directory is not a file name with a format


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 500), st.sampled_from(["h", "m", "s", "ms"])), min_size=1,
                max_size=4).filter(lambda parts: any(n for n, _ in parts)))
def test_durations_compose(parts):
    text = "".join(f"{n}{unit}" for n, unit in parts)
    seconds = sum(n * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[unit] for n, unit in parts)
    assert cli_connection.parse_duration(text) == pytest.approx(seconds)


def test_unwritable_output_directory_fails_before_reading_the_cluster(kube_api, tmp_path, monkeypatch):
    """os.access() says yes to root on /proc or a read-only mount: the check
    must try to create the file, and fail in one line, before the long read."""
    import errno
    import tempfile

    def read_only(*a, **k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    r = run("snapshot", "-o", tmp_path / "c.json", "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 3
    assert r.stderr.strip().splitlines() == [
        f"kschedx: error: cannot write {tmp_path / 'c.json'}: cannot create a file in {tmp_path} "
        "(read-only file system)"]
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert kube_api.request_count() == 0


@pytest.mark.parametrize("target, why", [
    ("missing/c.yaml", "no such directory: {tmp}/missing"),
    ("afile/c.yaml", "{tmp}/afile is a file, not a directory"),
    ("afile/deeper/c.yaml", "{tmp}/afile is a file, not a directory"),
    ("adir.yaml", "it is a directory"),
    ("locked/c.yaml", "cannot create a file in {tmp}/locked (permission denied)"),
])
def test_an_output_file_that_cannot_be_written_is_exit_3_before_any_request(kube_api, tmp_path, target, why):
    """exit-codes.md: an output file (`snapshot -o`) that cannot be written is
    exit status 3, one line naming the path and why; the cluster is not read."""
    if target.startswith("locked") and os.geteuid() == 0:
        pytest.skip("root writes in a directory without write permission")
    (tmp_path / "afile").write_text("")
    (tmp_path / "adir.yaml").mkdir()
    (tmp_path / "locked").mkdir(mode=0o500)
    path = tmp_path / target
    r = run("snapshot", "-o", path, "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 3, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"kschedx: error: cannot write {path}: {why.format(tmp=tmp_path)}"]
    assert kube_api.request_count() == 0


def test_write_failure_is_one_line_and_keeps_the_older_file(kube_api, tmp_path, monkeypatch):
    import errno

    from kschedx.sources import writer as snapshot_writer

    small_cluster(kube_api)
    target = tmp_path / "cluster.json"
    target.write_text("the previous snapshot")

    def disk_full(out, info, objects):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(snapshot_writer, "_write_json", disk_full)
    r = run("snapshot", "-o", target, "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 3
    assert r.stderr.strip().splitlines() == [
        f"kschedx: error: cannot write {target}: no space left on device; nothing was written"]
    assert target.read_text() == "the previous snapshot"
    assert sorted(os.listdir(tmp_path)) == ["cluster.json", "kubeconfig"]


def test_replacing_a_snapshot_says_so(kube_api, tmp_path):
    small_cluster(kube_api)
    path = tmp_path / "c.json"
    first = run("snapshot", "-o", path, "--kubeconfig", kube_api.kubeconfig)
    assert first.exit_code == 0 and "(replacing the previous file)" not in first.stderr
    again = run("snapshot", "-o", path, "--kubeconfig", kube_api.kubeconfig)
    assert again.exit_code == 0 and f"wrote {path} (replacing the previous file): 3 nodes" in again.stderr
