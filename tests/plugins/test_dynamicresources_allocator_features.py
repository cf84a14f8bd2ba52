"""The structured allocator with the features v1.36 turns on: partitionable
devices, device taints, binding conditions, consumable capacity (with
multi-allocatable devices and distinctAttribute), ported from upstream's
shared allocator table (structured/internal/allocatortesting, TestAllocator)
and run with the v1.36 allocators; plus what differs between the v1.35 and
v1.36 allocators for the same features (each check says which is which)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kschedx.plugins.dynamicresources.allocator import Allocator, AllocatorError, AllocatorFeatures, FailedOnNode
from kschedx.plugins.dynamicresources.claims import DRAManager
from kschedx.state.dra import AllocatedState

NODE1, NODE2 = "node-1", "node-2"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
CLASS_A, CLASS_B = "class-a", "class-b"
POOL1, POOL2 = "pool-1", "pool-2"
CS1, CS2 = "counter-set-1", "counter-set-2"
CAP0, CAP1 = "capacity-0", "capacity-1"


def feats(*, v136=True, **on) -> AllocatorFeatures:
    """Only the named features on, like upstream's Features{...} literals;
    `v136`: the allocators of v1.36.3 (else v1.35's)."""
    base = dict(admin_access=False, prioritized_list=False, partitionable_devices=False, device_taints=False,
                device_binding_and_status=False, consumable_capacity=False)
    base.update(on)
    return AllocatorFeatures(subrequest_fixes=v136, sorted_pools=v136, rollback=v136, **base)


def node(name, region="region-1"):
    return SimpleNamespace(name=name, labels={"region": region, "planet": "earth"})


def device_class(name, driver, extra=None):
    expr = f'device.driver == "{driver}"' + (f" && {extra}" if extra else "")
    return {"metadata": {"name": name}, "spec": {"selectors": [{"cel": {"expression": expr}}]}}


def multi_class(name, driver, multi: bool):
    return device_class(name, driver, f"device.allowMultipleAllocations == {str(multi).lower()}")


def device(name, capacity=None, attributes=None, *, counters=None, taints=None, binding=None, multi=False,
           policy_range=None, policy_values=None, **extra):
    d = {"name": name}
    caps = {k: {"value": v} for k, v in capacity.items()} if isinstance(capacity, dict) else {}
    if counters:
        d["consumesCounters"] = [{"counterSet": cs, "counters": {n: {"value": v} for n, v in c.items()}}
                                 for cs, c in counters]
        if capacity == "fromCounters":
            caps = {n: {"value": v} for _, c in counters for n, v in c.items()}
    if policy_range:  # upstream's withCapacityRequestPolicyRange: default 2, min 2, step 2, max 4
        for n, v in policy_range.items():
            caps[n] = {"value": v, "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}}}
    if policy_values:  # withCapacityRequestPolicyValidValues(default, capacity, extra)
        default, capmap, more = policy_values
        for n, v in capmap.items():
            caps[n] = {"value": v, "requestPolicy": {"default": default, "validValues": [default, *more]}}
    if caps:
        d["capacity"] = caps
    if attributes:
        d["attributes"] = attributes
    if taints:
        d["taints"] = list(taints)
    if binding:
        d["bindingConditions"], d["bindingFailureConditions"] = binding
    if multi:
        d["allowMultipleAllocations"] = True
    d.update(extra)
    return d


def rslice(name, node_sel, pool, driver, *devices, count=1, generation=1, counter_sets=None):
    spec = {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count}}
    if devices:
        spec["devices"] = list(devices)
    if counter_sets:
        spec["sharedCounters"] = [{"name": n, "counters": {k: {"value": v} for k, v in c.items()}}
                                  for n, c in counter_sets]
    if node_sel == "all":
        spec["allNodes"] = True
    elif node_sel == "per-device":
        spec["perDeviceNodeSelection"] = True
    elif isinstance(node_sel, dict):
        spec["nodeSelector"] = node_sel
    else:
        spec["nodeName"] = node_sel
    return {"metadata": {"name": name}, "spec": spec}


def request(name, cls, count=1, *selectors, mode="ExactCount", admin=None, tolerations=None, capacity=None):
    ex = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        ex["count"] = count
    if selectors:
        ex["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if admin is not None:
        ex["adminAccess"] = admin
    if tolerations:
        ex["tolerations"] = list(tolerations)
    if capacity is not None:
        ex["capacity"] = {"requests": {CAP0: capacity}}
    return {"name": name, "exactly": ex}


def sub(name, cls, count=1, *selectors, tolerations=None, capacity=None, mode="ExactCount"):
    s = {"name": name, "deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        s["count"] = count
    if selectors:
        s["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if tolerations:
        s["tolerations"] = list(tolerations)
    if capacity is not None:
        s["capacity"] = {"requests": {CAP0: capacity}}
    return s


def first_available(name, *subs):
    return {"name": name, "firstAvailable": list(subs)}


def claim(name, *requests, constraints=None):
    spec = {"devices": {"requests": list(requests)}}
    if constraints:
        spec["devices"]["constraints"] = constraints
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}


def run(claims, classes, slices, on_node, features, *, allocated=(), capacity=None):
    """(results or None, the allocator run)."""
    cluster = SimpleNamespace(resource_claims={}, device_classes={c["metadata"]["name"]: c for c in classes},
                              resource_slices={s["metadata"]["name"]: s for s in slices})
    manager = DRAManager(SimpleNamespace(cluster=cluster), features)
    state = AllocatedState()
    for d in allocated:
        state.dedicated[d] = "default/other"
    from kschedx.api.quantity import parse_quantity
    for d, caps in (capacity or {}).items():
        state.capacity[d] = {n: parse_quantity(v) for n, v in caps.items()}
    r = Allocator(manager, state, features).new_run(on_node, claims)
    return r.allocate(), r


def allocate(*args, **kw):
    return run(*args, **kw)[0]


def picks(out):
    """Per claim: [(request, pool, device, consumedCapacity or None, shareID given)]."""
    return [[(r["request"], r["pool"], r["device"], r.get("consumedCapacity"), "shareID" in r)
             for r in a["devices"]["results"]] for a in out]


def simple(out):
    return [[(r["request"], r["pool"], r["device"]) for r in a["devices"]["results"]] for a in out]


def local(name):
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]}


MEM = 'device.capacity["driver-a"].memory.compareTo(quantity("{}")) >= 0'
CLASSES = [device_class(CLASS_A, DRIVER_A)]
PD = feats(partitionable_devices=True)
PD_PL = feats(partitionable_devices=True, prioritized_list=True)


# -- partitionable devices ---------------------------------------------------------------
def counter_slice(name="slice-2", pool=POOL1, count=2, sets=((CS1, {"memory": "8Gi"}),), node_sel=NODE1):
    return rslice(name, node_sel, pool, DRIVER_A, count=count, counter_sets=sets)


def mem_device(name, mem, counter_set=CS1):
    return device(name, "fromCounters", counters=[(counter_set, {"memory": mem})])


def test_partitionable_single_device():
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", counters=[(CS1, {"memory": "4Gi"})]), count=2),
         counter_slice()]
    out = allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, s, node(NODE1), PD)
    assert simple(out) == [[("req-0", POOL1, "device-1")]]
    assert out[0]["nodeSelector"] == local(NODE1)


def test_partitionable_prioritized_list():
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, mem_device("device-1", "4Gi"), mem_device("device-2", "6Gi"),
                mem_device("device-3", "4Gi"), count=2), counter_slice()]
    c = claim("claim-0", request("req-0", CLASS_A),
              first_available("req-1", sub("subReq-0", CLASS_A, 1, MEM.format("6Gi")),
                              sub("subReq-1", CLASS_A, 1, MEM.format("4Gi"))))
    assert simple(allocate([c], CLASSES, s, node(NODE1), PD_PL)) == [
        [("req-0", POOL1, "device-1"), ("req-1/subReq-1", POOL1, "device-3")]]


def test_partitionable_multiple_devices():
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, mem_device("device-1", "4Gi"), mem_device("device-2", "6Gi"),
                mem_device("device-3", "4Gi"), count=2), counter_slice()]
    c = claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A))
    assert simple(allocate([c], CLASSES, s, node(NODE1), PD)) == [
        [("req-0", POOL1, "device-1"), ("req-1", POOL1, "device-3")]]


def test_partitionable_multiple_counters():
    def d(name, c1, c2):
        return device(name, "fromCounters", counters=[(CS1, c1), (CS2, c2)])
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A,
                d("device-1", {"memory": "4Gi", "cpus": "6"}, {"cpus": "4", "memory": "2Gi"}),
                d("device-2", {"memory": "6Gi", "cpus": "4"}, {"cpus": "6", "memory": "6Gi"}),
                d("device-3", {"memory": "4Gi", "cpus": "4"}, {"cpus": "4", "memory": "4Gi"}), count=2),
         counter_slice(sets=((CS1, {"cpus": "8", "memory": "18Gi"}), (CS2, {"cpus": "12", "memory": "18Gi"})))]
    c = claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A))
    assert simple(allocate([c], CLASSES, s, node(NODE1), PD)) == [
        [("req-0", POOL1, "device-2"), ("req-1", POOL1, "device-3")]]


def test_partitionable_multiple_pools_with_allocated_devices():
    def d(name, cpus, mem):
        return device(name, "fromCounters", counters=[(CS1, {"cpus": cpus, "memory": mem})])
    sets = ((CS1, {"cpus": "8", "memory": "18Gi"}),)
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, d("device-1", "6", "4Gi"), d("device-2", "4", "6Gi"),
                d("device-3", "4", "4Gi"), count=2), counter_slice("slice-2", POOL1, sets=sets),
         rslice("slice-3", NODE1, POOL2, DRIVER_A, d("device-1", "6", "4Gi"), d("device-2", "1", "7Gi"),
                d("device-3", "1", "7Gi"), count=2), counter_slice("slice-4", POOL2, sets=sets)]
    allocated = [(DRIVER_A, POOL1, "device-2"), (DRIVER_A, POOL1, "device-3"), (DRIVER_A, POOL2, "device-1")]
    c = claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A))
    assert simple(allocate([c], CLASSES, s, node(NODE1), PD, allocated=allocated)) == [
        [("req-0", POOL2, "device-2"), ("req-1", POOL2, "device-3")]]


def test_partitionable_unused_counters_in_counter_set():
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", counters=[(CS1, {"memory": "5Gi"})]),
                device("device-2", counters=[(CS1, {"memory": "4Gi"})]),
                device("device-3", counters=[(CS1, {"memory": "4Gi"})]), count=2),
         counter_slice(sets=((CS1, {"memory": "8Gi", "unused": "1Gi"}),))]
    assert simple(allocate([claim("claim-0", request("req-0", CLASS_A, 2))], CLASSES, s, node(NODE1), PD)) == [
        [("req-0", POOL1, "device-2"), ("req-0", POOL1, "device-3")]]


@pytest.mark.parametrize("used, mem2", [("16Gi", "16Gi"), ("overallocated", "20Gi")])
def test_partitionable_no_counters_left(used, mem2):
    # device-2 is allocated and uses (or even overuses) the pool's counters.
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, mem_device("device-1", "4Gi"), mem_device("device-2", mem2)),
         counter_slice(sets=((CS1, {"memory": "18Gi"}),), count=1)]
    s[0]["spec"]["pool"]["resourceSliceCount"] = 2
    s[1]["spec"]["pool"]["resourceSliceCount"] = 2
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, s, node(NODE1), PD,
                    allocated=[(DRIVER_A, POOL1, "device-2")]) is None


def test_partitionable_disabled_device_consuming_counters_is_not_picked():
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", counters=[(CS1, {"memory": "4Gi"})])),
         counter_slice(count=1, sets=((CS1, {"memory": "18Gi"}),))]
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, s, node(NODE1), feats()) is None


def test_partitionable_disabled_other_device_without_counters_is_picked():
    # The counter-set slice is skipped without the feature, yet counts for the
    # pool's completeness (all slices of the generation are looked at).
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", counters=[(CS1, {"memory": "4Gi"})]),
                device("device-2"), count=2), counter_slice(sets=((CS1, {"memory": "18Gi"}),))]
    assert simple(allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, s, node(NODE1), feats())) == [
        [("req-0", POOL1, "device-2")]]


def test_partitionable_disabled_per_device_node_selection_slice_is_ignored():
    s = [rslice("slice-1", "per-device", POOL1, DRIVER_A, device("device-2", nodeName=NODE1))]
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, s, node(NODE1), feats()) is None


def test_per_device_node_selection_by_node_name():
    s = [rslice("slice-1", "per-device", POOL1, DRIVER_A,
                dict(mem_device("device-1", "4Gi"), nodeName=NODE1), dict(mem_device("device-2", "6Gi"), nodeName=NODE2),
                count=2),
         counter_slice(node_sel="per-device", sets=((CS1, {"memory": "18Gi"}),))]
    c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, 1, MEM.format("6Gi")),
                                         sub("subReq-1", CLASS_A, 1, MEM.format("4Gi"))))
    out = allocate([c], CLASSES, s, node(NODE1), PD_PL)
    assert simple(out) == [[("req-0/subReq-1", POOL1, "device-1")]]
    assert out[0]["nodeSelector"] == local(NODE1)


def test_per_device_node_selection_by_node_selector():
    region = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}]}
    s = [rslice("slice-1", "per-device", POOL1, DRIVER_A, dict(mem_device("device-1", "4Gi"), nodeSelector=region),
                count=2),
         counter_slice(node_sel="per-device", sets=((CS1, {"memory": "18Gi"}),))]
    out = allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, s, node(NODE1), PD_PL)
    assert simple(out) == [[("req-0", POOL1, "device-1")]]
    assert out[0]["nodeSelector"] == region


def test_per_device_node_selection_mixed_devices_pin_to_node():
    region = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}]}
    a = [dict(mem_device("device-1", "4Gi"), nodeSelector=region), dict(mem_device("device-2", "4Gi"), nodeName=NODE1),
         dict(mem_device("device-3", "4Gi"), allNodes=True)]
    b = [device(f"device-{i}", "fromCounters", counters=[(CS2, {"memory": "4Gi"})]) for i in (1, 2, 3)]
    s = [rslice("slice-1", "per-device", POOL1, DRIVER_A, *a, count=2),
         counter_slice(node_sel="per-device", sets=((CS1, {"memory": "18Gi"}),)),
         rslice("slice-3", NODE1, POOL2, DRIVER_B, *b, count=2),
         rslice("slice-4", NODE1, POOL2, DRIVER_B, count=2, counter_sets=((CS2, {"memory": "12Gi"}),))]
    c = claim("claim-0", request("req-0", CLASS_A, 3), request("req-1", CLASS_B, 3))
    out = allocate([c], [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)], s, node(NODE1), PD_PL)
    assert [(r, p) for r, p, _ in simple(out)[0]] == [("req-0", POOL1)] * 3 + [("req-1", POOL2)] * 3
    assert out[0]["nodeSelector"] == local(NODE1)


def test_partitionable_attribute_selector():
    def d(name, special, cpu):
        return device(name, attributes={"special": {"bool": special}},
                      counters=[(CS1, {cpu: "1"}), (CS2, {"mem": "10Gi"})])
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, d("device-1", True, "cpu1"), d("device-2", False, "cpu2"),
                d("device-3", False, "cpu3"), count=2),
         counter_slice(sets=((CS1, {"cpu1": "1", "cpu2": "1", "cpu3": "1"}), (CS2, {"mem": "30Gi"})))]
    c = claim("claim-0", request("req-0", CLASS_A, 2),
              request("req-1", CLASS_A, 1, 'device.attributes["driver-a"].special'))
    assert simple(allocate([c], CLASSES, s, node(NODE1), PD)) == [
        [("req-0", POOL1, "device-2"), ("req-0", POOL1, "device-3"), ("req-1", POOL1, "device-1")]]


@pytest.mark.parametrize("dup, reason", [
    ("counter-set", "duplicate counter set name counter-set-1"),
    ("unknown-set", "counter set counter-set-9 not found"),
    ("unknown-counter", "counter gpus not found in counter set counter-set-1"),
])
def test_partitionable_invalid_pools(dup, reason):
    devs = [mem_device("device-1", "4Gi")]
    sets = ((CS1, {"memory": "8Gi"}),)
    if dup == "counter-set":
        sets = ((CS1, {"memory": "8Gi"}), (CS1, {"memory": "8Gi"}))
    elif dup == "unknown-set":
        devs = [device("device-1", counters=[("counter-set-9", {"memory": "4Gi"})])]
    else:
        devs = [device("device-1", counters=[(CS1, {"gpus": "1"})])]
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, *devs, count=2), counter_slice(sets=sets)]
    with pytest.raises(FailedOnNode, match="invalid resource pools were encountered"):
        allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, s, node(NODE1), PD)
    from kschedx.plugins.dynamicresources.pools import PoolIndex
    pools = PoolIndex(sorted(s, key=lambda x: x["metadata"]["name"]), partitionable=True, binding_order="",
                      sort_slices=True).pools_for_node(node(NODE1))
    assert [(p.invalid, p.invalid_reason) for p in pools] == [(True, reason)]


def test_counter_slice_of_another_node_counts():
    # Slices with shared counters are relevant for every node.
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, mem_device("device-1", "4Gi"), count=2),
         counter_slice(node_sel=NODE2)]
    assert simple(allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, s, node(NODE1), PD)) == [
        [("req-0", POOL1, "device-1")]]


# -- device taints ------------------------------------------------------------------------
NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
NO_EXECUTE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
NONE_EFFECT = {"key": "taint-key", "value": "taint-value", "effect": "None"}
TOL_NO_SCHEDULE = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
TOL_NO_EXECUTE = {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
DT = feats(device_taints=True)


def tainted(*devs):
    return [rslice("slice-1", NODE1, POOL1, DRIVER_A, *devs)]


def test_tainted_devices_are_not_picked():
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES,
                    tainted(device("device-1", taints=[NO_SCHEDULE]), device("device-2", taints=[NO_EXECUTE])),
                    node(NODE1), DT) is None
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES,
                    tainted(device("device-1", taints=[NO_SCHEDULE, NO_EXECUTE])), node(NODE1), DT) is None


def test_tolerated_taint_and_tolerations_in_the_result():
    out = allocate([claim("claim-0", request("req-0", CLASS_A, tolerations=[TOL_NO_EXECUTE]))], CLASSES,
                   tainted(device("device-1", taints=[NO_SCHEDULE]), device("device-2", taints=[NO_EXECUTE])),
                   node(NODE1), DT)
    assert simple(out) == [[("req-0", POOL1, "device-2")]]
    assert out[0]["devices"]["results"][0]["tolerations"] == [TOL_NO_EXECUTE]
    out = allocate([claim("claim-0", request("req-0", CLASS_A, tolerations=[TOL_NO_SCHEDULE, TOL_NO_EXECUTE]))],
                   CLASSES, tainted(device("device-1", taints=[NO_SCHEDULE, NO_EXECUTE])), node(NODE1), DT)
    assert out[0]["devices"]["results"][0]["tolerations"] == [TOL_NO_SCHEDULE, TOL_NO_EXECUTE]


def test_tolerations_of_a_subrequest():
    c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A),
                                         sub("subReq-1", CLASS_A, tolerations=[TOL_NO_EXECUTE])))
    out = allocate([c], CLASSES, tainted(device("device-1", taints=[NO_SCHEDULE]), device("device-2", taints=[NO_EXECUTE])),
                   node(NODE1), feats(device_taints=True, prioritized_list=True))
    assert simple(out) == [[("req-0/subReq-1", POOL1, "device-2")]]


@pytest.mark.parametrize("features, taints, picked", [
    (DT, [NONE_EFFECT], True),  # effect None never blocks
    (feats(), [NO_SCHEDULE, NO_EXECUTE], True),  # feature off: taints ignored
])
def test_taints_that_do_not_block(features, taints, picked):
    out = allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, tainted(device("device-1", taints=taints)),
                   node(NODE1), features)
    assert (out is not None) == picked


def test_tainted_prioritized_list_and_admin_access_and_all():
    # A tainted device: the subrequest falls through, admin access does not
    # bypass taints, "All" finds nothing usable.
    s = tainted(device("device-1", taints=[NO_SCHEDULE]))
    c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_B), sub("subReq-1", CLASS_A)))
    classes = [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)]
    assert allocate([c], classes, s, node(NODE1), feats(device_taints=True, prioritized_list=True)) is None
    assert simple(allocate([c], classes, s, node(NODE1), feats(prioritized_list=True))) == [
        [("req-0/subReq-1", POOL1, "device-1")]]
    admin = claim("claim-0", request("req-0", CLASS_A, admin=True))
    allocated = [(DRIVER_A, POOL1, "device-1"), (DRIVER_A, POOL1, "device-2")]
    assert allocate([admin], CLASSES, s, node(NODE1), feats(device_taints=True, admin_access=True),
                    allocated=allocated) is None
    out = allocate([admin], CLASSES, s, node(NODE1), feats(admin_access=True), allocated=allocated)
    assert out[0]["devices"]["results"][0]["adminAccess"] is True
    everything = claim("claim-0", request("req-0", CLASS_A, mode="All"))
    assert allocate([everything], CLASSES, s, node(NODE1), DT) is None
    assert simple(allocate([everything], CLASSES, s, node(NODE1), feats())) == [[("req-0", POOL1, "device-1")]]


# -- binding conditions ----------------------------------------------------------------------
BS = feats(device_binding_and_status=True)


def test_binding_conditions_copied_to_the_result():
    out = allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES,
                   [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", binding=(["IsPrepare"], ["BindingFailed"])))],
                   node(NODE1), BS)
    r = out[0]["devices"]["results"][0]
    assert (r["bindingConditions"], r["bindingFailureConditions"]) == (["IsPrepare"], ["BindingFailed"])
    assert out[0]["nodeSelector"] == local(NODE1)


def test_binding_conditions_with_and_without():
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"),
                device("device-2", binding=(["IsPrepare"], ["BindingFailed"])))]
    out = allocate([claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A))], CLASSES, s, node(NODE1), BS)
    assert simple(out) == [[("req-0", POOL1, "device-1"), ("req-1", POOL1, "device-2")]]
    assert "bindingConditions" not in out[0]["devices"]["results"][0]


def test_binding_conditions_without_the_feature():
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", binding=(["IsPrepare"], ["BindingFailed"])))]
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, s, node(NODE1), feats()) is None


def test_binds_to_node_pins_the_allocation_v136_only():
    earth = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "planet", "operator": "In", "values": ["earth"]}]}]}
    s = [rslice("slice-1", earth, POOL1, DRIVER_A, device("device-1", bindsToNode=True))]
    c = [claim("claim-0", request("req-0", CLASS_A))]
    assert allocate(c, CLASSES, s, node(NODE1), BS)[0]["nodeSelector"] == local(NODE1)
    # v1.35's experimental allocator does not know bindsToNode: the slice's selector.
    assert allocate(c, CLASSES, s, node(NODE1), feats(device_binding_and_status=True, v136=False))[0]["nodeSelector"] == earth


def test_partitionable_binding_conditions_multi_slices_in_name_order():
    s = [rslice("slice-4", NODE1, POOL1, DRIVER_A, dict(mem_device("device-1", "4Gi"),
                                                        bindingConditions=["IsPrepare"],
                                                        bindingFailureConditions=["BindingFailed"]), count=4),
         rslice("slice-3", NODE1, POOL1, DRIVER_A, count=4, counter_sets=((CS1, {"memory": "8Gi"}),)),
         rslice("slice-2", NODE1, POOL1, DRIVER_A, mem_device("device-2", "4Gi", CS2), count=4),
         rslice("slice-1", NODE1, POOL1, DRIVER_A, count=4, counter_sets=((CS2, {"memory": "8Gi"}),))]
    f = feats(partitionable_devices=True, device_binding_and_status=True)
    assert simple(allocate([claim("claim-0", request("req-0", CLASS_A, 2))], CLASSES, s, node(NODE1), f)) == [
        [("req-0", POOL1, "device-2"), ("req-0", POOL1, "device-1")]]


def test_partitionable_binding_conditions_and_taints():
    bound = dict(mem_device("device-1", "4Gi"), bindingConditions=["IsPrepare"], bindingFailureConditions=["BindingFailed"],
                 taints=[{"key": "key1", "value": "value1", "effect": "NoSchedule"}])
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, bound, mem_device("device-2", "4Gi"), count=2), counter_slice()]
    f = feats(partitionable_devices=True, device_binding_and_status=True, device_taints=True)
    assert allocate([claim("claim-0", request("req-0", CLASS_A, 2))], CLASSES, s, node(NODE1), f) is None
    tol = {"operator": "Exists", "key": "key1", "effect": "NoSchedule"}
    out = allocate([claim("claim-0", request("req-0", CLASS_A, 2, tolerations=[tol]))], CLASSES, s, node(NODE1), f)
    assert simple(out) == [[("req-0", POOL1, "device-1"), ("req-0", POOL1, "device-2")]]


def test_pools_with_binding_conditions_come_last():
    # Both pools fit; the one whose devices need binding conditions is tried
    # after the other although its name sorts first.
    s = [rslice("a-slice", NODE1, "a-pool", DRIVER_A, device("device-1", binding=(["Ready"], []))),
         rslice("b-slice", NODE1, "b-pool", DRIVER_A, device("device-1"))]
    for f in (BS, feats(device_binding_and_status=True, v136=False)):
        assert simple(allocate([claim("claim-0", request("req-0", CLASS_A))], CLASSES, s, node(NODE1), f)) == [
            [("req-0", "b-pool", "device-1")]]


# -- consumable capacity ------------------------------------------------------------------------
CC = feats(consumable_capacity=True)
MULTI = [multi_class(CLASS_A, DRIVER_A, True)]


def one_slice(*devs, count=1):
    return [rslice("slice-1", NODE1, POOL1, DRIVER_A, *devs, count=count)]


@pytest.mark.parametrize("sub_request", [False, True])
def test_capacity_request_without_the_feature(sub_request):
    if sub_request:
        c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, capacity="1"),
                                             sub("subReq-1", CLASS_A, capacity="1")))
        msg = "claim default/claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"
    else:
        c = claim("claim-0", request("req-0", CLASS_A, capacity="1"))
        msg = "claim default/claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature is disabled"
    f = feats(device_binding_and_status=True, prioritized_list=True)
    with pytest.raises(AllocatorError, match=msg):
        allocate([c], CLASSES, one_slice(device("device-1")), node(NODE1), f)
    # The v1.36 stable allocator (neither binding conditions nor consumable
    # capacity on) does not look at capacity requests at all.
    assert allocate([c], CLASSES, one_slice(device("device-1")), node(NODE1), feats(prioritized_list=True)) is not None


def test_capacity_request_of_a_capacity_the_device_lacks():
    out = allocate([claim("claim-0", request("req-0", CLASS_A, capacity="1"))], CLASSES,
                   one_slice(device("device-1", {CAP1: "1"}, multi=True)), node(NODE1), CC)
    assert out is None
    out = allocate([claim("claim-0", request("req-0", CLASS_A, mode="All", capacity="1"))], MULTI,
                   one_slice(device("device-1", {CAP1: "1"}, multi=True)), node(NODE1), CC)
    assert out is None


def test_multi_allocatable_device_without_capacity_is_shared():
    out = allocate([claim("claim-0", request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_A))], MULTI,
                   one_slice(device("device-1", multi=True)), node(NODE1), CC)
    assert picks(out) == [[("req-0", POOL1, "device-1", None, True)], [("req-0", POOL1, "device-1", None, True)]]
    ids = {a["devices"]["results"][0]["shareID"] for a in out}
    assert len(ids) == 2


def test_multi_allocatable_without_policy_takes_the_whole_capacity():
    s = one_slice(device("device-1", {CAP0: "1"}, multi=True), device("device-2", {CAP0: "1"}, multi=True))
    out = allocate([claim("claim-0", request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_A))], MULTI, s,
                   node(NODE1), CC)
    assert picks(out) == [[("req-0", POOL1, "device-1", {CAP0: "1"}, True)],
                          [("req-0", POOL1, "device-2", {CAP0: "1"}, True)]]
    block = one_slice(device("device-1", {CAP0: "2"}, multi=True))
    assert allocate([claim("claim-0", request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_A))], MULTI,
                    block, node(NODE1), CC) is None


def test_multi_allocatable_with_capacity_requests_share_one_device():
    out = allocate([claim("claim-0", request("req-0", CLASS_A, capacity="1")),
                    claim("claim-1", request("req-0", CLASS_A, capacity="1"))], MULTI,
                   one_slice(device("device-1", {CAP0: "2"}, multi=True)), node(NODE1), CC)
    assert picks(out) == [[("req-0", POOL1, "device-1", {CAP0: "1"}, True)]] * 2


@pytest.mark.parametrize("cap_request, want", [
    (None, "2"),  # the policy's default
    ("1", "2"),  # rounded up to the minimum
    ("3", "4"),  # rounded up with the step: 2 + 2
])
def test_range_policy(cap_request, want):
    out = allocate([claim("claim-0", request("req-0", CLASS_A, capacity=cap_request))], MULTI,
                   one_slice(device("device-1", multi=True, policy_range={CAP0: "4"})), node(NODE1), CC)
    assert picks(out) == [[("req-0", POOL1, "device-1", {CAP0: want}, True)]]


def test_range_policy_max_and_exceeded_capacity():
    # 6 is within the capacity (10) but over the policy's max (4).
    assert allocate([claim("claim-0", request("req-0", CLASS_A, capacity="6"))], MULTI,
                    one_slice(device("device-1", multi=True, policy_range={CAP0: "10"})), node(NODE1), CC) is None
    # 1 rounds up to 2, then 2 more do not fit in 2.
    assert allocate([claim("claim-0", request("req-0", CLASS_A, capacity="1")),
                     claim("claim-1", request("req-0", CLASS_A, capacity="2"))], MULTI,
                    one_slice(device("device-1", multi=True, policy_range={CAP0: "2"})), node(NODE1), CC) is None


@pytest.mark.parametrize("policy, cap_request, want", [
    (("1", {CAP0: "4"}, ["2"]), "2", "2"),
    (("1", {CAP0: "3"}, ["3"]), "2", "3"),  # rounded up to the next valid value
    (("0", {CAP0: "1"}, []), None, "0"),  # zero default: both claims fit
])
def test_valid_values_policy(policy, cap_request, want):
    claims = [claim("claim-0", request("req-0", CLASS_A, capacity=cap_request))]
    if want == "0":
        claims.append(claim("claim-1", request("req-0", CLASS_A)))
    out = allocate(claims, MULTI, one_slice(device("device-1", multi=True, policy_values=policy)), node(NODE1), CC)
    assert picks(out) == [[("req-0", POOL1, "device-1", {CAP0: want}, True)]] * len(claims)


def test_valid_values_policy_violated():
    assert allocate([claim("claim-0", request("req-0", CLASS_A, capacity="1"))], MULTI,
                    one_slice(device("device-1", multi=True, policy_values=("0", {CAP0: "1"}, []))), node(NODE1), CC) is None


def test_allocated_capacity_is_respected():
    d1 = (DRIVER_A, POOL1, "device-1")
    out = allocate([claim("claim-0", request("req-0", CLASS_A, capacity="2"))], MULTI,
                   one_slice(device("device-1", multi=True, policy_range={CAP0: "4"})), node(NODE1), CC,
                   capacity={d1: {CAP0: "2"}})
    assert picks(out) == [[("req-0", POOL1, "device-1", {CAP0: "2"}, True)]]
    s = one_slice(device("device-1", multi=True, policy_range={CAP0: "2"}),
                  device("device-2", multi=True, policy_range={CAP0: "2"}))
    out = allocate([claim("claim-0", request("req-0", CLASS_A, capacity="2"))], MULTI, s, node(NODE1), CC,
                   capacity={d1: {CAP0: "2"}})
    assert picks(out) == [[("req-0", POOL1, "device-2", {CAP0: "2"}, True)]]
    assert allocate([claim("claim-0", request("req-0", CLASS_A, capacity="2"))], MULTI, s[:1] and one_slice(
        device("device-1", multi=True, policy_range={CAP0: "2"})), node(NODE1), CC, capacity={d1: {CAP0: "2"}}) is None


def test_multi_allocatable_backtracking_with_match_attribute():
    s = one_slice(device("device-2", attributes={"stringAttribute": {"string": "stringAttributeValue1"}}, multi=True,
                         policy_range={CAP0: "2"}),
                  device("device-1", attributes={"stringAttribute": {"string": "stringAttributeValue2"}}, multi=True,
                         policy_range={CAP0: "4"}))
    c0 = claim("claim-0", request("req-0", CLASS_A, capacity="2"), request("req-1", CLASS_A, capacity="2"),
               constraints=[{"matchAttribute": "driver-a/stringAttribute"}])
    c1 = claim("claim-1", request("req-0", CLASS_A, capacity="2"))
    out = allocate([c0, c1], CLASSES, s, node(NODE1), CC)
    assert [[(r, d, c) for r, _, d, c, _ in p] for p in picks(out)] == [
        [("req-0", "device-1", {CAP0: "2"}), ("req-1", "device-1", {CAP0: "2"})], [("req-0", "device-2", {CAP0: "2"})]]


def test_multi_allocatable_subrequest():
    c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, capacity="4"),
                                         sub("subReq-1", CLASS_A, capacity="2"), sub("subReq-1", CLASS_A)))
    out = allocate([c], MULTI, one_slice(device("device-1", multi=True, policy_range={CAP0: "2"})), node(NODE1),
                   feats(consumable_capacity=True, prioritized_list=True))
    assert picks(out) == [[("req-0/subReq-1", POOL1, "device-1", {CAP0: "2"}, True)]]


def test_all_mode_with_capacity():
    want = [("req-0", "device-1"), ("req-1", "device-1"), ("req-1", "device-2")]
    s = one_slice(device("device-1", {CAP0: "2"}, multi=True), device("device-2", {CAP0: "1"}, multi=True))
    c = claim("claim-0", request("req-0", CLASS_A, capacity="1"), request("req-1", CLASS_A, mode="All", capacity="1"))
    out = allocate([c], CLASSES, s, node(NODE1), CC)
    assert [(r, d) for r, _, d in simple(out)[0]] == want
    # All devices filtered by capacity: the one that cannot take the request is left out.
    only = claim("claim-0", request("req-0", CLASS_A, mode="All", capacity="2"))
    assert [d for _, _, d in simple(allocate([only], MULTI, s, node(NODE1), CC))[0]] == ["device-1"]
    tight = one_slice(device("device-1", {CAP0: "1"}, multi=True), device("device-2", {CAP0: "1"}, multi=True))
    assert allocate([c], CLASSES, tight, node(NODE1), CC) is None
    in_use_out = allocate([claim("claim-0", request("req-0", CLASS_A, mode="All", capacity="1"))], CLASSES, tight,
                          node(NODE1), CC, capacity={(DRIVER_A, POOL1, "device-1"): {CAP0: "1"}})
    assert [d for _, _, d in simple(in_use_out)[0]] == ["device-2"]


def test_dedicated_device_with_capacity_request():
    out = allocate([claim("claim-0", request("req-0", CLASS_A, capacity="1"))], [multi_class(CLASS_A, DRIVER_A, False)],
                   one_slice(device("device-1", {CAP0: "1"})), node(NODE1), CC)
    assert picks(out) == [[("req-0", POOL1, "device-1", None, False)]]
    # A dedicated device is used once, however much capacity is left.
    assert allocate([claim("claim-0", request("req-0", CLASS_A, capacity="1")),
                     claim("claim-1", request("req-0", CLASS_A, capacity="1"))], [multi_class(CLASS_A, DRIVER_A, False)],
                    one_slice(device("device-1", policy_range={CAP0: "2"})), node(NODE1), CC) is None


def test_allow_multiple_allocations_in_class_selector_and_allocated_states():
    # The class selects only devices that are not multi-allocatable.
    assert allocate([claim("claim-0", request("req-0", CLASS_A, capacity="1"))], [multi_class(CLASS_A, DRIVER_A, False)],
                    one_slice(device("device-1", {CAP0: "1"}, multi=True)), node(NODE1), CC) is None
    # A multi-allocatable device already allocated as dedicated is not shared.
    assert allocate([claim("claim-0", request("req-0", CLASS_A, capacity="1"))], MULTI,
                    one_slice(device("device-1", multi=True, policy_range={CAP0: "2"})), node(NODE1), CC,
                    allocated=[(DRIVER_A, POOL1, "device-1")]) is None
    # A device no longer multi-allocatable with shared capacity in use: its
    # capacity counts, and the class no longer selects it.
    assert allocate([claim("claim-0", request("req-0", CLASS_A, capacity="1"))], MULTI,
                    one_slice(device("device-1", policy_range={CAP0: "2"})), node(NODE1), CC,
                    capacity={(DRIVER_A, POOL1, "device-1"): {CAP0: "1"}}) is None


def test_allow_multiple_allocations_needs_the_feature_in_cel():
    with pytest.raises(AllocatorError, match="undefined field 'allowMultipleAllocations'"):
        allocate([claim("claim-0", request("req-0", CLASS_A))], MULTI, one_slice(device("device-1", multi=True)),
                 node(NODE1), feats())


def test_multi_allocatable_partitionable_devices():
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, dict(mem_device("device-1", "4Gi"), allowMultipleAllocations=True),
                dict(mem_device("device-2", "6Gi"), allowMultipleAllocations=True),
                dict(mem_device("device-3", "4Gi"), allowMultipleAllocations=True), count=2), counter_slice()]
    c = claim("claim-0", request("req-0", CLASS_A),
              first_available("req-1", sub("subReq-0", CLASS_A, 1, MEM.format("6Gi")),
                              sub("subReq-1", CLASS_A, 1, MEM.format("4Gi"))))
    out = allocate([c], MULTI, s, node(NODE1),
                   feats(prioritized_list=True, partitionable_devices=True, consumable_capacity=True))
    assert [(r, d, cc) for r, _, d, cc, _ in picks(out)[0]] == [
        ("req-0", "device-1", {"memory": "4Gi"}), ("req-1/subReq-1", "device-3", {"memory": "4Gi"})]


def test_consumable_capacity_with_partitionable_devices_multiple_counter_sets():
    def d(name, c0):
        return device(name, "fromCounters", counters=[(CS1, {CAP0: c0}), (CS2, {CAP1: "4"})], multi=True,
                      policy_range={CAP1: "4"})
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, d("device-1", "2"), d("device-2", "4"), d("device-3", "2"), count=2),
         counter_slice(sets=((CS1, {CAP0: "4"}), (CS2, {CAP1: "8"})))]
    c = claim("claim-0", request("req-0", CLASS_A, capacity="1"), request("req-2", CLASS_A, capacity="2"),
              first_available("req-1",
                              sub("subReq-0", CLASS_A, 1, 'device.capacity["driver-a"]["capacity-0"].compareTo(quantity("4")) >= 0',
                                  capacity="1"),
                              sub("subReq-1", CLASS_A, 1, 'device.capacity["driver-a"]["capacity-0"].compareTo(quantity("2")) >= 0',
                                  capacity="1")))
    out = allocate([c], CLASSES, s, node(NODE1),
                   feats(prioritized_list=True, partitionable_devices=True, consumable_capacity=True))
    assert [(r, d, cc) for r, _, d, cc, _ in picks(out)[0]] == [
        ("req-0", "device-1", {CAP0: "1", CAP1: "2"}), ("req-2", "device-3", {CAP0: "2", CAP1: "2"}),
        ("req-1/subReq-1", "device-1", {CAP0: "1", CAP1: "2"})]


# -- distinctAttribute -------------------------------------------------------------------------
def test_distinct_attributes():
    def d(name, ver, numa, flag):
        return device(name, attributes={"driverVersion": {"version": ver}, "numa": {"int": numa},
                                        "boolAttribute": {"bool": flag}}, multi=True)
    s = one_slice(d("device-1", "1.0.0", 0, True), d("device-2", "1.0.1", 1, False), d("device-3", "1.0.2", 2, True),
                  d("device-4", "1.0.0", 3, True))
    c = claim("claim-0", *(request(f"req-{i}", CLASS_A) for i in range(4)), constraints=[
        {"distinctAttribute": "driver-a/boolAttribute", "requests": ["req-0", "req-1"]},
        {"distinctAttribute": "driver-a/driverVersion", "requests": ["req-0", "req-1", "req-2"]},
        {"distinctAttribute": "driver-a/numa", "requests": ["req-0", "req-1", "req-2", "req-3"]}])
    assert [d for _, _, d in simple(allocate([c], CLASSES, s, node(NODE1), CC))[0]] == [
        "device-1", "device-2", "device-3", "device-4"]


def test_distinct_attribute_not_set_and_with_subrequests():
    c = claim("claim-0", request("req-0", CLASS_A),
              constraints=[{"distinctAttribute": "driver-a/boolAttribute", "requests": ["req-0"]}])
    assert allocate([c], CLASSES, one_slice(device("device-1", multi=True)), node(NODE1), CC) is None
    flag = 'device.attributes["driver-a"].boolAttribute'
    c = claim("claim-0", *(first_available(f"req-{i}", sub("subReq-0", CLASS_A, 1, flag), sub("subReq-1", CLASS_A))
                           for i in range(3)),
              constraints=[{"distinctAttribute": "driver-a/boolAttribute", "requests": ["req-0", "req-1"]}])
    s = one_slice(device("device-1", attributes={"boolAttribute": {"bool": True}}, multi=True),
                  device("device-2", attributes={"boolAttribute": {"bool": False}}, multi=True))
    out = allocate([c], CLASSES, s, node(NODE1), feats(consumable_capacity=True, prioritized_list=True))
    assert simple(out) == [[("req-0/subReq-0", POOL1, "device-1"), ("req-1/subReq-1", POOL1, "device-2"),
                            ("req-2/subReq-0", POOL1, "device-1")]]


def test_distinct_attribute_on_one_multi_allocatable_device():
    attrs = {"stringAttribute": {"string": "v"}}
    c = claim("claim-0", request("req-0", CLASS_A, capacity="1"), request("req-1", CLASS_A, capacity="1"),
              constraints=[{"distinctAttribute": "driver-a/stringAttribute"}])
    assert allocate([c], MULTI, one_slice(device("device-1", attributes=attrs, multi=True, policy_range={CAP0: "2"})),
                    node(NODE1), CC) is None


def test_distinct_attribute_unsupported_by_the_basic_allocators():
    c = claim("claim-0", request("req-0", CLASS_A), constraints=[{"distinctAttribute": "driver-a/x"}])
    for f in (feats(), feats(v136=False)):
        with pytest.raises(AllocatorError, match=r"constraint #0: empty constraint \(unsupported constraint type\?\)"):
            allocate([c], CLASSES, one_slice(device("device-1")), node(NODE1), f)


# -- the search: combinations (v1.36 incubating) and upstream's step counts --------------------------
def test_allocate_one_invocations_prioritized_list_max_size():
    # expectNumAllocateOneInvocations: 75 (upstream table, v1.36 incubating).
    n = 32
    c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, n), sub("subReq-1", CLASS_A, n // 2)),
              first_available("req-1", sub("subReq-0", CLASS_A, n), sub("subReq-1", CLASS_A, n // 2)))
    s = one_slice(*(device(f"device-{i}") for i in range(2 * n)))
    out, r = run([c], CLASSES, s, node(NODE1), feats(prioritized_list=True, consumable_capacity=True))
    assert [x for x, _, _ in simple(out)[0]] == ["req-0/subReq-1"] * 16 + ["req-1/subReq-1"] * 16
    assert r.steps == 75


def test_allocate_one_invocations_all_mode_over_the_limit():
    # expectNumAllocateOneInvocations: 42 (upstream table, v1.36 incubating).
    c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, mode="All"), sub("subReq-1", CLASS_A, 2)),
              request("req-1", CLASS_B, 2))
    s = [rslice("slice-1", NODE1, POOL1, DRIVER_A, *(device(f"device-{i}") for i in range(31))),
         rslice("slice-2", NODE1, POOL2, DRIVER_B, *(device(f"device-{i}") for i in range(2)))]
    out, r = run([c], [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)], s, node(NODE1),
                 feats(prioritized_list=True, consumable_capacity=True))
    assert simple(out) == [[("req-0/subReq-1", POOL1, "device-0"), ("req-0/subReq-1", POOL1, "device-1"),
                            ("req-1", POOL2, "device-0"), ("req-1", POOL2, "device-1")]]
    assert r.steps == 42


def test_same_multi_allocatable_device_twice_in_one_request():
    # v1.35 searches permutations: the second device of a request may be the
    # first one again (multi-allocatable devices stay usable); v1.36 searches
    # combinations and cannot pick it twice.
    c = claim("claim-0", request("req-0", CLASS_A, 2))
    s = one_slice(device("device-1", multi=True))
    v135 = allocate([c], CLASSES, s, node(NODE1), feats(consumable_capacity=True, v136=False))
    assert simple(v135) == [[("req-0", POOL1, "device-1"), ("req-0", POOL1, "device-1")]]
    assert allocate([c], CLASSES, s, node(NODE1), CC) is None


def test_v135_subrequest_selection_cache_bug():
    # v1.35 validates subrequest #1 (here "All") under subrequest #0's key, so
    # #0 later reads #1's cached selector results: a class-b request gets a
    # class-a device. v1.36 fixed it: #0 finds nothing, #1 takes every device.
    c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_B, 1),
                                         sub("subReq-1", CLASS_A, mode="All")))
    s = one_slice(device("device-1"), device("device-2"))
    classes = [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)]
    out136 = allocate([c], classes, s, node(NODE1), feats(prioritized_list=True))
    assert simple(out136) == [[("req-0/subReq-1", POOL1, "device-1"), ("req-0/subReq-1", POOL1, "device-2")]]
    out135 = allocate([c], classes, s, node(NODE1), feats(prioritized_list=True, v136=False))
    assert simple(out135) == [[("req-0/subReq-0", POOL1, "device-1")]]


# -- consumable_capacity_test.go (the cases that hold for v1.36's integer arithmetic) -------------------
from kschedx.api.quantity import parse_quantity as _q  # noqa: E402
from kschedx.plugins.dynamicresources.allocator import consumed_capacity, violates_policy  # noqa: E402


@pytest.mark.parametrize("requested, policy, violates", [
    ("1", None, False),  # no constraint
    ("1", {"default": "1", "validRange": {"min": "1", "max": "2"}}, False),  # less than maximum
    ("2", {"default": "1", "validRange": {"min": "1", "max": "1"}}, True),  # more than maximum
    ("1", {"default": "1", "validValues": ["1"]}, False),  # in set
    ("2", {"default": "1", "validValues": ["1"]}, True),  # not in set
], ids=["no-constraint", "less-than-max", "more-than-max", "in-set", "not-in-set"])
def test_violates_capacity_request_policy(requested, policy, violates):
    assert violates_policy(_q(requested), policy) is violates


@pytest.mark.parametrize("requested, value, policy, want", [
    (None, "1", {}, "1"),  # empty policy: the whole capacity
    (None, "2", {"default": "1", "validRange": {"min": "1"}}, "1"),  # min in range
    (None, "2", {"default": "1", "validValues": ["1"]}, "1"),  # default in set
    ("2", "2", {"default": "1", "validRange": {"min": "1"}}, "2"),  # more than min
    ("1", "2", {"default": "1", "validRange": {"min": "2"}}, "2"),  # less than min
    ("2", "3", {"default": "1", "validRange": {"min": "1", "step": "2"}}, "3"),  # with step: round up
    ("2", "2", {"default": "1", "validRange": {"min": "1", "step": "1"}}, "2"),  # with step: no remainder
], ids=["empty", "min-in-range", "default-in-set", "more-than-min", "less-than-min", "step-round-up", "step-exact"])
def test_calculate_consumed_capacity(requested, value, policy, want):
    got = consumed_capacity(_q(requested) if requested is not None else None, _q(value), policy)
    assert got.cmp(_q(want)) == 0
