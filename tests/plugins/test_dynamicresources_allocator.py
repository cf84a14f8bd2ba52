"""The structured allocator: cases from upstream's shared allocator test table
(structured/internal/allocatortesting) that apply to v1.35's default feature
set (admin access and prioritized list on; partitionable devices, device
taints, consumable capacity and binding conditions off)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kschedx.plugins.dynamicresources.allocator import Allocator, AllocatorError, FailedOnNode
from kschedx.plugins.dynamicresources.claims import DRAManager

NODE1, NODE2 = "node-1", "node-2"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
CLASS_A, CLASS_B = "class-a", "class-b"
POOL1, POOL2 = "pool-1", "pool-2"


def node(name, region="region-1"):
    return SimpleNamespace(name=name, labels={"region": region, "planet": "earth"})


def device_class(name, driver, *extra_selectors):
    sels = [{"cel": {"expression": f'device.driver == "{driver}"'}}]
    sels += [{"cel": {"expression": e}} for e in extra_selectors]
    return {"metadata": {"name": name}, "spec": {"selectors": sels}}


def device(name, capacity=None, attributes=None, **extra):
    d = {"name": name}
    if capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if attributes:
        d["attributes"] = attributes
    d.update(extra)
    return d


def rslice(name, node_sel, pool, driver, *devices, generation=1, count=1):
    spec = {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
            "devices": list(devices)}
    if node_sel == "all":
        spec["allNodes"] = True
    elif isinstance(node_sel, dict):
        spec["nodeSelector"] = node_sel
    else:
        spec["nodeName"] = node_sel
    return {"metadata": {"name": name}, "spec": spec}


def request(name, cls, count=1, *selectors, mode="ExactCount", admin=None):
    ex = {"deviceClassName": cls, "allocationMode": mode}
    if mode == "ExactCount":
        ex["count"] = count
    if selectors:
        ex["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if admin is not None:
        ex["adminAccess"] = admin
    return {"name": name, "exactly": ex}


def sub(name, cls, count=1, *selectors):
    s = {"name": name, "deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selectors:
        s["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return s


def first_available(name, *subs):
    return {"name": name, "firstAvailable": list(subs)}


def claim(name, *requests, constraints=None):
    spec = {"devices": {"requests": list(requests)}}
    if constraints:
        spec["devices"]["constraints"] = constraints
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}


def allocate(claims, classes, slices, on_node, allocated=()):
    cluster = SimpleNamespace(
        resource_claims={}, device_classes={c["metadata"]["name"]: c for c in classes},
        resource_slices={s["metadata"]["name"]: s for s in slices})
    manager = DRAManager(SimpleNamespace(cluster=cluster))
    alloc = Allocator(manager, {d: "default/other" for d in allocated})
    return alloc.allocate(on_node, claims)


def results(out):
    """[(request, driver, pool, device, adminAccess)] per claim."""
    return [[(r["request"], r["driver"], r["pool"], r["device"], r.get("adminAccess", False))
             for r in a["devices"]["results"]] for a in out]


def local(node_name):
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


MEM = 'device.capacity["driver-a"].memory.compareTo(quantity("{}")) >= 0'


def test_empty():
    assert allocate([], [], [], node(NODE1)) == []


def test_simple():
    out = allocate([claim("claim-0", request("req-0", CLASS_A))], [device_class(CLASS_A, DRIVER_A)],
                   [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"))], node(NODE1))
    assert results(out) == [[("req-0", DRIVER_A, POOL1, "device-1", False)]]
    assert out[0]["nodeSelector"] == local(NODE1)


def test_other_node():
    out = allocate([claim("claim-0", request("req-0", CLASS_A))], [device_class(CLASS_A, DRIVER_A)],
                   [rslice("slice-1", NODE1, POOL1, DRIVER_B, device("device-1")),
                    rslice("slice-2", NODE2, POOL2, DRIVER_A, device("device-1"))], node(NODE2, "region-2"))
    assert results(out) == [[("req-0", DRIVER_A, POOL2, "device-1", False)]]
    assert out[0]["nodeSelector"] == local(NODE2)


def test_small_and_large():
    c = claim("claim-0", request("req-0", CLASS_A, 1, MEM.format("1Gi")), request("req-1", CLASS_A, 1, MEM.format("2Gi")))
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", {"memory": "1Gi"}), device("device-2", {"memory": "2Gi"}))
    assert results(allocate([c], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))) == [
        [("req-0", DRIVER_A, POOL1, "device-1", False), ("req-1", DRIVER_A, POOL1, "device-2", False)]]


def test_small_and_large_backtrack_requests():
    c = claim("claim-0", request("req-0", CLASS_A, 1, MEM.format("1Gi")), request("req-1", CLASS_A, 1, MEM.format("2Gi")))
    # The large device first: taken for the small request, then given back.
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-2", {"memory": "2Gi"}), device("device-1", {"memory": "1Gi"}))
    assert results(allocate([c], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))) == [
        [("req-0", DRIVER_A, POOL1, "device-1", False), ("req-1", DRIVER_A, POOL1, "device-2", False)]]


def test_small_and_large_backtrack_claims():
    c0 = claim("claim-0", request("req-0", CLASS_A, 1, MEM.format("1Gi")))
    c1 = claim("claim-1", request("req-1", CLASS_A, 1, MEM.format("2Gi")))
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-2", {"memory": "2Gi"}), device("device-1", {"memory": "1Gi"}))
    assert results(allocate([c0, c1], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))) == [
        [("req-0", DRIVER_A, POOL1, "device-1", False)], [("req-1", DRIVER_A, POOL1, "device-2", False)]]


def test_devices_split_across_different_slices():
    c = claim("claim-0", request("req-0", CLASS_A, 2))
    out = allocate([c], [device_class(CLASS_A, DRIVER_A)],
                   [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1")),
                    rslice("slice-2", NODE1, POOL2, DRIVER_A, device("device-1"))], node(NODE1))
    assert results(out) == [[("req-0", DRIVER_A, POOL1, "device-1", False), ("req-0", DRIVER_A, POOL2, "device-1", False)]]


def test_obsolete_slice_makes_pool_incomplete():
    slices = [rslice("slice-1-obsolete", NODE1, POOL1, DRIVER_A, device("device-1"), count=2),
              rslice("slice-1-new", NODE1, POOL1, DRIVER_A, device("device-2"), generation=2, count=2)]
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], [device_class(CLASS_A, DRIVER_A)], slices, node(NODE1)) is None


def test_duplicate_slice_is_invalid_pool():
    a = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), count=2)
    b = rslice("slice-1-2", NODE1, POOL1, DRIVER_A, device("device-1"), count=2)
    with pytest.raises(FailedOnNode, match="invalid resource pools were encountered"):
        allocate([claim("claim-0", request("req-0", CLASS_A))], [device_class(CLASS_A, DRIVER_A)], [a, b], node(NODE1))


def test_no_slices_and_not_enough_devices():
    cls = [device_class(CLASS_A, DRIVER_A)]
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], cls, [], node(NODE1)) is None
    two = [claim("claim-0", request("req-0", CLASS_A)), claim("claim-0", request("req-1", CLASS_A))]
    assert allocate(two, cls, [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"))], node(NODE1)) is None


@pytest.mark.parametrize("cls_name,msg", [
    ("unknown-class", "could not retrieve device class unknown-class"),
    ("", "claim default/claim-0, request req-0: missing device class name (unsupported request type?)"),
])
def test_bad_class(cls_name, msg):
    with pytest.raises(AllocatorError, match=msg.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        allocate([claim("claim-0", request("req-0", cls_name))], [device_class(CLASS_A, DRIVER_A)],
                 [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"))], node(NODE1))


def all_request(name, cls, admin=None):
    return request(name, cls, mode="All", admin=admin)


def test_all_devices_single_and_many():
    cls = [device_class(CLASS_A, DRIVER_A)]
    out = allocate([claim("claim-0", all_request("req-0", CLASS_A))], cls,
                   [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1")),
                    rslice("slice-2", NODE1, POOL2, DRIVER_A, device("device-1"))], node(NODE1))
    assert results(out) == [[("req-0", DRIVER_A, POOL1, "device-1", False), ("req-0", DRIVER_A, POOL2, "device-1", False)]]


def test_all_devices_of_the_incomplete_pool():
    with pytest.raises(AllocatorError, match="claim default/claim-0, request req-0: asks for all devices, but resource "
                                             "pool driver-a/pool-1 is currently being updated"):
        allocate([claim("claim-0", all_request("req-0", CLASS_A))], [device_class(CLASS_A, DRIVER_A)],
                 [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), count=2)], node(NODE1))


@pytest.mark.parametrize("reverse", [False, True])
def test_all_devices_plus_another(reverse):
    claims = [claim("claim-0", all_request("req-0", CLASS_A)), claim("claim-1", request("req-0", CLASS_B))]
    if reverse:
        claims.reverse()
    slices = [rslice("slice-a", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2")),
              rslice("slice-b", NODE1, POOL1, DRIVER_B, device("device-1"))]
    out = results(allocate(claims, [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)], slices, node(NODE1)))
    all_a = [("req-0", DRIVER_A, POOL1, "device-1", False), ("req-0", DRIVER_A, POOL1, "device-2", False)]
    one_b = [("req-0", DRIVER_B, POOL1, "device-1", False)]
    assert out == ([one_b, all_a] if reverse else [all_a, one_b])


@pytest.mark.parametrize("reverse", [False, True])
def test_all_devices_no_solution(reverse):
    claims = [claim("claim-1", request("req-0", CLASS_A)), claim("claim-0", all_request("req-0", CLASS_A))]
    if reverse:
        claims.reverse()
    assert allocate(claims, [device_class(CLASS_A, DRIVER_A)],
                    [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"))], node(NODE1)) is None


def test_all_devices_without_devices_or_slices():
    cls = [device_class(CLASS_A, DRIVER_A)]
    c = [claim("claim-0", all_request("req-0", CLASS_A))]
    assert allocate(c, cls, [rslice("slice-1", NODE1, POOL1, DRIVER_A)], node(NODE1)) is None
    assert allocate(c, cls, [], node(NODE1)) is None


def test_all_devices_some_allocated():
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))
    c = [claim("claim-0", all_request("req-0", CLASS_A))]
    assert allocate(c, [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1), allocated=[(DRIVER_A, POOL1, "device-1")]) is None


def test_all_devices_some_allocated_admin_access():
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))
    c = [claim("claim-0", all_request("req-0", CLASS_A, admin=True))]
    out = allocate(c, [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1), allocated=[(DRIVER_A, POOL1, "device-1")])
    assert results(out) == [[("req-0", DRIVER_A, POOL1, "device-1", True), ("req-0", DRIVER_A, POOL1, "device-2", True)]]


def test_all_devices_some_allocating_admin_access():
    # The second request (All) cannot be fulfilled: the first one holds a device of the same claim.
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))
    c = [claim("claim-0", request("req-0", CLASS_A, admin=True), all_request("req-1", CLASS_A, admin=True))]
    assert allocate(c, [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1)) is None


def test_count_devices_some_allocated_admin_access():
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))
    c = [claim("claim-0", request("req-0", CLASS_A, 2, admin=True))]
    out = allocate(c, [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1), allocated=[(DRIVER_A, POOL1, "device-1")])
    assert results(out) == [[("req-0", DRIVER_A, POOL1, "device-1", True), ("req-0", DRIVER_A, POOL1, "device-2", True)]]


def test_separate_claims_share_device_admin_access():
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))
    c = [claim("claim-0", request("req-0", CLASS_A, admin=True)), claim("claim-1", request("req-0", CLASS_A, admin=True))]
    out = allocate(c, [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))
    assert results(out) == [[("req-0", DRIVER_A, POOL1, "device-1", True)], [("req-0", DRIVER_A, POOL1, "device-1", True)]]


def test_already_allocated_device_is_skipped():
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))
    out = allocate([claim("claim-0", request("req-0", CLASS_A))], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1),
                   allocated=[(DRIVER_A, POOL1, "device-1")])
    assert results(out) == [[("req-0", DRIVER_A, POOL1, "device-2", False)]]


def attr(kind, value):
    return {kind: value}


def test_match_attribute_constraint():
    cons = [{"matchAttribute": "driver-a/numa", "requests": ["req-0", "req-1"]}]
    c = claim("claim-0", request("req-0", CLASS_A), request("req-1", CLASS_A), constraints=cons)
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A,
               device("device-1", attributes={"numa": attr("int", 1)}),
               device("device-2", attributes={"numa": attr("int", 2)}),
               device("device-3", attributes={"driver-a/numa": attr("int", 1)}))
    out = allocate([c], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))
    # device-2 breaks the constraint; device-3 names the attribute fully qualified.
    assert results(out) == [[("req-0", DRIVER_A, POOL1, "device-1", False), ("req-1", DRIVER_A, POOL1, "device-3", False)]]


def test_match_attribute_missing_attribute_fails():
    cons = [{"matchAttribute": "driver-a/NonExistentAttribute"}]
    c = claim("claim-0", request("req-0", CLASS_A), constraints=cons)
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", attributes={"numa": attr("int", 1)}))
    assert allocate([c], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1)) is None


@pytest.mark.parametrize("kind,a,b", [("string", "x", "y"), ("bool", True, False), ("version", "1.0.0", "1.0.1")])
def test_match_attribute_types(kind, a, b):
    cons = [{"matchAttribute": f"driver-a/{kind}Attribute"}]
    c = claim("claim-0", request("req-0", CLASS_A, 2), constraints=cons)
    name = f"{kind}Attribute"
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A,
               device("device-1", attributes={name: attr(kind, a)}),
               device("device-2", attributes={name: attr(kind, b)}))
    assert allocate([c], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1)) is None
    s2 = rslice("slice-1", NODE1, POOL1, DRIVER_A,
                device("device-1", attributes={name: attr(kind, a)}),
                device("device-2", attributes={name: attr(kind, a)}))
    assert len(results(allocate([c], [device_class(CLASS_A, DRIVER_A)], [s2], node(NODE1)))[0]) == 2


def test_constraint_with_all_mode_is_an_error():
    cons = [{"matchAttribute": "driver-a/numa"}]
    c = claim("claim-0", all_request("req-0", CLASS_A), constraints=cons)
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A,
               device("device-1", attributes={"numa": attr("int", 1)}),
               device("device-2", attributes={"numa": attr("int", 2)}))
    with pytest.raises(AllocatorError, match="cannot add device driver-a/pool-1/device-2 because a claim constraint"):
        allocate([c], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))


def test_empty_constraint_is_an_error():
    c = claim("claim-0", request("req-0", CLASS_A), constraints=[{"requests": ["req-0"]}])
    with pytest.raises(AllocatorError, match=r"claim default/claim-0, constraint #0: empty constraint"):
        allocate([c], [device_class(CLASS_A, DRIVER_A)],
                 [rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"))], node(NODE1))


def test_too_many_devices():
    c = claim("claim-0", request("req-0", CLASS_A, 33))
    with pytest.raises(AllocatorError, match="number of requested devices 33 exceeds the claim limit of 32"):
        allocate([c], [device_class(CLASS_A, DRIVER_A)], [], node(NODE1))


def test_prioritized_list_first_subrequest_wins():
    c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, 2), sub("subReq-1", CLASS_A, 1)))
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))
    assert results(allocate([c], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))) == [
        [("req-0/subReq-0", DRIVER_A, POOL1, "device-1", False), ("req-0/subReq-0", DRIVER_A, POOL1, "device-2", False)]]


def test_prioritized_list_falls_back():
    c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, 3), sub("subReq-1", CLASS_A, 1)))
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"), device("device-2"))
    assert results(allocate([c], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))) == [
        [("req-0/subReq-1", DRIVER_A, POOL1, "device-1", False)]]


def test_prioritized_list_with_selectors_and_other_class():
    c = claim("claim-0", first_available(
        "req-0", sub("subReq-0", CLASS_A, 1, MEM.format("4Gi")), sub("subReq-1", CLASS_B, 1)))
    slices = [rslice("slice-a", NODE1, POOL1, DRIVER_A, device("device-1", {"memory": "2Gi"})),
              rslice("slice-b", NODE1, POOL2, DRIVER_B, device("device-1"))]
    out = allocate([c], [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)], slices, node(NODE1))
    assert results(out) == [[("req-0/subReq-1", DRIVER_B, POOL2, "device-1", False)]]


def test_prioritized_list_constraint_on_subrequest():
    cons = [{"matchAttribute": "driver-a/numa", "requests": ["req-0/subReq-0", "req-1"]}]
    c = claim("claim-0", first_available("req-0", sub("subReq-0", CLASS_A, 1), sub("subReq-1", CLASS_A, 1)),
              request("req-1", CLASS_A), constraints=cons)
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A,
               device("device-1", attributes={"numa": attr("int", 1)}),
               device("device-2", attributes={"numa": attr("int", 2)}))
    # subReq-0 forces equal numa on both devices: impossible, so subReq-1 (unconstrained) is used.
    assert results(allocate([c], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))) == [
        [("req-0/subReq-1", DRIVER_A, POOL1, "device-1", False), ("req-1", DRIVER_A, POOL1, "device-2", False)]]


def test_node_selection_all_nodes_and_selector():
    cls = [device_class(CLASS_A, DRIVER_A)]
    sel = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}]}
    s = rslice("slice-1", sel, POOL1, DRIVER_A, device("device-1"))
    out = allocate([claim("claim-0", request("req-0", CLASS_A))], cls, [s], node(NODE1))
    assert out[0]["nodeSelector"] == sel
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], cls, [s], node(NODE2, "region-2")) is None
    everywhere = rslice("slice-2", "all", POOL2, DRIVER_A, device("device-1"))
    out = allocate([claim("claim-0", request("req-0", CLASS_A))], cls, [everywhere], node(NODE2, "region-2"))
    assert results(out) == [[("req-0", DRIVER_A, POOL2, "device-1", False)]] and "nodeSelector" not in out[0]


def test_partitionable_devices_are_off():
    # Devices consuming counters and slices with shared counters are unusable with DRAPartitionableDevices off.
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A,
               device("device-1", consumesCounters=[{"counterSet": "counter-set-1", "counters": {"memory": {"value": "1"}}}]))
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1)) is None


def test_binding_conditions_are_off():
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1", bindingConditions=["attached"]))
    assert allocate([claim("claim-0", request("req-0", CLASS_A))], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1)) is None


def test_device_taints_are_ignored():
    # DRADeviceTaints is off: taints do not prevent allocation.
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A,
               device("device-1", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]))
    out = allocate([claim("claim-0", request("req-0", CLASS_A))], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))
    assert results(out) == [[("req-0", DRIVER_A, POOL1, "device-1", False)]]


def test_cel_errors_name_class_or_claim():
    cls = device_class(CLASS_A, DRIVER_A, "device.attributes[\"driver-a\"].model == \"x\"")
    s = rslice("slice-1", NODE1, POOL1, DRIVER_A, device("device-1"))
    with pytest.raises(AllocatorError, match=r"^class class-a: selector #1: CEL runtime error: no such key: model$"):
        allocate([claim("claim-0", request("req-0", CLASS_A))], [cls], [s], node(NODE1))
    with pytest.raises(AllocatorError, match=r"^claim default/claim-0: selector #0: CEL compile error: compilation failed: "
                                             r"ERROR: <input>:1:7: undefined field 'foo'"):
        allocate([claim("claim-0", request("req-0", CLASS_A, 1, "device.foo"))], [device_class(CLASS_A, DRIVER_A)], [s], node(NODE1))
