"""The structured-parameters allocator (k8s.io/dynamic-resource-allocation/
structured), as kube-scheduler v1.35 and v1.36 run it.

Upstream has three implementations and picks the first whose supported
features cover the enabled ones: v1.35 "incubating" (admin access,
prioritized list, partitionable devices, device taints) or "experimental"
(also binding conditions and consumable capacity); v1.36 "stable" (the
former incubating, with two subrequest fixes) or "incubating" (the former
experimental with those fixes, pools and slices in name order, a search over
combinations instead of permutations, allocations pinned to the node they
were made for). This module is one allocator: `AllocatorFeatures` carries
the features the scheduler enables (structured.Features) and which code
version's behaviour (`sorted_pools`: v1.36's allocators, `subrequest_fixes`,
`rollback`), and the differences between the four follow from them. The allocator never reads a gate.

The algorithm is upstream's: an exhaustive depth-first search that takes the
first complete solution, claim after claim, request after request, device
after device in pool order. Where upstream iterates a Go map (v1.35's and
v1.36 stable's pools of a node) kschedx uses v1.36's order (driver, then pool
name); the verdict is the same, only which of several equally valid devices
gets picked may differ. Share IDs, random upstream, are derived from the
allocation here so that runs repeat.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ...api.quantity import Quantity, parse_quantity
from ...state.dra import AllocatedState, collection_insert, collection_remove
from .pools import Pool, SliceDevice, node_matches

ALLOCATION_RESULTS_MAX_SIZE = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
EXACT_COUNT = "ExactCount"
ALL = "All"

_CEL = None


def _cel():
    """The CEL selectors (cel/compile.py), imported on first use (celpy costs ~150 ms to
    import) and then kept: selectors are evaluated per device on every node."""
    global _CEL
    if _CEL is None:
        from .cel import compile as cel

        _CEL = cel
    return _CEL


def claim_key(claim: dict) -> str:
    meta = claim["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


@dataclass(frozen=True)
class AllocatorFeatures:
    """structured.Features as the scheduler sets them, and what the version's
    allocators do (features.behaviour): `sorted_pools` (v1.36's stable and
    incubating: pools and slices in name order, combinations, allocations
    pinned to their node), `subrequest_fixes`, `rollback` (v1.36.3: a
    refused device gives back what it took)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    device_binding_and_status: bool = False
    consumable_capacity: bool = False
    subrequest_fixes: bool = False
    sorted_pools: bool = False
    rollback: bool = False
    # v1.37's allocators (features.behaviour names each): a distinctAttribute
    # constraint over every device; counters per pool of a driver; the claim
    # limit checked per request; CEL runtime errors naming the device; "All"
    # devices chosen by their static capacity; a capacity rounded up to a
    # step written in the step's format; slices using counter compatibility
    # groups ignored; requests with derived attributes refused.
    distinct_all_devices: bool = False
    counters_by_pool_id: bool = False
    claim_limit_per_request: bool = False
    cel_errors_name_device: bool = False
    all_mode_static_capacity: bool = False
    capacity_in_step_format: bool = False
    compatibility_group_slices_ignored: bool = False
    derived_attributes_refused: bool = False

    @property
    def extended(self) -> bool:
        """Binding conditions or consumable capacity enabled: upstream picks
        its newer allocator (v1.35 experimental, v1.36 incubating)."""
        return self.device_binding_and_status or self.consumable_capacity

    @property
    def variant(self) -> str:
        """The upstream allocator these features select."""
        if self.sorted_pools:
            return "incubating" if self.extended else "stable"
        return "experimental" if self.extended else "incubating"

    @property
    def combinations(self) -> bool:
        """v1.36 incubating: the next device of a request is searched after
        the previous one (combinations), the node selector of an allocation
        names the node it was made for (and devices that bind to a node pin
        it), and counters count devices shared or with capacity in use."""
        return self.sorted_pools and self.extended

    @property
    def binding_order(self) -> str:
        if not self.extended:
            return ""
        return "pools" if self.sorted_pools else "slices"


class AllocatorError(Exception):
    """A fatal problem with a claim or class: the scheduling attempt errors out."""


class FailedOnNode(Exception):
    """ErrFailedAllocationOnNode: this node fails with the message as reason."""


class _MaxSizeExceeded(Exception):
    pass


class RequestAccessor:
    """A request (`exactly`) or a subrequest (`firstAvailable[i]`), defaulted
    as the API server stores it."""

    __slots__ = ("name", "device_class_name", "allocation_mode", "count", "admin_access", "has_admin_access",
                 "selectors", "tolerations", "is_sub", "capacity", "derived_attributes")

    def __init__(self, spec: dict, name: str, is_sub: bool):
        self.name = name
        self.is_sub = is_sub
        self.device_class_name = spec.get("deviceClassName") or ""
        mode = spec.get("allocationMode") or EXACT_COUNT
        self.allocation_mode = mode
        count = spec.get("count")
        if mode == EXACT_COUNT and not count:
            count = 1
        self.count = int(count or 0)
        admin = None if is_sub else spec.get("adminAccess")
        self.has_admin_access = admin is not None
        self.admin_access = bool(admin)
        self.selectors = spec.get("selectors") or []
        self.tolerations = spec.get("tolerations") or []
        self.derived_attributes = spec.get("derivedAttributes") or []
        cap = spec.get("capacity")
        # capacity.requests: name -> Quantity (None: no capacity requirements)
        self.capacity = None
        if cap is not None:
            self.capacity = {n: parse_quantity(v) for n, v in (cap.get("requests") or {}).items()}


class RequestData:
    __slots__ = ("request", "parent", "device_class", "num_devices", "selected_sub_request_index", "all_devices")

    def __init__(self, request: RequestAccessor, parent: RequestAccessor | None):
        self.request = request
        self.parent = parent
        self.device_class = None
        self.num_devices = 0
        self.selected_sub_request_index = 0
        self.all_devices: list[tuple[SliceDevice, Pool]] = []

    def request_name(self) -> str:
        if self.parent is not None:
            return f"{self.parent.name}/{self.request.name}"
        return self.request.name


def _requests(claim: dict) -> list:
    return ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []


def _constraints(claim: dict) -> list:
    return ((claim.get("spec") or {}).get("devices") or {}).get("constraints") or []


def lookup_attribute(device: dict, driver: str, attribute_name: str):
    attrs = device.get("attributes") or {}
    if attribute_name in attrs:
        return attrs[attribute_name]
    i = attribute_name.find("/")
    if i < 0 or attribute_name[:i] != driver:
        return None
    return attrs.get(attribute_name[i + 1:])


_KINDS = ("string", "int", "bool", "version")


def _kind(attr: dict):
    # The switch order of the constraints: string, int, bool, version.
    for kind in _KINDS:
        if attr.get(kind) is not None:
            return kind
    return None


class _Constraint:
    __slots__ = ("request_names", "attribute_name", "num_devices")

    def __init__(self, request_names, attribute_name: str):
        self.request_names = set(request_names or ())
        self.attribute_name = attribute_name
        self.num_devices = 0

    def _applies(self, request_name: str, sub_request_name: str) -> bool:
        if not self.request_names:
            return True
        if not sub_request_name:
            return request_name in self.request_names
        return request_name in self.request_names or f"{request_name}/{sub_request_name}" in self.request_names


class MatchAttributeConstraint(_Constraint):
    """All devices of the named requests share one value of the attribute."""

    __slots__ = ("attribute",)
    kind = "matchAttribute"

    def __init__(self, request_names, attribute_name: str):
        super().__init__(request_names, attribute_name)
        self.attribute = None

    def add(self, request_name: str, sub_request_name: str, device: SliceDevice) -> bool:
        if not self._applies(request_name, sub_request_name):
            return True
        attr = lookup_attribute(device.device, device.id[0], self.attribute_name)
        if attr is None:
            return False
        if self.num_devices == 0:
            self.attribute = attr
            self.num_devices = 1
            return True
        kind = _kind(attr)
        if kind is None or self.attribute.get(kind) is None or attr[kind] != self.attribute[kind]:
            return False
        self.num_devices += 1
        return True

    def remove(self, request_name: str, sub_request_name: str, device: SliceDevice) -> None:
        if not self._applies(request_name, sub_request_name):
            return
        self.num_devices -= 1


class DistinctAttributeConstraint(_Constraint):
    """Devices of the named requests have pairwise different values. Before
    v1.37 one value is remembered per request name (a later device of the
    same request replaces it, removing one forgets it); from v1.37
    (`all_devices`) every added device's value is kept, the last removed
    first."""

    __slots__ = ("attributes", "all_devices", "values")
    kind = "distinctAttribute"

    def __init__(self, request_names, attribute_name: str, all_devices: bool = False):
        super().__init__(request_names, attribute_name)
        self.attributes: dict[str, dict] = {}
        self.all_devices = all_devices
        self.values: list[dict] = []

    def add(self, request_name: str, sub_request_name: str, device: SliceDevice) -> bool:
        if not self._applies(request_name, sub_request_name):
            return True
        attr = lookup_attribute(device.device, device.id[0], self.attribute_name)
        if attr is None:
            return False
        if self.all_devices:
            kind = _kind(attr)
            for other in self.values:
                if kind is None or (other.get(kind) is not None and other[kind] == attr[kind]):
                    return False
            self.values.append(attr)
            self.num_devices += 1
            return True
        if self.num_devices == 0:
            self.attributes[request_name] = attr
            self.num_devices = 1
            return True
        kind = _kind(attr)
        for other in self.attributes.values():
            if kind is None or (other.get(kind) is not None and other[kind] == attr[kind]):
                return False
        self.attributes[request_name] = attr
        self.num_devices += 1
        return True

    def remove(self, request_name: str, sub_request_name: str, device: SliceDevice) -> None:
        if not self._applies(request_name, sub_request_name):
            return
        if self.all_devices:
            self.values.pop()
        else:
            self.attributes.pop(request_name, None)
        self.num_devices -= 1


# -- consumable capacity (consumable_capacity.go) ------------------------------------------
def _go_equal(a: Quantity, b: Quantity) -> bool:
    """Go's == on two resource.Quantity structs: the same int64 amount and
    scale, format and cached text; a value held as inf.Dec is a pointer and
    equals nothing after a DeepCopy."""
    return (not a._dec and not b._dec and a._u == b._u and a._e == b._e and a._fmt == b._fmt
            and a._s == b._s)


def _round_up_range(requested: Quantity, valid_range: dict, step_format: bool = False) -> Quantity:
    mn = parse_quantity(valid_range["min"])
    if requested.cmp(mn) < 0:
        return mn
    if valid_range.get("step") is None:
        return requested
    step = parse_quantity(valid_range["step"]).value()
    lo = mn.value()
    added = requested.value() - lo
    n = _go_quo(added, step)
    if _go_rem(added, step) != 0:
        n += 1
    # v1.37 writes the result in the step's format (before: BinarySI).
    fmt = parse_quantity(valid_range["step"]).format if step_format else "BinarySI"
    return Quantity.from_int(_wrap64(lo + step * n), fmt)


def _go_quo(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _go_rem(a: int, b: int) -> int:
    return a - b * _go_quo(a, b)


def _wrap64(v: int) -> int:
    return ((v + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def consumed_capacity(requested: Quantity | None, value: Quantity, policy: dict | None,
                      step_format: bool = False) -> Quantity:
    """calculateConsumedCapacity: what one allocation of a capacity takes."""
    if requested is None:
        if policy is not None and policy.get("default") is not None:
            return parse_quantity(policy["default"])
        return value
    if policy is None:
        return requested
    vr = policy.get("validRange")
    if vr is not None and vr.get("min") is not None:
        return _round_up_range(requested, vr, step_format)
    if policy.get("validValues") is not None:
        for v in policy["validValues"]:
            q = parse_quantity(v)
            if requested.cmp(q) <= 0:
                return q
        return requested
    return requested


def violates_policy(v: Quantity, policy: dict | None) -> bool:
    if policy is None:
        return False
    if policy.get("default") is not None and _go_equal(v, parse_quantity(policy["default"])):
        return False
    vr = policy.get("validRange")
    if vr is not None:
        if vr.get("max") is not None and v.cmp(parse_quantity(vr["max"])) > 0:
            return True
        if vr.get("step") is not None:
            step = parse_quantity(vr["step"]).value()
            lo = parse_quantity(vr["min"]).value() if vr.get("min") is not None else 0
            if _go_rem(v.value() - lo, step) != 0:
                return True
        return False
    values = policy.get("validValues") or ()
    if values:
        return not any(v.cmp(parse_quantity(x)) == 0 for x in values)
    return False


def capacity_check(request: RequestAccessor, device: SliceDevice, allocated: dict | None, allocating: dict | None):
    """CmpRequestOverCapacity: (ok, reason). reason explains a refusal."""
    caps = device.capacity
    if request.capacity:
        for name in request.capacity:
            if name not in caps:
                return False, "some requested capacity has not been defined"
    total = dict(allocated) if allocated else {}
    for name, (value, policy) in caps.items():
        req = request.capacity.get(name) if request.capacity else None
        c = consumed_capacity(req, value, policy)
        if violates_policy(c, policy):
            return False, f"capacity {name}: {c} is not allowed by the device's request policy"
        cur = total.get(name)
        cur = c if cur is None else cur + c
        if allocating and name in allocating:
            cur = cur + allocating[name]
        total[name] = cur
        if cur.cmp(value) > 0:
            return False, f"capacity {name}: {cur} would be in use, the device has {value}"
    return True, None


def consumed_from_request(request: RequestAccessor, device: SliceDevice, step_format: bool = False) -> dict:
    """GetConsumedCapacityFromRequest."""
    out = {}
    for name, (value, policy) in device.capacity.items():
        req = request.capacity.get(name) if request.capacity else None
        out[name] = consumed_capacity(req, value, policy, step_format)
    return out


def enhance_runtime_error(text: str) -> str:
    """cel.EnhanceRuntimeError (v1.37): a hint on "no such key" errors."""
    if "no such key:" in text:
        return (text + ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
                "with has() for optional fields")
    return text


def taint_tolerated(taint: dict, tolerations) -> bool:
    """resourceclaim.ToleratesTaint for any of the tolerations."""
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("key") and t.get("key") != taint.get("key"):
            continue
        op = t.get("operator") or ""
        if op in ("", "Equal"):
            if (t.get("value") or "") == (taint.get("value") or ""):
                return True
        elif op == "Exists":
            return True
    return False


def untolerated_taint(device: SliceDevice, request: RequestAccessor):
    """The first NoSchedule/NoExecute taint the request does not tolerate, or None."""
    for taint in device.taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not taint_tolerated(taint, request.tolerations):
            return taint
    return None


class Allocator:
    """Set up once per pod at PreFilter (upstream NewAllocator); allocate()
    per node at Filter. `allocated`: the AllocatedState (a dict device id ->
    claim key is read as dedicated devices)."""

    def __init__(self, manager, allocated, features: AllocatorFeatures | None = None):
        self.manager = manager
        self.features = features if features is not None else manager.features
        if isinstance(allocated, dict):
            state = AllocatedState()
            state.dedicated = dict(allocated)
            allocated = state
        self.allocated: AllocatedState = allocated
        self.classes = manager.classes
        self.pool_index = manager.pool_index(self.features)
        # availableCounters: per pool *name* (as upstream keys it before
        # v1.37; by driver and pool from v1.37), computed once per allocator
        # from the devices already allocated.
        self.available_counters: dict[str, dict] = {}
        self._share_seq = 0

    def new_run(self, node_info, claims: list[dict]) -> "_Run":
        """One Allocate call: run.allocate() gives the allocation results (one
        per claim) or None when the claims do not fit on the node, and raises
        AllocatorError or FailedOnNode; run.explain() then says why."""
        return _Run(self, node_info, claims)

    def allocate(self, node_info, claims: list[dict]):
        return self.new_run(node_info, claims).allocate()

    def counted_as_allocated(self, device_id) -> bool:
        if self.features.combinations:
            return self.allocated.is_device_allocated(device_id)
        return device_id in self.allocated.dedicated

    def pool_available_counters(self, pool: Pool) -> dict:
        key = pool.pool_id if self.features.counters_by_pool_id else pool.pool
        avail = self.available_counters.get(key)
        if avail is None:
            avail = {name: dict(counters) for name, counters in (pool.counter_sets or {}).items()}
            for d in pool.devices + pool.not_targeting:
                if not self.counted_as_allocated(d.id):
                    continue
                for set_name, counters in d.counter_consumption():
                    cs = avail.get(set_name)
                    if cs is None:
                        continue
                    for name, q in counters.items():
                        if name in cs:
                            cs[name] = cs[name] - q
            self.available_counters[key] = avail
        return avail

    def new_share_id(self, seed: str) -> str:
        self._share_seq += 1
        h = hashlib.sha256(f"{seed}/{self._share_seq}".encode()).hexdigest()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


class _Run:
    def __init__(self, allocator: Allocator, node_info, claims):
        self.a = allocator
        self.f = allocator.features
        self.node_info = node_info
        self.claims = claims
        self.pools: list[Pool] = []
        self.request_data: dict[tuple, RequestData] = {}
        self.constraints: list[list] = [[] for _ in claims]
        self.matches: dict = {}
        self.allocating: dict[tuple, set] = {}
        self.allocating_capacity: dict[tuple, dict] = {}
        self.consumed_counters: dict[str, dict] = {}
        self.result: list[list] = [[] for _ in claims]
        self.steps = 0

    # -- setup ------------------------------------------------------------------------
    def allocate(self):
        f = self.f
        self.pools = self.a.pool_index.pools_for_node(self.node_info)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, req in enumerate(_requests(claim)):
                first = req.get("firstAvailable") or []
                if first and not f.prioritized_list:
                    raise AllocatorError(f"claim {claim_key(claim)}, request {req.get('name')}: has subrequests, "
                                         "but the DRAPrioritizedList feature is disabled")
                if f.extended and not f.consumable_capacity:
                    if req.get("exactly") is not None and req["exactly"].get("capacity") is not None:
                        raise AllocatorError(f"claim {claim_key(claim)}, request {req.get('name')}: has capacity "
                                             "requests, but the DRAConsumableCapacity feature is disabled")
                    for sub in first:
                        if sub.get("capacity") is not None:
                            raise AllocatorError(f"claim {claim_key(claim)}, subrequest {sub.get('name')}: has "
                                                 "capacity requests, but the DRAConsumableCapacity feature is disabled")
                if first:
                    parent = RequestAccessor({}, req.get("name", ""), False)
                    min_req = None
                    for si, sub in enumerate(first):
                        # v1.35 computes subrequest i's "All" devices under the
                        # key of subrequest i-1 (fixed in v1.36).
                        key_si = si if f.subrequest_fixes else max(si - 1, 0)
                        rd = self._validate(RequestAccessor(sub, sub.get("name", ""), True), parent, ci, ri, key_si)
                        self.request_data[(ci, ri, si)] = rd
                        if min_req is None or rd.num_devices < min_req:
                            min_req = rd.num_devices
                    adding = min_req or 0
                else:
                    rd = self._validate(RequestAccessor(req.get("exactly") or {}, req.get("name", ""), False),
                                        None, ci, ri, 0)
                    self.request_data[(ci, ri, 0)] = rd
                    adding = rd.num_devices
                if f.claim_limit_per_request and adding > ALLOCATION_RESULTS_MAX_SIZE - min_devices:
                    raise AllocatorError(
                        f"claim {claim_key(claim)}, request {req.get('name')}: adding {adding} devices exceeds the "
                        f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}, with {min_devices} already accounted for")
                min_devices += adding
            if not f.claim_limit_per_request and min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocatorError(f"claim {claim_key(claim)}: number of requested devices {min_devices} exceeds "
                                     f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            for i, c in enumerate(_constraints(claim)):
                if c.get("matchAttribute"):
                    self.constraints[ci].append(MatchAttributeConstraint(c.get("requests"), c["matchAttribute"]))
                elif c.get("distinctAttribute") and f.extended:
                    self.constraints[ci].append(DistinctAttributeConstraint(c.get("requests"),
                                                                            c["distinctAttribute"],
                                                                            f.distinct_all_devices))
                else:
                    raise AllocatorError(
                        f"claim {claim_key(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)")

        done = self.allocate_one((0, 0, 0, 0), False, None)
        if not done:
            for pool in self.pools:
                if pool.invalid:
                    raise FailedOnNode("invalid resource pools were encountered")
            return None
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    def _validate(self, request: RequestAccessor, parent, ci, ri, si) -> RequestData:
        claim = self.claims[ci]
        rd = RequestData(request, parent)
        if self.f.derived_attributes_refused and request.derived_attributes:
            raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: cannot handle request with "
                                 "derived attributes, the feature is disabled")
        for i, sel in enumerate(request.selectors):
            if not (sel.get("cel") or {}).get("expression"):
                raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}, selector #{i}: "
                                     "CEL expression empty (unsupported selector type?)")
        if not self.f.admin_access and request.has_admin_access:
            raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: admin access is requested, "
                                 "but the feature is disabled")
        if not request.device_class_name:
            raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: missing device class name "
                                 "(unsupported request type?)")
        cls = self.a.classes.get(request.device_class_name)
        if cls is None:
            raise AllocatorError(
                f"claim {claim_key(claim)}, request {request.name}: could not retrieve device class "
                f"{request.device_class_name}: deviceclass.resource.k8s.io \"{request.device_class_name}\" not found")
        rd.device_class = cls
        if request.allocation_mode == EXACT_COUNT:
            rd.num_devices = request.count
        elif request.allocation_mode == ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: asks for all devices, "
                                         f"but resource pool {pool.pool_id} is currently being updated")
                if pool.invalid:
                    raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: asks for all devices, "
                                         f"but resource pool {pool.pool_id} is currently invalid")
                for dev in pool.devices:
                    if not self.is_selectable((ci, ri, si), rd, dev):
                        continue
                    if self.f.consumable_capacity:
                        # v1.37: the static capacity only; what others use is
                        # checked when allocating (and makes "All" fail).
                        ok = (capacity_check(request, dev, None, None)[0] if self.f.all_mode_static_capacity
                              else self._capacity_ok(request, dev)[0])
                        if not ok:
                            continue
                    rd.all_devices.append((dev, pool))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: unsupported count mode "
                                 f"{request.allocation_mode}")
        return rd

    # -- search -----------------------------------------------------------------------
    def allocate_one(self, r, allocate_sub_request: bool, start) -> bool:
        """r = (claim, request, subrequest, device) indices; start = (pool,
        device) where the search of this request goes on (combinations)."""
        self.steps += 1
        ci, ri, si, di = r
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(_requests(claim)):
            try:
                return self.allocate_one((ci + 1, 0, 0, 0), False, None)
            except _MaxSizeExceeded:
                return False

        key = (ci, ri, si)
        rd = self.request_data[key]
        if not allocate_sub_request and rd.parent is not None:
            all_exceeded = True
            sub = 0
            while True:
                if (ci, ri, sub) not in self.request_data:
                    if all_exceeded:
                        raise _MaxSizeExceeded()
                    return False
                try:
                    ok = self.allocate_one((ci, ri, sub, di), True, None)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    rd.selected_sub_request_index = sub
                    return True
                sub += 1

        request = rd.request
        do_all = request.allocation_mode == ALL
        if do_all and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self.allocate_one((ci, ri + 1, 0, 0), False, None)
        if len(self.result[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded()

        if do_all:
            dev, pool = rd.all_devices[di]
            ok, undo = self.allocate_device(r, dev, pool, True)
            if not ok:
                return False
            # v1.35 forgets the subrequest here and goes on with subrequest 0's
            # data (fixed in v1.36).
            nxt = (ci, ri, si if self.f.subrequest_fixes else 0, di + 1)
            try:
                done = self.allocate_one(nxt, allocate_sub_request, None)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        combinations = self.f.combinations
        start_pool, start_dev = start if (combinations and start is not None) else (0, 0)
        for pi in range(start_pool, len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            devices = pool.devices
            for dj in range(start_dev if pi == start_pool else 0, len(devices)):
                dev = devices[dj]
                if request.admin_access and self._allocating_for_claim(dev.id, ci):
                    continue
                if not request.admin_access and self._in_use(dev.id):
                    continue
                if not self.is_selectable(key, rd, dev):
                    continue
                if self.f.consumable_capacity and not self._capacity_ok(request, dev)[0]:
                    continue
                ok, undo = self.allocate_device(r, dev, pool, False)
                if not ok:
                    continue
                try:
                    done = self.allocate_one((ci, ri, si, di + 1), allocate_sub_request, (pi, dj + 1))
                except BaseException:
                    undo()
                    raise
                if done:
                    return True
                undo()
        return False

    def _in_use(self, device_id) -> bool:
        return device_id in self.a.allocated.dedicated or bool(self.allocating.get(device_id))

    def _allocating_for_claim(self, device_id, ci) -> bool:
        s = self.allocating.get(device_id)
        return s is not None and ci in s

    def _capacity_in_use(self, device_id) -> bool:
        return device_id in self.a.allocated.capacity or device_id in self.allocating_capacity

    def _capacity_ok(self, request: RequestAccessor, dev: SliceDevice):
        return capacity_check(request, dev, self.a.allocated.capacity.get(dev.id),
                              self.allocating_capacity.get(dev.id))

    def is_selectable(self, key, rd: RequestData, dev: SliceDevice) -> bool:
        if not self.f.device_binding_and_status and dev.binding_conditions:
            return False
        mk = (dev.id, key)
        m = self.matches.get(mk)
        if m is not None:
            return m
        m = self._selectors_match(key, dev, rd.device_class, ((rd.device_class.get("spec") or {}).get("selectors") or []))
        if m:
            m = self._selectors_match(key, dev, None, rd.request.selectors)
        if m and dev.per_device:
            d = dev.device
            m = node_matches(self.node_info, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector"))
        self.matches[mk] = m
        return m

    def _selectors_match(self, key, dev: SliceDevice, cls, selectors) -> bool:
        if not selectors:
            return True
        cel = _cel()
        consumable = self.f.consumable_capacity

        def where():
            return f"class {cls['metadata']['name']}" if cls is not None else f"claim {claim_key(self.claims[key[0]])}"

        for i, sel in enumerate(selectors):
            expr = (sel.get("cel") or {}).get("expression", "")
            compiled = cel.compile_selector(expr, consumable)
            if compiled.error is not None:
                raise AllocatorError(f"{where()}: selector #{i}: CEL compile error: {compiled.error}")
            try:
                ok = compiled.matches(dev.cel)
            except cel.CelRuntimeError as exc:
                if self.f.cel_errors_name_device:
                    raise AllocatorError(f"{where()}: selector #{i} on device {dev.label()}: CEL runtime error: "
                                         f"{enhance_runtime_error(str(exc))}") from None
                raise AllocatorError(f"{where()}: selector #{i}: CEL runtime error: {exc}") from None
            if not ok:
                return False
        return True

    def _check_counters(self, dev: SliceDevice, pool: Pool) -> bool:
        """checkAvailableCounters: add the device's consumption to the run's
        and check every counter of the pool (keyed by pool name, as upstream)."""
        avail = self.a.pool_available_counters(pool)
        consumed = self.consumed_counters.setdefault(self._counters_key(pool), {})
        for set_name, counters in dev.counter_consumption():
            cs = consumed.setdefault(set_name, {})
            for name, q in counters.items():
                cur = cs.get(name)
                cs[name] = q if cur is None else cur + q
        for set_name, counters in avail.items():
            cs = consumed.get(set_name) or {}
            for name, q in counters.items():
                c = cs.get(name)
                if c is None:
                    if q.sign() < 0:
                        self._uncount(dev, pool)
                        return False
                elif q.cmp(c) < 0:
                    self._uncount(dev, pool)
                    return False
        return True

    def _counters_key(self, pool: Pool) -> str:
        return pool.pool_id if self.f.counters_by_pool_id else pool.pool

    def _uncount(self, dev: SliceDevice, pool: Pool) -> None:
        """deallocateCountersForDevice."""
        key = self._counters_key(pool)
        consumed = self.consumed_counters.get(key)
        if consumed is None:
            consumed = self.consumed_counters[key] = {}
        for set_name, counters in dev.counter_consumption():
            cs = consumed.setdefault(set_name, {})
            for name, q in counters.items():
                cur = cs.get(name)
                cs[name] = -q if cur is None else cur - q

    def allocate_device(self, r, dev: SliceDevice, pool: Pool, must: bool):
        """allocateDevice, in upstream's order of checks. Before v1.36.3 a
        refusal after the counters were taken (a taint, a constraint, the
        capacity) does not give them back, and one after the constraints were
        added (the capacity) does not take those back either; with `rollback`
        (v1.36.3's deviceRollbackState) every refusal and every undo gives
        back exactly what was taken."""
        ci, ri, si, di = r
        f = self.f
        rd = self.request_data[(ci, ri, si)]
        request = rd.request
        allow_multiple = f.consumable_capacity and dev.allow_multiple
        if not allow_multiple and request.admin_access and self._allocating_for_claim(dev.id, ci):
            return False, None
        if not request.admin_access and self._in_use(dev.id):
            return False, None
        if not f.partitionable_devices and dev.consumes:
            return False, None
        skip_counters = allow_multiple and self._capacity_in_use(dev.id)
        reserved = False
        if not skip_counters and dev.consumes:
            if not self._check_counters(dev, pool):
                return False, None
            reserved = True
        rollback = f.rollback
        if rd.parent is None:
            base, sub = request.name, ""
        else:
            base, sub = rd.parent.name, request.name
        if f.device_taints and untolerated_taint(dev, request) is not None:
            if rollback and reserved:
                self._uncount(dev, pool)
            return False, None
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, dev):
                for e in range(i - 1, -1, -1) if rollback else range(i):
                    constraints[e].remove(base, sub, dev)
                if rollback and reserved:
                    self._uncount(dev, pool)
                if must:
                    raise AllocatorError(
                        f"claim {claim_key(self.claims[ci])}, request {request.name}: cannot add device "
                        f"{dev.label()} because a claim constraint would not be satisfied")
                return False, None
        if rollback and allow_multiple:
            holders = self.allocating.get(dev.id) or set()
        else:
            holders = self.allocating.setdefault(dev.id, set())
        if not allow_multiple:
            holders.add(ci)
        consumed = None
        share_id = None
        entry_existed = False
        if f.consumable_capacity:
            if not self._capacity_ok(request, dev)[0]:
                if rollback:
                    if not allow_multiple:
                        holders.discard(ci)
                    for c in reversed(constraints):
                        c.remove(base, sub, dev)
                    if reserved:
                        self._uncount(dev, pool)
                return False, None
            if allow_multiple:
                consumed = consumed_from_request(request, dev, f.capacity_in_step_format)
                share_id = self.a.new_share_id(f"{claim_key(self.claims[ci])}/{rd.request_name()}/{dev.label()}")
                entry_existed = dev.id in self.allocating_capacity
                collection_insert(self.allocating_capacity, dev.id, consumed)
        result = {"request": rd.request_name(), "driver": dev.id[0], "pool": dev.id[1], "device": dev.id[2]}
        if request.admin_access:
            result["adminAccess"] = True
        if request.tolerations:
            result["tolerations"] = [dict(t) for t in request.tolerations]
        if f.device_binding_and_status:
            if dev.binding_conditions:
                result["bindingConditions"] = list(dev.binding_conditions)
            if dev.binding_failure_conditions:
                result["bindingFailureConditions"] = list(dev.binding_failure_conditions)
        if share_id is not None:
            result["shareID"] = share_id
        if consumed:
            result["consumedCapacity"] = {n: str(q) for n, q in consumed.items()}
        results = self.result[ci]
        before = len(results)
        results.append((result, dev, consumed or None))

        def undo():
            if rollback:
                # rollbackDevice: in the opposite order of what was done.
                del results[before:]
                if consumed is not None:
                    collection_remove(self.allocating_capacity, dev.id, consumed)
                    if entry_existed and dev.id not in self.allocating_capacity:
                        # The earlier share of the device must stay in use.
                        self.allocating_capacity[dev.id] = {}
                if not allow_multiple:
                    holders.discard(ci)
                for c in reversed(constraints):
                    c.remove(base, sub, dev)
                if reserved:
                    self._uncount(dev, pool)
                return
            for c in constraints:
                c.remove(base, sub, dev)
            holders.discard(ci)
            if allow_multiple:
                taken = results[before][2]
                if taken is not None:
                    collection_remove(self.allocating_capacity, dev.id, taken)
            elif f.partitionable_devices and dev.consumes:
                self._uncount(dev, pool)
            del results[before:]

        return True, undo

    def explain(self, results) -> list[dict]:
        return _run_explain(self, results)

    # -- result -----------------------------------------------------------------------
    def _result(self, ci: int, claim: dict) -> dict:
        devices = self.result[ci]
        out = {"devices": {"results": [r for r, _, _ in devices]}}
        ns = self._node_selector([d for _, d, _ in devices])
        if ns is not None:
            out["nodeSelector"] = ns
        return out

    def _node_selector(self, devices: list[SliceDevice]):
        """createNodeSelector: the nodes where the allocated devices are reachable."""
        pin_target = self.f.combinations
        fields: list = []
        exprs: list = []
        for dev in devices:
            spec = dev.slice.get("spec") or {}
            src = dev.device if dev.per_device else spec
            node_name = src.get("nodeName")
            if node_name or (pin_target and dev.binds_to_node):
                name = self.node_info.name if pin_target else node_name
                return {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [name]}]}]}
            ns = src.get("nodeSelector")
            if ns is not None:
                terms = ns.get("nodeSelectorTerms") or []
                if len(terms) == 1:
                    _add_new(terms[0].get("matchFields") or [], fields)
                    _add_new(terms[0].get("matchExpressions") or [], exprs)
                elif len(terms) > 1:
                    raise AllocatorError(f"create NodeSelector for claim {self.claims and ''}"
                                         f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if fields or exprs:
            term = {}
            if fields:
                term["matchFields"] = fields
            if exprs:
                term["matchExpressions"] = exprs
            return {"nodeSelectorTerms": [term]}
        return None


def _add_new(src, dst):
    for req in src:
        vals = set(req.get("values") or ())
        if not any(r.get("key") == req.get("key") and r.get("operator") == req.get("operator")
                   and set(r.get("values") or ()) == vals for r in dst):
            dst.append(req)


# -- explanation ------------------------------------------------------------------------
def _run_explain(run: "_Run", results) -> list[dict]:
    """Per claim and request: every device of the node's pools with the first
    reason it could not be used (None = usable), and what was allocated.
    Never changes the verdict: evaluation errors become reasons."""
    chosen: dict = {}
    if results:
        for ci, res in enumerate(results):
            for r in res["devices"]["results"]:
                chosen.setdefault((r["driver"], r["pool"], r["device"]), []).append((ci, r["request"]))
    out = []
    for ci, claim in enumerate(run.claims):
        reqs = []
        for ri, req in enumerate(_requests(claim)):
            si = 0
            while (ci, ri, si) in run.request_data:
                rd = run.request_data[(ci, ri, si)]
                reqs.append(_explain_request(run, (ci, ri, si), rd, chosen))
                si += 1
        entry = {"claim": claim_key(claim), "requests": reqs}
        cons = []
        for c in run.constraints[ci]:
            cons.append({c.kind: c.attribute_name, "requests": sorted(c.request_names)})
        if cons:
            entry["constraints"] = cons
        if results:
            entry["allocation"] = results[ci]
        out.append(entry)
    return out


def _explain_request(run: "_Run", key, rd: RequestData, chosen: dict) -> dict:
    request = rd.request
    d = {
        "request": rd.request_name(),
        "deviceClass": request.device_class_name,
        "allocationMode": request.allocation_mode,
    }
    if request.allocation_mode == EXACT_COUNT:
        d["count"] = request.count
    if request.admin_access:
        d["adminAccess"] = True
    candidates = []
    pools = []
    eligible = 0
    for pool in run.pools:
        if pool.incomplete:
            pools.append({"pool": pool.pool_id, "reason": "pool is incomplete: not all of its ResourceSlices are published"})
            continue
        if pool.invalid:
            pools.append({"pool": pool.pool_id, "reason": f"pool is invalid: {pool.invalid_reason}"})
            continue
        for dev in pool.devices:
            reason = _device_reason(run, key, rd, dev, pool, chosen)
            c = {"device": dev.label(), "reason": reason}
            if reason is None:
                eligible += 1
            picks = chosen.get(dev.id) or ()
            if any(p[0] == key[0] and p[1] == rd.request_name() for p in picks):
                c["allocated"] = True
            candidates.append(c)
    d["eligible"] = eligible
    d["candidates"] = candidates
    if pools:
        d["pools"] = pools
    return d


def _device_reason(run: "_Run", key, rd: RequestData, dev: SliceDevice, pool: Pool, chosen: dict):
    f = run.f
    request = rd.request
    allocated = run.a.allocated
    if not request.admin_access:
        holder = allocated.dedicated.get(dev.id)
        if holder is not None:
            return f"already allocated to claim {holder}"
    if not f.device_binding_and_status and dev.binding_conditions:
        return ("has binding conditions, which need DRADeviceBindingConditions and DRAResourceClaimDeviceStatus "
                "(feature gates)")
    cls = rd.device_class
    cel = _cel()
    selectable = run.matches.get((dev.id, key))
    for where, selectors in () if selectable else (("DeviceClass " + cls["metadata"]["name"], (cls.get("spec") or {}).get("selectors") or []),
                             ("request", request.selectors)):
        for i, sel in enumerate(selectors):
            expr = (sel.get("cel") or {}).get("expression", "")
            compiled = cel.compile_selector(expr, f.consumable_capacity)
            if compiled.error is not None:
                return f"{where} selector #{i} does not compile: {compiled.error}"
            try:
                ok = compiled.matches(dev.cel)
            except cel.CelRuntimeError as exc:
                return f"{where} selector #{i} failed: {exc}"
            if not ok:
                return f"{where} selector #{i} is false: {expr}"
    if dev.per_device and not selectable:
        d = dev.device
        if not node_matches(run.node_info, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector")):
            return "the device's own node selection does not include this node"
    if f.consumable_capacity and (request.capacity is not None or dev.id in allocated.capacity or dev.has_policy):
        ok, why = capacity_check(request, dev, allocated.capacity.get(dev.id), None)
        if not ok:
            return why
    if not f.partitionable_devices and dev.consumes:
        return "consumes shared counters, which need DRAPartitionableDevices (feature gate)"
    if f.partitionable_devices and dev.consumes and pool.counter_sets is not None:
        avail = run.a.pool_available_counters(pool)
        for set_name, counters in dev.counter_consumption():
            for name, q in sorted(counters.items()):
                left = (avail.get(set_name) or {}).get(name)
                if left is not None and left.cmp(q) < 0:
                    return f"needs {q} of counter {name} in counter set {set_name}, {left} left"
    if f.device_taints:
        taint = untolerated_taint(dev, request)
        if taint is not None:
            t = taint.get("key", "") + (f"={taint['value']}" if taint.get("value") else "")
            return f"has taint {t}:{taint.get('effect')}, which the request does not tolerate"
    if not request.admin_access and not (f.consumable_capacity and dev.allow_multiple):
        for pick in chosen.get(dev.id) or ():
            if not (pick[0] == key[0] and pick[1] == rd.request_name()):
                return f"allocated to request {pick[1]} of claim {claim_key(run.claims[pick[0]])}"
    return None
