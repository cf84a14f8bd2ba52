"""ResourceClaims of a pod, and the plugin's view of the DRA objects.

The claims, their allocations in flight and the devices already allocated
are shared by every plugin and profile (state/dra.py, upstream's
SharedDRAManager). `DRAManager` adds what derives from the static objects
for one set of allocator features (slice indices, per-node pools, CEL inputs
of devices), computed once per run, not per pod.
"""

from __future__ import annotations

from ...state.dra import ClaimNotFound, allocation_of, claim_key, claim_uid, dra_state
from .allocator import AllocatorFeatures
from .pools import Pool, PoolIndex


class ClaimError(Exception):
    """The pod cannot be scheduled now because of its claims (message = upstream's)."""


def reserved_for(claim: dict) -> list:
    return (claim.get("status") or {}).get("reservedFor") or []


def is_reserved_for_pod(pod_uid: str, claim: dict) -> bool:
    return any(r.get("uid") == pod_uid for r in reserved_for(claim))


def claim_name_for(pod: dict, pod_claim: dict):
    """resourceclaim.Name: (claim name or None, must check owner). Raises ClaimError."""
    meta = pod["metadata"]
    if pod_claim.get("resourceClaimName") is not None:
        return pod_claim["resourceClaimName"], False
    if pod_claim.get("resourceClaimTemplateName") is not None:
        for st in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
            if st.get("name") == pod_claim.get("name"):
                # A status entry without a name: the controller decided no
                # claim is needed; the scheduler skips it.
                return st.get("resourceClaimName"), True
        raise ClaimError(f'pod "{meta.get("namespace", "")}/{meta["name"]}": ResourceClaim not created yet')
    raise ClaimError(
        f'pod "{meta.get("namespace", "")}/{meta["name"]}", spec.resourceClaim {_go_q(pod_claim.get("name", ""))}: '
        "none of the supported fields are set")


def check_is_for_pod(pod: dict, claim: dict, split_texts: bool = False) -> None:
    """resourceclaim.IsForPod: the claim must be controlled by the pod (the
    texts changed in v1.36; a claim of another namespace cannot reach here,
    claims are looked up in the pod's namespace)."""
    pmeta, cmeta = pod["metadata"], claim["metadata"]
    owned = any(
        ref.get("controller") and ref.get("uid") == pmeta.get("uid") for ref in cmeta.get("ownerReferences") or ())
    same_ns = cmeta.get("namespace") == pmeta.get("namespace")
    claim_ref = f"{cmeta.get('namespace')}/{cmeta['name']}"
    pod_ref = f"{pmeta.get('namespace')}/{pmeta['name']}"
    if split_texts:
        if not same_ns:
            raise ClaimError(f"ResourceClaim {claim_ref} is not in the same namespace as Pod {pod_ref}")
        if not owned:
            raise ClaimError(f"ResourceClaim {claim_ref} was not created for Pod {pod_ref} (Pod is not owner)")
    elif not same_ns or not owned:
        raise ClaimError(f"ResourceClaim {claim_ref} was not created for pod {pod_ref} (pod is not owner)")


def _go_q(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


class DRAManager:
    """The plugin's view of the shared DRA state (state/dra.py) and what
    derives from the static objects for one set of allocator features: the
    pools of each node (slices indexed once, devices with their CEL inputs
    built once)."""

    def __init__(self, snapshot, features: AllocatorFeatures | None = None, taint_rules: bool = False,
                 rules_need_selector: bool = False):
        """The DRA view of `snapshot`'s run. `taint_rules`: DRADeviceTaintRules
        (DeviceTaintRules add taints to the devices they select);
        `rules_need_selector`: a rule without deviceSelector selects nothing
        (from 1.37)."""
        self.state = dra_state(snapshot)
        self.features = features if features is not None else AllocatorFeatures()
        self.claims: dict[str, dict] = self.state.claims
        self.classes: dict[str, dict] = self.state.classes
        self.slices: list[dict] = (self.state.slices_with_taint_rules(rules_need_selector) if taint_rules
                                   else self.state.slices)
        self._indexes: dict = {}

    def reuse_devices(self, other: "DRAManager") -> None:
        """Take the devices `other` built for slices this manager has too
        (the same objects), with what their selectors gave."""
        for key, theirs in other._indexes.items():
            mine = self._indexes.get(key)
            if mine is None:
                mine = self._indexes[key] = PoolIndex(
                    self.slices, partitionable=theirs.partitionable, binding_order=theirs.binding_order,
                    sort_slices=theirs.sort_slices, ignore_grouped=theirs.ignore_grouped)
            mine.reuse_devices(theirs)

    # -- claims -------------------------------------------------------------------
    def get_claim(self, namespace: str, name: str) -> dict:
        try:
            return self.state.get_claim(namespace, name)
        except ClaimNotFound as exc:
            raise ClaimError(str(exc)) from None

    def claim_has_pending_allocation(self, uid: str) -> bool:
        return self.state.claim_has_pending_allocation(uid)

    def signal_claim_pending_allocation(self, uid: str, allocated_claim: dict) -> None:
        self.state.signal_claim_pending_allocation(uid, allocated_claim)

    def remove_claim_pending_allocation(self, uid: str) -> bool:
        return self.state.remove_claim_pending_allocation(uid)

    def allocated_state(self):
        return self.state.allocated_state(self.features.consumable_capacity)

    # -- slices and pools ------------------------------------------------------------
    def pool_index(self, features: AllocatorFeatures) -> PoolIndex:
        key = (features.partitionable_devices, features.binding_order, features.combinations,
               features.compatibility_group_slices_ignored)
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = PoolIndex(
                self.slices, partitionable=features.partitionable_devices, binding_order=features.binding_order,
                sort_slices=features.sorted_pools, ignore_grouped=features.compatibility_group_slices_ignored)
        return index

    def pools_for_node(self, node_info) -> list[Pool]:
        return self.pool_index(self.features).pools_for_node(node_info)
