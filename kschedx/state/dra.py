"""The DRA objects as the scheduler shares them between plugins: upstream's
SharedDRAManager.

DynamicResources and, for DRA-backed extended resources, NodeResourcesFit
and NodeResourcesBalancedAllocation read the same view: the ResourceClaims
(the assume cache) with the allocations in flight (reserved by an earlier pod
of a `simulate` run, not yet written), the DeviceClasses, the ResourceSlices,
the devices already allocated (GatherAllocatedState / ListAllAllocatedDevices)
and the extended-resource → DeviceClass resolver. What derives from the
objects alone is kept per ClusterState (DRAObjects); what a run changes (the
allocations in flight) per Snapshot (DRAState), shared by every profile of
the run, as upstream's is per scheduler.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ..api.quantity import Quantity, parse_quantity

DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"


def claim_key(claim: dict) -> str:
    meta = claim["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def claim_uid(claim: dict) -> str:
    return claim["metadata"].get("uid") or claim_key(claim)


def allocation_of(claim: dict):
    return (claim.get("status") or {}).get("allocation")


class ClaimNotFound(Exception):
    """The claim is not in the cache (message = upstream's)."""


# -- consumed capacity (structured/schedulerapi ConsumedCapacity) ----------------------
def capacity_add(into: dict, added: dict) -> None:
    """ConsumedCapacity.Add: per capacity name, in place."""
    for name, q in added.items():
        cur = into.get(name)
        into[name] = q if cur is None else cur + q


def capacity_sub(into: dict, subtracted: dict) -> None:
    """ConsumedCapacity.Sub: only names already present."""
    for name, q in subtracted.items():
        cur = into.get(name)
        if cur is not None:
            into[name] = cur - q


def collection_insert(coll: dict, device_id, consumed: dict) -> None:
    """ConsumedCapacityCollection.Insert."""
    cur = coll.get(device_id)
    if cur is None:
        coll[device_id] = dict(consumed)
    else:
        capacity_add(cur, consumed)


def collection_remove(coll: dict, device_id, consumed: dict) -> None:
    """ConsumedCapacityCollection.Remove: the entry goes when every amount is zero."""
    cur = coll.get(device_id)
    if cur is None:
        return
    capacity_sub(cur, consumed)
    if all(q.is_zero() for q in cur.values()):
        del coll[device_id]


class AllocatedState:
    """structured.AllocatedState: devices held by allocated (or in-flight)
    claims. `dedicated` maps a device id (driver, pool, device) to the key of
    a claim holding it (kschedx's explanations name it); `shared` holds
    (device id, shareID) of shared allocations and `capacity` the capacity
    they consume per device (DRAConsumableCapacity)."""

    __slots__ = ("dedicated", "shared", "shared_devices", "capacity")

    def __init__(self):
        self.dedicated: dict[tuple, str] = {}
        self.shared: set[tuple] = set()
        self.shared_devices: dict[tuple, str] = {}
        self.capacity: dict[tuple, dict[str, Quantity]] = {}

    def copy(self) -> "AllocatedState":
        c = AllocatedState()
        c.dedicated = dict(self.dedicated)
        c.shared = set(self.shared)
        c.shared_devices = dict(self.shared_devices)
        c.capacity = {d: dict(v) for d, v in self.capacity.items()}
        return c

    def is_device_allocated(self, device_id) -> bool:
        """structured.IsDeviceAllocated: dedicated, shared or with capacity in use."""
        return device_id in self.dedicated or device_id in self.shared_devices or device_id in self.capacity

    def add_claim(self, claim: dict, key: str, consumable_capacity: bool) -> None:
        """foreachAllocatedDevice: admin-access results do not count; with
        DRAConsumableCapacity a result with a shareID is a shared allocation
        (and its consumedCapacity is added), every other one is dedicated."""
        alloc = allocation_of(claim)
        if not alloc:
            return
        for r in (alloc.get("devices") or {}).get("results") or ():
            if r.get("adminAccess"):
                continue
            device_id = (r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
            if consumable_capacity and r.get("shareID") is not None:
                self.shared.add((*device_id, str(r["shareID"])))
                self.shared_devices.setdefault(device_id, key)
                consumed = r.get("consumedCapacity")
                if consumed is not None:
                    collection_insert(self.capacity, device_id,
                                      {n: parse_quantity(v) for n, v in consumed.items()})
                continue
            self.dedicated.setdefault(device_id, key)


class DRAObjects:
    """What derives from a cluster's DRA objects alone (one per ClusterState):
    the claims, classes and slices, the devices allocated by the claims'
    own allocations, the extended-resource resolver, the slices patched by
    DeviceTaintRules."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.claims: dict[str, dict] = cluster.resource_claims
        self.classes: dict[str, dict] = cluster.device_classes
        # Upstream lists slices from an informer (no defined order): kschedx
        # takes them by name.
        self.slices: list[dict] = sorted(cluster.resource_slices.values(), key=lambda s: s["metadata"]["name"])
        self._allocated: dict[bool, AllocatedState] = {}
        self._extended: dict[str, dict] | None = None
        self._patched: dict[bool, list[dict]] = {}
        # Data plugins derive from these objects alone and keep for good.
        self.cache: dict = {}

    def allocated_base(self, consumable_capacity: bool) -> AllocatedState:
        base = self._allocated.get(consumable_capacity)
        if base is None:
            base = self._allocated[consumable_capacity] = AllocatedState()
            for key, claim in sorted(self.claims.items()):
                base.add_claim(claim, key, consumable_capacity)
        return base

    def slices_with_taint_rules(self, need_selector: bool = False) -> list[dict]:
        """ListWithDeviceTaintRules with DRADeviceTaintRules on: the slices,
        a device a rule selects (by driver, pool and device name, each
        optional) carrying the rule's taint after its own. A rule without
        deviceSelector selects every device, or (`need_selector`, from 1.37)
        none. Upstream applies the rules in informer order; kschedx by rule
        name."""
        out = self._patched.get(need_selector)
        if out is None:
            rules = [self.cluster.device_taint_rules[k] for k in sorted(getattr(self.cluster, "device_taint_rules", {}))]
            out = self._patched[need_selector] = (
                [_apply_taint_rules(s, rules, need_selector) for s in self.slices] if rules else self.slices)
        return out

    def extended_resource_class(self, resource_name: str):
        """DeviceClassResolver.GetDeviceClass: the DeviceClass that backs an
        extended resource name, or None. Every class maps its implicit name
        `deviceclass.resource.kubernetes.io/<class>`; a class with
        spec.extendedResourceName maps that name too. Classes are added in
        name order (the informer's initial list): on a clash for one name the
        newest creationTimestamp wins, equal ones the smaller name; a class
        that loses a clash when it is added maps nothing at all, as upstream's
        cache skips it."""
        m = self._extended
        if m is None:
            m = self._extended = _extended_resource_map(self.classes)
        return m.get(resource_name)


class DRAState:
    """The DRA view of one scheduling run (one per Snapshot, shared by every
    profile of the run, as upstream's SharedDRAManager is per scheduler): the
    cluster's objects plus the allocations in flight."""

    def __init__(self, objects: DRAObjects):
        self.objects = objects
        self.claims = objects.claims
        self.classes = objects.classes
        self.slices = objects.slices
        self.in_flight: dict[str, dict] = {}  # claim uid -> claim with the allocation being made
        # Bumped whenever in-flight allocations change, so caches derived
        # from the allocated state know when to recompute.
        self.revision = 0
        # Data plugins derive from the run's state and keep (with the revision in their key).
        self.cache: dict = {}

    # -- claims ---------------------------------------------------------------------
    def get_claim(self, namespace: str, name: str) -> dict:
        claim = self.claims.get(f"{namespace}/{name}")
        if claim is None:
            raise ClaimNotFound(f'could not find ResourceClaim "{namespace}/{name}"')
        return claim

    def claim_has_pending_allocation(self, uid: str) -> bool:
        return uid in self.in_flight

    def signal_claim_pending_allocation(self, uid: str, allocated_claim: dict) -> None:
        self.in_flight[uid] = allocated_claim
        self.revision += 1

    def remove_claim_pending_allocation(self, uid: str) -> bool:
        if self.in_flight.pop(uid, None) is None:
            return False
        self.revision += 1
        return True

    def allocated_state(self, consumable_capacity: bool) -> AllocatedState:
        """GatherAllocatedState (DRAConsumableCapacity on) or
        ListAllAllocatedDevices (off, every result dedicated), allocations in
        flight included. The caller must not change what it gets."""
        base = self.objects.allocated_base(consumable_capacity)
        if not self.in_flight:
            return base
        out = base.copy()
        for claim in self.in_flight.values():
            out.add_claim(claim, claim_key(claim), consumable_capacity)
        return out

    def slices_with_taint_rules(self, need_selector: bool = False) -> list[dict]:
        return self.objects.slices_with_taint_rules(need_selector)

    def extended_resource_class(self, resource_name: str):
        return self.objects.extended_resource_class(resource_name)


def _apply_taint_rules(slice_: dict, rules: list[dict], need_selector: bool = False) -> dict:
    """Tracker.applyPatches for one slice (a copy when a rule applies)."""
    spec = slice_.get("spec") or {}
    patched = None
    for rule in rules:
        rspec = rule.get("spec") or {}
        if need_selector and rspec.get("deviceSelector") is None:
            continue
        sel = rspec.get("deviceSelector") or {}
        if sel.get("driver") is not None and sel["driver"] != spec.get("driver"):
            continue
        if sel.get("pool") is not None and sel["pool"] != (spec.get("pool") or {}).get("name"):
            continue
        taint_spec = rspec.get("taint") or {}
        taint = {k: taint_spec[k] for k in ("key", "value", "effect", "timeAdded") if taint_spec.get(k) is not None}
        for i, device in enumerate(spec.get("devices") or ()):
            if sel.get("device") is not None and sel["device"] != device.get("name"):
                continue
            if patched is None:
                patched = dict(slice_, spec=dict(spec, devices=[dict(d) for d in spec.get("devices") or ()]))
            d = patched["spec"]["devices"][i]
            d["taints"] = list(d.get("taints") or ()) + [taint]
    return patched if patched is not None else slice_


def time_nanos(value) -> int | None:
    """An RFC 3339 time (metav1.Time) as Unix nanoseconds, None if absent or unreadable."""
    if not value:
        return None
    text = str(value)
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    delta = dt - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _created_ns(cls: dict) -> int:
    ns = time_nanos((cls.get("metadata") or {}).get("creationTimestamp"))
    return _ZERO_TIME_NANOS if ns is None else ns


# time.Time{}.UnixNano(): year 1 overflows int64 nanoseconds; Go gives this value.
_ZERO_TIME_NANOS = -6795364578871345152


def _extended_resource_map(classes: dict) -> dict:
    m: dict[str, dict] = {}
    for name in sorted(classes):
        cls = classes[name]
        ext = (cls.get("spec") or {}).get("extendedResourceName")
        if ext is not None:
            other = m.get(ext)
            if other is not None:
                a, b = _created_ns(cls), _created_ns(other)
                if a < b or (a == b and name >= other["metadata"]["name"]):
                    continue
            m[ext] = cls
        m[DEVICE_CLASS_PREFIX + name] = cls
    return m


def dra_objects(cluster) -> DRAObjects:
    """The cluster's DRA objects, indexed on first use."""
    o = getattr(cluster, "dra", None)
    if o is None:
        o = DRAObjects(cluster)
        cluster.dra = o
    return o


def dra_state(snapshot) -> DRAState:
    """The run's DRA state, built on first use (a snapshot is one run: a
    fresh one starts with nothing in flight)."""
    s = getattr(snapshot, "dra", None)
    if s is None:
        s = DRAState(dra_objects(snapshot.cluster))
        snapshot.dra = s
    return s


DRA_KINDS = frozenset({"ResourceSlice", "ResourceClaim", "DeviceClass", "DeviceTaintRule"})


def objects_replaced(snapshot):
    """A fresh DRA view of `snapshot` after its cluster's DRA objects changed
    in place (`explain --fix` trying a slice or a claim for one cycle): what
    derives from the objects is rebuilt on first use, the allocations in
    flight carry over. Returns the function that puts the former view back."""
    cluster = snapshot.cluster
    old_objects = getattr(cluster, "dra", None)
    old_state = getattr(snapshot, "dra", None)
    cluster.dra = None
    snapshot.dra = None
    fresh = dra_state(snapshot)
    if old_state is not None and old_state.in_flight:
        fresh.in_flight.update(old_state.in_flight)
        fresh.revision = old_state.revision + 1

    def restore():
        cluster.dra = old_objects
        snapshot.dra = old_state

    return restore


def is_dra_extended_resource_name(name: str) -> bool:
    """schedutil.IsDRAExtendedResourceName: an extended resource name (a
    domain outside kubernetes.io, not requests.*) or a DeviceClass name."""
    from ..api.resources import is_extended_resource_name

    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)
