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
