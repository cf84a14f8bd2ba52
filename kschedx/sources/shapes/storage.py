"""PersistentVolumes, claims and the storage.k8s.io kinds the volume plugins read."""

from __future__ import annotations

from .checks import BOOL, INT, LIST, MAP, QUANTITY, STR, enum
from .common import LABEL_SELECTOR, METADATA, NODE_SELECTOR, resource_list, string_list, string_map, under

_PV_SOURCES = [
    ("csi", MAP), ("csi.driver", STR), ("csi.volumeHandle", STR), ("csi.readOnly", BOOL),
    ("gcePersistentDisk", MAP), ("gcePersistentDisk.pdName", STR), ("gcePersistentDisk.readOnly", BOOL),
    ("awsElasticBlockStore", MAP), ("awsElasticBlockStore.volumeID", STR), ("awsElasticBlockStore.readOnly", BOOL),
    ("rbd", MAP), *string_list("rbd.monitors"), ("rbd.pool", STR), ("rbd.image", STR), ("rbd.readOnly", BOOL),
    ("iscsi", MAP), ("iscsi.targetPortal", STR), ("iscsi.iqn", STR), ("iscsi.lun", INT), ("iscsi.readOnly", BOOL),
    ("cinder", MAP), ("cinder.volumeID", STR),
    ("azureDisk", MAP), ("azureDisk.diskName", STR), ("azureDisk.diskURI", STR),
    ("azureFile", MAP), ("vsphereVolume", MAP), ("portworxVolume", MAP),
    ("local", MAP), ("local.path", STR), ("hostPath", MAP), ("hostPath.path", STR),
]

PERSISTENT_VOLUME = [
    *METADATA,
    ("spec", MAP),
    *resource_list("spec.capacity"),
    *string_list("spec.accessModes"),
    ("spec.claimRef", MAP),
    ("spec.claimRef.namespace", STR),
    ("spec.claimRef.name", STR),
    ("spec.claimRef.uid", STR),
    ("spec.storageClassName", STR),
    ("spec.volumeMode", STR),
    ("spec.volumeAttributesClassName", STR),
    ("spec.persistentVolumeReclaimPolicy", STR),
    ("spec.nodeAffinity", MAP),
    *under("spec.nodeAffinity.required", NODE_SELECTOR),
    *under("spec.", _PV_SOURCES),
    ("status", MAP),
    ("status.phase", STR),
]

PERSISTENT_VOLUME_CLAIM = [
    *METADATA,
    ("spec", MAP),
    *string_list("spec.accessModes"),
    ("spec.storageClassName", STR),
    ("spec.volumeName", STR),
    ("spec.volumeMode", STR),
    ("spec.volumeAttributesClassName", STR),
    ("spec.resources", MAP),
    *resource_list("spec.resources.requests"),
    *resource_list("spec.resources.limits"),
    *under("spec.selector", LABEL_SELECTOR),
    ("spec.dataSource", MAP),
    ("status", MAP),
    ("status.phase", STR),
    *string_list("status.accessModes"),
    *resource_list("status.capacity"),
    *resource_list("status.allocatedResources"),
]

STORAGE_CLASS = [
    *METADATA,
    ("provisioner", STR),
    ("volumeBindingMode", enum("Immediate", "WaitForFirstConsumer")),
    ("reclaimPolicy", STR),
    ("allowVolumeExpansion", BOOL),
    *string_map("parameters"),
    ("allowedTopologies", LIST),
    ("allowedTopologies[]", MAP),
    ("allowedTopologies[].matchLabelExpressions", LIST),
    ("allowedTopologies[].matchLabelExpressions[]", MAP),
    ("allowedTopologies[].matchLabelExpressions[].key", STR),
    *string_list("allowedTopologies[].matchLabelExpressions[].values"),
]

CSI_NODE = [
    *METADATA,
    ("spec", MAP),
    ("spec.drivers", LIST),
    ("spec.drivers[]", MAP),
    ("spec.drivers[].name", STR),
    ("spec.drivers[].nodeID", STR),
    *string_list("spec.drivers[].topologyKeys"),
    ("spec.drivers[].allocatable", MAP),
    ("spec.drivers[].allocatable.count", INT),
]

CSI_DRIVER = [
    *METADATA,
    ("spec", MAP),
    ("spec.attachRequired", BOOL),
    ("spec.podInfoOnMount", BOOL),
    ("spec.storageCapacity", BOOL),
    ("spec.preventPodSchedulingIfMissing", BOOL),
    *string_list("spec.volumeLifecycleModes"),
]

CSI_STORAGE_CAPACITY = [
    *METADATA,
    ("storageClassName", STR),
    *under("nodeTopology", LABEL_SELECTOR),
    ("capacity", QUANTITY),
    ("maximumVolumeSize", QUANTITY),
]

VOLUME_ATTACHMENT = [
    *METADATA,
    ("spec", MAP),
    ("spec.attacher", STR),
    ("spec.nodeName", STR),
    ("spec.source", MAP),
    ("spec.source.persistentVolumeName", STR),
    ("spec.source.inlineVolumeSpec", MAP),
    *under("spec.source.inlineVolumeSpec.", _PV_SOURCES),
    ("status", MAP),
    ("status.attached", BOOL),
]
