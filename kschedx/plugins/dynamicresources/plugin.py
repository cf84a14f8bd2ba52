"""The DynamicResources plugin of kube-scheduler v1.35 and v1.36.

PreEnqueue: every claim of the pod must exist (generated ones recorded in
pod.status.resourceClaimStatuses, owned by the pod) and not be deleted.
PreFilter: claims already allocated restrict nodes through their allocation's
node selector; claims to allocate need their DeviceClasses and must not be in
the middle of another pod's allocation; the devices allocated to other claims
are gathered once here. With DRAExtendedResource, extended resources the pod
requests that a DeviceClass backs get a claim of their own (the pod's
existing one, else one in memory). Filter: allocated claims waiting for
binding conditions (DRADeviceBindingConditions) must not have failed or
timed out; the allocator runs for the node. Score: the prioritized-list
score. PostFilter: deallocation of an allocated claim that is unavailable
(kschedx never writes; it reports what upstream would do).

Everything the version or the feature gates change is read from the
framework's features value (`handle.features`): the allocator's features
(AllocatorFeatures), DRAExtendedResource, binding conditions, and the v1.36
changes no gate controls (Score pairs a claim with its own allocation, the
IsForPod texts, the allocator generation).
"""

from __future__ import annotations

from ...config import names
from ...config.pluginargs import checked_plugin_args, parse_duration
from ...framework.declaration import Declaration, reads
from ...framework.events import ActionType as A, DEVICE_CLASS, NODE, POD, RESOURCE_CLAIM, RESOURCE_SLICE, Register
from ...framework.interface import EventReach, Plugin, PluginError, features_of
from ...framework.status import Code, Status
from ...api.labels import NodeSelector
from ...state.dra import DRA_KINDS, time_nanos
from ..helper.normalize_score import default_normalize_score, default_normalize_values
from .allocator import (FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE, Allocator, AllocatorError, AllocatorFeatures,
                        FailedOnNode)
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
from .extended import ExtendedResources, is_special_claim, pre_filter_extended_resources

NAME = names.DynamicResources
STATE_KEY = NAME
# configv1.DynamicResourcesBindingTimeoutDefault, used when args leave it unset.
BINDING_TIMEOUT_DEFAULT_NS = 600 * 1_000_000_000


class _StateData:
    """Shared by pointer between extension points and clones, as upstream."""

    __slots__ = ("claims", "num_user_claims", "extended", "allocator", "available_on_nodes", "unavailable_claims",
                 "node_allocations", "node_extended_claims", "explanations", "binding", "poolless",
                 "poolless_status")

    def __init__(self):
        self.claims: list[dict] = []
        self.num_user_claims = 0
        self.extended: ExtendedResources | None = None
        self.allocator: Allocator | None = None
        self.available_on_nodes: list = []
        self.unavailable_claims: set[int] = set()
        self.node_allocations: dict[str, list[dict]] = {}
        self.node_extended_claims: dict[str, dict] = {}
        self.explanations: dict[str, list] = {}
        self.binding: dict[int, str] = {}
        # What the allocator found on a node that reaches no resource pool
        # (most nodes of a cluster with a few device nodes): nothing of the
        # node is read then, so every such node has the same outcome.
        self.poolless = None
        self.poolless_status = None

    def clone(self):
        return self

    def to_allocate(self):
        return [(i, c) for i, c in enumerate(self.claims) if not allocation_of(c)]

    def extended_claim(self):
        return self.claims[self.num_user_claims] if len(self.claims) > self.num_user_claims else None


def _uu(msg: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg)


def allocator_features(fts) -> AllocatorFeatures:
    """dynamicresources.AllocatorFeatures, plus the version's allocator
    behaviour."""
    return AllocatorFeatures(
        admin_access=fts.enable_dra_admin_access,
        prioritized_list=fts.enable_dra_prioritized_list,
        partitionable_devices=fts.enable_dra_partitionable_devices,
        device_taints=fts.enable_dra_device_taints,
        device_binding_and_status=fts.enable_dra_device_binding_conditions
        and fts.enable_dra_resource_claim_device_status,
        consumable_capacity=fts.enable_dra_consumable_capacity,
        subrequest_fixes=fts.dra_subrequest_fixes,
        sorted_pools=fts.dra_allocator_sorted_pools,
        rollback=fts.dra_allocator_rollback,
        distinct_all_devices=fts.dra_distinct_attribute_over_all_devices,
        counters_by_pool_id=fts.dra_counters_by_pool_id,
        claim_limit_per_request=fts.dra_claim_limit_per_request,
        cel_errors_name_device=fts.dra_cel_errors_name_device,
        all_mode_static_capacity=fts.dra_all_mode_static_capacity,
        capacity_in_step_format=fts.dra_capacity_in_step_format,
        compatibility_group_slices_ignored=fts.dra_compatibility_group_slices_ignored,
        derived_attributes_refused=fts.dra_derived_attributes_refused,
    )


class DynamicResources(Plugin):
    name = NAME

    def __init__(self, handle, args=None):
        fts = features_of(handle)
        super().__init__(handle, checked_plugin_args(self.name, args, fts))
        self.fts = fts
        self.enabled = fts.enable_dynamic_resource_allocation
        self.features = allocator_features(fts)
        self.binding_status = fts.enable_dra_device_binding_conditions and fts.enable_dra_resource_claim_device_status
        # Filter gives up on a node after filterTimeout upstream (0 = never);
        # kschedx always finishes the allocation, so it is only carried.
        self.filter_timeout = self.args.get("filterTimeout")
        bt = self.args.get("bindingTimeout")
        self.binding_timeout_ns = (parse_duration(bt) if isinstance(bt, str) else int(bt)) if bt is not None \
            else BINDING_TIMEOUT_DEFAULT_NS
        self._manager: DRAManager | None = None

    @property
    def manager(self) -> DRAManager:
        m = self._manager
        if m is None:
            m = self._manager = DRAManager(self.handle.snapshot, self.features,
                                           taint_rules=self.fts.enable_dra_device_taint_rules,
                                           rules_need_selector=self.fts.device_taint_rule_needs_selector)
        return m

    def cluster_objects_changed(self, kinds: frozenset):
        """A fresh DRAManager while DRA objects differ (its pools are derived
        from the slices; the shared DRA state is renewed by the caller,
        state/dra.objects_replaced); a claim's spec is read from the cluster
        each cycle and needs none."""
        if not kinds & DRA_KINDS:
            return None
        saved = self._manager
        self._manager = None
        if saved is not None:
            # A slice's devices (and what CEL found on them) stay its own:
            # keyed by the slice object, which they keep alive.
            self.manager.reuse_devices(saved)

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
                check_is_for_pod(pod, claim, self.fts.dra_is_for_pod_texts_split)
            out.append(claim)
        return out

    # -- extension points ---------------------------------------------------------------
    def pre_enqueue(self, pod_info):
        if not self.enabled or not pod_info.spec.get("resourceClaims"):
            return None
        try:
            self._pod_claims(pod_info)
        except ClaimError as exc:
            return _uu(str(exc))
        return None

    def pre_filter(self, state, pod_info, nodes):
        if not self.enabled:
            return None, Status(Code.SKIP)
        s = _StateData()
        state.write(STATE_KEY, s)
        if pod_info.spec.get("resourceClaims"):
            try:
                claims = self._pod_claims(pod_info)
            except ClaimError as exc:
                return None, _uu(str(exc))
        else:
            claims = []
        manager = self.manager
        extended_claim = None
        if self.fts.enable_dra_extended_resource:
            s.extended = pre_filter_extended_resources(manager.state, pod_info)
            if s.extended is not None:
                extended_claim = s.extended.claim
        s.num_user_claims = len(claims)
        if extended_claim is not None:
            claims = claims + [extended_claim]
        if not claims:
            return None, Status(Code.SKIP)

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
            if claim is extended_claim:
                continue
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
                if request.get("exactly") is not None:
                    st = self._validate_device_class(request["exactly"].get("deviceClassName") or "", request.get("name", ""))
                    if st is not None:
                        return None, st
                elif request.get("firstAvailable"):
                    if not self.fts.enable_dra_prioritized_list:
                        return None, _uu(f"resource claim {claim_key(claim)}, request {request.get('name', '')}: "
                                         "has subrequests, but the DRAPrioritizedList feature is disabled")
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
            s.allocator = Allocator(manager, manager.allocated_state(), self.features)
        s.claims = claims
        return None, None

    def _validate_device_class(self, class_name: str, request_name: str):
        if not class_name:
            return Status.as_error(f"request {request_name}: unsupported request type")
        if class_name not in self.manager.classes:
            return _uu(f"request {request_name}: device class {class_name} does not exist")
        return None

    # -- binding conditions -------------------------------------------------------------
    def _binding_problem(self, claim: dict) -> str | None:
        """isClaimReadyForBinding / isClaimTimeout: why an allocated claim
        cannot be used now (None: it can)."""
        alloc = allocation_of(claim)
        ready = True
        for r in (alloc.get("devices") or {}).get("results") or ():
            if not r.get("bindingConditions"):
                continue
            status = _device_status(claim, r)
            if status is None:
                ready = False
                break
            conditions = {c.get("type"): c for c in status.get("conditions") or ()}
            for name in r.get("bindingFailureConditions") or ():
                c = conditions.get(name)
                if c is not None and c.get("status") == "True":
                    return (f"device binding failed: claim={claim['metadata']['name']}, reason={c.get('reason', '')}, "
                            f"message={_go_quote(c.get('message', ''))}")
            if any((conditions.get(name) or {}).get("status") != "True" for name in r.get("bindingConditions")):
                ready = False
                break
        if ready:
            return None
        started = time_nanos(alloc.get("allocationTimestamp"))
        now = self.handle.cluster.read_at
        if started is None or now is None:
            return None
        for r in (alloc.get("devices") or {}).get("results") or ():
            if r.get("bindingConditions") is None:
                continue
            if started + self.binding_timeout_ns < int(now * 1_000_000_000):
                return "binding conditions not met within the binding timeout"
        return None

    def filter(self, state, pod_info, node_info):
        if not self.enabled:
            return None
        s = state.read(STATE_KEY)
        if s is None:
            return Status.as_error("not found")
        if not s.claims:
            return None
        node_ext_claim = None
        if s.extended is not None:
            node_ext_claim, st = s.extended.for_node(s, node_info, self.manager.state)
            if st is not None:
                return st
            if node_ext_claim is None and s.num_user_claims == 0:
                return None
        unavailable = []
        for index, claim in enumerate(s.claims):
            sel = s.available_on_nodes[index]
            if sel is not None and not sel.matches(node_info.labels, node_info.name):
                unavailable.append(index)
                continue
            allocation = allocation_of(claim)
            if self.fts.dra_optional_node_operations_checked and _skips_node_operations(allocation) and \
                    "DRAOptionalNodeOperations" not in ((node_info.node.get("status") or {}).get("declaredFeatures")
                                                         or ()):
                # An allocation that skips optional node operations needs a
                # node declaring that it can (1.37, whatever the gate).
                unavailable.append(index)
                continue
            if not allocation:
                continue
            if self.binding_status:
                problem = self._binding_problem(claim)
                if problem is not None:
                    s.binding[index] = problem
                    unavailable.append(index)
        details = None
        results = None
        if s.allocator is not None:
            poolless = node_ext_claim is None and not s.allocator.pool_index.pools_for_node(node_info)
            if poolless and not unavailable and s.poolless_status is not None:
                return s.poolless_status
            outcome = s.poolless if poolless else None
            if outcome is None:
                ext = s.extended_claim()
                to_allocate = [node_ext_claim if (c is ext and node_ext_claim is not None) else c
                               for _, c in s.to_allocate()]
                outcome = self._allocate(s.allocator.new_run(node_info, to_allocate))
                if poolless and outcome[1] is None:
                    s.poolless = outcome
            failure, results, explained = outcome
            details = self._details(s, explained, unavailable) if explained is not None else None
            st = None
            if failure is not None:
                st = Status.as_error(failure) if explained is None else \
                    Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, failure, details=details)
            elif results is None:
                st = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot allocate all claims", details=details)
            if st is not None:
                if poolless and not unavailable:
                    # Nothing of the node in it: one Status for every such
                    # node, which the result then writes once.
                    s.poolless_status = st
                return st
        if unavailable:
            s.unavailable_claims.update(unavailable)
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim not available on the node",
                          details=details or self._details(s, None, unavailable))
        if s.allocator is not None:
            s.node_allocations[node_info.name] = results
            if node_ext_claim is not None:
                s.node_extended_claims[node_info.name] = node_ext_claim
        return Status(Code.SUCCESS, details=details or self._details(s, None, unavailable))

    @staticmethod
    def _allocate(run) -> tuple:
        """(failure message or None, results or None, the run's explanation):
        FailedOnNode is a failure with an explanation, AllocatorError (an
        error status) one without."""
        try:
            results = run.allocate()
        except FailedOnNode as exc:
            return str(exc), None, run.explain(None)
        except AllocatorError as exc:
            return str(exc), None, None
        return None, results, run.explain(results)

    def _details(self, s: _StateData, explained, unavailable) -> dict:
        allocated = []
        for index, claim in enumerate(s.claims):
            if allocation_of(claim):
                entry = {
                    "claim": claim_key(claim),
                    "allocated": True,
                    "availableOnNode": index not in unavailable,
                }
                if index in s.binding:
                    entry["binding"] = s.binding[index]
                allocated.append(entry)
        d = {}
        if allocated:
            d["allocatedClaims"] = allocated
        if explained is not None:
            d["claims"] = explained
        return d

    def _post_filter_status(self, reason: str) -> Status:
        """Nothing freed: 1.37 gives no reason (the message then says nothing)."""
        if self.fts.dra_post_filter_without_reason:
            return Status(Code.UNSCHEDULABLE)
        return Status(Code.UNSCHEDULABLE, reason)

    def post_filter(self, state, pod_info, node_to_status):
        if not self.enabled:
            return None, self._post_filter_status("plugin disabled")
        s = state.read(STATE_KEY)
        if s is None:
            raise PluginError("not found")
        if not s.claims:
            return None, self._post_filter_status("no new claims to deallocate")
        ext = s.extended_claim()
        # Upstream picks unavailable claims in map order: kschedx by index.
        for index in sorted(s.unavailable_claims):
            claim = s.claims[index]
            if claim is ext:
                if not is_special_claim(ext):
                    break
                continue
            res = reserved_for(claim)
            if not res or (len(res) == 1 and res[0].get("uid") == pod_info.uid):
                # Upstream writes the deallocation to the API server here; the
                # status text is what it reports. kschedx only explains.
                return None, Status(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed",
                                    details={"deallocate": claim_key(claim)})
        if ext is not None and not is_special_claim(ext):
            return None, Status(Code.UNSCHEDULABLE, "deletion of ResourceClaim completed",
                                details={"delete": claim_key(ext)})
        return None, self._post_filter_status("still not schedulable")

    def event_reach(self, state, pod_info):
        """Nothing for a pod without claims (its PreFilter skipped: the score
        is 0 everywhere); anything otherwise."""
        return EventReach() if self.name in state.skip_filter_plugins else None

    def score(self, state, pod_info, node_info) -> int:
        if not self.enabled:
            return 0
        if self.fts.dra_score_uses_claim_allocation and not self.fts.enable_dra_prioritized_list:
            return 0
        s = state.read(STATE_KEY)
        if s is None:
            # The framework names the extension point and the plugin.
            raise PluginError("not found")
        if not s.claims:
            return 0
        allocations = s.node_allocations.get(node_info.name)
        if allocations is None:
            return 0
        return _compute_score(s.claims, allocations, self.fts.dra_score_uses_claim_allocation)

    def score_all(self, state, pod_info, nodes) -> list[int]:
        s = state.read(STATE_KEY)
        if s is not None and not s.claims:
            return [0] * len(nodes)  # what score gives every node
        return [self.score(state, pod_info, ni) for ni in nodes]

    def normalize_score(self, state, pod_info, scores):
        if self.enabled:
            default_normalize_score(100, False, scores)
        return None

    def normalize_all(self, state, pod_info, nodes, scores: list[int]) -> list[int]:
        if not self.enabled:
            return scores
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
        if not self.enabled:
            return None
        s = state.read(STATE_KEY)
        if s is None or not s.claims or s.allocator is None:
            return None
        ext = s.extended_claim()
        to_allocate = s.to_allocate()
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            if all(c is ext for _, c in to_allocate):
                return None
            return Status.as_error("claim allocation not found for node")
        for (_, claim), allocation in zip(to_allocate, allocations):
            if claim is ext:
                claim = s.node_extended_claims.get(node_name, claim)
            allocated = dict(claim)
            allocated["status"] = dict(claim.get("status") or {}, allocation=allocation)
            self.manager.signal_claim_pending_allocation(claim_uid(claim), allocated)
        return None


def _device_status(claim: dict, result: dict):
    """getAllocatedDeviceStatus."""
    for d in (claim.get("status") or {}).get("devices") or ():
        if d.get("device") == result.get("device") and d.get("driver") == result.get("driver") \
                and d.get("pool") == result.get("pool"):
            return d
    return None


def _go_quote(s: str) -> str:
    import json

    return json.dumps(s, ensure_ascii=False)


def _skips_node_operations(allocation) -> bool:
    """allocationResultRequiresDRAOptionalNodeOperations."""
    for r in ((allocation or {}).get("devices") or {}).get("results") or ():
        if r.get("skipNodeOperations"):
            return True
    return False


def _compute_score(claims: list[dict], allocations: list[dict], own_allocation: bool) -> int:
    """computeScore. v1.36 (`own_allocation`) takes an allocated claim's own
    allocation and gives the Filter results to the others in order; v1.35
    pairs claim i with result i over *all* claims, so a pod with an
    allocated claim before one to allocate fails here exactly as it does
    upstream."""
    score = 0
    unallocated = 0
    for i, claim in enumerate(claims):
        if own_allocation:
            allocation = allocation_of(claim)
            if not allocation:
                if unallocated >= len(allocations):
                    raise PluginError(f"number of allocations {len(allocations)} is smaller than number of "
                                      "claims needing allocation")
                allocation = allocations[unallocated]
                unallocated += 1
        else:
            if i >= len(allocations):
                raise PluginError(f"number of allocations {len(allocations)} is smaller than number of claims")
            allocation = allocations[i]
        picked = {r["request"] for r in (allocation.get("devices") or {}).get("results") or ()
                  if len(r["request"].split("/")) == 2}
        for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
            if req.get("exactly") is not None:
                continue
            for j, sub in enumerate(req.get("firstAvailable") or ()):
                if f"{req.get('name', '')}/{sub.get('name', '')}" in picked:
                    score += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - j
    return score


_DRA = "DynamicResourceAllocation"
DECLARATION = Declaration(
    name=names.DynamicResources,
    factory=DynamicResources,
    points=frozenset({"preEnqueue", "preFilter", "filter", "postFilter", "reserve", "preBind", "score"}),
    # 1.37's PodGroupPostFilter frees pod groups' claims (never run by kschedx).
    points_from=(("1.37", frozenset({"podGroupPostFilter"})),),
    reads=(reads(RESOURCE_SLICE, DEVICE_CLASS, RESOURCE_CLAIM, "ResourceClaimTemplate", pods=("claims", "extended")),
           reads("DeviceTaintRule", pods=("claims", "extended"), gate="DRADeviceTaintRules")),
    events=(Register(NODE, A.Add | A.UpdateNodeLabel | A.UpdateNodeAllocatable, gate=_DRA),
            Register(RESOURCE_CLAIM, A.Add | A.Update, gate=_DRA),
            Register(POD, A.UpdatePodGeneratedResourceClaim, gate=_DRA),
            Register(DEVICE_CLASS, A.Add | A.Update, gate=_DRA),
            Register(RESOURCE_SLICE, A.Add | A.Update, gate=_DRA)),
    # Its args' defaulting reads DRASchedulerFilterTimeout and the binding
    # conditions' gates (config/pluginargs.py).
    gates=frozenset({_DRA, "DRAAdminAccess", "DRAConsumableCapacity", "DRADeviceBindingConditions", "DRADeviceTaintRules",
                     "DRADeviceTaints", "DRAExtendedResource", "DRAPartitionableDevices", "DRAPrioritizedList",
                     "DRAResourceClaimDeviceStatus", "DRASchedulerFilterTimeout"}),
    details="devices",
)
