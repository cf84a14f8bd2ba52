"""Only the fields scheduling reads: what a cluster read keeps unless --full.

A pod as the API server returns it is mostly what the kubelet needs (env,
command, probes, mounts, container statuses); kube-scheduler, its admission
steps and kschedx's own bookkeeping read a small, known part of it. Dropping
the rest right after each page is parsed cuts the memory of a 150,000-pod
read several-fold, and keeps env values (often secrets in plain text) out of
snapshot files.

The lists below are deliberately generous: a field any default plugin,
admission step, preemption, workload expansion or `bind` reads is kept, and so
are a few small ones that could plausibly matter (os, hostname). Pods and
nodes are trimmed to these lists; other kinds are small and few, and only lose
managedFields and kubectl's last-applied annotation. tests/test_trim.py checks
that every golden case gives the same result trimmed and untrimmed.
"""

from __future__ import annotations

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

# metadata of pods and nodes: identity, labels and annotations (selectors,
# pv.kubernetes.io/* and other annotations plugins look up), owners (topology
# spread's default constraints, DaemonSet detection), timestamps (queue order,
# terminating pods), resourceVersion (bind's "changed since" check).
_META = frozenset({
    "name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences",
})

_POD_SPEC = frozenset({
    "nodeName", "nodeSelector", "affinity", "tolerations", "schedulerName", "schedulingGates",
    "priority", "priorityClassName", "preemptionPolicy", "runtimeClassName", "overhead",
    "topologySpreadConstraints", "volumes", "containers", "initContainers", "hostNetwork",
    "resources", "resourceClaims", "restartPolicy", "os", "hostname", "subdomain",
    "terminationGracePeriodSeconds", "hostUsers", "ephemeralContainers",
})

# Per container: the image (ImageLocality), ports (NodePorts), requests and limits
# (NodeResourcesFit, admission), restartPolicy (sidecar init containers),
# restartPolicyRules (NodeDeclaredFeatures, as the pod's hostUsers), the
# volume mounts that set bindMountOptions (NodeDeclaredFeatures from 1.37).
_CONTAINER = frozenset({"name", "image", "ports", "resources", "restartPolicy", "restartPolicyRules"})

# Volume sources no scheduling plugin looks into: keep the volume and its type.
_OPAQUE_VOLUME_SOURCES = ("projected", "configMap", "secret", "downwardAPI")

_POD_STATUS = frozenset({
    "phase", "startTime", "nominatedNodeName", "conditions", "containerStatuses",
    "initContainerStatuses", "resources", "allocatedResources", "resourceClaimStatuses",
    "extendedResourceClaimStatus", "resize",
})

# Conditions something reads: in-place resize (effective requests), preemption
# (pods already terminating because of a preemption), Ready (a drain: the
# Eviction API and the disruption controller count Ready pods).
_POD_CONDITIONS = frozenset({"DisruptionTarget", "PodResizePending", "PodResizeInProgress", "Ready"})

# Node status: capacity and allocatable (Fit), images (ImageLocality),
# declaredFeatures (NodeDeclaredFeatures).
_NODE_STATUS = frozenset({"capacity", "allocatable", "images", "declaredFeatures"})


def trim(obj: dict) -> dict:
    """The object with only what scheduling reads (the input is not modified
    beyond its top-level containers being replaced)."""
    kind = obj.get("kind")
    if kind == "Pod":
        return trim_pod(obj)
    if kind == "Node":
        return trim_node(obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        obj["metadata"] = _common_meta(meta)
    return obj


def _common_meta(meta: dict) -> dict:
    meta = {k: v for k, v in meta.items() if k != "managedFields"}
    ann = meta.get("annotations")
    if isinstance(ann, dict) and LAST_APPLIED in ann:
        meta["annotations"] = {k: v for k, v in ann.items() if k != LAST_APPLIED}
    return meta


def _meta(meta) -> dict:
    if not isinstance(meta, dict):
        return meta
    out = {k: v for k, v in meta.items() if k in _META}
    ann = out.get("annotations")
    if isinstance(ann, dict) and LAST_APPLIED in ann:
        out["annotations"] = {k: v for k, v in ann.items() if k != LAST_APPLIED}
    return out


def trim_pod(pod: dict) -> dict:
    out = {}
    for key, value in pod.items():
        if key == "metadata":
            value = _meta(value)
        elif key == "spec" and isinstance(value, dict):
            value = _pod_spec(value)
        elif key == "status" and isinstance(value, dict):
            value = _pod_status(value)
        out[key] = value
    return out


def _pod_spec(spec: dict) -> dict:
    out = {}
    for key, value in spec.items():
        if key not in _POD_SPEC:
            continue
        if key in ("containers", "initContainers", "ephemeralContainers") and isinstance(value, list):
            value = [_container(c) for c in value]
        elif key == "volumes" and isinstance(value, list):
            value = [_volume(v) for v in value]
        out[key] = value
    return out


def _container(c):
    if not isinstance(c, dict):
        return c
    out = {k: v for k, v in c.items() if k in _CONTAINER}
    mounts = c.get("volumeMounts")
    if isinstance(mounts, list):
        kept = [{"name": m.get("name"), "bindMountOptions": m["bindMountOptions"]} for m in mounts
                if isinstance(m, dict) and m.get("bindMountOptions")]
        if kept:
            out["volumeMounts"] = kept
    return out


def _volume(v):
    if not isinstance(v, dict):
        return v
    for source in _OPAQUE_VOLUME_SOURCES:
        if source in v:
            return {"name": v.get("name"), source: {}}
    return v


def _pod_status(status: dict) -> dict:
    out = {}
    for key, value in status.items():
        if key not in _POD_STATUS:
            continue
        if key == "conditions" and isinstance(value, list):
            # Of Ready, only whether it holds (its times and probes are many bytes a pod).
            value = [{"type": "Ready", "status": c.get("status")} if c.get("type") == "Ready" else c
                     for c in value if isinstance(c, dict) and c.get("type") in _POD_CONDITIONS]
            if not value:
                continue
        elif key in ("containerStatuses", "initContainerStatuses") and isinstance(value, list):
            # Only the resources the kubelet reports matter (effective requests
            # of resized containers); a status without them means "use the spec".
            value = [_container_status(cs) for cs in value
                     if isinstance(cs, dict) and ("resources" in cs or "allocatedResources" in cs)]
            if not value:
                continue
        out[key] = value
    return out


def _container_status(cs: dict) -> dict:
    return {k: v for k, v in cs.items() if k in ("name", "resources", "allocatedResources")}


def trim_node(node: dict) -> dict:
    out = {}
    for key, value in node.items():
        if key == "metadata":
            value = _meta(value)
        elif key == "status" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k in _NODE_STATUS}
        out[key] = value
    return out
