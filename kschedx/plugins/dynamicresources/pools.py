"""Resource pools as the structured allocator sees them from one node
(upstream GatherPools / buildPool).

A slice is relevant for a node when it has shared counters (always, with
DRAPartitionableDevices), when its nodeName / allNodes / nodeSelector
matches, or, with per-device node selection, when one of its devices
matches. Slices are grouped by (driver, pool); only the newest generation
counts. A pool missing slices is "incomplete" (nothing is allocated from it)
unless a newer generation elsewhere makes it obsolete (then it is dropped);
duplicate device or counter-set names, or devices consuming unknown
counters, make it "invalid".

Orders, where upstream leaves one to a Go map or an informer: slices by name
and pools by driver then pool name, as the v1.36 allocator does itself.
With binding-condition support compiled in (v1.35's "experimental", v1.36's
"incubating" allocator) pools with such devices come after all others, and
v1.35 also puts such slices last within their pool.
"""

from __future__ import annotations

from ...api.labels import NodeSelector
from ...api.quantity import parse_quantity


_CEL_DEVICE = None


def _cel_device():
    """cel/compile.py's CelDevice, imported on first use (celpy is slow to import)."""
    global _CEL_DEVICE
    if _CEL_DEVICE is None:
        from .cel.compile import CelDevice

        _CEL_DEVICE = CelDevice
    return _CEL_DEVICE


class SliceDevice:
    """One device of one ResourceSlice, with what the allocator reads of it."""

    __slots__ = ("id", "device", "slice", "name", "_cel", "consumes", "taints", "binding_conditions",
                 "binding_failure_conditions", "binds_to_node", "allow_multiple", "_capacity", "per_device",
                 "_consumption")

    def __init__(self, device_id, device: dict, slice_: dict):
        self.id = device_id  # (driver, pool, device name)
        self.device = device
        self.slice = slice_
        self.name = device_id[2]
        self._cel = None
        self._capacity = None
        self._consumption = None
        self.consumes = device.get("consumesCounters") or ()
        self.taints = device.get("taints") or ()
        self.binding_conditions = device.get("bindingConditions") or ()
        self.binding_failure_conditions = device.get("bindingFailureConditions") or ()
        self.binds_to_node = bool(device.get("bindsToNode"))
        self.allow_multiple = device.get("allowMultipleAllocations") is True
        self.per_device = bool((slice_.get("spec") or {}).get("perDeviceNodeSelection"))

    @property
    def cel(self):
        c = self._cel
        if c is None:
            c = self._cel = _cel_device()(self.id[0], self.device)
        return c

    @property
    def has_policy(self) -> bool:
        """Some capacity has a request policy (without one and without a
        request, an allocation takes the whole capacity: it always fits a
        device nobody shares yet)."""
        return any(p is not None for _, p in self.capacity.values())

    @property
    def capacity(self) -> dict:
        """name -> (value, requestPolicy dict or None), quantities parsed."""
        c = self._capacity
        if c is None:
            c = {}
            for name, cap in (self.device.get("capacity") or {}).items():
                value = cap.get("value") if isinstance(cap, dict) else cap
                policy = cap.get("requestPolicy") if isinstance(cap, dict) else None
                c[name] = (parse_quantity(value), policy)
            self._capacity = c
        return c

    def counter_consumption(self):
        """[(counter set, {counter: Quantity})] in the device's order (parsed once)."""
        out = self._consumption
        if out is None:
            out = self._consumption = [
                (dcc.get("counterSet", ""),
                 {n: parse_quantity((c or {}).get("value", "0")) for n, c in (dcc.get("counters") or {}).items()})
                for dcc in self.consumes]
        return out

    def label(self) -> str:
        return "/".join(self.id)


class Pool:
    """A resource pool as the allocator sees it from one node."""

    __slots__ = ("driver", "pool", "incomplete", "invalid", "invalid_reason", "slices", "devices", "not_targeting",
                 "counter_sets", "has_binding")

    def __init__(self, driver, pool, *, incomplete=False, invalid=False, invalid_reason="", slices=(), devices=(),
                 not_targeting=(), counter_sets=None):
        self.driver = driver
        self.pool = pool
        self.incomplete = incomplete
        self.invalid = invalid
        self.invalid_reason = invalid_reason
        self.slices = list(slices)
        self.devices: list[SliceDevice] = list(devices)
        self.not_targeting: list[SliceDevice] = list(not_targeting)
        self.counter_sets: dict | None = counter_sets
        self.has_binding = any(d.binding_conditions for d in self.devices)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.pool}"


def _spec(slice_: dict) -> dict:
    return slice_.get("spec") or {}


def _generation(slice_: dict) -> int:
    return int((_spec(slice_).get("pool") or {}).get("generation") or 0)


def node_matches(node_info, node_name: str, all_nodes: bool, selector) -> bool:
    """NodeMatches: a node name, all nodes, or a node selector (nothing set: no)."""
    if node_name:
        return node_info.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return NodeSelector(selector).matches(node_info.labels, node_info.name)
    return False


class PoolIndex:
    """The slices of a run, indexed once; pools per node gathered on demand
    and kept (slices do not change during a run)."""

    def __init__(self, slices: list[dict], *, partitionable: bool, binding_order: str, sort_slices: bool,
                 ignore_grouped: bool = False):
        """`binding_order`: "" (no binding-condition ordering), "pools" (pools
        with binding-condition devices last: v1.36) or "slices" (also such
        slices last within a pool: v1.35). `ignore_grouped` (v1.37 without
        DRADeviceCompatibilityGroups): a slice whose devices use counter
        compatibility groups is ignored and does not count for its pool's
        completeness (which a newer generation of it still obsoletes)."""
        self.slices = slices
        self.partitionable = partitionable
        self.binding_order = binding_order
        self.sort_slices = sort_slices
        self.ignore_grouped = ignore_grouped
        self._grouped = frozenset(i for i, s in enumerate(slices) if _uses_compatibility_groups(s)) \
            if ignore_grouped else frozenset()
        self._on_node: dict[str, list[int]] = {}
        self._shared: list[int] = []
        self._by_pool: dict[tuple, list[int]] = {}
        self._selectors: dict[int, NodeSelector] = {}
        self._devices: dict[int, list[SliceDevice]] = {}
        self._pools: dict[str, list[Pool]] = {}
        self._counters: dict[tuple, list[int]] = {}  # pool -> its slices with shared counters
        self._foreign: list[Pool] | None = None
        self._no_slices: list[Pool] | None = None
        for i, s in enumerate(slices):
            spec = _spec(s)
            pool = spec.get("pool") or {}
            self._by_pool.setdefault((spec.get("driver", ""), pool.get("name", "")), []).append(i)
            if i in self._grouped:
                continue
            if spec.get("sharedCounters"):
                # Relevant for every node with partitionable devices (never
                # without): grouped per pool, see _gather.
                if partitionable:
                    self._counters.setdefault(
                        (spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")), []).append(i)
            elif spec.get("nodeName"):
                self._on_node.setdefault(spec["nodeName"], []).append(i)
            else:
                self._shared.append(i)

    def reuse_devices(self, other: "PoolIndex") -> None:
        """The devices `other` built for slices this index has too (the same
        objects), with what their selectors gave."""
        position = {id(s): i for i, s in enumerate(self.slices)}
        for j, devs in other._devices.items():
            i = position.get(id(other.slices[j]))
            if i is not None:
                self._devices.setdefault(i, devs)

    def slice_devices(self, i: int) -> list[SliceDevice]:
        devs = self._devices.get(i)
        if devs is None:
            s = self.slices[i]
            spec = _spec(s)
            driver = spec.get("driver", "")
            pool = (spec.get("pool") or {}).get("name", "")
            devs = [SliceDevice((driver, pool, d.get("name", "")), d, s) for d in spec.get("devices") or ()]
            self._devices[i] = devs
        return devs

    def pools_for_node(self, node_info) -> list[Pool]:
        pools = self._pools.get(node_info.name)
        if pools is None:
            pools = self._pools[node_info.name] = self._gather(node_info)
        return pools

    def _relevant(self, i: int, node_info) -> bool:
        spec = _spec(self.slices[i])
        if not self.partitionable and (spec.get("perDeviceNodeSelection") is not None or spec.get("sharedCounters")):
            return False
        if spec.get("sharedCounters"):
            return True
        node_name, all_nodes, sel = spec.get("nodeName") or "", bool(spec.get("allNodes")), spec.get("nodeSelector")
        if node_name or all_nodes or sel is not None:
            if sel is not None and not node_name and not all_nodes:
                ns = self._selectors.get(i)
                if ns is None:
                    ns = self._selectors[i] = NodeSelector(sel)
                return ns.matches(node_info.labels, node_info.name)
            return node_matches(node_info, node_name, all_nodes, sel)
        if spec.get("perDeviceNodeSelection"):
            for d in spec.get("devices") or ():
                if node_matches(node_info, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector")):
                    return True
        return False

    def _gather(self, node_info) -> list[Pool]:
        on_node = [i for i in self._on_node.get(node_info.name, ()) if self._relevant(i, node_info)]
        shared = [i for i in self._shared if self._relevant(i, node_info)]
        if not on_node and not shared:
            # Most nodes of a cluster: only the shared-counter pools it
            # reaches no slice of, the same list for every such node.
            out = self._no_slices
            if out is None:
                out = self._no_slices = self._ordered(list(self._foreign_pools()))
            return out
        pids = {self._pid(i) for i in on_node} | {self._pid(i) for i in shared}
        # Slices with shared counters are relevant for every node. A pool
        # the node reaches no other slice of looks the same from every node:
        # no devices for it, it matters only when incomplete or invalid
        # (_foreign_pools, computed once).
        counters = sorted(i for pid in pids for i in self._counters.get(pid, ()))
        if self.sort_slices:
            # v1.36: the node's own slices, then the shared ones (then sorted per pool).
            chosen = sorted(on_node) + sorted(shared + counters)
        else:
            chosen = sorted(on_node + shared + counters)
        if self.binding_order == "slices":
            # v1.35: slices with binding-condition devices are added last
            # (node-selected ones only; shared-counter slices keep their place).
            def late(i):
                spec = _spec(self.slices[i])
                return not spec.get("sharedCounters") and any(
                    d.get("bindingConditions") for d in spec.get("devices") or ())
            chosen = [i for i in chosen if not late(i)] + [i for i in chosen if late(i)]
        pools = self._pools_of(chosen)
        pools.extend(p for p in self._foreign_pools() if (p.driver, p.pool) not in pids)
        return self._ordered(pools)

    def _pid(self, i: int) -> tuple:
        spec = _spec(self.slices[i])
        return spec.get("driver", ""), (spec.get("pool") or {}).get("name", "")

    def _foreign_pools(self) -> list[Pool]:
        """The pools of shared-counter slices as a node that reaches none of
        their other slices sees them, kept when incomplete or invalid."""
        out = self._foreign
        if out is None:
            out = self._foreign = [p for p in self._pools_of(sorted(i for v in self._counters.values() for i in v))
                                   if p.incomplete or p.invalid]
        return out

    def _ordered(self, pools: list[Pool]) -> list[Pool]:
        """By driver then pool name; with binding-condition support, pools
        with such devices after all others."""
        pools.sort(key=lambda p: (p.driver, p.pool))
        if not self.binding_order:
            return pools
        return [p for p in pools if not p.has_binding] + [p for p in pools if p.has_binding]

    def _pools_of(self, chosen: list[int]) -> list[Pool]:
        groups: dict[tuple, list[int]] = {}
        for i in chosen:
            pid = self._pid(i)
            gen = _generation(self.slices[i])
            current = groups.get(pid)
            if current is None:
                groups[pid] = [i]
                continue
            cur_gen = _generation(self.slices[current[0]])
            if gen < cur_gen:
                continue
            if gen > cur_gen:
                groups[pid] = [i]
                continue
            current.append(i)
        result = []
        for pid, members in groups.items():
            count = int((_spec(self.slices[members[0]]).get("pool") or {}).get("resourceSliceCount") or 0)
            all_for_pool = None
            if len(members) != count:
                gen = _generation(self.slices[members[0]])
                obsolete = False
                all_for_pool = []
                for i in self._by_pool.get(pid, ()):
                    g = _generation(self.slices[i])
                    if g == gen:
                        if i not in self._grouped:
                            all_for_pool.append(i)
                    elif g > gen:
                        obsolete = True
                        break
                if obsolete:
                    continue
                if len(all_for_pool) != count:
                    result.append(Pool(pid[0], pid[1], incomplete=True))
                    continue
            result.append(self._build(pid, members, all_for_pool))
        return result

    def _build(self, pid, members: list[int], all_for_pool) -> Pool:
        if self.sort_slices:
            members = sorted(members, key=lambda i: self.slices[i]["metadata"]["name"])
        if self.partitionable:
            counter_slices = [i for i in members if _spec(self.slices[i]).get("sharedCounters")]
            device_slices = [i for i in members if not _spec(self.slices[i]).get("sharedCounters")]
        else:
            counter_slices, device_slices = [], members
        devices: list[SliceDevice] = []
        seen = set()
        for i in device_slices:
            for d in self.slice_devices(i):
                if d.name in seen:
                    return Pool(pid[0], pid[1], invalid=True, invalid_reason=f"duplicate device name {d.name}")
                seen.add(d.name)
                devices.append(d)
        slices = [self.slices[i] for i in device_slices]
        if not self.partitionable:
            return Pool(pid[0], pid[1], slices=slices, devices=devices)
        counter_sets: dict[str, dict] = {}
        for i in counter_slices:
            for cs in _spec(self.slices[i]).get("sharedCounters") or ():
                name = cs.get("name", "")
                if name in counter_sets:
                    return Pool(pid[0], pid[1], invalid=True, invalid_reason=f"duplicate counter set name {name}")
                counter_sets[name] = {n: parse_quantity((c or {}).get("value", "0"))
                                      for n, c in (cs.get("counters") or {}).items()}
        reason = _check_consumption(counter_sets, [d for i in members for d in self.slice_devices(i)])
        if reason:
            return Pool(pid[0], pid[1], invalid=True, invalid_reason=reason)
        if all_for_pool is None or len(members) == len(all_for_pool):
            return Pool(pid[0], pid[1], slices=slices, devices=devices, counter_sets=counter_sets)
        names = {self.slices[i]["metadata"]["name"] for i in members}
        not_targeting = [d for i in all_for_pool if self.slices[i]["metadata"]["name"] not in names
                         for d in self.slice_devices(i)]
        reason = _check_consumption(counter_sets, not_targeting)
        if reason:
            return Pool(pid[0], pid[1], invalid=True, invalid_reason=reason)
        return Pool(pid[0], pid[1], slices=slices, devices=devices, not_targeting=not_targeting,
                    counter_sets=counter_sets)


def _uses_compatibility_groups(slice_: dict) -> bool:
    """sliceUsesCompatibilityGroups: some device's counter consumption names
    compatibility groups."""
    for d in _spec(slice_).get("devices") or ():
        for dcc in d.get("consumesCounters") or ():
            if dcc.get("compatibilityGroups"):
                return True
    return False


def _check_consumption(counter_sets: dict, devices) -> str:
    """validateDeviceCounterConsumption (a device's counters are checked in
    name order; upstream walks a Go map)."""
    for d in devices:
        for dcc in d.consumes:
            set_name = dcc.get("counterSet", "")
            cs = counter_sets.get(set_name)
            if cs is None:
                return f"counter set {set_name} not found"
            for name in sorted(dcc.get("counters") or {}):
                if name not in cs:
                    return f"counter {name} not found in counter set {set_name}"
    return ""
