"""The fix kinds in the order they search (the pod's side, then the
cluster's), and each kind's place among them."""

from __future__ import annotations


def kinds():
    from . import (add_node, create_pv, create_pvc, device_class, device_count, device_selector, free_devices,
                   free_rwop_claim, host_port, node_affinity, node_labels, node_taints, pod_affinity, priority,
                   remove_pods, requests, resource_slice, spread, storage_class, tolerations)

    # Cheap, likely candidates first: the budget is shared. The pod's side,
    # then the cluster's.
    pod_side = (tolerations, node_affinity, node_affinity.move, spread, pod_affinity, host_port, requests, device_count,
                device_selector, device_selector.constraint, device_class, create_pvc, storage_class, priority)
    cluster_side = (node_taints, node_labels, free_rwop_claim, create_pv, resource_slice, add_node, free_devices,
                    remove_pods)
    return pod_side, cluster_side


def kind_order(kind: str) -> int:
    """A kind's place among the kinds of its side (its module's ORDER)."""
    pod_side, cluster_side = kinds()
    for module in pod_side + cluster_side:
        if getattr(module, "KIND", None) == kind:
            return getattr(module, "ORDER", 0)
    return 0
