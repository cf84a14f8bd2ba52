"""The structured-parameters allocator of kube-scheduler v1.35.

upstream k8s.io/dynamic-resource-allocation/structured picks one of three
implementations by the enabled features: "stable" (no optional feature),
"incubating" (admin access, prioritized list, partitionable devices, device
taints) or "experimental" (also consumable capacity and binding
conditions). With v1.35's default gates (DRAAdminAccess and
DRAPrioritizedList on; DRAPartitionableDevices, DRADeviceTaints,
DRAConsumableCapacity and DRADeviceBindingConditions off) it is
"incubating", with partitionable devices and device taints switched off.
This module is that algorithm: an exhaustive depth-first search which takes
the first complete solution, claim after claim, request after request,
device after device in pool order.

Where upstream iterates a Go map (the pools of a node), kschedx uses a fixed
order (driver, then pool name); the verdict is the same, only which of
several equally valid devices gets picked may differ.
"""

from __future__ import annotations

from .claims import Pool, SliceDevice, claim_key

ALLOCATION_RESULTS_MAX_SIZE = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
EXACT_COUNT = "ExactCount"
ALL = "All"

# Allocator features in force (structured.Features) with v1.35's default gates.
ADMIN_ACCESS = True
PRIORITIZED_LIST = True
PARTITIONABLE_DEVICES = False
DEVICE_TAINTS = False
DEVICE_BINDING_AND_STATUS = False

_CEL_ENV = None


def _cel_env():
    """The cel_env module, imported on first use (celpy costs ~150 ms to
    import) and then kept: selectors are evaluated per device on every node."""
    global _CEL_ENV
    if _CEL_ENV is None:
        from . import cel_env

        _CEL_ENV = cel_env
    return _CEL_ENV


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
                 "selectors", "tolerations", "is_sub")

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


class MatchAttributeConstraint:
    """All devices of the named requests share one value of the attribute."""

    __slots__ = ("request_names", "attribute_name", "attribute", "num_devices")

    def __init__(self, request_names, attribute_name: str):
        self.request_names = set(request_names or ())
        self.attribute_name = attribute_name
        self.attribute = None
        self.num_devices = 0

    def _applies(self, request_name: str, sub_request_name: str) -> bool:
        if not self.request_names:
            return True
        if not sub_request_name:
            return request_name in self.request_names
        return request_name in self.request_names or f"{request_name}/{sub_request_name}" in self.request_names

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
        for kind in ("string", "int", "bool", "version"):
            if attr.get(kind) is not None:
                if self.attribute.get(kind) is None or attr[kind] != self.attribute[kind]:
                    return False
                break
        else:
            return False
        self.num_devices += 1
        return True

    def remove(self, request_name: str, sub_request_name: str, device: SliceDevice) -> None:
        if not self._applies(request_name, sub_request_name):
            return
        self.num_devices -= 1


class Allocator:
    """Set up once per pod at PreFilter (upstream NewAllocator); allocate()
    per node at Filter."""

    def __init__(self, manager, allocated: dict):
        self.manager = manager
        self.allocated = allocated  # device id -> claim key holding it
        self.classes = manager.classes

    def new_run(self, node_info, claims: list[dict]) -> "_Run":
        """One Allocate call: run.allocate() gives the allocation results (one
        per claim) or None when the claims do not fit on the node, and raises
        AllocatorError or FailedOnNode; run.explain() then says why."""
        return _Run(self, node_info, claims)

    def allocate(self, node_info, claims: list[dict]):
        return self.new_run(node_info, claims).allocate()


class _Run:
    def __init__(self, allocator: Allocator, node_info, claims):
        self.a = allocator
        self.node_info = node_info
        self.claims = claims
        self.pools: list[Pool] = []
        self.request_data: dict[tuple, RequestData] = {}
        self.constraints: list[list[MatchAttributeConstraint]] = [[] for _ in claims]
        self.matches: dict = {}
        self.allocating: dict[tuple, set] = {}
        self.result: list[list[dict]] = [[] for _ in claims]
        self.steps = 0

    # -- setup ------------------------------------------------------------------------
    def allocate(self):
        self.pools = self.a.manager.pools_for_node(self.node_info)
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, req in enumerate(_requests(claim)):
                first = req.get("firstAvailable") or []
                if first:
                    if not PRIORITIZED_LIST:
                        raise AllocatorError(f"claim {claim_key(claim)}, request {req.get('name')}: has subrequests, "
                                             "but the DRAPrioritizedList feature is disabled")
                    parent = RequestAccessor({}, req.get("name", ""), False)
                    min_req = None
                    for si, sub in enumerate(first):
                        rd = self._validate(RequestAccessor(sub, sub.get("name", ""), True), parent, ci, ri, si)
                        self.request_data[(ci, ri, si)] = rd
                        if min_req is None or rd.num_devices < min_req:
                            min_req = rd.num_devices
                    min_devices += min_req or 0
                else:
                    rd = self._validate(RequestAccessor(req.get("exactly") or {}, req.get("name", ""), False),
                                        None, ci, ri, 0)
                    self.request_data[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocatorError(f"claim {claim_key(claim)}: number of requested devices {min_devices} exceeds "
                                     f"the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            for i, c in enumerate(_constraints(claim)):
                if c.get("matchAttribute"):
                    self.constraints[ci].append(MatchAttributeConstraint(c.get("requests"), c["matchAttribute"]))
                else:
                    raise AllocatorError(
                        f"claim {claim_key(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)")

        done = self.allocate_one((0, 0, 0, 0), False)
        if not done:
            for pool in self.pools:
                if pool.invalid:
                    raise FailedOnNode("invalid resource pools were encountered")
            return None
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    def _validate(self, request: RequestAccessor, parent, ci, ri, si) -> RequestData:
        claim = self.claims[ci]
        rd = RequestData(request, parent)
        for i, sel in enumerate(request.selectors):
            if not (sel.get("cel") or {}).get("expression"):
                raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}, selector #{i}: "
                                     "CEL expression empty (unsupported selector type?)")
        if not ADMIN_ACCESS and request.has_admin_access:
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
                    if self.is_selectable((ci, ri, si), rd, dev):
                        rd.all_devices.append((dev, pool))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocatorError(f"claim {claim_key(claim)}, request {request.name}: unsupported count mode "
                                 f"{request.allocation_mode}")
        return rd

    # -- search -----------------------------------------------------------------------
    def allocate_one(self, r, allocate_sub_request: bool) -> bool:
        """r = (claim, request, subrequest, device) indices."""
        self.steps += 1
        ci, ri, si, di = r
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(_requests(claim)):
            try:
                return self.allocate_one((ci + 1, 0, 0, 0), False)
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
                    ok = self.allocate_one((ci, ri, sub, di), True)
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
            return self.allocate_one((ci, ri + 1, 0, 0), False)
        if len(self.result[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded()

        if do_all:
            dev, pool = rd.all_devices[di]
            ok, undo = self.allocate_device(r, dev, True)
            if not ok:
                return False
            try:
                done = self.allocate_one((ci, ri, si, di + 1), allocate_sub_request)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done

        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for dev in pool.devices:
                if request.admin_access and self._allocating_for_claim(dev.id, ci):
                    continue
                if not request.admin_access and self._in_use(dev.id):
                    continue
                if not self.is_selectable(key, rd, dev):
                    continue
                ok, undo = self.allocate_device(r, dev, False)
                if not ok:
                    continue
                try:
                    done = self.allocate_one((ci, ri, si, di + 1), allocate_sub_request)
                except BaseException:
                    undo()
                    raise
                if done:
                    return True
                undo()
        return False

    def _in_use(self, device_id) -> bool:
        return device_id in self.a.allocated or bool(self.allocating.get(device_id))

    def _allocating_for_claim(self, device_id, ci) -> bool:
        s = self.allocating.get(device_id)
        return s is not None and ci in s

    def is_selectable(self, key, rd: RequestData, dev: SliceDevice) -> bool:
        if not DEVICE_BINDING_AND_STATUS and dev.device.get("bindingConditions"):
            return False
        mk = (dev.id, key)
        m = self.matches.get(mk)
        if m is not None:
            return m
        m = self._selectors_match(key, dev, rd.device_class, ((rd.device_class.get("spec") or {}).get("selectors") or []))
        if m:
            m = self._selectors_match(key, dev, None, rd.request.selectors)
        self.matches[mk] = m
        return m

    def _selectors_match(self, key, dev: SliceDevice, cls, selectors) -> bool:
        if not selectors:
            return True
        cel = _cel_env()

        def where():
            return f"class {cls['metadata']['name']}" if cls is not None else f"claim {claim_key(self.claims[key[0]])}"

        for i, sel in enumerate(selectors):
            expr = (sel.get("cel") or {}).get("expression", "")
            compiled = cel.compile_selector(expr)
            if compiled.error is not None:
                raise AllocatorError(f"{where()}: selector #{i}: CEL compile error: {compiled.error}")
            try:
                ok = compiled.matches(dev.cel)
            except cel.CelRuntimeError as exc:
                raise AllocatorError(f"{where()}: selector #{i}: CEL runtime error: {exc}") from None
            if not ok:
                return False
        return True

    def allocate_device(self, r, dev: SliceDevice, must: bool):
        ci, ri, si, di = r
        rd = self.request_data[(ci, ri, si)]
        request = rd.request
        if request.admin_access and self._allocating_for_claim(dev.id, ci):
            return False, None
        if not request.admin_access and self._in_use(dev.id):
            return False, None
        if not PARTITIONABLE_DEVICES and dev.device.get("consumesCounters"):
            return False, None
        if rd.parent is None:
            base, sub = request.name, ""
        else:
            base, sub = rd.parent.name, request.name
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, dev):
                if must:
                    raise AllocatorError(
                        f"claim {claim_key(self.claims[ci])}, request {request.name}: cannot add device "
                        f"{dev.label()} because a claim constraint would not be satisfied")
                for e in range(i):
                    constraints[e].remove(base, sub, dev)
                return False, None
        self.allocating.setdefault(dev.id, set()).add(ci)
        result = {"request": rd.request_name(), "driver": dev.id[0], "pool": dev.id[1], "device": dev.id[2]}
        if request.admin_access:
            result["adminAccess"] = True
        results = self.result[ci]
        before = len(results)
        results.append((result, dev))

        def undo():
            for c in constraints:
                c.remove(base, sub, dev)
            self.allocating[dev.id].discard(ci)
            del results[before:]

        return True, undo

    def explain(self, results) -> list[dict]:
        return _run_explain(self, results)

    # -- result -----------------------------------------------------------------------
    def _result(self, ci: int, claim: dict) -> dict:
        devices = self.result[ci]
        out = {"devices": {"results": [r for r, _ in devices]}}
        ns = _node_selector([d for _, d in devices])
        if ns is not None:
            out["nodeSelector"] = ns
        return out


def _node_selector(devices: list[SliceDevice]):
    """createNodeSelector: the nodes where the allocated devices are reachable."""
    fields: list = []
    exprs: list = []
    for dev in devices:
        spec = dev.slice.get("spec") or {}
        if spec.get("nodeName"):
            return {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [spec["nodeName"]]}]}]}
        ns = spec.get("nodeSelector")
        if ns is not None:
            terms = ns.get("nodeSelectorTerms") or []
            if len(terms) == 1:
                _add_new(terms[0].get("matchFields") or [], fields)
                _add_new(terms[0].get("matchExpressions") or [], exprs)
            elif len(terms) > 1:
                raise AllocatorError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
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
                chosen[(r["driver"], r["pool"], r["device"])] = (ci, r["request"])
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
        cons = [{"matchAttribute": c.attribute_name, "requests": sorted(c.request_names)} for c in run.constraints[ci]]
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
            reason = _device_reason(run, key, rd, dev, chosen)
            c = {"device": dev.label(), "reason": reason}
            if reason is None:
                eligible += 1
            pick = chosen.get(dev.id)
            if pick is not None and pick[0] == key[0] and pick[1] == rd.request_name():
                c["allocated"] = True
            candidates.append(c)
    d["eligible"] = eligible
    d["candidates"] = candidates
    if pools:
        d["pools"] = pools
    return d


def _device_reason(run: "_Run", key, rd: RequestData, dev: SliceDevice, chosen: dict):
    request = rd.request
    holder = run.a.allocated.get(dev.id)
    if holder is not None and not request.admin_access:
        return f"already allocated to claim {holder}"
    if not DEVICE_BINDING_AND_STATUS and dev.device.get("bindingConditions"):
        return "has binding conditions, which need DRADeviceBindingConditions (off in v1.35)"
    cls = rd.device_class
    cel = _cel_env()
    for where, selectors in (("DeviceClass " + cls["metadata"]["name"], (cls.get("spec") or {}).get("selectors") or []),
                             ("request", request.selectors)):
        for i, sel in enumerate(selectors):
            expr = (sel.get("cel") or {}).get("expression", "")
            compiled = cel.compile_selector(expr)
            if compiled.error is not None:
                return f"{where} selector #{i} does not compile: {compiled.error}"
            try:
                ok = compiled.matches(dev.cel)
            except cel.CelRuntimeError as exc:
                return f"{where} selector #{i} failed: {exc}"
            if not ok:
                return f"{where} selector #{i} is false: {expr}"
    if not PARTITIONABLE_DEVICES and dev.device.get("consumesCounters"):
        return "consumes shared counters, which need DRAPartitionableDevices (off in v1.35)"
    pick = chosen.get(dev.id)
    if pick is not None and not (pick[0] == key[0] and pick[1] == rd.request_name()) and not request.admin_access:
        return f"allocated to request {pick[1]} of claim {claim_key(run.claims[pick[0]])}"
    return None

