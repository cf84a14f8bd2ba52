"""ResourceClaims of a pod, and the scheduler's shared view of DRA objects.

`DRAManager` plays the part of upstream's SharedDRAManager for one run: the
claims (the assume cache), claims whose allocation is in flight (reserved by
an earlier pod of a `simulate` run but not yet written), the devices already
allocated, the DeviceClasses and the ResourceSlices. Everything derived from
the static objects (slice indices, per-node pools, CEL inputs of devices) is
computed once per run, not per pod.
"""

from __future__ import annotations

from ...api.labels import NodeSelector


class ClaimError(Exception):
    """The pod cannot be scheduled now because of its claims (message = upstream's)."""


def claim_key(claim: dict) -> str:
    meta = claim["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def claim_uid(claim: dict) -> str:
    return claim["metadata"].get("uid") or claim_key(claim)


def allocation_of(claim: dict):
    return (claim.get("status") or {}).get("allocation")


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


def check_is_for_pod(pod: dict, claim: dict) -> None:
    """resourceclaim.IsForPod: the claim must be controlled by the pod."""
    pmeta, cmeta = pod["metadata"], claim["metadata"]
    owned = any(
        ref.get("controller") and ref.get("uid") == pmeta.get("uid") for ref in cmeta.get("ownerReferences") or ())
    if cmeta.get("namespace") != pmeta.get("namespace") or not owned:
        raise ClaimError(
            f"ResourceClaim {cmeta.get('namespace')}/{cmeta['name']} was not created for pod "
            f"{pmeta.get('namespace')}/{pmeta['name']} (pod is not owner)")


def _go_q(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


class SliceDevice:
    """One device of one ResourceSlice, with its CEL input built on demand."""

    __slots__ = ("id", "device", "slice", "name", "_cel")

    def __init__(self, device_id, device: dict, slice_: dict):
        self.id = device_id  # (driver, pool, device name)
        self.device = device
        self.slice = slice_
        self.name = device_id[2]
        self._cel = None

    @property
    def cel(self):
        c = self._cel
        if c is None:
            from .cel_env import CelDevice

            c = self._cel = CelDevice(self.id[0], self.device)
        return c

    def label(self) -> str:
        return "/".join(self.id)


class Pool:
    """A resource pool as the allocator sees it from one node (GatherPools)."""

    __slots__ = ("driver", "pool", "incomplete", "invalid", "invalid_reason", "slices", "devices")

    def __init__(self, driver, pool, *, incomplete=False, invalid=False, invalid_reason="", slices=(), devices=()):
        self.driver = driver
        self.pool = pool
        self.incomplete = incomplete
        self.invalid = invalid
        self.invalid_reason = invalid_reason
        self.slices = list(slices)
        self.devices: list[SliceDevice] = list(devices)

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.pool}"


def _spec(slice_: dict) -> dict:
    return slice_.get("spec") or {}


class DRAManager:
    def __init__(self, cluster):
        self.cluster = cluster
        self.claims: dict[str, dict] = cluster.resource_claims
        self.classes: dict[str, dict] = cluster.device_classes
        # Upstream lists slices from an informer (no defined order): kschedx
        # takes them by name, and pools by driver then pool name.
        self.slices: list[dict] = sorted(cluster.resource_slices.values(), key=lambda s: s["metadata"]["name"])
        self.in_flight: dict[str, dict] = {}  # claim uid -> claim with the allocation being made
        self._allocated: dict | None = None
        self._index = None
        self._pools_by_node: dict[str, list[Pool]] = {}
        self._devices_by_slice: dict[int, list[SliceDevice]] = {}

    def reuse_devices(self, other: "DRAManager") -> None:
        """Take the devices `other` built for slices this manager has too
        (the same objects), with what their selectors gave."""
        mine = {id(s): s for s in self.slices}
        for key, devs in other._devices_by_slice.items():
            if devs and devs[0].slice is mine.get(key):
                self._devices_by_slice[key] = devs

    # -- claims -------------------------------------------------------------------
    def get_claim(self, namespace: str, name: str) -> dict:
        claim = self.claims.get(f"{namespace}/{name}")
        if claim is None:
            raise ClaimError(f'could not find ResourceClaim "{namespace}/{name}"')
        return claim

    def claim_has_pending_allocation(self, uid: str) -> bool:
        return uid in self.in_flight

    def signal_claim_pending_allocation(self, uid: str, allocated_claim: dict) -> None:
        self.in_flight[uid] = allocated_claim

    def remove_claim_pending_allocation(self, uid: str) -> bool:
        return self.in_flight.pop(uid, None) is not None

    def allocated_devices(self) -> dict:
        """ListAllAllocatedDevices: device id -> the claim holding it (admin
        access results do not count), including allocations in flight."""
        if self._allocated is None:
            self._allocated = {}
            for key, claim in sorted(self.claims.items()):
                _add_allocated(self._allocated, claim, key)
        if not self.in_flight:
            return self._allocated
        out = dict(self._allocated)
        for claim in self.in_flight.values():
            _add_allocated(out, claim, claim_key(claim))
        return out

    # -- slices and pools ------------------------------------------------------------
    def _build_index(self):
        by_node: dict[str, list[int]] = {}
        all_nodes: list[int] = []
        with_selector: list[tuple[int, NodeSelector]] = []
        by_pool: dict[tuple, list[int]] = {}
        for i, s in enumerate(self.slices):
            spec = _spec(s)
            pool = spec.get("pool") or {}
            by_pool.setdefault((spec.get("driver", ""), pool.get("name", "")), []).append(i)
            # DRAPartitionableDevices is off: such slices are not used at all.
            if spec.get("perDeviceNodeSelection") is not None or spec.get("sharedCounters"):
                continue
            if spec.get("nodeName"):
                by_node.setdefault(spec["nodeName"], []).append(i)
            elif spec.get("allNodes"):
                all_nodes.append(i)
            elif spec.get("nodeSelector") is not None:
                with_selector.append((i, NodeSelector(spec["nodeSelector"])))
            # else: an unknown future way of node selection, ignored as upstream does.
        self._index = (by_node, all_nodes, with_selector, by_pool)

    def pools_for_node(self, node_info) -> list[Pool]:
        pools = self._pools_by_node.get(node_info.name)
        if pools is None:
            pools = self._pools_by_node[node_info.name] = self._gather_pools(node_info)
        return pools

    def _gather_pools(self, node_info) -> list[Pool]:
        if self._index is None:
            self._build_index()
        by_node, all_nodes, with_selector, by_pool = self._index
        chosen = list(by_node.get(node_info.name, ())) + list(all_nodes)
        for i, sel in with_selector:
            if sel.matches(node_info.labels, node_info.name):
                chosen.append(i)
        chosen.sort()
        pools: dict[tuple, list[dict]] = {}
        for i in chosen:
            s = self.slices[i]
            spec = _spec(s)
            pool = spec.get("pool") or {}
            pid = (spec.get("driver", ""), pool.get("name", ""))
            gen = int(pool.get("generation") or 0)
            current = pools.get(pid)
            if current is None:
                pools[pid] = [s]
                continue
            cur_gen = int((_spec(current[0]).get("pool") or {}).get("generation") or 0)
            if gen < cur_gen:
                continue
            if gen > cur_gen:
                pools[pid] = [s]
                continue
            current.append(s)
        result = []
        for pid in sorted(pools):
            slices = pools[pid]
            first_pool = _spec(slices[0]).get("pool") or {}
            count = int(first_pool.get("resourceSliceCount") or 0)
            if len(slices) == count:
                result.append(self._build_pool(pid, slices))
                continue
            gen = int(first_pool.get("generation") or 0)
            obsolete = False
            all_for_pool = []
            for i in by_pool.get(pid, ()):
                g = int((_spec(self.slices[i]).get("pool") or {}).get("generation") or 0)
                if g == gen:
                    all_for_pool.append(i)
                elif g > gen:
                    obsolete = True
                    break
            if obsolete:
                continue
            if len(all_for_pool) != count:
                result.append(Pool(pid[0], pid[1], incomplete=True))
                continue
            result.append(self._build_pool(pid, slices))
        return result

    def _build_pool(self, pid, slices) -> Pool:
        seen = set()
        devices: list[SliceDevice] = []
        for s in slices:
            for d in self._slice_devices(s):
                if d.name in seen:
                    return Pool(pid[0], pid[1], invalid=True, invalid_reason=f"duplicate device name {d.name}")
                seen.add(d.name)
                devices.append(d)
        return Pool(pid[0], pid[1], slices=slices, devices=devices)

    def _slice_devices(self, s: dict) -> list[SliceDevice]:
        devs = self._devices_by_slice.get(id(s))
        if devs is None:
            spec = _spec(s)
            driver = spec.get("driver", "")
            pool = (spec.get("pool") or {}).get("name", "")
            devs = [SliceDevice((driver, pool, d.get("name", "")), d, s) for d in spec.get("devices") or ()]
            self._devices_by_slice[id(s)] = devs
        return devs


def _add_allocated(out: dict, claim: dict, key: str) -> None:
    alloc = allocation_of(claim)
    if not alloc:
        return
    for r in (alloc.get("devices") or {}).get("results") or ():
        if r.get("adminAccess"):
            continue
        out.setdefault((r.get("driver", ""), r.get("pool", ""), r.get("device", "")), key)
