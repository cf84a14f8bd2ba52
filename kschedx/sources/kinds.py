"""The kinds a live cluster read lists, with where the API serves them:
the required ones (Node, Pod) first, then the kinds the plugins' declarations
read and those admission of POD_FILE pods reads (PriorityClass, RuntimeClass).
tests/test_cluster_commands.py holds KINDS to the declarations.
"""

from __future__ import annotations

from dataclasses import dataclass

@dataclass(frozen=True)
class Kind:
    kind: str
    api_version: str
    plural: str
    required: bool = False

    @property
    def base_path(self) -> str:
        return "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"

    @property
    def list_path(self) -> str:
        return f"{self.base_path}/{self.plural}"

    @property
    def resource(self) -> str:
        """`plural.group`, as kubectl and RBAC messages name it."""
        group = self.api_version.rpartition("/")[0]
        return f"{self.plural}.{group}" if group else self.plural

    @property
    def field_selector(self) -> str | None:
        """What the lists and watches of this kind leave to the server: terminal
        pods (the scheduler's own informer filter)."""
        return NOT_TERMINAL if self.kind == "Pod" else None


NODE = Kind("Node", "v1", "nodes", required=True)
POD = Kind("Pod", "v1", "pods", required=True)

# Every kind fixture-format.md lists, required ones first, and the kinds that
# complete them: CSIStorageCapacity (VolumeBinding's capacity check),
# VolumeAttachment (NodeVolumeLimits) and RuntimeClass (admission of POD_FILE pods:
# overhead, node selector, tolerations). Secrets and ConfigMaps
# are deliberately absent: scheduling needs neither, and reading them would
# demand (and expose) far more than a dry run should.
KINDS: tuple[Kind, ...] = (
    NODE,
    POD,
    Kind("Namespace", "v1", "namespaces"),
    Kind("PersistentVolume", "v1", "persistentvolumes"),
    Kind("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
    Kind("Service", "v1", "services"),
    Kind("ReplicationController", "v1", "replicationcontrollers"),
    Kind("ReplicaSet", "apps/v1", "replicasets"),
    Kind("StatefulSet", "apps/v1", "statefulsets"),
    Kind("StorageClass", "storage.k8s.io/v1", "storageclasses"),
    Kind("CSINode", "storage.k8s.io/v1", "csinodes"),
    Kind("CSIDriver", "storage.k8s.io/v1", "csidrivers"),
    Kind("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities"),
    Kind("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments"),
    Kind("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets"),
    Kind("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses"),
    Kind("RuntimeClass", "node.k8s.io/v1", "runtimeclasses"),
    Kind("ResourceSlice", "resource.k8s.io/v1", "resourceslices"),
    Kind("DeviceClass", "resource.k8s.io/v1", "deviceclasses"),
    Kind("ResourceClaim", "resource.k8s.io/v1", "resourceclaims"),
    Kind("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates"),
)


# The controllers of pods, which no plugin reads but what happens around the
# scheduler does: a drain (kubectl's DaemonSet check, the disruption
# controller's scales, a Job's replacement policy) and a node added from a
# template (the DaemonSet pods it runs). Read for --drain and
# --node-template, and by `kschedx snapshot`, so that a snapshot answers
# those questions too.
CONTROLLER_KINDS: tuple[Kind, ...] = (
    Kind("Deployment", "apps/v1", "deployments"),
    Kind("DaemonSet", "apps/v1", "daemonsets"),
    Kind("Job", "batch/v1", "jobs"),
)


# The scheduler's own informer filter: terminal pods hold no resources.
NOT_TERMINAL = "status.phase!=Succeeded,status.phase!=Failed"
TERMINAL = ("Succeeded", "Failed")
