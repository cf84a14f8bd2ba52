"""kschedx capacity: copies placed one after another until one does not fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from builders import HIGH, LOW
from builders import preemption_node as node
from builders import preemption_pod as pod
from kschedx.commands.load import load_workload
from kschedx.commands import capacity as cap
from kschedx.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def _write(tmp_path, objs, name="cluster.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objs))
    return str(path)


def _run(*args):
    result = CliRunner().invoke(main, ["capacity", *args])
    return result


def _capacity(cluster, pods, **options):
    workload = load_workload([cluster], [pods])
    return cap.capacity(workload, cap.Options(**options), tie_break="name")


def test_json_document_counts_copies_per_node_and_names_the_limit(tmp_path):
    cluster = _write(tmp_path, [node("a", {"cpu": "1", "memory": "4Gi"}), node("b", {"cpu": "2", "memory": "4Gi"})])
    pods = _write(tmp_path, [pod("web", req={"cpu": "400m"})], "pod.yaml")
    r = _run(pods, "--snapshot", cluster, "-o", "json", "--tie-break", "name")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["apiVersion"] == "kschedx/v1" and doc["kind"] == "CapacityResult"
    [t] = doc["templates"]
    assert t["template"] == "default/web"
    assert t["count"] == 7  # 2 on a (800m of 1), 5 on b (2000m of 2)
    assert t["perNode"] == {"a": 2, "b": 5}
    assert t["stop"] == "Unschedulable"
    assert t["message"].startswith("0/2 nodes are available: 2 Insufficient cpu.")
    assert t["limitedBy"]["plugin"] == "NodeResourcesFit"
    assert t["limitedBy"]["resource"] == "cpu"
    assert (t["limitedBy"]["nodes"], t["limitedBy"]["totalNodes"]) == (2, 2)
    assert doc["exitCode"] == 0
    util = {u["node"]: u for u in t["utilization"]}
    assert util["b"]["before"]["cpu"] == 0 and util["b"]["after"]["cpu"] == 2000 and util["b"]["copies"] == 5


def test_copies_have_distinct_names_and_uids(tmp_path):
    template = pod("web", req={"cpu": "1"})
    template["status"]["nominatedNodeName"] = "a"
    copies = [cap.copy_pod(template, i) for i in (1, 2)]
    assert [c["metadata"]["name"] for c in copies] == ["web-capacity-1", "web-capacity-2"]
    assert len({c["metadata"]["uid"] for c in copies} | {template["metadata"]["uid"]}) == 3
    assert all("nominatedNodeName" not in c["status"] for c in copies)
    assert template["status"]["nominatedNodeName"] == "a"  # the template is left alone


def test_stops_on_topology_spreading_in_the_bundled_fixture():
    workload = load_workload([str(FIXTURES / "capacity" / "cluster.yaml")],
                                 [str(FIXTURES / "capacity" / "web.yaml")])
    doc = cap.capacity(workload, cap.Options(), tie_break="name")
    [t] = doc["templates"]
    assert t["workload"] == "Deployment shop/web"
    assert t["limitedBy"]["plugin"] == "PodTopologySpread"
    assert t["limitedBy"]["resource"] is None
    assert t["limitedBy"]["nodes"] == 4 and t["limitedBy"]["totalNodes"] == 5
    zones = {"a": 0, "b": 0, "c": 0}
    for name, n in t["perNode"].items():
        zones[name[len("node-")]] += n
    assert max(zones.values()) - min(zones.values()) <= 1
    assert t["count"] == sum(zones.values())


def test_memory_limit_in_the_bundled_fixture():
    workload = load_workload([str(FIXTURES / "capacity" / "cluster.yaml")],
                                 [str(FIXTURES / "capacity" / "api.yaml")])
    [t] = cap.capacity(workload, cap.Options(), tie_break="name")["templates"]
    assert (t["limitedBy"]["plugin"], t["limitedBy"]["resource"]) == ("NodeResourcesFit", "memory")
    assert t["chartResource"] == "memory"


def test_each_copy_sees_the_copies_before_it_anti_affinity(tmp_path):
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    cluster = _write(tmp_path, [node(n) for n in "abc"])
    pods = _write(tmp_path, [pod("web", labels={"app": "web"}, affinity=anti)], "pod.yaml")
    [t] = _capacity(cluster, pods)["templates"]
    assert t["count"] == 3 and t["perNode"] == {"a": 1, "b": 1, "c": 1}
    assert t["limitedBy"]["plugin"] == "InterPodAffinity"


def test_max_stops_early_and_min_sets_the_exit_code(tmp_path):
    cluster = _write(tmp_path, [node("a", {"cpu": "4", "memory": "4Gi"})])
    pods = _write(tmp_path, [pod("web", req={"cpu": "1"})], "pod.yaml")
    doc = _capacity(cluster, pods, max=2)
    [t] = doc["templates"]
    assert (t["count"], t["stop"], t["message"], t["limitedBy"]) == (2, "Max", None, None)
    assert _run(pods, "--snapshot", cluster, "--min", "4", "-o", "json").exit_code == 0
    r = _run(pods, "--snapshot", cluster, "--min", "5", "-o", "json")
    assert r.exit_code == 1 and json.loads(r.output)["templates"][0]["count"] == 4


def test_preemption_off_by_default_ends_the_count(tmp_path):
    objs = [node("a", {"cpu": "2", "memory": "4Gi"}), pod("low", node="a", priority=LOW, req={"cpu": "2"})]
    cluster = _write(tmp_path, objs)
    pods = _write(tmp_path, [pod("urgent", priority=HIGH, req={"cpu": "1"})], "pod.yaml")
    [t] = _capacity(cluster, pods)["templates"]
    assert (t["count"], t["stop"]) == (0, "NeedsPreemption")
    assert t["preemption"]["nominatedNode"] == "a"
    assert [v["pod"] for v in t["preemption"]["victims"]] == ["default/low"]
    [t] = _capacity(cluster, pods, allow_preemption=True)["templates"]
    assert (t["count"], t["placedByPreemption"], t["victims"]) == (2, 1, ["default/low"])
    assert t["stop"] == "Unschedulable"


def test_with_pending_places_the_snapshots_pending_pods_first(tmp_path):
    objs = [node("a", {"cpu": "4", "memory": "4Gi"}), pod("waiting", req={"cpu": "3"})]
    cluster = _write(tmp_path, objs)
    pods = _write(tmp_path, [pod("web", req={"cpu": "1"})], "pod.yaml")
    [t] = _capacity(cluster, pods)["templates"]
    assert t["count"] == 4
    [t] = _capacity(cluster, pods, with_pending=True)["templates"]
    assert t["count"] == 1 and t["pending"] == {"pods": 1, "placed": 1}


def test_each_pod_template_is_counted_on_its_own(tmp_path):
    cluster = _write(tmp_path, [node("a", {"cpu": "4", "memory": "4Gi"})])
    pods = _write(tmp_path, [pod("one", req={"cpu": "1"}), pod("two", req={"cpu": "2"})], "pods.yaml")
    doc = _capacity(cluster, pods)
    assert {t["template"]: t["count"] for t in doc["templates"]} == {"default/one": 4, "default/two": 2}


def test_a_pending_pod_of_the_snapshot_named_as_namespace_name(tmp_path):
    objs = [node("a", {"cpu": "4", "memory": "4Gi"}), pod("waiting", req={"cpu": "1"})]
    cluster = _write(tmp_path, objs)
    r = _run("default/waiting", "--snapshot", cluster, "-o", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["templates"][0]["count"] == 4


def test_deployment_counts_once_per_template_with_its_owner():
    r = _run(str(FIXTURES / "simulate" / "deploy.yaml"), "--snapshot", str(FIXTURES / "simulate" / "cluster.yaml"),
             "-o", "yaml", "--tie-break", "name")
    assert r.exit_code == 0, r.output
    doc = yaml.safe_load(r.output)
    [t] = doc["templates"]
    assert t["workload"] == "Deployment shop/web" and t["count"] > 0


def test_jsonl_one_line_per_template(tmp_path):
    cluster = _write(tmp_path, [node("a", {"cpu": "4", "memory": "4Gi"})])
    pods = _write(tmp_path, [pod("one", req={"cpu": "1"}), pod("two", req={"cpu": "2"})], "pods.yaml")
    r = _run(pods, "--snapshot", cluster, "-o", "jsonl")
    lines = [json.loads(line) for line in r.output.splitlines()]
    assert [line["kind"] for line in lines] == ["CapacityResult"] * 2
    assert [line["templates"][0]["count"] for line in lines] == [4, 2]


# -- bad input: one line, exit 2 or 3 ---------------------------------------------------------

def _one_line_error(r, code):
    assert r.exit_code == code, r.output
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    return lines[0]


@pytest.mark.parametrize("flag", ["0", "-3"])
def test_max_below_one_is_a_usage_error(tmp_path, flag):
    cluster = _write(tmp_path, [node("a")])
    pods = _write(tmp_path, [pod("web")], "pod.yaml")
    line = _one_line_error(_run(pods, "--snapshot", cluster, "--max", flag), 2)
    assert "--max" in line


def test_min_above_max_is_a_usage_error(tmp_path):
    cluster = _write(tmp_path, [node("a")])
    pods = _write(tmp_path, [pod("web")], "pod.yaml")
    assert "--min 3 is above --max 2" in _one_line_error(_run(pods, "--snapshot", cluster, "--max", "2", "--min", "3"), 2)


def test_no_pod_file_is_a_usage_error(tmp_path):
    cluster = _write(tmp_path, [node("a")])
    assert _run("--snapshot", cluster).exit_code == 2


def test_pod_template_without_containers(tmp_path):
    cluster = _write(tmp_path, [node("a")])
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}}}
    pods = _write(tmp_path, [deploy], "deploy.yaml")
    line = _one_line_error(_run(pods, "--snapshot", cluster), 3)
    assert "spec.containers" in line and "no containers" in line


def test_workload_with_zero_replicas(tmp_path):
    cluster = _write(tmp_path, [node("a")])
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
              "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    pods = _write(tmp_path, [deploy, pod("other")], "deploy.yaml")
    line = _one_line_error(_run(pods, "--snapshot", cluster), 3)
    assert "Deployment/default/web" in line and "zero replicas" in line


def test_daemonset_is_refused(tmp_path):
    cluster = _write(tmp_path, [node("a")])
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"app": "agent"}},
                   "template": {"metadata": {"labels": {"app": "agent"}},
                                "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    pods = _write(tmp_path, [ds], "ds.yaml")
    assert "one pod per eligible node" in _one_line_error(_run(pods, "--snapshot", cluster), 3)


_AGENT = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"app": "agent"}},
                   "template": {"metadata": {"labels": {"app": "agent"}},
                                "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
_DAEMON_SET_REFUSED = ("DaemonSet/default/agent: runs one pod per eligible node: capacity counts replicas (give a Pod, "
                       "Deployment, ReplicaSet, StatefulSet or Job)")


@pytest.mark.parametrize("nodes, beside", [(1, False), (0, False), (0, True)])
def test_a_daemon_set_is_named_with_its_file_not_as_a_pod_made_of_it(tmp_path, nodes, beside):
    # Without a node it makes no pod: still a DaemonSet, not "zero replicas".
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}
    cluster = _write(tmp_path, [node("a")] if nodes else [namespace])
    pods = _write(tmp_path, [_AGENT, pod("other")] if beside else [_AGENT], "ds.yaml")
    assert _one_line_error(_run(pods, "--snapshot", cluster), 3) == f"kschedx: error: {pods}: {_DAEMON_SET_REFUSED}"


def test_a_statefulset_with_claim_templates_is_named_with_its_file_and_field(tmp_path):
    cluster = _write(tmp_path, [node("a")])
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"replicas": 2, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}},
                                 "spec": {"containers": [{"name": "c", "image": "x"}]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    pods = _write(tmp_path, [sts], "sts.yaml")
    line = _one_line_error(_run(pods, "--snapshot", cluster), 3)
    assert line.startswith(f"kschedx: error: {pods}: StatefulSet/default/db: field spec.volumeClaimTemplates: each "
                           "replica would need PersistentVolumeClaims of its own")


_SUSPENDED = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "susp", "namespace": "default"},
              "spec": {"suspend": True, "template": {"spec": {"restartPolicy": "Never",
                                                              "containers": [{"name": "c", "image": "x"}]}}}}


@pytest.mark.parametrize("beside", [False, True])
def test_a_suspended_job_says_it_makes_no_pod_alone_or_beside_another(tmp_path, beside):
    # Alone, it leaves no object behind: the file is not empty for that.
    cluster = _write(tmp_path, [node("a")])
    pods = _write(tmp_path, [_SUSPENDED, pod("other")] if beside else [_SUSPENDED], "job.yaml")
    line = _one_line_error(_run(pods, "--snapshot", cluster), 3)
    assert line.startswith(f"kschedx: error: {pods}: Job/default/susp: makes no pod (zero replicas, suspended or "
                           "paused): no pod template to count")


@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_a_suspended_job_alone_is_no_pods_to_evaluate_for_explain_and_simulate(tmp_path, command):
    cluster = _write(tmp_path, [node("a")])
    pods = _write(tmp_path, [_SUSPENDED], "job.yaml")
    r = CliRunner().invoke(main, [command, pods, "--snapshot", cluster])
    assert _one_line_error(r, 3) == (f"kschedx: error: {pods}: no pods to evaluate: Job/default/susp expanded into "
                                     "0 pod(s)")


# -- human output --------------------------------------------------------------------------------

def test_human_output_names_count_limit_and_chart_without_colour():
    r = _run(str(FIXTURES / "capacity" / "web.yaml"), "--snapshot", str(FIXTURES / "capacity" / "cluster.yaml"),
             "--tie-break", "name")
    assert r.exit_code == 0, r.output
    out = r.output
    assert "\x1b[" not in out
    assert "copies fit" in out
    assert "limited by: PodTopologySpread, node(s) didn't match pod topology spread constraints, on 4 of 5 nodes" in out
    assert "0/5 nodes are available:" in out
    assert "o copies" in out and "node-c1" in out


# -- --report FILE.html ----------------------------------------------------------------------------

def test_report_shows_count_limit_utilization_and_the_copy_that_does_not_fit(tmp_path):
    path = tmp_path / "capacity.html"
    r = _run(str(FIXTURES / "capacity" / "web.yaml"), "--snapshot", str(FIXTURES / "capacity" / "cluster.yaml"),
             "--tie-break", "name", "-o", "json", "--report", str(path))
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # stdout is the document alone, as without --report
    [t] = doc["templates"]
    page = path.read_text(encoding="utf-8")
    assert "default-src 'none'" in page
    assert f"<b>{t['count']}</b> copies fit" in page
    assert "limited by: <b>PodTopologySpread</b>" in page
    assert 'id="util-table-0"' in page and "node-c1" in page
    # The first copy that does not fit, with its heat map of every node.
    assert f"{t['template']}-capacity-{t['count'] + 1}" in page
    assert "Filters: 5 nodes by the failure kube-scheduler reports" in page


def test_report_path_that_cannot_be_written_is_exit_3(tmp_path):
    r = _run(str(FIXTURES / "capacity" / "api.yaml"), "--snapshot", str(FIXTURES / "capacity" / "cluster.yaml"),
             "--report", str(tmp_path / "missing" / "r.html"))
    assert r.exit_code == 3


def test_capacity_report_loads_in_chromium(tmp_path):
    import chromium

    exe = chromium.find_chromium()
    if exe is None:
        pytest.skip("no Chromium on PATH (install Debian's chromium package) to load the report in a browser")
    path = tmp_path / "capacity.html"
    _run(str(FIXTURES / "capacity" / "web.yaml"), "--snapshot", str(FIXTURES / "capacity" / "cluster.yaml"),
         "--tie-break", "name", "--report", str(path))
    browser = chromium.Browser(exe)
    try:
        browser.load(str(path))
        heading = browser.evaluate("document.querySelector('#capacity-0 h2').innerText")
        assert heading.startswith("Capacity: shop/web-")
        rows = browser.evaluate("document.querySelectorAll('#util-table-0 tbody tr').length")
        assert rows == 5
        assert browser.problems() == []
    finally:
        browser.close()


def test_statefulset_with_volume_claim_templates_is_refused(tmp_path):
    cluster = _write(tmp_path, [node("a")])
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "default"},
           "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}},
                                 "spec": {"containers": [{"name": "c", "image": "x"}]}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    pods = _write(tmp_path, [sts], "sts.yaml")
    assert "StatefulSet/default/db" in _one_line_error(_run(pods, "--snapshot", cluster), 3)
    del sts["spec"]["volumeClaimTemplates"]
    pods = _write(tmp_path, [sts], "sts.yaml")
    r = _run(pods, "--snapshot", cluster, "-o", "json", "--max", "3")
    assert r.exit_code == 0, r.output
    [t] = json.loads(r.output)["templates"]
    assert (t["workload"], t["count"]) == ("StatefulSet default/db", 3)


def test_docs_example_output_is_what_capacity_prints():
    readme = (ROOT / "docs" / "capacity.md").read_text(encoding="utf-8")
    command = "$ kschedx capacity fixtures/capacity/web.yaml --snapshot fixtures/capacity/cluster.yaml --tie-break name\n"
    shown = readme.split(command, 1)[1].split("```", 1)[0]
    r = _run(str(FIXTURES / "capacity" / "web.yaml"), "--snapshot", str(FIXTURES / "capacity" / "cluster.yaml"),
             "--tie-break", "name")
    assert r.output == shown
