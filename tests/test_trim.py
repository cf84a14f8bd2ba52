"""sources/trim.py keeps what scheduling reads: every golden case gives the same
result from trimmed objects, and what it drops is never needed."""

from __future__ import annotations

import copy

import pytest

from golden_compare import GOLDEN, case_names
from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.sources.fixtures import read_objects
from kschedx.sources.trim import LAST_APPLIED, trim


@pytest.mark.parametrize("name", case_names())
def test_golden_case_gives_the_same_result_trimmed(name):
    objects = read_objects([str(GOLDEN / "cases" / f"{name}.yaml")])
    trimmed = [(trim(copy.deepcopy(obj)), origin) for obj, origin in objects]
    full = explain(load_workload((), cluster_objects=objects), tie_break="name")
    lean = explain(load_workload((), cluster_objects=trimmed), tie_break="name")
    assert lean == full


def _pod():
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "7",
                     "generateName": "web-", "creationTimestamp": "2025-01-01T00:00:00Z",
                     "labels": {"app": "web"}, "finalizers": ["x"],
                     "annotations": {LAST_APPLIED: "{...}", "a": "b"},
                     "ownerReferences": [{"kind": "ReplicaSet", "name": "web-1", "uid": "r1"}],
                     "managedFields": [{"manager": "kubectl"}]},
        "spec": {
            "nodeName": "n1", "priority": 5, "schedulerName": "default-scheduler",
            "serviceAccountName": "web", "dnsPolicy": "ClusterFirst", "imagePullSecrets": [{"name": "r"}],
            "securityContext": {"runAsUser": 1000}, "hostname": "web-0", "os": {"name": "linux"},
            "containers": [{"name": "app", "image": "web:1", "env": [{"name": "K", "value": "secret"}],
                            "envFrom": [{"secretRef": {"name": "s"}}], "command": ["/app"], "args": ["-v"],
                            "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
                            "resources": {"requests": {"cpu": "1"}, "limits": {"memory": "1Gi"},
                                          "claims": [{"name": "gpu"}]},
                            "readinessProbe": {"exec": {"command": ["true"]}},
                            "volumeMounts": [{"name": "cfg", "mountPath": "/cfg"}]}],
            "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always",
                                "resources": {"requests": {"cpu": "100m"}}, "command": ["envoy"]}],
            "volumes": [{"name": "cfg", "configMap": {"name": "c", "items": [{"key": "a", "path": "a"}]}},
                        {"name": "tok", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
                        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                        {"name": "disk", "csi": {"driver": "d", "volumeAttributes": {"a": "b"}}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
        },
        "status": {
            "phase": "Running", "startTime": "2025-01-01T00:00:01Z", "podIP": "10.0.0.1", "qosClass": "Burstable",
            "nominatedNodeName": "n2",
            "conditions": [{"type": "Ready", "status": "True"},
                           {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
            "containerStatuses": [{"name": "app", "ready": True, "imageID": "x", "state": {"running": {}},
                                   "resources": {"requests": {"cpu": "2"}},
                                   "allocatedResources": {"cpu": "2"}}],
            "initContainerStatuses": [{"name": "proxy", "ready": True}],
            "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "web-gpu"}],
        },
    }


def test_pod_keeps_what_scheduling_reads():
    t = trim(_pod())
    assert t["metadata"] == {"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "7",
                             "creationTimestamp": "2025-01-01T00:00:00Z", "labels": {"app": "web"},
                             "annotations": {"a": "b"},
                             "ownerReferences": [{"kind": "ReplicaSet", "name": "web-1", "uid": "r1"}]}
    spec = t["spec"]
    assert set(spec) == {"nodeName", "priority", "schedulerName", "hostname", "os", "containers",
                         "initContainers", "volumes", "resourceClaims"}
    assert spec["containers"] == [{"name": "app", "image": "web:1",
                                   "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
                                   "resources": {"requests": {"cpu": "1"}, "limits": {"memory": "1Gi"},
                                                 "claims": [{"name": "gpu"}]}}]
    assert spec["initContainers"] == [{"name": "proxy", "image": "envoy", "restartPolicy": "Always",
                                       "resources": {"requests": {"cpu": "100m"}}}]
    assert spec["volumes"] == [{"name": "cfg", "configMap": {}}, {"name": "tok", "projected": {}},
                               {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                               {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                               {"name": "disk", "csi": {"driver": "d", "volumeAttributes": {"a": "b"}}}]
    assert t["status"] == {
        "phase": "Running", "startTime": "2025-01-01T00:00:01Z", "nominatedNodeName": "n2",
        "conditions": [{"type": "Ready", "status": "True"},
                       {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
        "containerStatuses": [{"name": "app", "resources": {"requests": {"cpu": "2"}},
                               "allocatedResources": {"cpu": "2"}}],
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "web-gpu"}]}


def test_resize_still_counts_after_trimming():
    """An infeasible resize: the effective requests come from the status."""
    from kschedx.api.resources import pod_requests

    pod = _pod()
    assert pod_requests(trim(copy.deepcopy(pod))) == pod_requests(pod)


def test_node_keeps_capacity_images_labels_taints():
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "n1", "labels": {"zone": "a"}, "managedFields": [{}],
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
            "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}], "unschedulable": True,
                     "podCIDR": "10.0.0.0/24"},
            "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3"},
                       "images": [{"names": ["a"], "sizeBytes": 1}],
                       "conditions": [{"type": "Ready", "status": "True"}], "addresses": [{"type": "x"}],
                       "nodeInfo": {"kubeletVersion": "v1.35.4"}, "daemonEndpoints": {}}}
    t = trim(node)
    assert t["metadata"] == {"name": "n1", "labels": {"zone": "a"},
                             "annotations": {"node.alpha.kubernetes.io/ttl": "0"}}
    assert t["spec"] == node["spec"]
    assert t["status"] == {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3"},
                           "images": [{"names": ["a"], "sizeBytes": 1}]}


def test_other_kinds_only_lose_managed_fields_and_last_applied():
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "data", "namespace": "shop", "managedFields": [{}], "finalizers": ["f"],
                        "annotations": {LAST_APPLIED: "{}", "pv.kubernetes.io/bind-completed": "yes"}},
           "spec": {"volumeName": "pv1", "accessModes": ["ReadWriteOnce"]},
           "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}}
    t = trim(copy.deepcopy(pvc))
    assert t["metadata"] == {"name": "data", "namespace": "shop", "finalizers": ["f"],
                             "annotations": {"pv.kubernetes.io/bind-completed": "yes"}}
    assert t["spec"] == pvc["spec"] and t["status"] == pvc["status"]


def test_trim_is_idempotent():
    once = trim(_pod())
    assert trim(copy.deepcopy(once)) == once


def test_what_node_declared_features_infers_from_survives_trimming():
    """NodeDeclaredFeatures reads a container's restartPolicyRules and the
    pod's hostNetwork/hostUsers: a trimmed live pod needs the same features."""
    from kschedx.plugins.nodedeclaredfeatures import REGISTRY_V136, infer_requirements

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"hostNetwork": True, "hostUsers": False, "containers": [
               {"name": "c", "image": "x", "env": [{"name": "A", "value": "b"}],
                "restartPolicyRules": [{"action": "RestartAllContainers",
                                        "exitCodes": {"operator": "In", "values": [42]}}]}]}}
    wanted = infer_requirements(pod["spec"], REGISTRY_V136)
    assert wanted == infer_requirements(trim(copy.deepcopy(pod))["spec"], REGISTRY_V136)
    assert set(wanted) == {"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"}


def test_volume_mounts_with_bind_mount_options_are_kept():
    """NodeDeclaredFeatures (v1.37) infers VolumeBindMountOptions from them;
    other mounts are of no use to the scheduler."""
    from kschedx.sources.trim import trim_pod

    pod = {"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "x", "volumeMounts": [
            {"name": "a", "mountPath": "/a"}, {"name": "b", "mountPath": "/b", "bindMountOptions": ["nosuid"]}]}],
        "ephemeralContainers": [{"name": "e", "image": "x", "volumeMounts": [{"name": "a", "mountPath": "/a"}]}]}}
    out = trim_pod(pod)
    assert out["spec"]["containers"][0]["volumeMounts"] == [{"name": "b", "bindMountOptions": ["nosuid"]}]
    assert "volumeMounts" not in out["spec"]["ephemeralContainers"][0]
