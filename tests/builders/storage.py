"""Storage objects: PersistentVolumes and claims, StorageClasses, CSINodes,
CSIDrivers, CSIStorageCapacities."""

from __future__ import annotations

from .core import api_object, metadata, owner_reference, put

__all__ = [
    "claim_ref",
    "csi_driver",
    "csi_node",
    "csi_pv",
    "csi_storage_capacity",
    "pv",
    "pvc",
    "storage_class",
    "volume_node_affinity",
]


def pv(name, sc, *, capacity=None, modes=None, source=None, claim=None, claim_uid=None, affinity=None,
       volume_mode=None, labels=None, annotations=None, status=None) -> dict:
    """A PersistentVolume with nothing but what is given. `claim` is
    "namespace/name"; `affinity` is {key: [values]} (one term, one In
    requirement per key); `source` is merged into the spec."""
    spec = put(
        {"storageClassName": sc},
        capacity={"storage": capacity} if capacity is not None else None,
        accessModes=list(modes) if modes is not None else None,
        claimRef=claim_ref(claim, claim_uid) if claim is not None else None,
        nodeAffinity=volume_node_affinity(affinity) if affinity else None,
        volumeMode=volume_mode,
    )
    spec.update(source or {})
    meta = metadata(name, labels=labels, annotations=annotations)
    return api_object("v1", "PersistentVolume", meta, spec=spec, status=status)


def csi_pv(name, sc="", capacity="10Gi", claim=None, affinity=None, phase="Available", labels=None, source=None,
           modes=("ReadWriteOnce",), volume_mode=None, annotations=None) -> dict:
    """A volume of the volume plugin tests: 10Gi, ReadWriteOnce, Available, of a
    CSI driver unless `source` says otherwise; labels, annotations and status
    always there."""
    return pv(name, sc, capacity=capacity, modes=modes, affinity=affinity, volume_mode=volume_mode or None,
              source=source or {"csi": {"driver": "test.csi.example.com", "volumeHandle": name}}, claim=claim,
              labels=dict(labels or {}), annotations=dict(annotations or {}),
              status={"phase": phase} if phase else {})


def claim_ref(claim: str, uid=None) -> dict:
    ns, _, name = claim.partition("/")
    return put({"namespace": ns, "name": name}, uid=uid or None)


def volume_node_affinity(affinity: dict) -> dict:
    """A PersistentVolume's nodeAffinity: one term, one In requirement per key."""
    return {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": k, "operator": "In", "values": list(v)} for k, v in affinity.items()]}]}}


def pvc(name, ns="default", sc=None, volume_name=None, bound=False, modes=("ReadWriteOnce",), request=None,
        annotations=None, phase=None, owner_uid=None, volume_mode=None, selector=None, uid=None) -> dict:
    """A claim; `bound` adds the bind-completed annotation, `owner_uid` makes
    a pod its controller (a generic ephemeral volume's claim)."""
    annotations = dict(annotations or {})
    if bound:
        annotations["pv.kubernetes.io/bind-completed"] = "yes"
    meta = metadata(name, ns, annotations=annotations, uid=uid or None,
                    ownerReferences=[owner_reference("Pod", "owner", owner_uid)] if owner_uid else None)
    spec = put(
        {"accessModes": list(modes)},
        storageClassName=sc,
        volumeName=volume_name or None,
        resources={"requests": {"storage": request}} if request is not None else None,
        volumeMode=volume_mode or None,
        selector=selector,
    )
    return api_object("v1", "PersistentVolumeClaim", meta, spec=spec, status={"phase": phase} if phase else None)


def storage_class(name, mode="WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner", allowed=None) -> dict:
    return api_object("storage.k8s.io/v1", "StorageClass", metadata(name), provisioner=provisioner,
                      volumeBindingMode=mode, allowedTopologies=allowed)


def csi_node(name, drivers, migrated=None) -> dict:
    """`drivers` maps driver name -> allocatable count (None: no limit);
    `migrated` is the migrated-plugins annotation."""
    entries = [put({"name": d, "nodeID": name}, allocatable={"count": count} if count is not None else None)
               for d, count in drivers.items()]
    annotations = {"storage.alpha.kubernetes.io/migrated-plugins": migrated} if migrated is not None else None
    return api_object("storage.k8s.io/v1", "CSINode", metadata(name, annotations=annotations),
                      spec={"drivers": entries})


def csi_driver(name, storage_capacity=None, prevent_pod_scheduling_if_missing=None) -> dict:
    return api_object("storage.k8s.io/v1", "CSIDriver", metadata(name),
                      spec=put({}, storageCapacity=storage_capacity,
                               preventPodSchedulingIfMissing=prevent_pod_scheduling_if_missing))


def csi_storage_capacity(name, sc, node_labels=None, cap=None, max_size=None, ns="default", topology=True) -> dict:
    """`node_labels` None: a capacity for every node; `topology` False: no nodeTopology at all."""
    topo = ({"matchLabels": dict(node_labels)} if node_labels else {}) if topology else None
    return api_object("storage.k8s.io/v1", "CSIStorageCapacity", metadata(name, ns), storageClassName=sc,
                      nodeTopology=topo, capacity=cap, maximumVolumeSize=max_size)
