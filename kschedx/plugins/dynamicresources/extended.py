"""Extended resources backed by DRA devices (DRAExtendedResource; upstream
extendeddynamicresources.go and noderesources' DRA scoring).

A pod that requests an extended resource (`example.com/gpu: 2`, or
`deviceclass.resource.kubernetes.io/<class>: 2`) which a DeviceClass backs
gets, for every node where the node itself does not offer that resource
(allocatable 0 or absent), a claim asking for those devices: one request per
container (`container-<i>-request-<j>`, j = the resource's place among the
container's sorted request names), init containers reusing what long-lived
containers after them already get, the largest short-lived init request
shared. NodeResourcesFit then leaves such a resource to DynamicResources
(`delegated_to_dra`) and the scorers count the node's matching devices as its
capacity (`dra_resource_totals`).
"""

from __future__ import annotations

import copy

from ...api.resources import is_scalar_resource_name, pod_requests, value_of
from ...framework.status import Code, Status
from ...state.dra import (EXTENDED_RESOURCE_CLAIM_ANNOTATION, allocation_of, dra_objects, dra_state,
                          is_dra_extended_resource_name)
from .pools import node_matches

SPECIAL_CLAIM_NAME = "<extended-resources>"


def is_special_claim(claim: dict) -> bool:
    return claim["metadata"]["name"] == SPECIAL_CLAIM_NAME


def _uu(msg: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)


class ExtendedResources:
    """What PreFilter found: the pod's scalar requests and its extended
    resource claim (existing or in memory)."""

    __slots__ = ("pod_info", "scalar", "claim")

    def __init__(self, pod_info, scalar: dict[str, int], claim: dict):
        self.pod_info = pod_info
        self.scalar = scalar  # resource -> Value()
        self.claim = claim

    def for_node(self, s, node_info, state):
        """filterExtendedResources: (the claim for this node or None, status or None)."""
        claim = self.claim
        if ((claim.get("spec") or {}).get("devices") or {}).get("requests") is not None:
            return None, _uu("cannot schedule extended resource claim")
        delegated: dict[str, int] = {}
        for name in sorted(self.scalar):
            q = self.scalar[name]
            if not is_dra_extended_resource_name(name) or q == 0:
                continue
            node_alloc = node_info.allocatable.scalar.get(name)
            backed = state.extended_resource_class(name) is not None
            if backed and not node_alloc:
                delegated[name] = q
            elif node_alloc is None:
                return None, _uu("cannot fit resource")
        if s.num_user_claims == 0 and not delegated:
            return None, None
        if allocation_of(claim):
            return None, None
        node_claim = copy.deepcopy(claim)
        node_claim.setdefault("spec", {}).setdefault("devices", {})["requests"] = _device_requests(
            self.pod_info.pod, delegated, state)
        return node_claim, None


def pod_scalar_requests(pod: dict) -> dict[str, int]:
    """framework.NewResource(PodRequests(pod, default options)).ScalarResources."""
    reqs = pod_requests(pod, use_status=False)
    return {n: value_of(m) for n, m in reqs.items() if is_scalar_resource_name(n)}


def pre_filter_extended_resources(state, pod_info) -> ExtendedResources | None:
    """preFilterExtendedResources: None when no requested extended resource
    maps to a DeviceClass."""
    pod = pod_info.pod
    reqs = pod_requests(pod, use_status=False)
    if not any(m != 0 and is_dra_extended_resource_name(n) and state.extended_resource_class(n) is not None
               for n, m in reqs.items()):
        return None
    scalar = {n: value_of(m) for n, m in reqs.items() if is_scalar_resource_name(n)}
    claim = _find_extended_claim(state, pod)
    if claim is None:
        meta = pod["metadata"]
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "namespace": meta.get("namespace", ""),
                "name": SPECIAL_CLAIM_NAME,
                # Random upstream; derived from the pod so runs repeat.
                "uid": f"extended-resources-{meta.get('uid', '')}",
                "generateName": f"{meta['name']}-extended-resources-",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                                     "uid": meta.get("uid"), "controller": True}],
                "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
            },
            "spec": {},
        }
    return ExtendedResources(pod_info, scalar, claim)


def _find_extended_claim(state, pod: dict):
    """findExtendedResourceClaim: a claim annotated as the extended-resource
    claim and controlled by the pod (name and uid), in any namespace (the
    cache is listed whole)."""
    meta = pod["metadata"]
    for _key, claim in sorted(state.claims.items()):
        if (claim["metadata"].get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            continue
        for ref in claim["metadata"].get("ownerReferences") or ():
            if ref.get("name") == meta["name"] and ref.get("controller") and ref.get("uid") == meta.get("uid"):
                return claim
    return None


def _as_int64(value):
    """Quantity.AsInt64 of a container request: None unless an exact integer."""
    from ...api.quantity import parse_quantity

    fr = parse_quantity(value).as_fraction()
    if fr.denominator != 1 or not -(1 << 63) <= fr.numerator < (1 << 63):
        return None
    return fr.numerator


def _container_request(index: int, container: dict, resource: str, class_name: str, reusable):
    """createResourceRequestAndMappings: (device request or None)."""
    creqs = (container.get("resources") or {}).get("requests")
    if not creqs or resource not in creqs:
        return None
    crq = _as_int64(creqs[resource])
    if not crq:
        return None
    total = 0
    for r in reusable or ():
        if r is not None:
            total += r["exactly"]["count"]
            if total >= crq:
                return None
    keys = sorted(creqs)
    ridx = keys.index(resource)
    return {"name": f"container-{index}-request-{ridx}",
            "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": crq - total}}


def _device_requests(pod: dict, delegated: dict[str, int], state) -> list[dict]:
    """createRequestsAndMappings: the device requests, sorted by name."""
    spec = pod.get("spec") or {}
    inits = spec.get("initContainers") or []
    containers = list(inits) + list(spec.get("containers") or [])
    n_init = len(inits)
    long_lived, short_lived = [], []
    for i, c in enumerate(containers):
        if i < n_init and c.get("restartPolicy") != "Always":
            short_lived.append(i)
        else:
            long_lived.append(i)
    out = []
    for resource in sorted(delegated):
        cls = state.extended_resource_class(resource)
        if cls is None:
            continue
        name = cls["metadata"]["name"]
        long_reqs = [None] * len(containers)
        for i in long_lived:
            long_reqs[i] = _container_request(i, containers[i], resource, name, None)
        biggest = None
        for i in short_lived:
            r = _container_request(i, containers[i], resource, name, long_reqs[i:])
            if r is not None and (biggest is None or biggest["exactly"]["count"] < r["exactly"]["count"]):
                biggest = r
        if biggest is not None:
            out.append(biggest)
        out.extend(r for r in long_reqs if r is not None)
    out.sort(key=lambda r: r["name"])
    return out


# -- NodeResourcesFit / BalancedAllocation ------------------------------------------------
def delegated_to_dra(cluster, resource: str, node_allocatable: int | None) -> bool:
    """shouldDelegateResourceToDRA (the caller checks DRAExtendedResource):
    the node does not offer the resource itself and a DeviceClass backs it."""
    if node_allocatable:
        return False
    return dra_objects(cluster).extended_resource_class(resource) is not None


def any_backed_by_dra(cluster, resource_names) -> bool:
    """getDRAPreScoredParams: does any scored resource map to a DeviceClass?"""
    st = dra_objects(cluster)
    return any(is_dra_extended_resource_name(n) and st.extended_resource_class(n) is not None
               for n in resource_names)


def dra_resource_totals(snapshot, node_info, resource: str, consumable_capacity: bool) -> tuple[int, int]:
    """calculateDRAExtendedResourceAllocatableRequest: (devices of the
    resource's class reachable from the node, those already allocated), with
    DRAConsumableCapacity as given. Slices are not grouped into pools here
    (no generations, no binding or partition checks), as upstream counts
    them; a CEL error counts nothing. Kept per node until an allocation goes
    in flight."""
    st = dra_state(snapshot)
    key = ("dra_resource_totals", node_info.name, resource, consumable_capacity, st.revision)
    out = st.cache.get(key)
    if out is None:
        out = st.cache[key] = _dra_resource_totals(st, node_info, resource, consumable_capacity)
    return out


def _dra_resource_totals(st, node_info, resource: str, consumable: bool) -> tuple[int, int]:
    from .cel import compile as cel

    cls = st.extended_resource_class(resource)
    if cls is None:
        return 0, 0
    allocated = st.allocated_state(consumable)
    selectors = [s for s in (cls.get("spec") or {}).get("selectors") or () if s.get("cel") is not None]
    cel_devices = st.objects.cache.setdefault("dra_resource_totals/cel", {})
    total = used = 0
    node_name = node_info.name
    for sl in st.slices:
        spec = sl.get("spec") or {}
        if spec.get("perDeviceNodeSelection"):
            devices = [d for d in spec.get("devices") or ()
                       if d.get("allNodes") or (d.get("nodeName") and d.get("nodeName") == node_name)
                       or (d.get("nodeSelector") is not None
                           and node_matches(node_info, d.get("nodeName") or "", False, d.get("nodeSelector")))]
        else:
            sl_node, sl_all, sel = spec.get("nodeName") or "", bool(spec.get("allNodes")), spec.get("nodeSelector")
            if not sl_all and sl_node != node_name and sel is not None:
                if not node_matches(node_info, sl_node, sl_all, sel):
                    continue
            elif not sl_all and sl_node and sl_node != node_name:
                continue
            devices = spec.get("devices") or ()
        driver = spec.get("driver", "")
        pool = (spec.get("pool") or {}).get("name", "")
        for d in devices:
            if selectors:
                # The scorers' CEL input has no allowMultipleAllocations (false).
                cdev = cel_devices.get(id(d))
                if cdev is None:
                    cdev = cel_devices[id(d)] = cel.CelDevice(
                        driver, {k: v for k, v in d.items() if k != "allowMultipleAllocations"})
                ok = True
                for sel in selectors:
                    compiled = cel.compile_selector(sel["cel"].get("expression", ""), consumable)
                    if compiled.error is not None:
                        return 0, 0
                    try:
                        if not compiled.matches(cdev):
                            ok = False
                            break
                    except cel.CelRuntimeError:
                        return 0, 0
                if not ok:
                    continue
            total += 1
            if allocated.is_device_allocated((driver, pool, d.get("name", ""))):
                used += 1
    return total, used
