"""DynamicResources at v1.37, in whole scheduling cycles (upstream
dynamicresources_test.go v1.37.2: TestPostFilterNoOpStatusHasNoUserVisibleReason,
Test_allocationResultRequiresDRAOptionalNodeOperations and the Filter's check
of it; tracker_test.go TestListPatchedResourceSlices' rules, with a rule
without deviceSelector of our own), each beside v1.36's outcome."""

from __future__ import annotations

import pytest

from kschedx.features import Features
from kschedx.framework.status import Code
from kschedx.plugins.dynamicresources.plugin import _skips_node_operations
from test_dynamicresources_v136 import CANNOT, OK, UNAVAILABLE, claim, filters, gates, pod, schedule, slice_

V136, V137 = Features("1.36"), Features("1.37")


def _post_filter(result):
    return result.preemption["message"] if result.preemption else None


@pytest.mark.parametrize("features, message", [
    # No claims, nothing to deallocate: 1.36's text, 1.37's none. DefaultPreemption has nothing to say either.
    (V136, "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
           "scheduling."),
    (V137, "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
])
def test_post_filter_no_op_status_has_no_user_visible_reason(features, message):
    r = schedule(features, pod(requests={"cpu": "100"}))
    assert r.status == "Unschedulable"
    assert _post_filter(r) == message
    assert r.message.endswith(" " + message)


@pytest.mark.parametrize("features, message", [
    (V136, "still not schedulable, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
    (V137, "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
])
def test_post_filter_with_claims_it_cannot_free(features, message):
    r = schedule(features, pod(["c1"]), claim("c1"))  # no devices anywhere
    assert filters(r, "DynamicResources")["worker"] == CANNOT
    assert _post_filter(r) == message


@pytest.mark.parametrize("results, want", [
    (None, False),
    ([{"request": "r", "driver": "d", "pool": "p", "device": "x"}], False),
    ([{"request": "r", "driver": "d", "pool": "p", "device": "x"},
      {"request": "r", "driver": "d", "pool": "p", "device": "y", "skipNodeOperations": ["NodePrepareResources"]}],
     True),
    ([{"request": "r", "driver": "d", "pool": "p", "device": "x", "skipNodeOperations": []}], False),
])
def test_allocation_result_requires_dra_optional_node_operations(results, want):
    allocation = None if results is None else {"devices": {"results": results}}
    assert _skips_node_operations(allocation) is want


def _allocated(skip):
    result = {"request": "req-1", "driver": "some-driver", "pool": "worker", "device": "dev-1"}
    if skip:
        result["skipNodeOperations"] = ["*"]
    return claim("c1", status={"allocation": {"devices": {"results": [result]}}})


@pytest.mark.parametrize("features, skip, worker", [
    (V137, True, UNAVAILABLE),  # the node does not declare DRAOptionalNodeOperations
    (V137, False, OK),
    (V136, True, OK),  # 1.36 does not look
])
def test_filter_needs_optional_node_operations_on_the_node(features, skip, worker):
    r = schedule(features, pod(["c1"]), _allocated(skip), slice_("worker", "dev-1"))
    assert filters(r, "DynamicResources")["worker"] == worker


# -- DeviceTaintRules: on by default from 1.37, a rule without deviceSelector selects nothing -----------
RULE = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "everything"},
        "spec": {"taint": {"key": "maintenance", "effect": "NoSchedule"}}}
NAMED = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "dev-1"},
         "spec": {"deviceSelector": {"device": "dev-1"}, "taint": {"key": "broken", "effect": "NoSchedule"}}}


@pytest.mark.parametrize("features, rules, verdict", [
    (V137, [RULE], OK),  # no selector: no device
    (V137, [NAMED], CANNOT),  # on by default: the named device is tainted
    (gates("1.37", DRADeviceTaintRules=False), [NAMED], OK),
    (gates("1.36", DRADeviceTaintRules=True), [RULE], CANNOT),  # 1.36: no selector, every device
    (V136, [NAMED], OK),  # off by default in 1.36
], ids=["1.37-no-selector", "1.37-named", "1.37-off", "1.36-on-no-selector", "1.36-default"])
def test_device_taint_rules(features, rules, verdict):
    r = schedule(features, pod(["c1"]), claim("c1"), slice_("worker", "dev-1"), *rules)
    assert filters(r, "DynamicResources")["worker"] == verdict


def test_the_post_filter_code_stays_unschedulable():
    r = schedule(V137, pod(["c1"]), claim("c1"))
    assert r.preemption["code"] == Code.UNSCHEDULABLE.label
