"""Builders for the volume plugin tests: API objects as plain dicts, and a
framework over them so a plugin runs exactly as the runner runs it."""

from __future__ import annotations

from kschedx.cluster import build_cluster
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.runner import Framework
from kschedx.snapshot import PodInfo, build_snapshot
from kschedx.sources.fixtures import Origin

ORIGIN = Origin("test.yaml")


def node(name, labels=None, **status):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(labels or {})},
            "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}, **status}}


def pod(name, ns="default", claims=(), volumes=(), node_name=None, uid=None, priority=None):
    vols = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}} for i, c in enumerate(claims)]
    vols.extend(volumes)
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
         "spec": {"containers": [{"name": "c", "image": "x"}], "volumes": vols}}
    if uid:
        p["metadata"]["uid"] = uid
    if node_name:
        p["spec"]["nodeName"] = node_name
    if priority is not None:
        p["spec"]["priority"] = priority
    return p


def pvc(name, ns="default", sc=None, volume_name=None, bound=False, modes=("ReadWriteOnce",), request=None,
        annotations=None, phase=None, owner_uid=None, volume_mode=None, selector=None, uid=None):
    obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": name, "namespace": ns, "annotations": dict(annotations or {})},
           "spec": {"accessModes": list(modes)}}
    if uid:
        obj["metadata"]["uid"] = uid
    if sc is not None:
        obj["spec"]["storageClassName"] = sc
    if volume_name:
        obj["spec"]["volumeName"] = volume_name
    if bound:
        obj["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes"
    if request is not None:
        obj["spec"]["resources"] = {"requests": {"storage": request}}
    if phase:
        obj["status"] = {"phase": phase}
    if owner_uid:
        obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "owner", "uid": owner_uid,
                                               "controller": True}]
    if volume_mode:
        obj["spec"]["volumeMode"] = volume_mode
    if selector is not None:
        obj["spec"]["selector"] = selector
    return obj


def pv(name, sc="", capacity="10Gi", claim=None, affinity=None, phase="Available", labels=None, source=None,
       modes=("ReadWriteOnce",), volume_mode=None, annotations=None):
    """`affinity` is {key: [values]} (one term, one In requirement per key)."""
    obj = {"apiVersion": "v1", "kind": "PersistentVolume",
           "metadata": {"name": name, "labels": dict(labels or {}), "annotations": dict(annotations or {})},
           "spec": {"capacity": {"storage": capacity}, "accessModes": list(modes), "storageClassName": sc},
           "status": {"phase": phase} if phase else {}}
    obj["spec"].update(source or {"csi": {"driver": "test.csi.example.com", "volumeHandle": name}})
    if claim is not None:
        ns, _, cname = claim.partition("/")
        obj["spec"]["claimRef"] = {"namespace": ns, "name": cname}
    if affinity:
        obj["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": k, "operator": "In", "values": list(v)} for k, v in affinity.items()]}]}}
    if volume_mode:
        obj["spec"]["volumeMode"] = volume_mode
    return obj


def storage_class(name, mode="WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner", allowed=None):
    obj = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
           "provisioner": provisioner}
    if mode is not None:
        obj["volumeBindingMode"] = mode
    if allowed is not None:
        obj["allowedTopologies"] = allowed
    return obj


def csi_node(name, drivers, migrated=None):
    """`drivers` maps driver name -> allocatable count (None: no limit)."""
    ds = []
    for d, count in drivers.items():
        entry = {"name": d, "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        ds.append(entry)
    obj = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name}, "spec": {"drivers": ds}}
    if migrated is not None:
        obj["metadata"]["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return obj


def csi_driver(name, storage_capacity=None):
    obj = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": name}, "spec": {}}
    if storage_capacity is not None:
        obj["spec"]["storageCapacity"] = storage_capacity
    return obj


def capacity(name, sc, node_labels=None, cap=None, max_size=None, ns="default", topology=True):
    obj = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
           "metadata": {"name": name, "namespace": ns}, "storageClassName": sc}
    if topology:
        obj["nodeTopology"] = {"matchLabels": dict(node_labels)} if node_labels else {}
    if cap is not None:
        obj["capacity"] = cap
    if max_size is not None:
        obj["maximumVolumeSize"] = max_size
    return obj


def framework(*objects) -> Framework:
    cluster = build_cluster([(o, ORIGIN) for o in objects])
    return Framework(build_snapshot(cluster), tie_break="name")


def pending(fw: Framework, name: str, ns: str = "default") -> PodInfo:
    for p in fw.cluster.pods:
        if p["metadata"]["name"] == name and p["metadata"].get("namespace", "default") == ns:
            return PodInfo(p)
    raise KeyError(name)


def run(fw: Framework, plugin: str, pod_info: PodInfo):
    """PreFilter then (unless it rejected or skipped) Filter on every node:
    (pre-filter status, {node: filter status}, cycle state)."""
    pl = fw.profile.by_name[plugin]
    state = CycleState()
    _, pre = pl.pre_filter(state, pod_info, fw.snapshot.node_infos)
    if pre is not None and not pre.is_success():
        return pre, {}, state
    return pre, {ni.name: pl.filter(state, pod_info, ni) for ni in fw.snapshot.node_infos}, state


def verdict(st):
    """(code label, reasons) of a status; Success for None."""
    if st is None:
        return ("Success", [])
    return (st.code.label, list(st.reasons))
