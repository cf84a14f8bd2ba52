"""Workload manifests in POD_FILE become the pods their controllers create."""

from __future__ import annotations

import pytest
import yaml

from kschedx.commands.load import load_workload
from kschedx.util.errors import InputError
from kschedx.sources.workloads import add_daemon_tolerations, node_should_run_daemon_pod, pin_to_node

CLUSTER = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1, disk: ssd}}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
spec:
  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {kubernetes.io/hostname: n3, disk: ssd}}
spec:
  unschedulable: true
  taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: example.com/csi
volumeBindingMode: WaitForFirstConsumer
"""

TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]},
}


def _load(tmp_path, *objs):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    pods = tmp_path / "workload.yaml"
    pods.write_text(yaml.safe_dump_all(objs))
    return load_workload([str(cluster)], [str(pods)])


def _workload(kind, name, spec, api="apps/v1"):
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "shop"}, "spec": spec}


def test_deployment_expands_into_replicas_of_its_replicaset(tmp_path):
    w = _load(tmp_path, _workload("Deployment", "web", {
        "replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}))
    assert len(w.pods) == 3
    rs = list(w.cluster.replica_sets.values())
    assert len(rs) == 1
    rs_name = rs[0]["metadata"]["name"]
    pth = rs[0]["spec"]["template"]["metadata"]["labels"]["pod-template-hash"]
    assert rs_name == f"web-{pth}"
    assert rs[0]["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert rs[0]["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pth}
    names = set()
    for pi in w.pods:
        assert pi.namespace == "shop"
        assert pi.name.startswith(f"{rs_name}-") and len(pi.name) == len(rs_name) + 6
        assert pi.labels == {"app": "web", "pod-template-hash": pth}
        owner = pi.pod["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("ReplicaSet", rs_name, True)
        assert not pi.node_name
        names.add(pi.name)
    assert len(names) == 3
    assert any("expanded into 3 pod(s)" in n for n in w.notes)


def test_expansion_is_stable_across_runs(tmp_path):
    spec = {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}
    a = [p.name for p in _load(tmp_path, _workload("Deployment", "web", spec)).pods]
    b = [p.name for p in _load(tmp_path, _workload("Deployment", "web", spec)).pods]
    assert a == b


def test_deployment_default_one_replica_and_paused(tmp_path):
    w = _load(tmp_path, _workload("Deployment", "web", {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}))
    assert len(w.pods) == 1
    with pytest.raises(InputError, match="no pods"):
        _load(tmp_path, _workload("Deployment", "web", {"paused": True, "selector": {"matchLabels": {"app": "web"}},
                                                        "template": TEMPLATE}))


def test_replicaset_is_cluster_state_and_expanded(tmp_path):
    w = _load(tmp_path, _workload("ReplicaSet", "rs", {
        "replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}))
    assert "shop/rs" in w.cluster.replica_sets
    assert [p.pod["metadata"]["ownerReferences"][0]["name"] for p in w.pods] == ["rs", "rs"]


def test_statefulset_ordinals_and_claims(tmp_path):
    w = _load(tmp_path, _workload("StatefulSet", "db", {
        "replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
            "containers": [{"name": "c", "image": "pg"}],
            "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "x"}}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
    }))
    assert sorted(p.name for p in w.pods) == ["db-0", "db-1", "db-2"]
    for pi in w.pods:
        ordinal = pi.name.split("-")[1]
        assert pi.labels["statefulset.kubernetes.io/pod-name"] == pi.name
        assert pi.labels["apps.kubernetes.io/pod-index"] == ordinal
        assert pi.spec["hostname"] == pi.name and pi.spec["subdomain"] == "db"
        assert pi.spec["volumes"][0] == {"name": "data", "persistentVolumeClaim": {"claimName": f"data-db-{ordinal}"}}
        assert [v["name"] for v in pi.spec["volumes"]] == ["data", "cfg"]
        assert pi.pvc_names == [f"data-db-{ordinal}"]
    claim = w.cluster.persistent_volume_claims["shop/data-db-1"]
    assert claim["metadata"]["labels"] == {"app": "db"}
    assert claim["spec"]["storageClassName"] == "standard"
    assert "volumeName" not in claim["spec"]


def test_statefulset_start_ordinal_and_existing_claim_kept(tmp_path):
    existing = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data-db-5", "namespace": "shop"},
                "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "1Gi"}}}}
    w = _load(tmp_path, existing, _workload("StatefulSet", "db", {
        "replicas": 2, "ordinals": {"start": 5}, "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "pg"}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}],
    }))
    assert sorted(p.name for p in w.pods) == ["db-5", "db-6"]
    assert w.cluster.persistent_volume_claims["shop/data-db-5"]["spec"]["storageClassName"] == "fast"


def test_job_parallelism_completions_and_labels(tmp_path):
    w = _load(tmp_path, _workload("Job", "batch", {"parallelism": 4, "completions": 2, "template": {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}, api="batch/v1"))
    assert len(w.pods) == 2
    for pi in w.pods:
        assert pi.name.startswith("batch-")
        assert pi.labels["batch.kubernetes.io/job-name"] == "batch"
        assert pi.labels["job-name"] == "batch"
        assert pi.labels["controller-uid"] == pi.labels["batch.kubernetes.io/controller-uid"]


def test_indexed_job(tmp_path):
    w = _load(tmp_path, _workload("Job", "idx", {"parallelism": 3, "completionMode": "Indexed", "template": {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}, api="batch/v1"))
    indexes = sorted(p.pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in w.pods)
    assert indexes == ["0", "1", "2"]
    for pi in w.pods:
        i = pi.labels["batch.kubernetes.io/job-completion-index"]
        assert pi.name.startswith(f"idx-{i}-") and pi.spec["hostname"] == f"idx-{i}"


def test_suspended_job_creates_nothing(tmp_path):
    with pytest.raises(InputError, match="no pods"):
        _load(tmp_path, _workload("Job", "j", {"suspend": True, "template": TEMPLATE}, api="batch/v1"))


def test_cronjob_creates_one_job_run(tmp_path):
    w = _load(tmp_path, _workload("CronJob", "nightly", {"schedule": "0 0 * * *", "jobTemplate": {"spec": {
        "parallelism": 2, "template": {"spec": {"restartPolicy": "OnFailure",
                                                "containers": [{"name": "c", "image": "busybox"}]}}}}},
        api="batch/v1"))
    assert len(w.pods) == 2
    job = w.pods[0].labels["batch.kubernetes.io/job-name"]
    assert job.startswith("nightly-") and job[len("nightly-"):].isdigit()
    assert w.pods[0].pod["metadata"]["ownerReferences"][0]["kind"] == "Job"


def test_daemonset_one_pod_per_eligible_node(tmp_path):
    w = _load(tmp_path, _workload("DaemonSet", "agent", {
        "selector": {"matchLabels": {"app": "agent"}},
        "template": {"metadata": {"labels": {"app": "agent"}},
                     "spec": {"containers": [{"name": "c", "image": "agent"}]}}}))
    # n2's NoSchedule taint is not tolerated; n3 is cordoned but daemon pods
    # tolerate node.kubernetes.io/unschedulable.
    pinned = sorted(p.spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                    ["nodeSelectorTerms"][0]["matchFields"][0]["values"][0] for p in w.pods)
    assert pinned == ["n1", "n3"]
    tol_keys = {t["key"] for t in w.pods[0].spec["tolerations"]}
    assert {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
            "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure",
            "node.kubernetes.io/unschedulable"} <= tol_keys
    assert w.pods[0].labels["pod-template-generation"] == "1"


def test_daemonset_respects_node_selector_and_existing_pods(tmp_path):
    ds = _workload("DaemonSet", "agent", {
        "selector": {"matchLabels": {"app": "agent"}},
        "template": {"metadata": {"labels": {"app": "agent"}},
                     "spec": {"nodeSelector": {"disk": "ssd"}, "containers": [{"name": "c", "image": "agent"}]}}})
    running = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "agent-old", "namespace": "shop",
                            "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "controller": True}]},
               "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "agent"}]}}
    (tmp_path / "running.yaml").write_text(yaml.safe_dump(running))
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "ds.yaml").write_text(yaml.safe_dump(ds))
    w = load_workload([str(tmp_path / "cluster.yaml"), str(tmp_path / "running.yaml")], [str(tmp_path / "ds.yaml")])
    assert len(w.pods) == 1
    assert w.pods[0].spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n3"]


def test_daemon_helpers():
    spec = {"hostNetwork": True, "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                                  "effect": "NoExecute", "tolerationSeconds": 300}]}
    add_daemon_tolerations(spec)
    not_ready = [t for t in spec["tolerations"] if t["key"] == "node.kubernetes.io/not-ready"]
    assert not_ready == [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]
    assert any(t["key"] == "node.kubernetes.io/network-unavailable" for t in spec["tolerations"])
    spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Exists"}]}]}}}}
    pin_to_node(spec, "n9")
    assert spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}]}]}
    node = {"metadata": {"name": "n", "labels": {}}, "spec": {"taints": [{"key": "k", "effect": "NoExecute"}]}}
    assert not node_should_run_daemon_pod(node, {})
    assert node_should_run_daemon_pod(node, {"tolerations": [{"key": "k", "operator": "Exists"}]})
    assert not node_should_run_daemon_pod(node, {"nodeName": "other", "tolerations": [{"operator": "Exists"}]})


def test_workload_without_template_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="spec.template"):
        _load(tmp_path, _workload("Deployment", "broken", {"replicas": 1}))


_LABEL_RULE = "a valid label must be an empty string"


def _refused_requests(t):
    t["spec"]["containers"][0]["resources"] = {"requests": {"cpus": "2"}}
    return "spec.containers[0].resources.requests.cpus: invalid resource name 'cpus'"


def _refused_protocol(t):  # an enumeration of the shape: once reported on a Deployment's ReplicaSet
    t["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 80, "protocol": "TPC"}]
    return "spec.containers[0].ports[0].protocol: unsupported value 'TPC'"


def _refused_label(t):  # once reported on the pod
    t["metadata"]["labels"] = {"app": "web server"}
    return f"metadata.labels.app: 'web server': {_LABEL_RULE}"


@pytest.mark.parametrize("refuse", [_refused_requests, _refused_protocol, _refused_label])
@pytest.mark.parametrize("kind, path", [("Deployment", "spec.template"), ("StatefulSet", "spec.template"),
                                        ("Job", "spec.template"), ("DaemonSet", "spec.template"),
                                        ("CronJob", "spec.jobTemplate.spec.template")])
def test_a_templates_value_the_api_server_refuses_names_the_workload_and_its_field(tmp_path, kind, path, refuse):
    """Not the pod (or ReplicaSet) kschedx made from it: a name the user never wrote."""
    import copy

    template = copy.deepcopy(TEMPLATE)
    expected = refuse(template)
    spec = {"selector": {"matchLabels": {"app": "web"}}, "template": template}
    if kind == "CronJob":
        spec = {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}
    if kind == "StatefulSet":
        spec["serviceName"] = "web"
    api = "batch/v1" if kind in ("Job", "CronJob") else "apps/v1"
    with pytest.raises(InputError) as error:
        _load(tmp_path, _workload(kind, "web", spec, api=api))
    assert f"{kind}/shop/web: field {path}.{expected}" in str(error.value)


def test_bad_replicas_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="spec.replicas"):
        _load(tmp_path, _workload("ReplicaSet", "rs", {"replicas": "three", "template": TEMPLATE}))


def test_absurd_replica_counts_fail_in_one_line_instead_of_running_out_of_memory(tmp_path):
    from kschedx.sources.workloads import MAX_PODS_PER_WORKLOAD

    spec = {"replicas": 10**9, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}
    with pytest.raises(InputError, match=r"field spec.replicas: 1,000,000,000 pods: kschedx expands a workload"):
        _load(tmp_path, _workload("Deployment", "web", spec))
    spec["replicas"] = 2**31
    # strict input refuses it first, in the API server's words
    with pytest.raises(InputError, match="cannot unmarshal number 2147483648 into Go struct field "
                                         "DeploymentSpec.spec.replicas of type int32"):
        _load(tmp_path, _workload("Deployment", "web", spec))
    # A Job creates only the pods that run at once: many completions are fine.
    job = {"parallelism": 2, "completions": MAX_PODS_PER_WORKLOAD * 10, "template": TEMPLATE}
    assert len(_load(tmp_path, _workload("Job", "batch", job, api="batch/v1")).pods) == 2


# -- selectors: a controller's pods are the ones its selector matches -------------------------
_MISMATCH = "`selector` does not match template `labels`"


def _selector_error(tmp_path, kind, spec) -> str:
    api = "batch/v1" if kind in ("Job", "CronJob") else "apps/v1"
    if kind == "StatefulSet":
        spec = dict(spec, serviceName="web")
    with pytest.raises(InputError) as error:
        _load(tmp_path, _workload(kind, "web", spec, api=api))
    return str(error.value)


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"])
def test_a_selector_that_misses_the_templates_labels_is_refused(tmp_path, kind):
    spec = {"selector": {"matchLabels": {"app": "api"}}, "template": TEMPLATE}
    message = _selector_error(tmp_path, kind, spec)
    assert message.endswith(f"workload.yaml: {kind}/shop/web: field spec.template.metadata.labels: {_MISMATCH}")
    spec["selector"] = {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}
    assert _selector_error(tmp_path, kind, spec).endswith(f"field spec.template.metadata.labels: {_MISMATCH}")


@pytest.mark.parametrize("kind, word", [("Deployment", "deployment"), ("ReplicaSet", "deployment"),
                                        ("StatefulSet", "statefulset"), ("DaemonSet", "daemonset")])
def test_an_empty_selector_is_refused(tmp_path, kind, word):
    """It would select every pod of the namespace (a ReplicaSet's message
    says deployment too, as the API server's does)."""
    message = _selector_error(tmp_path, kind, {"selector": {}, "template": TEMPLATE})
    assert message.endswith(f"{kind}/shop/web: field spec.selector: empty selector is invalid for {word}")


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "StatefulSet"])
def test_a_missing_selector_is_refused(tmp_path, kind):
    message = _selector_error(tmp_path, kind, {"template": TEMPLATE})
    assert message.endswith(f"{kind}/shop/web: field spec.selector: required value")


def test_a_daemonset_without_selector_selects_not_even_its_template(tmp_path):
    message = _selector_error(tmp_path, "DaemonSet", {"template": TEMPLATE})
    assert message.endswith(f"DaemonSet/shop/web: field spec.template.metadata.labels: {_MISMATCH}")


def test_a_selector_matching_more_than_the_template_is_fine(tmp_path):
    spec = {"replicas": 2, "template": TEMPLATE,
            "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}}
    assert len(_load(tmp_path, _workload("Deployment", "web", spec)).pods) == 2


def test_a_jobs_selector_is_checked_only_when_set_by_hand(tmp_path):
    template = dict(TEMPLATE, spec=dict(TEMPLATE["spec"], restartPolicy="Never"))
    # Generated: the API server writes the selector and the labels it matches.
    assert len(_load(tmp_path, _workload("Job", "web", {"template": template}, api="batch/v1")).pods) == 1
    manual = {"manualSelector": True, "selector": {"matchLabels": {"app": "api"}}, "template": template}
    assert _selector_error(tmp_path, "Job", manual).endswith(
        f"Job/shop/web: field spec.template.metadata.labels: {_MISMATCH}")
    del manual["selector"]
    assert _selector_error(tmp_path, "Job", manual).endswith("Job/shop/web: field spec.selector: required value")
    manual["selector"] = {"matchLabels": {"app": "web"}}
    assert len(_load(tmp_path, _workload("Job", "web", manual, api="batch/v1")).pods) == 1


def test_a_cronjobs_job_template_has_no_selector(tmp_path):
    template = dict(TEMPLATE, spec=dict(TEMPLATE["spec"], restartPolicy="Never"))
    job = {"selector": {"matchLabels": {"app": "web"}}, "template": template}
    message = _selector_error(tmp_path, "CronJob", {"schedule": "* * * * *", "jobTemplate": {"spec": job}})
    assert message.endswith("CronJob/shop/web: field spec.jobTemplate.spec.selector: `selector` will be auto-generated")
    job = {"manualSelector": True, "template": template}
    message = _selector_error(tmp_path, "CronJob", {"schedule": "* * * * *", "jobTemplate": {"spec": job}})
    assert "field spec.jobTemplate.spec.manualSelector: unsupported value true" in message


def test_cli_refuses_a_mismatched_selector_with_exit_3(tmp_path):
    from click.testing import CliRunner

    from kschedx.cli.main import main

    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    spec = {"replicas": 2, "selector": {"matchLabels": {"a": "b"}}, "template": TEMPLATE}
    (tmp_path / "deploy.yaml").write_text(yaml.safe_dump(_workload("Deployment", "d", spec)))
    r = CliRunner().invoke(main, ["explain", str(tmp_path / "deploy.yaml"),
                                  "--snapshot", str(tmp_path / "cluster.yaml")])
    assert r.exit_code == 3
    assert f"deploy.yaml: Deployment/shop/d: field spec.template.metadata.labels: {_MISMATCH}" in r.output
