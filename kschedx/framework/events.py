"""Cluster events: what changed in the cluster, as the scheduling queue
names it (framework/types.go's ClusterEvent, EventResource and ActionType,
and framework/events.go's NodeSchedulingPropertiesChange and
PodSchedulingPropertiesChange).

A plugin registers the events that can make a pod it rejected schedulable
(EventsToRegister); kschedx declares them next to each plugin (its
Declaration) and `explain --watch` reads them to know which pods an event
explains again.

Resources are named by their kind, as kschedx's cluster state and watches
name them (upstream's EventResource adds the API group: "storage.k8s.io/
CSINode"). SchedulerQueueingHints is GA and locked on in every version
kschedx reproduces, so the events declared are those of the enabled branch
of each plugin's EventsToRegister.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntFlag


class ActionType(IntFlag):
    """What happened to an object: added, deleted, or which kind of update."""

    Add = 1 << 0
    Delete = 1 << 1
    # Updates of a node: only Node events carry them.
    UpdateNodeAllocatable = 1 << 2
    UpdateNodeLabel = 1 << 3
    # The node's taints or spec.unschedulable.
    UpdateNodeTaint = 1 << 4
    UpdateNodeCondition = 1 << 5
    UpdateNodeAnnotation = 1 << 6
    UpdateNodeDeclaredFeature = 1 << 7
    # Updates of a pod: only Pod events carry them.
    UpdatePodLabel = 1 << 8
    # Some resource request got smaller (an in-place resize).
    UpdatePodScaleDown = 1 << 9
    # A toleration added (tolerations can be added, never changed or removed).
    UpdatePodToleration = 1 << 10
    UpdatePodSchedulingGatesEliminated = 1 << 11
    UpdatePodGeneratedResourceClaim = 1 << 12

    All = (1 << 13) - 1
    # Any update, when which one is not known or does not matter.
    Update = All & ~(Add | Delete)


# Event resources (kinds). Other kinds a plugin reads use their kind's name.
POD = "Pod"
NODE = "Node"
PERSISTENT_VOLUME = "PersistentVolume"
PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
STORAGE_CLASS = "StorageClass"
CSI_NODE = "CSINode"
CSI_DRIVER = "CSIDriver"
CSI_STORAGE_CAPACITY = "CSIStorageCapacity"
VOLUME_ATTACHMENT = "VolumeAttachment"
RESOURCE_CLAIM = "ResourceClaim"
RESOURCE_SLICE = "ResourceSlice"
DEVICE_CLASS = "DeviceClass"
# The workload API's objects GangScheduling waits for (1.35: Workload, 1.36: PodGroup).
WORKLOAD = "Workload"
POD_GROUP = "PodGroup"


@dataclass(frozen=True)
class ClusterEvent:
    """One change: a resource and what happened to it."""

    resource: str
    action: ActionType


@dataclass(frozen=True)
class Register:
    """One entry of a plugin's EventsToRegister: the actions on a resource
    that can make a pod it rejected schedulable. `gate`: registered only
    while this feature gate is on (upstream reads it in EventsToRegister)."""

    resource: str
    actions: ActionType
    gate: str | None = None

    def matches(self, event: ClusterEvent) -> bool:
        return self.resource == event.resource and bool(self.actions & event.action)


def node_actions(old: dict, new: dict) -> ActionType:
    """NodeSchedulingPropertiesChange: which updates of a node's scheduling
    properties happened between two versions of it (0: none it tracks)."""
    out = ActionType(0)
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    old_status, new_status = old.get("status") or {}, new.get("status") or {}
    if bool(old_spec.get("unschedulable")) != bool(new_spec.get("unschedulable")):
        out |= ActionType.UpdateNodeTaint
    if (old_status.get("allocatable") or {}) != (new_status.get("allocatable") or {}):
        out |= ActionType.UpdateNodeAllocatable
    if (old["metadata"].get("labels") or {}) != (new["metadata"].get("labels") or {}):
        out |= ActionType.UpdateNodeLabel
    if (old_spec.get("taints") or []) != (new_spec.get("taints") or []):
        out |= ActionType.UpdateNodeTaint
    if _conditions(old_status) != _conditions(new_status):
        out |= ActionType.UpdateNodeCondition
    if (old["metadata"].get("annotations") or {}) != (new["metadata"].get("annotations") or {}):
        out |= ActionType.UpdateNodeAnnotation
    if (old_status.get("declaredFeatures") or []) != (new_status.get("declaredFeatures") or []):
        out |= ActionType.UpdateNodeDeclaredFeature
    return out


def _conditions(status: dict) -> dict:
    """Conditions by type, as upstream compares them: type -> status (the
    heartbeat times change without the condition changing)."""
    return {c.get("type"): c.get("status") for c in status.get("conditions") or () if isinstance(c, dict)}


def pod_actions(old: dict, new: dict, scaled_down: bool = False) -> ActionType:
    """PodSchedulingPropertiesChange: which updates of a pod happened
    (Update when none of the specific ones did). `scaled_down`: some request
    of the pod is smaller than before, as the caller counted them."""
    out = ActionType(0)
    if (old["metadata"].get("labels") or {}) != (new["metadata"].get("labels") or {}):
        out |= ActionType.UpdatePodLabel
    if scaled_down:
        out |= ActionType.UpdatePodScaleDown
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if len(new_spec.get("tolerations") or ()) > len(old_spec.get("tolerations") or ()):
        out |= ActionType.UpdatePodToleration
    if old_spec.get("schedulingGates") and not new_spec.get("schedulingGates"):
        out |= ActionType.UpdatePodSchedulingGatesEliminated
    if (old.get("status") or {}).get("resourceClaimStatuses") != (new.get("status") or {}).get("resourceClaimStatuses"):
        out |= ActionType.UpdatePodGeneratedResourceClaim
    return out or ActionType.Update
