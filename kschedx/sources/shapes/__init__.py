"""One declared shape per kind kschedx reads: every field any part of
kschedx reads, with its type and, where the API server enforces one, its
value rule. Checked before admission or any plugin sees the object.

A shape is a list of (path, Check): "x[]" walks every item of the list x,
"x{}" every value of the mapping x; absent or null fields are not checked.
"""

from __future__ import annotations

from . import core, dra, kubeconfig, storage, workloads
from .checks import Check
from .common import METADATA

SHAPES = {
    "*": METADATA,
    "Pod": core.POD,
    "Node": core.NODE,
    "Namespace": core.NAMESPACE,
    "PriorityClass": core.PRIORITY_CLASS,
    "RuntimeClass": core.RUNTIME_CLASS,
    "Service": core.SERVICE,
    "PodDisruptionBudget": core.POD_DISRUPTION_BUDGET,
    "PersistentVolume": storage.PERSISTENT_VOLUME,
    "PersistentVolumeClaim": storage.PERSISTENT_VOLUME_CLAIM,
    "StorageClass": storage.STORAGE_CLASS,
    "CSINode": storage.CSI_NODE,
    "CSIDriver": storage.CSI_DRIVER,
    "CSIStorageCapacity": storage.CSI_STORAGE_CAPACITY,
    "VolumeAttachment": storage.VOLUME_ATTACHMENT,
    "ResourceClaim": dra.RESOURCE_CLAIM,
    "ResourceClaimTemplate": dra.RESOURCE_CLAIM_TEMPLATE,
    "ResourceSlice": dra.RESOURCE_SLICE,
    "DeviceClass": dra.DEVICE_CLASS,
    "DeviceTaintRule": dra.DEVICE_TAINT_RULE,
    "Deployment": workloads.DEPLOYMENT,
    "ReplicaSet": workloads.REPLICA_SET,
    "StatefulSet": workloads.STATEFUL_SET,
    "DaemonSet": workloads.DAEMON_SET,
    "ReplicationController": workloads.REPLICATION_CONTROLLER,
    "Job": workloads.JOB,
    "CronJob": workloads.CRON_JOB,
}

# Documents that are not API objects, checked as a whole.
DOCUMENTS = {
    "kubeconfig": kubeconfig.KUBECONFIG,
}

__all__ = ["DOCUMENTS", "SHAPES", "Check"]
