"""Helpers of the `explain --fix` tests: small clusters as plain objects, the
fix search run through `app`, and a fix applied to the objects as written
(with kschedx's own RFC 6902 implementation) to run `explain` again."""

from __future__ import annotations

import copy

from kschedx.commands import explain as explaining
from kschedx.commands.load import load_workload
from kschedx.fixes.jsonpatch import apply_patch
from kschedx.sources.fixtures import Origin

ORIGIN = Origin("test.yaml")


def node(name, cpu="4", memory="16Gi", pods="110", labels=None, taints=None, unschedulable=False) -> dict:
    obj = {"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
           "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}
    if taints:
        obj["spec"]["taints"] = taints
    if unschedulable:
        obj["spec"]["unschedulable"] = True
    return obj


def pod(name, cpu="100m", memory="128Mi", node_name=None, labels=None, ns="default", **spec) -> dict:
    obj = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns, "labels": dict(labels or {}),
                        "creationTimestamp": "2025-01-01T00:00:00Z"},
           "spec": {"containers": [{"name": "app", "image": "nginx",
                                    "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}}
    if node_name:
        obj["spec"]["nodeName"] = node_name
        obj["status"] = {"phase": "Running", "startTime": "2025-01-01T00:00:00Z"}
    return obj


def priority_class(name, value, policy=None) -> dict:
    obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value}
    if policy:
        obj["preemptionPolicy"] = policy
    return obj


def explain(objects, *, fix=True) -> dict:
    """The explain document of the objects' pending pods."""
    workload = load_workload((), cluster_objects=[(copy.deepcopy(o), ORIGIN) for o in objects], keep_raw=fix)
    return explaining.explain(workload, tie_break="name", fix=fix)


def the_pod(objects) -> dict:
    (p,) = explain(objects)["pods"]
    return p


def _key(obj: dict) -> tuple:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or ("default" if obj["kind"] == "Pod" else None)
    return obj["kind"], ns, meta.get("name")


def apply_fix(objects, fix: dict) -> list:
    """The objects with every change of the fix made: patched, created, deleted."""
    out = [copy.deepcopy(o) for o in objects]
    for change in fix["changes"]:
        t = change["target"]
        key = (t["kind"], t.get("namespace"), t["name"])
        if change["action"] == "create":
            out.append(apply_patch(None, change["patch"]))
            continue
        (i,) = [i for i, o in enumerate(out) if _key(o) == key]
        if change["action"] == "delete":
            del out[i]
        else:
            out[i] = apply_patch(out[i], change["patch"])
    return out


def pod_after(objects, fix: dict, key: str) -> dict:
    """The pod's result when the objects are explained again with the fix applied."""
    doc = explain(apply_fix(objects, fix), fix=False)
    (p,) = [p for p in doc["pods"] if p["pod"] == key]
    return p


# ---- storage and devices -----------------------------------------------------------------
def storage_class(name, provisioner="kubernetes.io/no-provisioner", mode="WaitForFirstConsumer", default=False):
    obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
           "provisioner": provisioner, "volumeBindingMode": mode}
    if default:
        obj["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return obj


def pvc(name, size="1Gi", cls=None, modes=("ReadWriteOnce",), volume=None, ns="default"):
    obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": ns},
           "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}}
    if cls is not None:
        obj["spec"]["storageClassName"] = cls
    if volume:
        obj["spec"]["volumeName"] = volume
        obj["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        obj["status"] = {"phase": "Bound"}
    return obj


def pv(name, size="1Gi", cls=None, modes=("ReadWriteOnce",), node_name=None, claim=None, ns="default"):
    source = {"local": {"path": f"/mnt/{name}"}} if node_name else {
        "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"vol-{name}"}}
    obj = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
           "spec": {"capacity": {"storage": size}, "accessModes": list(modes), **source},
           "status": {"phase": "Bound" if claim else "Available"}}
    if cls is not None:
        obj["spec"]["storageClassName"] = cls
    if node_name:
        obj["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node_name]}]}]}}
    if claim:
        obj["spec"]["claimRef"] = {"namespace": ns, "name": claim}
    return obj


def with_claim(obj, claim="data"):
    obj["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
    return obj


def device_class(name, driver=None, extra=()):
    sels = [{"cel": {"expression": f'device.driver == "{driver or name}"'}}]
    sels += [{"cel": {"expression": e}} for e in extra]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": sels}}


def resource_slice(node_name, driver="gpu.example.com", devices=2, attributes=None, name=None, **device_fields):
    devs = []
    for i in range(devices):
        attrs = {"index": {"int": i}}
        attrs.update((attributes or {}).get(i, {}))
        devs.append({"name": f"dev-{i}", "attributes": attrs, **device_fields})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name or f"{node_name}-{driver}"},
            "spec": {"driver": driver, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1}, "devices": devs}}


def resource_claim(name, cls="gpu.example.com", count=1, selectors=(), mode="ExactCount", ns="default",
                   constraints=None, **request):
    exactly = {"deviceClassName": cls, "allocationMode": mode, **request}
    if mode == "ExactCount":
        exactly["count"] = count
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
           "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}
    if constraints:
        obj["spec"]["devices"]["constraints"] = constraints
    return obj


def allocated(claim, node_name, devices, driver="gpu.example.com", pool=None, users=()):
    """The claim allocated the devices of the node's pool, reserved for pods (uids)."""
    claim = copy.deepcopy(claim)
    claim["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": driver, "pool": pool or node_name, "device": d} for d in devices]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
        "reservedFor": [{"resource": "pods", "name": n, "uid": u} for n, u in users]}
    return claim


def with_device_claim(obj, claim="gpus"):
    obj["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return obj
