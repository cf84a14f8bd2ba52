"""explain --fix for pods of a workload: a pod a Deployment, StatefulSet,
Job, CronJob or DaemonSet of a POD_FILE expands into gets fixes that patch
the workload's pod template, checked on the pod the patched workload
expands into; applied to the workload as written and explained again, the
pod fits. A live pod of a controller names the object to change."""

from __future__ import annotations

import copy

import pytest
import yaml

from fixhelp import explain, node, pod
from kschedx.commands import explain as explaining
from kschedx.commands.load import load_workload
from kschedx.fixes.jsonpatch import apply_patch

TAINT = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx",
                                     "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]}}


def _workload(kind: str) -> dict:
    template = copy.deepcopy(TEMPLATE)
    meta = {"name": "web", "namespace": "shop"}
    selector = {"matchLabels": {"app": "web"}}
    if kind == "Deployment":
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
                "spec": {"replicas": 1, "selector": selector, "template": template}}
    if kind == "StatefulSet":
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
                "spec": {"replicas": 1, "serviceName": "web", "selector": selector, "template": template}}
    if kind == "DaemonSet":
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
                "spec": {"selector": selector, "template": template}}
    template["spec"]["restartPolicy"] = "Never"
    if kind == "Job":
        return {"apiVersion": "batch/v1", "kind": kind, "metadata": meta, "spec": {"template": template}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta,
            "spec": {"schedule": "0 0 * * *", "jobTemplate": {"spec": {"template": template}}}}


POINTER = {"Deployment": "/spec/template", "StatefulSet": "/spec/template", "Job": "/spec/template",
           "CronJob": "/spec/jobTemplate/spec/template", "DaemonSet": "/spec/template"}


def _explain(tmp_path, cluster: list, workload: dict) -> list[dict]:
    snap, pods = tmp_path / "cluster.yaml", tmp_path / "workload.yaml"
    snap.write_text(yaml.safe_dump_all(cluster))
    pods.write_text(yaml.safe_dump(workload))
    loaded = load_workload([str(snap)], [str(pods)], keep_raw=True)
    return explaining.explain(loaded, tie_break="name", fix=True)["pods"]


def _fix(p, kind):
    found = [f for f in p["fixes"] if f["kind"] == kind]
    assert found, [f["kind"] for f in p["fixes"]]
    return found[0]


def _replayed(tmp_path, cluster, workload, fix) -> list[dict]:
    (change,) = fix["changes"]
    assert change["target"] == {"apiVersion": workload["apiVersion"], "kind": workload["kind"],
                                "namespace": "shop", "name": "web"}
    changed = apply_patch(workload, change["patch"])
    return _explain(tmp_path, cluster, changed)


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet", "Job", "CronJob"])
def test_toleration_and_request_fixes_patch_the_pod_template(tmp_path, kind):
    cluster = [node("tainted", cpu="4", taints=[TAINT]), node("small", cpu="1")]
    workload = _workload(kind)
    (p,) = _explain(tmp_path, cluster, workload)
    assert p["status"] == "Unschedulable"
    tolerate = _fix(p, "add-toleration")
    assert tolerate["patch"] == [{"op": "add", "path": POINTER[kind] + "/spec/tolerations",
                                  "value": [{"key": "dedicated", "operator": "Equal", "value": "batch",
                                             "effect": "NoSchedule"}]}]
    assert tolerate["target"]["kind"] == kind
    (after,) = _replayed(tmp_path, cluster, workload, tolerate)
    assert after["status"] == "Scheduled" and after["selectedNode"] == "tainted"
    smaller = _fix(p, "reduce-request")
    assert smaller["patch"][-1]["path"] == POINTER[kind] + "/spec/containers/0/resources/requests"
    (after,) = _replayed(tmp_path, cluster, workload, smaller)
    assert after["status"] == "Scheduled" and after["selectedNode"] == "small"


def test_daemonset_pods_get_no_node_affinity_change(tmp_path):
    # The controller pins each pod to its node: dropping that is no fix.
    cluster = [node("small", cpu="1")]
    workload = _workload("DaemonSet")
    (p,) = _explain(tmp_path, cluster, workload)
    assert p["status"] == "Unschedulable"
    assert not any(f["kind"] in ("relax-node-affinity", "label-node") for f in p["fixes"])
    smaller = _fix(p, "reduce-request")
    assert smaller["patch"][-1]["path"] == "/spec/template/spec/containers/0/resources/requests"
    (after,) = _replayed(tmp_path, cluster, workload, smaller)
    assert after["status"] == "Scheduled"


def test_spread_max_skew_raised_until_every_replica_is_placed(tmp_path):
    # z2 has room for one replica. The first blocked replica (the fourth:
    # z1 would hold 3, z2 1) needs maxSkew 2, but the fifth then needs 3:
    # maxSkew 3 keeps DoNotSchedule and places all 5, before ScheduleAnyway.
    zone = "topology.kubernetes.io/zone"
    cluster = [node("n1", cpu="16", labels={zone: "z1"}), node("n2", cpu="1", labels={zone: "z2"})]
    workload = _workload("Deployment")
    workload["spec"]["replicas"] = 5
    spec = workload["spec"]["template"]["spec"]
    spec["containers"][0]["resources"]["requests"]["cpu"] = "1"
    spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": zone, "whenUnsatisfiable": "DoNotSchedule",
                                          "labelSelector": {"matchLabels": {"app": "web"}}}]
    pods = _explain(tmp_path, cluster, workload)
    (p,) = [p for p in pods if p.get("fixes")]
    spread = [f for f in p["fixes"] if f["kind"] == "relax-topology-spread"]
    assert [f["patch"] for f in spread] == [[{"op": "add", "path": "/spec/template/spec/topologySpreadConstraints/0/"
                                              "maxSkew", "value": 3}]]
    assert spread[0]["verified"]["placed"] == 5
    after = _replayed(tmp_path, cluster, workload, spread[0])
    assert len(after) == 5 and all(q["status"] == "Scheduled" for q in after)


def test_a_deployment_expanded_again_makes_the_replicaset_of_its_new_template():
    # A new template makes a new ReplicaSet (another pod-template-hash): the
    # cycle checking a fix has it in the cluster, as the cluster would.
    from kschedx.sources.fixtures import Origin
    from kschedx.sources.workloads import expand_again, expand_workloads

    refs: dict = {}
    workload = _workload("Deployment")
    out, _ = expand_workloads([(workload, Origin("w.yaml"))], [node("a")], (), refs)
    (old_rs,) = [o for o, _ in out if o["kind"] == "ReplicaSet"]
    ((key, ref),) = refs.items()
    assert (ref.kind, ref.template_pointer, ref.index) == ("Deployment", "/spec/template", 0)
    changed = apply_patch(ref.raw, [{"op": "add", "path": "/spec/template/spec/tolerations", "value": []}])
    new_pod, made = expand_again(ref, changed)
    (new_rs,) = made
    assert new_rs["metadata"]["name"] != old_rs["metadata"]["name"]
    assert new_pod["metadata"]["ownerReferences"][0]["name"] == new_rs["metadata"]["name"]
    same_pod, nothing = expand_again(ref, ref.raw)
    assert nothing == [] and same_pod["metadata"]["ownerReferences"][0]["name"] == old_rs["metadata"]["name"]


def _deployment_replicaset() -> dict:
    """ReplicaSet web-abc of Deployment web: one replica labelled app=web."""
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-abc", "namespace": "default", "uid": "u-rs",
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                              "uid": "u-dep", "controller": True}]},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx",
                                                           "resources": {"requests": {"cpu": "100m",
                                                                                      "memory": "128Mi"}}}]}}}}


def test_a_live_pod_of_a_deployment_names_the_deployment():
    rs = _deployment_replicaset()
    web = pod("web-abc-xyz", labels={"app": "web"})
    web["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc",
                                           "uid": "u-rs", "controller": True}]
    objects = [node("a", taints=[TAINT]), rs, web]
    (p,) = explain(objects)["pods"]
    fix = _fix(p, "add-toleration")
    assert fix["target"]["kind"] == "Pod"  # what the cycle checked, and what a replay patches
    owner = fix["owner"]
    assert (owner["kind"], owner["name"], owner["via"]) == ("Deployment", "web", "ReplicaSet web-abc")
    assert owner["checked"] is True
    assert owner["patch"] == [{"op": "add", "path": "/spec/template/spec/tolerations",
                               "value": [{"key": "dedicated", "operator": "Equal", "value": "batch",
                                          "effect": "NoSchedule"}]}]


def test_a_live_pod_with_the_default_tolerations_is_checked_against_its_template():
    # DefaultTolerationSeconds gave the live pod its not-ready/unreachable
    # tolerations; its template, patched and admitted, has them after the
    # added one. The scheduler reads tolerations as a set: the same change.
    rs = _deployment_replicaset()
    defaults = [{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
                for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")]
    web = pod("web-abc-xyz", labels={"app": "web"}, tolerations=defaults)
    web["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc",
                                           "uid": "u-rs", "controller": True}]
    (p,) = explain([node("a", taints=[TAINT]), rs, web])["pods"]
    fix = _fix(p, "add-toleration")
    assert fix["patch"][0]["path"] == "/spec/tolerations/-"
    owner = fix["owner"]
    assert (owner["kind"], owner["name"]) == ("Deployment", "web")
    assert owner["checked"] is True, owner.get("why")
    assert owner["patch"] == [{"op": "add", "path": "/spec/template/spec/tolerations",
                               "value": [{"key": "dedicated", "operator": "Equal", "value": "batch",
                                          "effect": "NoSchedule"}]}]


def test_a_live_pod_whose_controller_is_not_in_the_snapshot():
    web = pod("web-0")
    web["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "nightly", "uid": "u",
                                           "controller": True}]
    (p,) = explain([node("a", taints=[TAINT]), web])["pods"]
    owner = _fix(p, "add-toleration")["owner"]
    assert (owner["kind"], owner["name"], owner["checked"]) == ("Job", "nightly", False)
    assert "not in the snapshot" in owner["why"]
