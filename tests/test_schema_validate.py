"""Strict input (sources/schema): objects checked as the API server and
kubectl check them, per Kubernetes version.

The expected texts of the decoding table are what the API server's own
decoder answered (k8s.io/apimachinery's strict JSON serializer over the
k8s.io/api types of v0.35.4, v0.36.3 and v0.37.2: the same for all three),
run once and kept here as facts."""

from __future__ import annotations

import copy

import pytest

from kschedx.sources.schema import (DUPLICATE_FIELD, MISSING_KIND, NO_KIND_MATCH, UNKNOWN_FIELD, WRONG_TYPE,
                                    is_custom_resource, server_message, validate)
from kschedx.sources.schema.duplicates import load_json, load_yaml, noting_loader
from kschedx.sources.schema.model import RELEASES, schema
from kschedx.sources.yaml_loader import FastSafeLoader

VERSIONS = sorted(RELEASES)


def _pod(spec=None, **top):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec or {}, **top}


def _texts(obj, version):
    return [str(p) for p in validate(obj, version)]


# -- the issue's typos -----------------------------------------------------------------------

ISSUE_POD = _pod({"nodeSelectr": {"disk": "ssd"},
                  "containers": [{"name": "web", "image": "nginx", "resources": {"request": {"cpu": "1"}}}]})
ISSUE_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {"replica": 6, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"topologySpreadConstraint": [{"maxSkew": 1}],
                                   "containers": [{"name": "web", "image": "nginx"}]}}},
}


@pytest.mark.parametrize("version", VERSIONS)
def test_issue_pod_typos(version):
    problems = validate(ISSUE_POD, version)
    assert [(p.field, p.message, p.reason) for p in problems] == [
        ("spec.nodeSelectr", 'unknown field "spec.nodeSelectr"', UNKNOWN_FIELD),
        ("spec.containers[0].resources.request", 'unknown field "spec.containers[0].resources.request"',
         UNKNOWN_FIELD),
    ]
    assert [p.hint for p in problems] == ['did you mean "nodeSelector"?', 'did you mean "requests"?']
    assert all(p.strict for p in problems)
    assert server_message(ISSUE_POD, problems) == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.nodeSelectr", '
        'unknown field "spec.containers[0].resources.request"')


@pytest.mark.parametrize("version", VERSIONS)
def test_issue_deployment_typos(version):
    assert _texts(ISSUE_DEPLOYMENT, version) == [
        'unknown field "spec.replica" (did you mean "replicas"?)',
        'unknown field "spec.template.spec.topologySpreadConstraint" (did you mean "topologySpreadConstraints"?)',
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_issue_api_versions_and_kinds(version):
    v2 = validate({"apiVersion": "v2", "kind": "Pod", "metadata": {"name": "p"}}, version)
    assert [(p.field, p.message, p.hint, p.reason) for p in v2] == [
        ("apiVersion", 'no matches for kind "Pod" in version "v2"', f"Kubernetes {version} serves Pod as v1",
         NO_KIND_MATCH)]
    assert not v2[0].strict
    ext = validate(dict(ISSUE_DEPLOYMENT, apiVersion="extensions/v1beta1"), version)
    assert [str(p) for p in ext] == [
        f'no matches for kind "Deployment" in version "extensions/v1beta1" '
        f'(Kubernetes {version} serves Deployment as apps/v1)']
    pdo = validate({"apiVersion": "v1", "kind": "Pdo", "metadata": {"name": "p"}}, version)
    assert [(p.field, str(p)) for p in pdo] == [("kind", 'no matches for kind "Pdo" in version "v1" (did you mean Pod?)')]
    lower = validate({"apiVersion": "apps/v1", "kind": "deployment"}, version)
    assert [str(p) for p in lower] == ['no matches for kind "deployment" in version "apps/v1" (did you mean Deployment?)']
    pdb = validate({"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget"}, version)
    assert [str(p) for p in pdb] == [
        f'no matches for kind "PodDisruptionBudget" in version "policy/v1beta1" '
        f'(Kubernetes {version} serves PodDisruptionBudget as policy/v1)']


# -- one typo in every kind kschedx reads ----------------------------------------------------------

def _dtr_version(version):
    return {"1.35": "resource.k8s.io/v1alpha3", "1.36": "resource.k8s.io/v1beta2", "1.37": "resource.k8s.io/v1"}[version]


# kind -> (apiVersion, the object with one typo, the field as the API server names it, the hint)
KIND_TYPOS = {
    "Node": ("v1", {"spec": {"taints": [{"key": "a", "efect": "NoSchedule"}]}}, "spec.taints[0].efect",
             'did you mean "effect"?'),
    "Pod": ("v1", {"spec": {"containers": [{"name": "c", "image": "x", "imagePullPolicyy": "Always"}]}},
            "spec.containers[0].imagePullPolicyy", 'did you mean "imagePullPolicy"?'),
    "Namespace": ("v1", {"metadata": {"name": "n", "lables": {"a": "b"}}}, "metadata.lables",
                  'did you mean "labels"?'),
    "PersistentVolume": ("v1", {"spec": {"nodeAfinity": {}}}, "spec.nodeAfinity", 'did you mean "nodeAffinity"?'),
    "PersistentVolumeClaim": ("v1", {"spec": {"volumeNme": "pv"}}, "spec.volumeNme", 'did you mean "volumeName"?'),
    "StorageClass": ("storage.k8s.io/v1", {"provisioner": "p", "volumeBindingMod": "WaitForFirstConsumer"},
                     "volumeBindingMod", 'did you mean "volumeBindingMode"?'),
    "CSINode": ("storage.k8s.io/v1", {"spec": {"drivers": [{"name": "d", "nodeID": "n", "allocatable": {"cont": 3}}]}},
                "spec.drivers[0].allocatable.cont", 'did you mean "count"?'),
    "CSIDriver": ("storage.k8s.io/v1", {"spec": {"attachRequire": True}}, "spec.attachRequire",
                  'did you mean "attachRequired"?'),
    "CSIStorageCapacity": ("storage.k8s.io/v1", {"storageClassName": "s", "maximumVolumSize": "1Gi"},
                           "maximumVolumSize", 'did you mean "maximumVolumeSize"?'),
    "VolumeAttachment": ("storage.k8s.io/v1", {"spec": {"attacher": "a", "nodename": "n", "source": {}}},
                         "spec.nodename", 'did you mean "nodeName"?'),
    "RuntimeClass": ("node.k8s.io/v1", {"handler": "h", "overhead": {"podfixed": {"cpu": "1"}}}, "overhead.podfixed",
                     'did you mean "podFixed"?'),
    "PodDisruptionBudget": ("policy/v1", {"spec": {"minAvailabe": 1}}, "spec.minAvailabe",
                            'did you mean "minAvailable"?'),
    "PriorityClass": ("scheduling.k8s.io/v1", {"value": 10, "globaldefault": True}, "globaldefault",
                      'did you mean "globalDefault"?'),
    "Service": ("v1", {"spec": {"selectors": {"a": "b"}}}, "spec.selectors", 'did you mean "selector"?'),
    "ReplicaSet": ("apps/v1", {"spec": {"replica": 2}}, "spec.replica", 'did you mean "replicas"?'),
    "StatefulSet": ("apps/v1", {"spec": {"volumeClaimTemplate": []}}, "spec.volumeClaimTemplate",
                    'did you mean "volumeClaimTemplates"?'),
    "ReplicationController": ("v1", {"spec": {"template": {"spec": {"nodeSelectr": {}}}}},
                              "spec.template.spec.nodeSelectr", 'did you mean "nodeSelector"?'),
    "Deployment": ("apps/v1", {"spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {
        "limit": {"cpu": "1"}}}]}}}}, "spec.template.spec.containers[0].resources.limit", 'did you mean "limits"?'),
    "Job": ("batch/v1", {"spec": {"paralelism": 2}}, "spec.paralelism", 'did you mean "parallelism"?'),
    "CronJob": ("batch/v1", {"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "imagePullPolicyy": "Always"}]}}}}}},
        "spec.jobTemplate.spec.template.spec.containers[0].imagePullPolicyy", 'did you mean "imagePullPolicy"?'),
    "DaemonSet": ("apps/v1", {"spec": {"template": {"spec": {"tolerations": [{"operater": "Exists"}]}}}},
                  "spec.template.spec.tolerations[0].operater", 'did you mean "operator"?'),
    "ResourceSlice": ("resource.k8s.io/v1", {"spec": {"driver": "d", "nodeNam": "n"}}, "spec.nodeNam",
                      'did you mean "nodeName"?'),
    "DeviceClass": ("resource.k8s.io/v1", {"spec": {"selectors": [{"cel": {"expresion": "true"}}]}},
                    "spec.selectors[0].cel.expresion", 'did you mean "expression"?'),
    "ResourceClaim": ("resource.k8s.io/v1", {"spec": {"devices": {"requests": [
        {"name": "r", "exactly": {"deviceClasName": "gpu"}}]}}},
        "spec.devices.requests[0].exactly.deviceClasName", 'did you mean "deviceClassName"?'),
    "ResourceClaimTemplate": ("resource.k8s.io/v1", {"spec": {"spec": {"devices": {"request": []}}}},
                              "spec.spec.devices.request", 'did you mean "requests"?'),
    "DeviceTaintRule": (None, {"spec": {"taint": {"key": "k", "efect": "NoSchedule"}}}, "spec.taint.efect",
                        'did you mean "effect"?'),
}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("kind", sorted(KIND_TYPOS))
def test_one_typo_in_every_kind_kschedx_reads(kind, version):
    api_version, body, field, hint = KIND_TYPOS[kind]
    obj = {"apiVersion": api_version or _dtr_version(version), "kind": kind, "metadata": {"name": "x"}}
    for key, value in copy.deepcopy(body).items():
        obj[key] = {**obj[key], **value} if key == "metadata" else value
    problems = validate(obj, version)
    assert [(p.field, p.message, p.hint) for p in problems] == [(field, f'unknown field "{field}"', hint)]
    # and without the typo, nothing
    fixed = copy.deepcopy(obj)
    _rename_last(fixed, field, hint.split('"')[1])
    assert validate(fixed, version) == []


def _rename_last(obj, path, new):
    import re

    parts = [int(p) if p.isdigit() else p for p in re.split(r"\.|\[(\d+)\]", path) if p]
    for part in parts[:-1]:
        obj = obj[part]
    obj[new] = obj.pop(parts[-1])


def test_the_kinds_kschedx_reads_are_all_served():
    # every kind the typo table covers exists, at the apiVersion used, in every version
    for version in VERSIONS:
        s = schema(version)
        for kind, (api_version, *_rest) in KIND_TYPOS.items():
            group, _, v = (api_version or _dtr_version(version)).rpartition("/")
            assert s.kind(group, v, kind) is not None, (version, kind)


# -- the decoder's texts, from the API server itself ------------------------------------------------

Q = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
U = "json: cannot unmarshal"
DECODING_FACTS = [
    (_pod({"containers": "nginx"}), "spec.containers",
     f"{U} string into Go struct field PodSpec.spec.containers of type []v1.Container"),
    (_pod({"containers": ["nginx"]}), "spec.containers[0]",
     f"{U} string into Go struct field PodSpec.spec.containers of type v1.Container"),
    (_pod({"priority": 1.5}), "spec.priority", f"{U} number 1.5 into Go struct field PodSpec.spec.priority of type int32"),
    (_pod({"priority": 3000000000}), "spec.priority",
     f"{U} number 3000000000 into Go struct field PodSpec.spec.priority of type int32"),
    (_pod({"priority": "100"}), "spec.priority", f"{U} string into Go struct field PodSpec.spec.priority of type int32"),
    (_pod({"nodeSelector": {"gpu": True}}), "spec.nodeSelector.gpu",
     f"{U} bool into Go struct field PodSpec.spec.nodeSelector of type string"),
    (_pod({"nodeSelector": ["a"]}), "spec.nodeSelector",
     f"{U} array into Go struct field PodSpec.spec.nodeSelector of type map[string]string"),
    (_pod({"hostNetwork": "yes"}), "spec.hostNetwork",
     f"{U} string into Go struct field PodSpec.spec.hostNetwork of type bool"),
    (_pod({"containers": [{"name": "c", "imagePullPolicy": 1}]}), "spec.containers[0].imagePullPolicy",
     f"{U} number into Go struct field Container.spec.containers.imagePullPolicy of type v1.PullPolicy"),
    (_pod({"containers": [{"name": "c", "resources": {"requests": {"cpu": "1 core"}}}]}),
     "spec.containers[0].resources.requests.cpu", Q),
    (_pod({"containers": [{"name": "c", "resources": {"requests": {"cpu": True}}}]}),
     "spec.containers[0].resources.requests.cpu", Q),
    (_pod({"containers": [{"name": "c", "resources": {"requests": ["cpu"]}}]}), "spec.containers[0].resources.requests",
     f"{U} array into Go struct field ResourceRequirements.spec.containers.resources.requests of type v1.ResourceList"),
    (_pod({"volumes": [{"name": "v", "hostPath": 3}]}), "spec.volumes[0].hostPath",
     f"{U} number into Go struct field Volume.spec.volumes.VolumeSource.hostPath of type v1.HostPathVolumeSource"),
    (_pod({"tolerations": [{"key": "k", "tolerationSeconds": "30"}]}), "spec.tolerations[0].tolerationSeconds",
     f"{U} string into Go struct field Toleration.spec.tolerations.tolerationSeconds of type int64"),
    (_pod({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": "1", "preference": {}}]}}}),
     "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
     f"{U} string into Go struct field PreferredSchedulingTerm.spec.affinity.nodeAffinity."
     "preferredDuringSchedulingIgnoredDuringExecution.weight of type int32"),
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": 1}}}, "metadata.labels.a",
     f"{U} number into Go struct field ObjectMeta.metadata.labels of type string"),
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "yesterday"}},
     "metadata.creationTimestamp",
     'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'),
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "creationTimestamp": 5}}, "metadata.creationTimestamp",
     f"{U} number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"),
    (_pod(status={"startTime": "2024-01-01"}), "status.startTime",
     'parsing time "2024-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"'),
    (_pod({"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}), "spec.containers[0].ports[0].containerPort",
     f"{U} string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32"),
    (_pod({"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": True}}}]}),
     "spec.containers[0].livenessProbe.httpGet.port",
     f"{U} bool into Go struct field HTTPGetAction.spec.containers.livenessProbe.ProbeHandler.httpGet.port of type int32"),
    (_pod({"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": 80.5}}}]}),
     "spec.containers[0].livenessProbe.httpGet.port",
     f"{U} number 80.5 into Go struct field HTTPGetAction.spec.containers.livenessProbe.ProbeHandler.httpGet.port "
     "of type int32"),
    (_pod({"topologySpreadConstraints": [{"maxSkew": "1", "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}]}),
     "spec.topologySpreadConstraints[0].maxSkew",
     f"{U} string into Go struct field TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32"),
    ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": {"taints": {"key": "a"}}}, "spec.taints",
     f"{U} object into Go struct field NodeSpec.spec.taints of type []v1.Taint"),
    ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"memory": "8 GB"}}},
     "status.capacity.memory", Q),
    ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": {"unschedulable": "true"}},
     "spec.unschedulable", f"{U} string into Go struct field NodeSpec.spec.unschedulable of type bool"),
    ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": "3"}},
     "spec.replicas", f"{U} string into Go struct field DeploymentSpec.spec.replicas of type int32"),
    ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
      "spec": {"strategy": {"rollingUpdate": {"maxSurge": True}}}}, "spec.strategy.rollingUpdate.maxSurge",
     f"{U} bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32"),
    ({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
      "spec": {"maxUnavailable": {"a": 1}}}, "spec.maxUnavailable",
     f"{U} object into Go struct field PodDisruptionBudgetSpec.spec.maxUnavailable of type int32"),
    ({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"}, "value": "1000"},
     "value", f"{U} string into Go struct field PriorityClass.value of type int32"),
    ({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"}, "value": 1,
      "globalDefault": "yes"}, "globalDefault", f"{U} string into Go struct field PriorityClass.globalDefault of type bool"),
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "p"},
      "spec": {"resources": {"requests": {"storage": "10 Gi"}}}}, "spec.resources.requests.storage", Q),
    ({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "p"}, "spec": {"csi": "ebs"}}, "spec.csi",
     f"{U} string into Go struct field PersistentVolumeSpec.spec.PersistentVolumeSource.csi of type "
     "v1.CSIPersistentVolumeSource"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "p",
      "allowVolumeExpansion": "true"}, "allowVolumeExpansion",
     f"{U} string into Go struct field StorageClass.allowVolumeExpansion of type bool"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n"},
      "spec": {"drivers": [{"name": "d", "nodeID": "n", "allocatable": {"count": "5"}}]}},
     "spec.drivers[0].allocatable.count",
     f"{U} string into Go struct field VolumeNodeResources.spec.drivers.allocatable.count of type int32"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d"},
      "spec": {"attachRequired": "no"}}, "spec.attachRequired",
     f"{U} string into Go struct field CSIDriverSpec.spec.attachRequired of type bool"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "c"},
      "storageClassName": "s", "capacity": "lots"}, "capacity", Q),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "v"},
      "spec": {"attacher": "a", "nodeName": "n", "source": {}}, "status": {"attached": "yes"}}, "status.attached",
     f"{U} string into Go struct field VolumeAttachmentStatus.status.attached of type bool"),
    ({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "r"}, "handler": "h",
      "overhead": {"podFixed": {"cpu": "a lot"}}}, "overhead.podFixed.cpu", Q),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": "80"}]}},
     "spec.ports[0].port", f"{U} string into Go struct field ServicePort.spec.ports.port of type int32"),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
      "spec": {"ports": [{"port": 80, "targetPort": {"a": 1}}]}}, "spec.ports[0].targetPort",
     f"{U} object into Go struct field ServicePort.spec.ports.targetPort of type int32"),
    ({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"}, "spec": {"selector": "app=x"}},
     "spec.selector", f"{U} string into Go struct field ReplicaSetSpec.spec.selector of type v1.LabelSelector"),
    ({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
      "spec": {"volumeClaimTemplates": "data"}}, "spec.volumeClaimTemplates",
     f"{U} string into Go struct field StatefulSetSpec.spec.volumeClaimTemplates of type []v1.PersistentVolumeClaim"),
    ({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "r"}, "spec": {"selector": ["a"]}},
     "spec.selector",
     f"{U} array into Go struct field ReplicationControllerSpec.spec.selector of type map[string]string"),
    ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"parallelism": "2"}},
     "spec.parallelism", f"{U} string into Go struct field JobSpec.spec.parallelism of type int32"),
    ({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
      "spec": {"schedule": "* * * * *", "suspend": "no"}}, "spec.suspend",
     f"{U} string into Go struct field CronJobSpec.spec.suspend of type bool"),
    ({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
      "spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1.5}}}},
     "spec.updateStrategy.rollingUpdate.maxUnavailable",
     f"{U} number 1.5 into Go struct field RollingUpdateDaemonSet.spec.updateStrategy.rollingUpdate.maxUnavailable "
     "of type int32"),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
      "spec": {"driver": "d", "pool": "p"}}, "spec.pool",
     f"{U} string into Go struct field ResourceSliceSpec.spec.pool of type v1.ResourcePool"),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
      "spec": {"driver": "d", "pool": {"name": "p", "resourceSliceCount": 1, "generation": 1},
               "devices": [{"name": "g", "capacity": {"memory": {"value": "80 GB"}}}]}},
     "spec.devices[0].capacity.memory.value", Q),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
      "spec": {"driver": "d", "devices": [{"name": "g", "attributes": {"cores": {"int": "8"}}}]}},
     "spec.devices[0].attributes.cores.int",
     f"{U} string into Go struct field DeviceAttribute.spec.devices.attributes.int of type int64"),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "c"},
      "spec": {"selectors": {"cel": {"expression": "true"}}}}, "spec.selectors",
     f"{U} object into Go struct field DeviceClassSpec.spec.selectors of type []v1.DeviceSelector"),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
      "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "g", "count": "2"}}]}}},
     "spec.devices.requests[0].exactly.count",
     f"{U} string into Go struct field ExactDeviceRequest.spec.devices.requests.exactly.count of type int64"),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
      "status": {"allocation": {"devices": {"results": [
          {"request": "r", "driver": ["d"], "pool": "p", "device": "g"}]}}}},
     "status.allocation.devices.results[0].driver",
     f"{U} array into Go struct field DeviceRequestAllocationResult.status.allocation.devices.results.driver "
     "of type string"),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
      "spec": {"spec": "x"}}, "spec.spec",
     f"{U} string into Go struct field ResourceClaimTemplateSpec.spec.spec of type v1.ResourceClaimSpec"),
    ({"apiVersion": "resource.k8s.io/v1alpha3", "kind": "DeviceTaintRule", "metadata": {"name": "t"},
      "spec": {"taint": {"key": "k", "effect": 1}}}, "spec.taint.effect",
     f"{U} number into Go struct field DeviceTaint.spec.taint.effect of type v1alpha3.DeviceTaintEffect"),
    ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "labels": ["a"]}}, "metadata.labels",
     f"{U} array into Go struct field ObjectMeta.metadata.labels of type map[string]string"),
    ({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "!!"}}, "data.a",
     "illegal base64 data at input byte 0"),
    ({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": 5}}, "data.a",
     f"{U} number into Go struct field Secret.data of type []uint8"),
    ({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": [1, 300]}}, "data.a[1]",
     f"{U} number 300 into Go struct field Secret.data of type uint8"),
    ({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
      "spec": {"renewTime": "2024-01-01T00:00:00Z"}}, "spec.renewTime",
     'parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'),
    ({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "c"},
      "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"additionalProperties": "no"}}}]}},
     "spec.versions[0].schema.openAPIV3Schema.additionalProperties", "boolean or JSON schema expected"),
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(("obj", "field", "message"), DECODING_FACTS,
                         ids=[f"{o['kind']}-{f}" for o, f, _ in DECODING_FACTS])
def test_wrong_types_are_named_as_the_api_server_names_them(obj, field, message, version):
    if obj["apiVersion"] == "resource.k8s.io/v1alpha3" and schema(version).kind("resource.k8s.io", "v1alpha3",
                                                                                 "DeviceTaintRule") is None:
        pytest.skip("not served")
    problems = validate(obj, version)
    assert [(p.field, p.message, p.reason) for p in problems] == [(field, message, WRONG_TYPE)]
    kind = obj["kind"]
    assert server_message(obj, problems) == (
        f'{kind} in version "{obj["apiVersion"].rpartition("/")[2]}" cannot be handled as a {kind}: {message}')


def test_a_type_that_decodes_itself_is_the_one_the_api_server_reports():
    # the decoder only notes `priority: "x"` and goes on; the quantity's own
    # decoder stops it, and that is the error the API server returns
    obj = _pod({"priority": "x", "containers": [{"name": "c", "resources": {"limits": {"cpu": "lots"}}}]})
    problems = validate(obj, "1.36")
    assert [p.field for p in problems] == ["spec.priority", "spec.containers[0].resources.limits.cpu"]
    assert server_message(obj, problems).endswith(": " + Q)


def test_null_is_accepted_everywhere_as_go_accepts_it():
    obj = _pod({"containers": None, "priority": None, "nodeSelector": {"a": None},
                "tolerations": [None]}, status=None)
    assert validate(obj, "1.36") == []


def test_values_are_judged_as_kubectl_sends_them():
    from datetime import date, datetime, timezone

    # YAML's 2.0 is the integer 2 once converted to JSON; a YAML date in a string field is a string
    obj = _pod({"priority": 2.0, "containers": [{"name": "c", "image": date(2024, 1, 1)}]},
               status={"startTime": datetime(2024, 1, 1, tzinfo=timezone.utc)})
    assert validate(obj, "1.36") == []
    naive = _pod(status={"startTime": datetime(2024, 1, 1, 10, 0)})
    assert [p.message for p in validate(naive, "1.36")] == [
        'parsing time "2024-01-01T10:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"']
    # YAML keys that are not strings are keys as YAML-to-JSON writes them
    assert [p.field for p in validate(_pod({"nodeSelector": {1: "a", True: "b"}}), "1.36")] == []
    assert [p.message for p in validate(_pod({True: 1}), "1.36")] == ['unknown field "spec.true"']


def test_nothing_under_an_unknown_field_is_looked_at():
    obj = _pod({"nodeSelectr": {"a": 1, "b": {"c": []}}})
    assert [p.field for p in validate(obj, "1.36")] == ["spec.nodeSelectr"]


# -- apiVersion and kind: built-in, custom, or an error ---------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_custom_resources_are_not_validated(version):
    for obj in (
        {"apiVersion": "gpu.example.com/v1", "kind": "GpuConfig", "spec": {"anything": 1}},
        {"apiVersion": "serving.knative.dev/v1", "kind": "Service", "spec": {"template": 1}},
        {"apiVersion": "sagemaker.services.k8s.aws/v1alpha1", "kind": "Endpoint"},
        {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute"},
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup"},
        {"apiVersion": "topology.node.k8s.io/v1alpha1", "kind": "NodeResourceTopology"},
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"},
        # scheduler-plugins' coscheduling, before it moved to scheduling.x-k8s.io: PodGroup is built in from 1.36
        {"apiVersion": "scheduling.sigs.k8s.io/v1alpha1", "kind": "PodGroup"},
        {"apiVersion": "management.cattle.io/v3", "kind": "Node"},
    ):
        assert validate(obj, version) == [], obj
        assert is_custom_resource(obj, version)
    assert not is_custom_resource(ISSUE_POD, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_what_cannot_be_a_custom_resource_is_an_error(version):
    cases = {
        # a group without a dot is never a CRD's
        ("app/v1", "Deployment"): ("apiVersion", f"Kubernetes {version} serves Deployment as apps/v1"),
        ("example/v1", "Widget"): ("kind", "ensure CRDs are installed first"),
        # a built-in group's name under Kubernetes' own domain, with a kind it serves
        ("policy.k8s.io/v1", "PodDisruptionBudget"): ("apiVersion",
                                                     f"Kubernetes {version} serves PodDisruptionBudget as policy/v1"),
        ("apps.k8s.io/v1", "Deployment"): ("apiVersion", f"Kubernetes {version} serves Deployment as apps/v1"),
        ("rbac.kubernetes.io/v1", "Role"): ("apiVersion",
                                            f"Kubernetes {version} serves Role as rbac.authorization.k8s.io/v1"),
        # a slip of a built-in kind's name, in any group
        ("example.com/v1", "deployment"): ("kind", "did you mean Deployment (apps/v1)?"),
        ("example.com/v1", "Pdo"): ("kind", "did you mean Pod (v1)?"),
        # a served group holds no other kinds
        ("apps/v1", "Widget"): ("kind", "ensure CRDs are installed first"),
        ("apps/v1", "Deploymnet"): ("kind", "did you mean Deployment?"),
    }
    for (api_version, kind), (field, hint) in cases.items():
        problems = validate({"apiVersion": api_version, "kind": kind}, version)
        assert [(p.field, p.message, p.hint, p.reason) for p in problems] == [
            (field, f'no matches for kind "{kind}" in version "{api_version}"', hint, NO_KIND_MATCH)], api_version


def test_versions_a_cluster_serves_only_when_enabled_are_said_to_be_so():
    problems = validate({"apiVersion": "resource.k8s.io/v9", "kind": "DeviceTaintRule"}, "1.36")
    assert problems[0].hint == ("Kubernetes 1.36 serves DeviceTaintRule as resource.k8s.io/v1beta2 (when enabled) "
                                "or resource.k8s.io/v1alpha3 (when enabled)")
    # and such a version is validated like any other
    assert validate({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
                     "spec": {"devices": {"requests": [{"name": "r", "deviceClassName": "g"}]}}}, "1.36") == []


def test_objects_without_api_version_or_kind():
    # kubectl maps a kind without apiVersion in the core group, at its preferred version
    assert validate({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeSelectr": {}}}, "1.36")[0].message == \
        'unknown field "spec.nodeSelectr"'
    problems = validate({"kind": "Deployment"}, "1.36")
    assert [(p.message, p.hint) for p in problems] == [
        ('no matches for kind "Deployment" in group ""', "Kubernetes 1.36 serves Deployment as apps/v1")]
    missing = validate({"apiVersion": "v1", "metadata": {"name": "p"}}, "1.36")
    assert [(p.field, p.reason) for p in missing] == [("kind", MISSING_KIND)]
    assert missing[0].message == "Object 'Kind' is missing in '{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\"}}'"
    assert validate({"apiVersion": "a/b/c", "kind": "Pod"}, "1.36")[0].message == "unexpected GroupVersion string: a/b/c"
    assert validate({"apiVersion": 1, "kind": "Pod"}, "1.36")[0].message == (
        "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field "
        ".apiVersion of type string")


def test_an_unknown_version_is_refused():
    with pytest.raises(ValueError, match="no schema for Kubernetes 1.20"):
        validate(ISSUE_POD, "1.20")


# -- hints ---------------------------------------------------------------------------------------

def test_a_field_of_another_version_says_so():
    # Pod spec.workloadRef is 1.35's; 1.36 replaced it by spec.schedulingGroup
    obj = _pod({"workloadRef": {"name": "w"}})
    assert validate(obj, "1.35") == []
    assert [(p.field, p.hint) for p in validate(obj, "1.36")] == [
        ("spec.workloadRef", "a field of PodSpec in Kubernetes 1.35, not in 1.36")]
    later = _pod({"evictionResponders": []})
    assert validate(later, "1.37") == []
    assert validate(later, "1.36")[0].hint == "a field of PodSpec in Kubernetes 1.37, not in 1.36"


def test_a_field_written_one_level_too_high():
    obj = _pod({"containers": [{"name": "c", "requests": {"cpu": "1"}}]})
    assert [str(p) for p in validate(obj, "1.36")] == [
        'unknown field "spec.containers[0].requests" (did you mean "resources.requests"?)']


def test_no_hint_for_a_name_nothing_is_near():
    assert validate(_pod({"zzzzzzzz": 1}), "1.36")[0].hint == ""


# -- duplicate keys ------------------------------------------------------------------------------

DUPLICATED = """\
apiVersion: v1
kind: Pod
metadata:
  name: a
  labels: {x: "1", x: "2"}
spec:
  containers:
  - name: c
    image: a
    image: b
  hostname: h
  hostname: i
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec:
  <<: {nodeName: x}
  nodeName: y
"""


@pytest.mark.parametrize("base", [None, FastSafeLoader], ids=["pyyaml", "fast"])
def test_duplicate_keys_in_yaml(base):
    docs, duplicates = load_yaml(DUPLICATED, base)
    first = validate(docs[0], "1.36", duplicates=duplicates)
    assert [(p.field, p.message, p.reason) for p in first] == [
        ("metadata.labels.x", 'duplicate field "metadata.labels.x"', DUPLICATE_FIELD),
        ("spec.containers[0].image", 'duplicate field "spec.containers[0].image"', DUPLICATE_FIELD),
        ("spec.hostname", 'duplicate field "spec.hostname"', DUPLICATE_FIELD),
    ]
    assert all(p.strict for p in first)
    # a merge key's value overridden is no duplicate
    assert validate(docs[1], "1.36", duplicates=duplicates) == []
    # the documents are those of PyYAML
    import yaml

    assert docs == list(yaml.safe_load_all(DUPLICATED))
    assert noting_loader(FastSafeLoader) is noting_loader(FastSafeLoader)


def test_duplicate_keys_in_json():
    value, duplicates = load_json('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b"},'
                                  '"spec":{"containers":[{"name":"a","name":"b"}]}}')
    assert value["metadata"]["name"] == "b"
    assert [p.message for p in validate(value, "1.36", duplicates=duplicates)] == [
        'duplicate field "metadata.name"', 'duplicate field "spec.containers[0].name"']
    assert server_message(value, validate(value, "1.36", duplicates=duplicates)) == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.name", '
        'duplicate field "spec.containers[0].name"')
