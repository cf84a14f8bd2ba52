"""The structured allocator's changes in v1.36.3 and v1.37.2, as facts of
upstream allocatortesting TestAllocator (dynamic-resource-allocation
v0.37.2: allocator_testing.go; each case names the features it runs with),
run on the allocator those versions use:

- v1.36.3's rollback (partitionable-devices-taint-releases-counter,
  partitionable-devices-constraint-releases-counter): a refused device gives
  back the counters it took;
- v1.37.2: distinctAttribute over every device, counters per driver and
  pool, the claim limit per request, slices with compatibility groups
  ignored, requests with derived attributes refused.

The same inputs with the allocators of before, where they differ, show what
changed."""

from __future__ import annotations

import pytest

from kschedx.plugins.dynamicresources.allocator import AllocatorError, AllocatorFeatures
from test_dynamicresources_allocator_features import (CLASS_A, CLASS_B, CS1, CS2, POOL1, POOL2, claim, device,
                                                       device_class, node, request, rslice, run, simple)

DRIVER_A, DRIVER_B = "driver-a", "driver-b"
NODE1 = node("node-1")
CLASSES = [device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)]
STRING_ATTR = f"{DRIVER_A}/stringAttribute"
INT_ATTR = f"{DRIVER_A}/numa"

V137 = dict(subrequest_fixes=True, sorted_pools=True, rollback=True, distinct_all_devices=True,
            counters_by_pool_id=True, claim_limit_per_request=True, cel_errors_name_device=True,
            all_mode_static_capacity=True, capacity_in_step_format=True, compatibility_group_slices_ignored=True,
            derived_attributes_refused=True)
V136 = dict(subrequest_fixes=True, sorted_pools=True, rollback=True)
V1362 = dict(subrequest_fixes=True, sorted_pools=True)  # before v1.36.3's rollback


def feats(version: dict, **on) -> AllocatorFeatures:
    base = dict(admin_access=False, prioritized_list=False, partitionable_devices=False, device_taints=False,
                device_binding_and_status=False, consumable_capacity=False)
    base.update(on)
    return AllocatorFeatures(**base, **version)


def allocate(claims, slices, features):
    out, _ = run(claims, CLASSES, slices, NODE1, features)
    return simple(out) if out is not None else None


def attrs(**values):
    out = {}
    for k, v in values.items():
        out[k] = {"int": v} if isinstance(v, int) else {"string": v}
    return out


# -- distinctAttribute over every device (incubating: ConsumableCapacity on) -------------------------
def _distinct_claim(count=3, attr=STRING_ATTR):
    return claim("claim-0", request("req-0", CLASS_A, count), constraints=[{"distinctAttribute": attr}])


DISTINCT = [
    ("distinct-constraint-single-request-count-3-not-distinct",
     [device("device-1", attributes=attrs(stringAttribute="value1")),
      device("device-2", attributes=attrs(stringAttribute="value2")),
      device("device-3", attributes=attrs(stringAttribute="value1"))], STRING_ATTR, 3, None),
    ("distinct-constraint-single-request-count-3-all-distinct",
     [device("device-1", attributes=attrs(stringAttribute="value1")),
      device("device-2", attributes=attrs(stringAttribute="value2")),
      device("device-3", attributes=attrs(stringAttribute="value3"))], STRING_ATTR, 3,
     [[("req-0", POOL1, "device-1"), ("req-0", POOL1, "device-2"), ("req-0", POOL1, "device-3")]]),
    ("distinct-constraint-single-request-multiple-devices-attribute-not-set",
     [device("device-1"), device("device-2"), device("device-3")], INT_ATTR, 3, None),
    ("distinct-constraint-single-request-not-enough-distinct-values",
     [device(f"device-{i}", attributes=attrs(numa=v)) for i, v in ((1, 1), (2, 2), (3, 2), (4, 2))], INT_ATTR, 3,
     None),
    ("distinct-constraint-single-request-multiple-devices-attribute-set",
     [device(f"device-{i}", attributes=attrs(numa=v)) for i, v in ((1, 1), (2, 2), (3, 1), (4, 3))], INT_ATTR, 3,
     [[("req-0", POOL1, "device-1"), ("req-0", POOL1, "device-2"), ("req-0", POOL1, "device-4")]]),
]


@pytest.mark.parametrize("name, devices, attr, count, want", DISTINCT, ids=[c[0] for c in DISTINCT])
def test_distinct_constraint(name, devices, attr, count, want):
    slices = [rslice("slice-1", "node-1", POOL1, DRIVER_A, *devices)]
    assert allocate([_distinct_claim(count, attr)], slices, feats(V137, consumable_capacity=True)) == want


def test_before_1_37_one_value_per_request_name_lets_duplicates_in():
    """value1, value2, value1 under one request: v1.36 remembers only the last
    value of the request, so device-3 (value1) differs from it."""
    devices = DISTINCT[0][1]
    slices = [rslice("slice-1", "node-1", POOL1, DRIVER_A, *devices)]
    assert allocate([_distinct_claim()], slices, feats(V136, consumable_capacity=True)) == [
        [("req-0", POOL1, "device-1"), ("req-0", POOL1, "device-2"), ("req-0", POOL1, "device-3")]]


def test_two_requests_under_one_distinct_constraint():
    """distinct-constraint-two-requests-with-count-not-distinct."""
    c = claim("claim-0", request("req-0", CLASS_A, 2), request("req-1", CLASS_A, 1),
              constraints=[{"distinctAttribute": STRING_ATTR, "requests": ["req-0", "req-1"]}])
    slices = [rslice("slice-1", "node-1", POOL1, DRIVER_A, *DISTINCT[0][1])]
    assert allocate([c], slices, feats(V137, consumable_capacity=True)) is None


# -- counters per driver and pool ------------------------------------------------------------------
def test_partitionable_devices_counter_cache_not_crossed_between_driver_schemas():
    slices = [
        rslice("slice-1", "node-1", POOL1, DRIVER_A, device("device-1", counters=[(CS1, {"c": "1"})]), count=2),
        rslice("slice-2", "node-1", POOL1, DRIVER_A, count=2, counter_sets=[(CS1, {"c": "1"})]),
        rslice("slice-3", "node-1", POOL1, DRIVER_B, device("device-2", counters=[(CS2, {"d": "2"})]), count=2),
        rslice("slice-4", "node-1", POOL1, DRIVER_B, count=2, counter_sets=[(CS2, {"d": "1"})]),
    ]
    claims = [claim("claim-0", request("req-0", CLASS_A)), claim("claim-1", request("req-1", CLASS_B))]
    # device-2 over-consumes its own counter set (d: 2 > 1): no allocation.
    assert allocate(claims, slices, feats(V137, partitionable_devices=True)) is None


def test_pools_of_two_drivers_with_one_name_share_counters_before_1_37():
    """Ours: each driver's pool "shared" has 4Gi and a device taking all of
    it. Keyed by pool name (v1.36), the second device finds the first one's
    consumption: the claim does not fit; keyed by driver and pool it does."""
    slices = [
        rslice("a-counters", "node-1", "shared", DRIVER_A, count=2, counter_sets=[("cs", {"memory": "4Gi"})]),
        rslice("a-devices", "node-1", "shared", DRIVER_A, device("a0", counters=[("cs", {"memory": "4Gi"})]), count=2),
        rslice("b-counters", "node-1", "shared", DRIVER_B, count=2, counter_sets=[("cs", {"memory": "4Gi"})]),
        rslice("b-devices", "node-1", "shared", DRIVER_B, device("b0", counters=[("cs", {"memory": "4Gi"})]), count=2),
    ]
    c = claim("both", request("a", CLASS_A), request("b", CLASS_B))
    assert allocate([c], slices, feats(V137, partitionable_devices=True)) == [
        [("a", "shared", "a0"), ("b", "shared", "b0")]]
    assert allocate([c], slices, feats(V136, partitionable_devices=True)) is None


# -- v1.36.3: what a refused device took is given back ---------------------------------------------
def _rollback_slices(first):
    return [rslice("slice-1", "node-1", POOL1, DRIVER_A, first,
                   device("device-2", counters=[(CS1, {"c": "1"})], attributes=attrs(stringAttribute="red")), count=2),
            rslice("slice-2", "node-1", POOL1, DRIVER_A, count=2, counter_sets=[(CS1, {"c": "1"})])]


def test_partitionable_devices_taint_releases_counter():
    tainted = device("device-1", counters=[(CS1, {"c": "1"})], taints=[{"key": "k", "effect": "NoSchedule"}])
    c = claim("claim-0", request("req-0", CLASS_A))
    want = [[("req-0", POOL1, "device-2")]]
    for version in (V136, V137):
        assert allocate([c], _rollback_slices(tainted), feats(version, partitionable_devices=True,
                                                               device_taints=True)) == want
    # v1.36.2 (and v1.35) kept device-1's counter: device-2 found none left.
    assert allocate([c], _rollback_slices(tainted), feats(V1362, partitionable_devices=True,
                                                           device_taints=True)) is None


def test_partitionable_devices_constraint_releases_counter():
    """device-1 (red) is taken first; the blue ones are refused by the
    matchAttribute constraint after their counters were checked; given back,
    the two blue devices fit (c: 2)."""
    devices = [device("device-1", counters=[(CS1, {"c": "1"})], attributes=attrs(stringAttribute="red")),
               device("device-2", counters=[(CS1, {"c": "1"})], attributes=attrs(stringAttribute="blue")),
               device("device-3", counters=[(CS1, {"c": "1"})], attributes=attrs(stringAttribute="blue"))]
    slices = [rslice("slice-1", "node-1", POOL1, DRIVER_A, *devices, count=2),
              rslice("slice-2", "node-1", POOL1, DRIVER_A, count=2, counter_sets=[(CS1, {"c": "2"})])]
    c = claim("claim-0", request("req-0", CLASS_A, 2), constraints=[{"matchAttribute": STRING_ATTR}])
    want = [[("req-0", POOL1, "device-2"), ("req-0", POOL1, "device-3")]]
    for version in (V136, V137):
        assert allocate([c], slices, feats(version, partitionable_devices=True)) == want
    assert allocate([c], slices, feats(V1362, partitionable_devices=True)) is None


# -- the claim limit, per request ------------------------------------------------------------------
@pytest.mark.parametrize("requests, text", [
    ([("req-0", 20), ("req-1", 20)],
     "claim default/claim-0, request req-1: adding 20 devices exceeds the claim limit of 32, with 20 already "
     "accounted for"),
    ([("req-0", 33)], "claim default/claim-0, request req-0: adding 33 devices exceeds the claim limit of 32, with 0 "
                      "already accounted for"),
])
def test_exact_count_exceeds_claim_limit(requests, text):
    c = claim("claim-0", *(request(n, CLASS_A, k) for n, k in requests))
    with pytest.raises(AllocatorError) as e:
        allocate([c], [], feats(V137))
    assert str(e.value) == text
    with pytest.raises(AllocatorError) as e:
        allocate([c], [], feats(V136))
    assert str(e.value).startswith("claim default/claim-0: number of requested devices")


def test_exact_count_sum_exactly_fills_claim_limit():
    slices = [rslice("slice-1", "node-1", POOL1, DRIVER_A, *(device(f"device-{i}") for i in range(32)))]
    c = claim("claim-0", request("req-0", CLASS_A, 16), request("req-1", CLASS_A, 16))
    out = allocate([c], slices, feats(V137))
    assert out is not None and len(out[0]) == 32


# -- compatibility groups, ignored without their gate ----------------------------------------------
def test_compatibility_groups_disabled_skips_grouped_pool():
    grouped = device("device-1")
    grouped["consumesCounters"] = [{"counterSet": CS1, "counters": {"capacity-0": {"value": "2"}},
                                    "compatibilityGroups": ["mig"]}]
    slices = [
        rslice("slice-1", "node-1", POOL1, DRIVER_A, grouped, count=2),
        rslice("slice-2", "node-1", POOL1, DRIVER_A, count=2, counter_sets=[(CS1, {"capacity-0": "4"})]),
        rslice("slice-3", "node-1", POOL2, DRIVER_A, device("device-2", counters=[(CS2, {"capacity-0": "2"})]),
               count=2),
        rslice("slice-4", "node-1", POOL2, DRIVER_A, count=2, counter_sets=[(CS2, {"capacity-0": "4"})]),
    ]
    c = claim("claim-0", request("req-0", CLASS_A))
    assert allocate([c], slices, feats(V137, partitionable_devices=True)) == [[("req-0", POOL2, "device-2")]]
    # Before 1.37 the field is not known: pool-1 (sorted first) gives device-1.
    assert allocate([c], slices, feats(V136, partitionable_devices=True)) == [[("req-0", POOL1, "device-1")]]


# -- derived attributes ------------------------------------------------------------------------------
def test_derived_attributes_are_refused():
    r = request("req-0", CLASS_A)
    r["exactly"]["derivedAttributes"] = [{"name": "example.com/half", "cel": {"expression": "1"}}]
    slices = [rslice("slice-1", "node-1", POOL1, DRIVER_A, device("device-1"))]
    with pytest.raises(AllocatorError) as e:
        allocate([claim("claim-0", r)], slices, feats(V137))
    assert str(e.value) == ("claim default/claim-0, request req-0: cannot handle request with derived attributes, "
                            "the feature is disabled")
    assert allocate([claim("claim-0", r)], slices, feats(V136)) == [[("req-0", POOL1, "device-1")]]
