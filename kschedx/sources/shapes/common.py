"""Shapes shared by several kinds: metadata, selectors, pod templates."""

from __future__ import annotations

from .checks import BOOL, INT, LIST, MAP, QUANTITY, STR, TIME, enum


def under(prefix: str, shape) -> list:
    return [(prefix + entry[0], *entry[1:]) for entry in shape]


def resource_list(path: str) -> list:
    return [(path, MAP), (path + "{}", QUANTITY)]


def string_map(path: str) -> list:
    return [(path, MAP), (path + "{}", STR)]


def string_list(path: str) -> list:
    return [(path, LIST), (path + "[]", STR)]


SELECTOR_REQUIREMENTS = [("", LIST), ("[]", MAP), ("[].key", STR), ("[].operator", STR),
                         *string_list("[].values")]

NODE_SELECTOR_TERM = [("", MAP), *under(".matchExpressions", SELECTOR_REQUIREMENTS),
                      *under(".matchFields", SELECTOR_REQUIREMENTS)]

# core/v1 NodeSelector: {nodeSelectorTerms: [NodeSelectorTerm]}
NODE_SELECTOR = [("", MAP), (".nodeSelectorTerms", LIST), *under(".nodeSelectorTerms[]", NODE_SELECTOR_TERM)]

LABEL_SELECTOR = [("", MAP), *string_map(".matchLabels"), *under(".matchExpressions", SELECTOR_REQUIREMENTS)]

TOLERATIONS = [("", LIST), ("[]", MAP), ("[].key", STR), ("[].operator", STR), ("[].value", STR),
               ("[].effect", STR), ("[].tolerationSeconds", INT)]

TAINTS = [("", LIST), ("[]", MAP), ("[].key", STR), ("[].value", STR), ("[].effect", STR), ("[].timeAdded", TIME)]

METADATA = [
    ("metadata", MAP),
    ("metadata.name", STR),
    ("metadata.generateName", STR),
    ("metadata.namespace", STR),
    ("metadata.uid", STR),
    *string_map("metadata.labels"),
    *string_map("metadata.annotations"),
    ("metadata.ownerReferences", LIST),
    ("metadata.ownerReferences[]", MAP),
    ("metadata.ownerReferences[].apiVersion", STR),
    ("metadata.ownerReferences[].kind", STR),
    ("metadata.ownerReferences[].name", STR),
    ("metadata.ownerReferences[].uid", STR),
    ("metadata.ownerReferences[].controller", BOOL),
    ("metadata.creationTimestamp", TIME),
    ("metadata.deletionTimestamp", TIME),
    ("metadata.generation", INT),
]

_POD_AFFINITY_TERM = [("", MAP), (".topologyKey", STR), *string_list(".namespaces"),
                      *under(".labelSelector", LABEL_SELECTOR), *under(".namespaceSelector", LABEL_SELECTOR),
                      *string_list(".matchLabelKeys"), *string_list(".mismatchLabelKeys")]

_CONTAINER = [
    ("", MAP),
    (".name", STR),
    (".image", STR),
    (".ports", LIST),
    (".ports[]", MAP),
    (".ports[].containerPort", INT),
    (".ports[].hostPort", INT),
    (".ports[].protocol", enum("SCTP", "TCP", "UDP")),  # misspelled: a host port no other pod's conflicts with
    (".ports[].hostIP", STR),
    (".resources", MAP),
    (".resources.requests", MAP),
    (".resources.limits", MAP),
    (".resources.claims", LIST),
    (".resources.claims[]", MAP),
    (".resources.claims[].name", STR),
    (".resources.claims[].request", STR),
    # OnFailure and Never where the API server has ContainerRestartRules on;
    # Always makes an init container a sidecar, whose requests add up differently.
    (".restartPolicy", enum("Always", "Never", "OnFailure")),
]

_VOLUME_SOURCES = [
    (".persistentVolumeClaim", MAP),
    (".persistentVolumeClaim.claimName", STR),
    (".persistentVolumeClaim.readOnly", BOOL),
    (".ephemeral", MAP),
    (".ephemeral.volumeClaimTemplate", MAP),
    (".ephemeral.volumeClaimTemplate.metadata", MAP),
    (".ephemeral.volumeClaimTemplate.spec", MAP),
    (".csi", MAP),
    (".csi.driver", STR),
    (".csi.readOnly", BOOL),
    (".gcePersistentDisk", MAP),
    (".gcePersistentDisk.pdName", STR),
    (".gcePersistentDisk.readOnly", BOOL),
    (".awsElasticBlockStore", MAP),
    (".awsElasticBlockStore.volumeID", STR),
    (".awsElasticBlockStore.readOnly", BOOL),
    (".rbd", MAP),
    *string_list(".rbd.monitors"),
    (".rbd.pool", STR),
    (".rbd.image", STR),
    (".rbd.readOnly", BOOL),
    (".iscsi", MAP),
    (".iscsi.targetPortal", STR),
    (".iscsi.iqn", STR),
    (".iscsi.lun", INT),
    (".iscsi.readOnly", BOOL),
    (".cinder", MAP),
    (".cinder.volumeID", STR),
    (".azureDisk", MAP),
    (".azureDisk.diskName", STR),
    (".azureDisk.diskURI", STR),
    (".image", MAP),
    (".image.reference", STR),
]

POD_SPEC = [
    ("", MAP),
    (".nodeName", STR),
    (".schedulerName", STR),
    (".priorityClassName", STR),
    (".priority", INT),
    (".preemptionPolicy", enum("Never", "PreemptLowerPriority")),  # misspelled Never: the pod would preempt
    (".runtimeClassName", STR),
    *string_map(".nodeSelector"),
    (".hostNetwork", BOOL),
    *under(".tolerations", TOLERATIONS),
    (".schedulingGates", LIST),
    (".schedulingGates[]", MAP),
    (".schedulingGates[].name", STR),
    (".affinity", MAP),
    (".affinity.nodeAffinity", MAP),
    *under(".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", NODE_SELECTOR),
    (".affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution", LIST),
    (".affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[]", MAP),
    (".affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].weight", INT),
    *under(".affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[].preference",
           NODE_SELECTOR_TERM),
    *[
        item
        for kind in ("podAffinity", "podAntiAffinity")
        for item in [
            (f".affinity.{kind}", MAP),
            (f".affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution", LIST),
            *under(f".affinity.{kind}.requiredDuringSchedulingIgnoredDuringExecution[]", _POD_AFFINITY_TERM),
            (f".affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution", LIST),
            (f".affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[]", MAP),
            (f".affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[].weight", INT),
            *under(f".affinity.{kind}.preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm",
                   _POD_AFFINITY_TERM),
        ]
    ],
    (".topologySpreadConstraints", LIST),
    (".topologySpreadConstraints[]", MAP),
    (".topologySpreadConstraints[].maxSkew", INT),
    (".topologySpreadConstraints[].minDomains", INT),
    (".topologySpreadConstraints[].topologyKey", STR),
    (".topologySpreadConstraints[].whenUnsatisfiable", STR),
    (".topologySpreadConstraints[].nodeAffinityPolicy", STR),
    (".topologySpreadConstraints[].nodeTaintsPolicy", STR),
    *string_list(".topologySpreadConstraints[].matchLabelKeys"),
    *under(".topologySpreadConstraints[].labelSelector", LABEL_SELECTOR),
    (".volumes", LIST),
    (".volumes[]", MAP),
    (".volumes[].name", STR),
    *under(".volumes[]", _VOLUME_SOURCES),
    (".resourceClaims", LIST),
    (".resourceClaims[]", MAP),
    (".resourceClaims[].name", STR),
    (".resourceClaims[].resourceClaimName", STR),
    (".resourceClaims[].resourceClaimTemplateName", STR),
    (".overhead", MAP),
    (".resources", MAP),
    (".resources.requests", MAP),
    (".resources.limits", MAP),
    (".containers", LIST),
    *under(".containers[]", _CONTAINER),
    (".initContainers", LIST),
    *under(".initContainers[]", _CONTAINER),
    (".restartPolicy", enum("Always", "Never", "OnFailure")),
]

POD_STATUS = [
    ("", MAP),
    (".phase", STR),
    (".nominatedNodeName", STR),
    (".startTime", TIME),
    (".hostIP", STR),
    (".resourceClaimStatuses", LIST),
    (".resourceClaimStatuses[]", MAP),
    (".resourceClaimStatuses[].name", STR),
    (".resourceClaimStatuses[].resourceClaimName", STR),
    (".conditions", LIST),
    (".conditions[]", MAP),
    (".conditions[].type", STR),
    (".conditions[].status", STR),
    (".conditions[].reason", STR),
    (".containerStatuses", LIST),
    (".containerStatuses[]", MAP),
    (".containerStatuses[].name", STR),
    (".containerStatuses[].allocatedResources", MAP),
    (".containerStatuses[].resources", MAP),
    (".initContainerStatuses", LIST),
    (".initContainerStatuses[]", MAP),
    (".initContainerStatuses[].name", STR),
    (".initContainerStatuses[].allocatedResources", MAP),
    (".initContainerStatuses[].resources", MAP),
]

POD_TEMPLATE = [("", MAP), *under(".metadata", [(p[len("metadata"):], c) for p, c in METADATA]),
                *under(".spec", POD_SPEC)]
