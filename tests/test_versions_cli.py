"""--kube-version and --feature-gates on the command line: the version chosen
(the flag, else the live server's /version, else the one a snapshot
recorded, else the newest), a server version kschedx does not reproduce
named in a warning, the gates checked with upstream's texts (exit 2), a gate
that changes a verdict and one that changes the default plugins, and the
version in the result of every command."""

from __future__ import annotations

import json

import pytest
import yaml

from builders import api_node, api_pod
from cluster_scenarios import run, small_cluster
from kubeapi import version_info

FIXTURE_POD = "fixtures/pods/web.yaml"
FIXTURE_CLUSTER = "fixtures/cluster/"


def doc_of(result) -> dict:
    assert result.exit_code in (0, 1), result.output + result.stderr
    return json.loads(result.stdout)


def explain_fixture(*args):
    return run("explain", FIXTURE_POD, "--snapshot", FIXTURE_CLUSTER, "-o", "json", *args)


# ---- the version ------------------------------------------------------------------------------


def test_the_newest_version_without_anything_to_choose_from():
    doc = doc_of(explain_fixture())
    assert (doc["kubeVersion"], doc["reference"], doc["featureGates"]) == ("1.37", {"kubernetes": "v1.37.2"}, {})


@pytest.mark.parametrize("typed, minor, reference", [
    ("1.35", "1.35", "v1.35.4"), ("v1.35.0", "1.35", "v1.35.4"), ("1.36", "1.36", "v1.36.3"),
    ("v1.36.2", "1.36", "v1.36.3"), ("1.37", "1.37", "v1.37.2"), ("v1.37.0", "1.37", "v1.37.2"),
])
def test_kube_version_flag(typed, minor, reference):
    doc = doc_of(explain_fixture("--kube-version", typed))
    assert (doc["kubeVersion"], doc["reference"]["kubernetes"]) == (minor, reference)


@pytest.mark.parametrize("command", ["explain", "simulate", "capacity"])
def test_versions_kschedx_cannot_reproduce_are_usage_errors(command):
    args = [command, FIXTURE_POD, "--snapshot", FIXTURE_CLUSTER, "--kube-version"]
    r = run(*args, "1.38")
    assert r.exit_code == 2
    assert ("kube-scheduler 1.38 is not supported: kschedx reproduces 1.35 (v1.35.4), 1.36 (v1.36.3), "
            "1.37 (v1.37.2)") in r.stderr
    r = run(*args, "newest")
    assert r.exit_code == 2 and "'newest' is not a Kubernetes version" in r.stderr


def test_the_live_servers_version_is_reproduced(kube_api):
    small_cluster(kube_api)
    kube_api.version = version_info("v1.35.4")
    args = ["explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "-o", "json", "--tie-break", "name"]
    doc = doc_of(run(*args))
    assert (doc["kubeVersion"], doc["reference"]["kubernetes"]) == ("1.35", "v1.35.4")
    assert not any("Kubernetes v1" in w for w in doc.get("warnings") or ())
    # --kube-version overrides it
    assert doc_of(run(*args, "--kube-version", "1.36"))["kubeVersion"] == "1.36"
    # a managed cluster's version string: the minor is what counts
    kube_api.version = version_info("v1.35.2-eks-4096722")
    assert doc_of(run(*args))["kubeVersion"] == "1.35"
    # the newest minor is reproduced, not answered by the one before it
    kube_api.version = version_info("v1.37.2")
    doc = doc_of(run(*args))
    assert (doc["kubeVersion"], doc["reference"]["kubernetes"]) == ("1.37", "v1.37.2")
    assert not any("v1.37.2" in w for w in doc.get("warnings") or ())


@pytest.mark.parametrize("served, used, how", [("v1.38.1", "1.37", "newer than"), ("v1.33.9", "1.35", "older than")])
def test_a_server_version_out_of_range_warns_and_names_the_version_used(kube_api, served, used, how):
    small_cluster(kube_api)
    kube_api.version = version_info(served)
    args = ["explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "-o", "json"]
    r = run(*args)
    doc = doc_of(r)
    assert doc["kubeVersion"] == used
    [warning] = [w for w in doc["warnings"] if served in w]
    assert warning.startswith(f"the API server is Kubernetes {served}, {how} the versions kschedx reproduces")
    assert f"reproducing kube-scheduler {doc['reference']['kubernetes']} instead" in warning
    assert len(warning.splitlines()) == 1 and served in r.stderr
    # --kube-version silences it
    quiet = doc_of(run(*args, "--kube-version", used))
    assert not any(served in w for w in quiet.get("warnings") or ())


def test_a_server_without_version_gives_the_newest(kube_api):
    small_cluster(kube_api)
    kube_api.version = None  # /version: 404
    doc = doc_of(run("explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "-o", "json"))
    assert doc["kubeVersion"] == "1.37"


def test_a_snapshot_records_the_servers_version(kube_api, tmp_path):
    small_cluster(kube_api)
    kube_api.version = version_info("v1.35.4")
    path = tmp_path / "cluster.yaml"
    assert run("snapshot", "-o", path, "--kubeconfig", kube_api.kubeconfig).exit_code == 0
    info = next(yaml.safe_load_all(path.read_text()))
    assert info["kind"] == "SnapshotInfo" and info["source"]["gitVersion"] == "v1.35.4"
    args = ["explain", "default/web", "--snapshot", path, "-o", "json"]
    assert doc_of(run(*args))["kubeVersion"] == "1.35"
    assert doc_of(run(*args, "--kube-version", "1.36"))["kubeVersion"] == "1.36"
    # A snapshot of a newer server: the warning says the snapshot's server is.
    kube_api.version = version_info("v1.38.0")
    assert run("snapshot", "-o", path, "--kubeconfig", kube_api.kubeconfig).exit_code == 0
    doc = doc_of(run(*args))
    assert doc["kubeVersion"] == "1.37" and any("v1.38.0" in w for w in doc["warnings"])


def test_a_snapshot_version_of_the_wrong_type_is_an_input_error(tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text("apiVersion: kschedx/v1\nkind: SnapshotInfo\nmetadata: {name: snapshot}\n"
                    "source: {server: x, gitVersion: 136}\n")
    r = run("explain", FIXTURE_POD, "--snapshot", path)
    assert r.exit_code == 3 and "field source.gitVersion" in r.stderr


def test_bind_reproduces_the_servers_version(kube_api):
    small_cluster(kube_api)
    kube_api.version = version_info("v1.35.4")
    r = run("bind", "default/web", "--kubeconfig", kube_api.kubeconfig, "--dry-run", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["kubeVersion"] == "1.35"


# ---- --feature-gates --------------------------------------------------------------------------


@pytest.mark.parametrize("gates, version, message", [
    ("NoSuchGate=true", "1.36", "unrecognized feature gate: NoSuchGate"),
    ("DynamicResourceAllocation=false", "1.36",
     "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"),
    ("GangScheduling=true", "1.35",
     "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"),
    ("CSIMigrationPortworx=true", "1.36", "unrecognized feature gate: CSIMigrationPortworx"),
])
def test_gates_the_version_refuses_are_usage_errors(gates, version, message):
    r = explain_fixture("--kube-version", version, "--feature-gates", gates)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"kschedx: error: --feature-gates: {message} (kube-scheduler {version})"


def test_gate_syntax_errors_are_usage_errors():
    r = explain_fixture("--feature-gates", "NodeDeclaredFeatures")
    assert r.exit_code == 2 and "missing bool value for NodeDeclaredFeatures" in r.stderr


def test_gates_are_checked_against_the_version_chosen(kube_api):
    """CSIMigrationPortworx exists in 1.35 only: accepted when the server is 1.35."""
    small_cluster(kube_api)
    kube_api.version = version_info("v1.35.4")
    doc = doc_of(run("explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "-o", "json",
                     "--feature-gates", "CSIMigrationPortworx=true"))
    assert doc["kubeVersion"] == "1.35" and doc["featureGates"] == {}  # its default: nothing differs
    kube_api.version = version_info("v1.36.2")
    r = run("explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "--feature-gates",
            "CSIMigrationPortworx=true")
    assert r.exit_code == 2 and "unrecognized feature gate: CSIMigrationPortworx" in r.stderr


def test_the_gates_set_are_in_the_result():
    doc = doc_of(explain_fixture("--kube-version", "1.36", "--feature-gates", "DRAConsumableCapacity=false",
                                 "--feature-gates", "DRAExtendedResource=false"))
    assert doc["featureGates"] == {"DRAConsumableCapacity": False, "DRAExtendedResource": False}
    # kube-scheduler's component prefix, used throughout
    doc = doc_of(explain_fixture("--feature-gates", "kube:DRAConsumableCapacity=false"))
    assert doc["featureGates"] == {"DRAConsumableCapacity": False}


@pytest.mark.parametrize("gates, version, message", [
    ("GenericWorkload=true", "1.37", "kschedx does not reproduce GenericWorkload=true (pod-group (gang) scheduling: "
                                     "workload cycles, pod groups as preemption victims)"),
    ("InterPodAffinityHostnameFastPath=true", "1.37",
     "kschedx does not reproduce InterPodAffinityHostnameFastPath=true (hostname-scoped inter-pod affinity "
     "checked on each node's pods)"),
    ("DRANodeAllocatableResources=true", "1.36",
     "kschedx does not reproduce DRANodeAllocatableResources=true (node-allocatable resources backed by DRA claims)"),
])
def test_gates_kschedx_does_not_reproduce_are_usage_errors(gates, version, message):
    r = explain_fixture("--kube-version", version, "--feature-gates", gates)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"kschedx: error: --feature-gates: {message} (kube-scheduler {version})"


def test_a_gate_the_scheduler_does_not_read_is_accepted():
    doc = doc_of(explain_fixture("--feature-gates", "CSIVolumeHealth=true"))
    assert doc["featureGates"] == {"CSIVolumeHealth": True}


def test_a_gate_changes_the_default_plugins():
    """NodeDeclaredFeatures is alpha in 1.35: on, it joins the default profile."""
    def plugins(doc):
        return {s["plugin"] for p in doc["pods"] for s in p["preFilter"]}

    assert "NodeDeclaredFeatures" not in plugins(doc_of(explain_fixture("--kube-version", "1.35")))
    on = doc_of(explain_fixture("--kube-version", "1.35", "--feature-gates", "NodeDeclaredFeatures=true"))
    assert "NodeDeclaredFeatures" in plugins(on)
    assert "NodeDeclaredFeatures" in plugins(doc_of(explain_fixture()))  # 1.36: on by default


def _resized_cluster(tmp_path):
    """n1 (4 CPUs) runs a pod with pod-level requests of 2 CPUs, resized in
    place to 3 (status.resources); a pending pod asks for 1500m."""
    running = api_pod("resized", node_name="n1", cpu="1")
    running["spec"]["resources"] = {"requests": {"cpu": "2"}}
    running["status"]["resources"] = {"requests": {"cpu": "3"}}
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([api_node("n1", cpu="4"), running, api_pod("new", cpu="1500m")]))
    return path


def test_a_gate_changes_a_verdict(tmp_path):
    """InPlacePodLevelResourcesVerticalScaling (on from 1.36) counts the resized
    pod's 3 CPUs: the new pod no longer fits; turned off, its 2 CPUs as in 1.35."""
    path = _resized_cluster(tmp_path)

    def status(*args):
        return doc_of(run("explain", "--snapshot", path, "-o", "json", *args))["pods"][0]["status"]

    assert status() == "Unschedulable"
    assert status("--feature-gates", "InPlacePodLevelResourcesVerticalScaling=false") == "Scheduled"
    assert status("--kube-version", "1.35") == "Scheduled"
    assert status("--kube-version", "1.35", "--feature-gates", "InPlacePodLevelResourcesVerticalScaling=true,"
                  "NodeDeclaredFeatures=true") == "Unschedulable"


# ---- the version in every output --------------------------------------------------------------


def test_every_command_and_format_names_the_version(tmp_path):
    pin = ("--kube-version", "1.35")
    human = run("explain", FIXTURE_POD, "--snapshot", FIXTURE_CLUSTER, *pin)
    assert human.stdout.splitlines()[0] == "kube-scheduler v1.35.4"
    sim = run("simulate", "fixtures/simulate/deploy.yaml", "--snapshot", "fixtures/simulate/cluster.yaml", *pin)
    assert sim.stdout.splitlines()[0] == "kube-scheduler v1.35.4"
    sim_doc = doc_of(run("simulate", "fixtures/simulate/deploy.yaml", "--snapshot", "fixtures/simulate/cluster.yaml",
                         *pin, "-o", "json"))
    assert sim_doc["kubeVersion"] == "1.35"
    cap = run("capacity", "fixtures/capacity/web.yaml", "--snapshot", "fixtures/capacity/cluster.yaml", *pin)
    assert cap.stdout.splitlines()[0] == "kube-scheduler v1.35.4"
    cap_doc = doc_of(run("capacity", "fixtures/capacity/web.yaml", "--snapshot", "fixtures/capacity/cluster.yaml",
                         *pin, "-o", "json", "--feature-gates", "DRAPartitionableDevices=true"))
    assert (cap_doc["kubeVersion"], cap_doc["featureGates"]) == ("1.35", {"DRAPartitionableDevices": True})
    report = tmp_path / "report.html"
    assert run("explain", FIXTURE_POD, "--snapshot", FIXTURE_CLUSTER, *pin, "--report", report).exit_code == 0
    assert "kube-scheduler v1.35.4 · tie-break" in report.read_text()
    jsonl = run("explain", FIXTURE_POD, "--snapshot", FIXTURE_CLUSTER, *pin, "-o", "jsonl").stdout.splitlines()
    assert json.loads(jsonl[-1])["kubeVersion"] == "1.35"
