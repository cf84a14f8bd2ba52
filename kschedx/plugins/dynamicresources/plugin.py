"""The DynamicResources plugin of kube-scheduler v1.35 (default feature gates).

PreEnqueue: every claim of the pod must exist (generated ones recorded in
pod.status.resourceClaimStatuses, owned by the pod) and not be deleted.
PreFilter: claims already allocated restrict nodes through their allocation's
node selector; claims to allocate need their DeviceClasses and must not be in
the middle of another pod's allocation; the devices allocated to other claims
are gathered once here. Filter: runs the allocator for the node. Score: the
prioritized-list score. PostFilter: deallocation of an allocated claim that is
unavailable (kschedx never writes; it reports what upstream would do).
DRAExtendedResource is off in v1.35, so extended resources never map to
devices.
"""

from __future__ import annotations

from ...config.pluginargs import checked_plugin_args
from ...framework.interface import Plugin, PluginError, features_of
from ...framework.status import Code, Status
from ...api.labels import NodeSelector
from ..helper.normalize_score import default_normalize_score, default_normalize_values
from .allocator import FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE, Allocator, AllocatorError, FailedOnNode
from .claims import (
    ClaimError,
    DRAManager,
    allocation_of,
    check_is_for_pod,
    claim_key,
    claim_name_for,
    claim_uid,
    reserved_for,
)

NAME = "DynamicResources"
STATE_KEY = NAME


class _StateData:
    """Shared by pointer between extension points and clones, as upstream."""

    __slots__ = ("claims", "allocator", "available_on_nodes", "unavailable_claims", "node_allocations",
                 "explanations")

    def __init__(self):
        self.claims: list[dict] = []
        self.allocator: Allocator | None = None
        self.available_on_nodes: list = []
        self.unavailable_claims: set[int] = set()
        self.node_allocations: dict[str, list[dict]] = {}
        self.explanations: dict[str, list] = {}

    def clone(self):
        return self

    def to_allocate(self):
        return [(i, c) for i, c in enumerate(self.claims) if not allocation_of(c)]


def _uu(msg: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)


class DynamicResources(Plugin):
    name = NAME

    def __init__(self, handle, args=None):
        super().__init__(handle, checked_plugin_args(self.name, args, features_of(handle)))
        # Filter gives up on a node after filterTimeout upstream (0 = never);
        # kschedx always finishes the allocation, so it is only carried.
        self.filter_timeout = self.args["filterTimeout"]
        self._manager: DRAManager | None = None

    @property
    def manager(self) -> DRAManager:
        m = self._manager
        if m is None:
            m = self._manager = DRAManager(self.handle.cluster)
        return m

    def cluster_objects_changed(self, kinds: frozenset):
        """A fresh DRAManager while slices or allocations differ (its slice
        index, pools and allocated devices are derived from them); a claim's
        spec is read from the cluster each cycle and needs none."""
        if not kinds & {"ResourceSlice", "ResourceClaim"}:
            return None
        saved = self._manager
        self._manager = None
        if saved is not None:
            fresh = self.manager
            fresh.in_flight.update(saved.in_flight)
            # A slice's devices (and what CEL found on them) stay its own:
            # keyed by the slice object, which they keep alive.
            fresh.reuse_devices(saved)

        def restore():
            self._manager = saved

        return restore

    # -- claims of a pod ------------------------------------------------------------
    def _pod_claims(self, pod_info) -> list[dict]:
        """foreachPodResourceClaim; raises ClaimError."""
        pod = pod_info.pod
        out = []
        for pc in pod_info.spec.get("resourceClaims") or ():
            name, must_check_owner = claim_name_for(pod, pc)
            if name is None:
                continue
            claim = self.manager.get_claim(pod_info.namespace, name)
            if claim["metadata"].get("deletionTimestamp"):
                raise ClaimError(f'resourceclaim "{claim["metadata"]["name"]}" is being deleted')
            if must_check_owner:
                check_is_for_pod(pod, claim)
            out.append(claim)
        return out

    # -- extension points ---------------------------------------------------------------
    def pre_enqueue(self, pod_info):
        if not pod_info.spec.get("resourceClaims"):
            return None
        try:
            self._pod_claims(pod_info)
        except ClaimError as exc:
            return _uu(str(exc))
        return None

    def pre_filter(self, state, pod_info, nodes):
        s = _StateData()
        state.write(STATE_KEY, s)
        if not pod_info.spec.get("resourceClaims"):
            return None, Status(Code.SKIP)
        try:
            claims = self._pod_claims(pod_info)
        except ClaimError as exc:
            return None, _uu(str(exc))
        if not claims:
            return None, Status(Code.SKIP)

        manager = self.manager
        num_to_allocate = 0
        available = [None] * len(claims)
        for index, claim in enumerate(claims):
            alloc = allocation_of(claim)
            if alloc:
                ns = alloc.get("nodeSelector")
                if ns is not None:
                    available[index] = NodeSelector(ns)
                continue
            num_to_allocate += 1
            if manager.claim_has_pending_allocation(claim_uid(claim)):
                return None, _uu(f"resource claim {claim_key(claim)} is in the process of being allocated")
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
                if request.get("exactly") is not None:
                    st = self._validate_device_class(request["exactly"].get("deviceClassName") or "", request.get("name", ""))
                    if st is not None:
                        return None, st
                elif request.get("firstAvailable"):
                    for sub in request["firstAvailable"]:
                        st = self._validate_device_class(
                            sub.get("deviceClassName") or "", f"{request.get('name', '')}/{sub.get('name', '')}")
                        if st is not None:
                            return None, st
                else:
                    return None, _uu(f"resource claim {claim_key(claim)}, request {request.get('name', '')}: "
                                     "unknown request type")
        s.available_on_nodes = available
        if num_to_allocate > 0:
            # allocatedState, gathered once per cycle: every device held by an
            # allocated (or in-flight) claim of any pod.
            s.allocator = Allocator(manager, manager.allocated_devices())
        s.claims = claims
        return None, None

    def _validate_device_class(self, class_name: str, request_name: str):
        if not class_name:
            return Status.as_error(f"request {request_name}: unsupported request type")
        if class_name not in self.manager.classes:
            return _uu(f"request {request_name}: device class {class_name} does not exist")
        return None

    def filter(self, state, pod_info, node_info):
        s = state.read(STATE_KEY)
        if s is None:
            return Status.as_error("not found")
        if not s.claims:
            return None
        unavailable = []
        for index, claim in enumerate(s.claims):
            sel = s.available_on_nodes[index]
            if sel is not None and not sel.matches(node_info.labels, node_info.name):
                unavailable.append(index)
        details = None
        results = None
        if s.allocator is not None:
            to_allocate = [c for _, c in s.to_allocate()]
            run = s.allocator.new_run(node_info, to_allocate)
            try:
                results = run.allocate()
            except FailedOnNode as exc:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc),
                              details=self._details(s, run, None, unavailable))
            except AllocatorError as exc:
                return Status.as_error(str(exc))
            details = self._details(s, run, results, unavailable)
            if results is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims", details=details)
        if unavailable:
            s.unavailable_claims.update(unavailable)
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim not available on the node",
                          details=details or self._details(s, None, None, unavailable))
        if s.allocator is not None:
            s.node_allocations[node_info.name] = results
        return Status(Code.SUCCESS, details=details or self._details(s, None, None, unavailable))

    def _details(self, s: _StateData, run, results, unavailable) -> dict:
        allocated = []
        for index, claim in enumerate(s.claims):
            if allocation_of(claim):
                allocated.append({
                    "claim": claim_key(claim),
                    "allocated": True,
                    "availableOnNode": index not in unavailable,
                })
        d = {}
        if allocated:
            d["allocatedClaims"] = allocated
        if run is not None:
            d["claims"] = run.explain(results)
        return d

    def post_filter(self, state, pod_info, node_to_status):
        s = state.read(STATE_KEY)
        if s is None:
            raise PluginError("not found")
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE, "no new claims to deallocate")
        # Upstream picks one unavailable claim at random (map order): kschedx
        # takes the lowest index.
        for index in sorted(s.unavailable_claims):
            claim = s.claims[index]
            res = reserved_for(claim)
            if not res or (len(res) == 1 and res[0].get("uid") == pod_info.uid):
                # Upstream writes the deallocation to the API server here; the
                # status text is what it reports. kschedx only explains.
                return None, Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed",
                                    details={"deallocate": claim_key(claim)})
        return None, Status(Code.UNSCHEDULABLE, "still not schedulable")

    def score(self, state, pod_info, node_info) -> int:
        s = state.read(STATE_KEY)
        if s is None:
            raise PluginError(f'running Score plugins: plugin "{NAME}" failed with: not found')
        if not s.claims:
            return 0
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None:
            return 0
        return _compute_score(s.claims, allocations)

    def score_all(self, state, pod_info, nodes) -> list[int]:
        s = state.read(STATE_KEY)
        if s is not None and not s.claims:
            return [0] * len(nodes)  # what score gives every node
        return [self.score(state, pod_info, ni) for ni in nodes]

    def normalize_score(self, state, pod_info, scores):
        default_normalize_score(100, False, scores)
        return None

    def normalize_all(self, state, pod_info, nodes, scores: list[int]) -> list[int]:
        return default_normalize_values(100, False, scores)

    def score_details(self, state, pod_info, node_info):
        s = state.read(STATE_KEY)
        if s is None or not s.claims or node_info.name not in s.node_allocations:
            return None
        picked = []
        for res in s.node_allocations[node_info.name]:
            for r in res["devices"]["results"]:
                if "/" in r["request"]:
                    picked.append(r["request"])
        return {"subRequests": sorted(set(picked))} if picked else None

    # -- Reserve (simulate) -------------------------------------------------------------
    def reserve(self, state, pod_info, node_name: str):
        """Mark the allocations chosen for the node as in flight, as upstream's
        Reserve does: later pods see those devices as taken, and a pod sharing
        such a claim waits for it ("in the process of being allocated")."""
        s = state.read(STATE_KEY)
        if s is None or not s.claims or s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if allocations is None:
            return Status.as_error("claim allocation not found for node")
        for (_, claim), allocation in zip(s.to_allocate(), allocations):
            allocated = dict(claim)
            allocated["status"] = dict(claim.get("status") or {}, allocation=allocation)
            self.manager.signal_claim_pending_allocation(claim_uid(claim), allocated)
        return None


def _compute_score(claims: list[dict], allocations: list[dict]) -> int:
    """computeScore as upstream writes it: claim i is paired with allocation i
    over *all* claims (allocated ones included), so a pod with an allocated
    claim before one to allocate fails here exactly as it does upstream."""
    score = 0
    for i, claim in enumerate(claims):
        if i >= len(allocations):
            raise PluginError(f'running Score plugins: plugin "{NAME}" failed with: number of allocations '
                              f"{len(allocations)} is smaller than number of claims")
        picked = {r["request"] for r in allocations[i]["devices"]["results"] if len(r["request"].split("/")) == 2}
        for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            if req.get("exactly") is not None:
                continue
            for j, sub in enumerate(req.get("firstAvailable") or ()):
                if f"{req.get('name', '')}/{sub.get('name', '')}" in picked:
                    score += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - j
    return score
