"""Behaviour that changed between minors without a feature gate, each change
named for what it does and keyed by the minor it starts at. A Features
value has one attribute per change, true from that minor on; plugins read
the change, never the version.

A change that a later minor undoes is a new change, named for the new
behaviour, keyed by that minor. tests/test_features.py holds every minor to
SINCE; docs/configuration.md says what each minor does differently.
"""

from __future__ import annotations

SINCE = {
    # -- 1.36 --------------------------------------------------------------------
    # NodeResourcesBalancedAllocation scores the improvement in balance (with
    # the pod against without it), not the balance with the pod.
    "balanced_allocation_scores_improvement": "1.36",
    # ImageLocality adds the images of the pod's image volumes to its sum.
    "image_locality_counts_image_volumes": "1.36",
    # NodeVolumeLimits: an in-tree Portworx volume counts as CSI wherever the
    # node has a CSINode (1.35: only where its migrated-plugins annotation
    # lists the plugin; CSIMigrationPortworx is gone).
    "portworx_always_migrated": "1.36",
    # VolumeLimitScaling's driver check reads CSIDriver
    # spec.preventPodSchedulingIfMissing first.
    "volume_limit_scaling_reads_prevent_pod_scheduling": "1.36",
    # DynamicResources Score pairs a claim already allocated with its own
    # allocation, and gives 0 when DRAPrioritizedList is off.
    "dra_score_uses_claim_allocation": "1.36",
    # The structured allocator's subrequest fixes: an "All" subrequest's
    # devices under its own key, the search going on with the subrequest it
    # is in.
    "dra_subrequest_fixes": "1.36",
    # The structured allocator's pools and slices in name order, a search
    # over combinations instead of permutations, allocations pinned to the
    # node they were made for, binding-condition devices ordered by pool
    # (upstream's "stable" and "incubating" allocators of 1.36).
    "dra_allocator_sorted_pools": "1.36",
    # The structured allocator gives back what a refused device took (its
    # counters, constraint entries, capacity): v1.36.3's rollback fix.
    "dra_allocator_rollback": "1.36",
    # resourceclaim.IsForPod's two texts (another namespace; "Pod is not owner").
    "dra_is_for_pod_texts_split": "1.36",
    # NodeDeclaredFeatures: the node's list mapped to the registry's features
    # (TryMap), the 1.36 registry, the reason without the missing names.
    "node_declared_features_mapped": "1.36",
    # NewFramework: placementGenerate / placementScore extension points, the
    # "score plugins: " prefix of the weight overflow error.
    "placement_extension_points": "1.36",
    # NodeResourcesFitArgs validation: requestedToCapacityRatio required with
    # type RequestedToCapacityRatio and forbidden otherwise, shape errors
    # under requestedToCapacityRatio.shape.
    "fit_args_strict_requested_to_capacity_ratio": "1.36",
    # GangScheduling no longer implements Reserve.
    "gang_scheduling_without_reserve": "1.36",
    # -- 1.37 --------------------------------------------------------------------
    # A pod's requests with status resources (in-place resizes): the largest
    # of the spec's, the allocated and the actuated requests, each summed
    # over the containers (init containers too), not the per-container
    # largest summed; pod-level requests from the effective list.
    "pod_requests_aggregate_status": "1.37",
    # The default plugins: NodeName before NodeUnschedulable.
    "node_name_before_node_unschedulable": "1.37",
    # The default plugins: GangScheduling comes with GenericWorkload (its
    # own gate is gone).
    "gang_scheduling_by_generic_workload": "1.37",
    # A preemption that found a node says so: "found a potential placement
    # for pod on node N, preempting K victims" (the FailedScheduling message
    # ends with it).
    "preemption_reports_placement": "1.37",
    # DynamicResources' PostFilter gives no reason when it frees nothing (no
    # "plugin disabled", "no new claims to deallocate", "still not
    # schedulable").
    "dra_post_filter_without_reason": "1.37",
    # ImageLocality's threshold counts the image volumes with the containers.
    "image_locality_threshold_counts_image_volumes": "1.37",
    # InterPodAffinity: an incoming pod's namespaceSelector, once unrolled
    # into namespace names, is replaced by Nothing (before, the replacement
    # was lost and a selector an empty label set satisfies matched pods of
    # every namespace).
    "inter_pod_affinity_namespace_selector_replaced": "1.37",
    # DefaultPreemption's PDB accounting: a victim stops taking from its
    # budgets at the first one it violates.
    "pdb_violation_stops_at_first_budget": "1.37",
    # A DeviceTaintRule without deviceSelector taints no device (before:
    # every device).
    "device_taint_rule_needs_selector": "1.37",
    # NodeDeclaredFeatures' 1.37 registry: a pod mounting a volume with
    # bindMountOptions needs VolumeBindMountOptions on the node.
    "node_declared_features_infer_bind_mount_options": "1.37",
    # The structured allocator of 1.37: a distinctAttribute constraint
    # compares a device with every device added before it (before: one per
    # request name).
    "dra_distinct_attribute_over_all_devices": "1.37",
    # ... shared counters kept per pool of a driver (before: per pool name,
    # two drivers' pools of one name sharing them).
    "dra_counters_by_pool_id": "1.37",
    # ... the claim limit (32 devices) checked request by request, with its
    # new text.
    "dra_claim_limit_per_request": "1.37",
    # ... a CEL runtime error names the device (and hints at optional
    # chaining for "no such key").
    "dra_cel_errors_name_device": "1.37",
    # ... an "All" request takes every device whose static capacity fits; one
    # whose remaining capacity does not then makes the request fail.
    "dra_all_mode_static_capacity": "1.37",
    # ... a capacity rounded up to a step is written in the step's format.
    "dra_capacity_in_step_format": "1.37",
    # ... slices whose devices use counter compatibility groups are ignored
    # (their pool is then incomplete) while DRADeviceCompatibilityGroups is off.
    "dra_compatibility_group_slices_ignored": "1.37",
    # ... a request with derivedAttributes is an error.
    "dra_derived_attributes_refused": "1.37",
    # DynamicResources' Filter: a claim whose allocation skips optional node
    # operations is unavailable on a node that does not declare
    # DRAOptionalNodeOperations.
    "dra_optional_node_operations_checked": "1.37",
    # NewFramework and the configuration: the podGroupPostFilter extension
    # point (DefaultPreemption and DynamicResources implement it; it runs for
    # pod groups only).
    "pod_group_post_filter_point": "1.37",
}

__all__ = ["SINCE"]
