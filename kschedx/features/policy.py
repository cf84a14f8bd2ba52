"""What kschedx does with each feature gate kube-scheduler lets you set.

Every gate `--feature-gates` accepts, at its default or not, falls under
one rule:

1. the scheduler does not read it (a kubelet, API server, controller,
   client or logging gate registered in the same table): accepted, it
   changes nothing, for kube-scheduler as for kschedx;
2. kschedx reproduces it: a plugin declares it and reads it
   (plugins/registry.gates_read());
3. the scheduler reads it but nothing kschedx reports depends on it
   (ACCEPTED says why: queueing, API writes, timing): accepted;
4. kschedx does not reproduce it (NOT_REPRODUCED): refused, with a message
   that says so, whenever its value would differ from the version's
   default, set by name or reached through AllAlpha / AllBeta.

SCHEDULER_READS is the gates kube-scheduler's own code reads at each minor
(every `features.X` of pkg/scheduler, non-test files);
tests/test_gate_policy.py derives it again from the release's source and
walks every settable gate of every version through these rules.
"""

from __future__ import annotations

_READS_1_35 = frozenset({
    "CSIMigrationPortworx", "DRAAdminAccess", "DRAConsumableCapacity", "DRADeviceBindingConditions",
    "DRADeviceTaintRules", "DRADeviceTaints", "DRAExtendedResource", "DRAPartitionableDevices", "DRAPrioritizedList",
    "DRAResourceClaimDeviceStatus", "DRASchedulerFilterTimeout", "DynamicResourceAllocation", "GangScheduling",
    "GenericWorkload", "InPlacePodLevelResourcesVerticalScaling", "InPlacePodVerticalScaling",
    "MatchLabelKeysInPodTopologySpread", "NodeDeclaredFeatures", "NodeInclusionPolicyInPodTopologySpread",
    "NominatedNodeNameForExpectation", "OpportunisticBatching", "PodLevelResources", "SchedulerAsyncAPICalls",
    "SchedulerAsyncPreemption", "SchedulerPopFromBackoffQ", "SchedulerQueueingHints", "SidecarContainers",
    "StorageCapacityScoring", "TaintTolerationComparisonOperators", "VolumeAttributesClass", "VolumeLimitScaling",
})
_READS_1_36 = _READS_1_35 - {"CSIMigrationPortworx"} | {
    "DRAListTypeAttributes", "DRANodeAllocatableResources", "DRAWorkloadResourceClaims",
    "TopologyAwareWorkloadScheduling", "WorkloadAwarePreemption",
}
_READS_1_37 = _READS_1_36 - {"GangScheduling", "SchedulerQueueingHints", "SidecarContainers",
                             "WorkloadAwarePreemption"} | {
    "CompositePodGroup", "DRADerivedAttributes", "DRADeviceCompatibilityGroups", "DRAFractionalCapacityRange",
    "DRAOptionalNodeOperations", "InPlacePodVerticalScalingSchedulerPreemption", "InterPodAffinityHostnameFastPath",
    "PodGroupPreemptionPolicy", "SchedulerPreQueueingHints",
}
SCHEDULER_READS = {"1.35": _READS_1_35, "1.36": _READS_1_36, "1.37": _READS_1_37}

# Read by the scheduler, accepted at any value: why kschedx's answer is the
# same either way (docs/configuration.md, "The gate policy").
ACCEPTED = {
    "SchedulerAsyncPreemption": "victims are deleted in the background and the preemptor waits in PreEnqueue "
                                "until they are gone: the same victims and nomination, only the timing differs "
                                "(simulate applies each preemption before the next pod)",
    "SchedulerPopFromBackoffQ": "the scheduling queue's order between retries (kschedx has no queue)",
    "SchedulerAsyncAPICalls": "API calls go through a dispatcher (kschedx makes none)",
    "NominatedNodeNameForExpectation": "status.nominatedNodeName written before binding (an API write)",
    "SchedulerPreQueueingHints": "the scheduling queue's hints (kschedx has no queue)",
    "SchedulerQueueingHints": "the scheduling queue's hints (kschedx has no queue)",
    "OpportunisticBatching": "kschedx scores every pod in a full cycle, which is what kube-scheduler does with the "
                             "gate off, and with it on for every pod of the default profile; where batching can "
                             "place a pod elsewhere is in docs/configuration.md",
}

# Read by the scheduler and not reproduced by kschedx: refused when its
# value is not the version's default. Each says what kschedx would have to
# do.
NOT_REPRODUCED = {
    "GenericWorkload": "pod-group (gang) scheduling: workload cycles, pod groups as preemption victims",
    "GangScheduling": "gang scheduling of pod groups",
    "TopologyAwareWorkloadScheduling": "topology-aware placement of pod groups",
    "WorkloadAwarePreemption": "preemption of whole pod groups",
    "CompositePodGroup": "composite pod groups",
    "PodGroupPreemptionPolicy": "pod groups' preemption policy",
    "DRAWorkloadResourceClaims": "resource claims reserved for pod groups",
    "DRAListTypeAttributes": "list-typed device attributes in CEL selectors",
    "DRANodeAllocatableResources": "node-allocatable resources backed by DRA claims",
    "DRAFractionalCapacityRange": "consumable capacity with fractional ranges",
    "DRADerivedAttributes": "derived device attributes in requests",
    "DRADeviceCompatibilityGroups": "counter compatibility groups of devices",
    "DRAOptionalNodeOperations": "allocations that skip optional node operations",
    "InPlacePodVerticalScalingSchedulerPreemption": "scheduling and preemption for deferred in-place resizes",
    "InterPodAffinityHostnameFastPath": "hostname-scoped inter-pod affinity checked on each node's pods",
}


def not_reproduced(values: dict, gates: dict, settings: dict) -> list[str]:
    """The refusals for gate `values` resolved from `settings` at a version's
    table (`gates`: name -> (stage, default, ...)): one text for each gate
    kschedx does not reproduce whose value is not its default."""
    out = []
    for name, why in NOT_REPRODUCED.items():
        if name not in values or values[name] == gates[name][1]:
            continue
        value = "true" if values[name] else "false"
        if name in settings:
            out.append(f"kschedx does not reproduce {name}={value} ({why})")
        else:
            via = "AllAlpha" if gates[name][0] == "Alpha" else "AllBeta"
            out.append(f"kschedx does not reproduce {name}={value}, which {via}={'true' if values[via] else 'false'} "
                       f"sets ({why}): set {name}={'false' if values[name] else 'true'} too")
    return out


__all__ = ["ACCEPTED", "NOT_REPRODUCED", "SCHEDULER_READS", "not_reproduced"]
