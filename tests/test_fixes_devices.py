"""explain --fix for devices (DynamicResources): reduce-device-count,
relax-device-selector, relax-device-constraint, use-device-class,
add-resource-slice and free-devices; each proposed where it helps,
checked by applying every change to the objects as written and explaining
again, and never proposed where it must not be."""

from __future__ import annotations

import copy

from fixhelp import (allocated, device_class, explain, node, pod, pod_after, resource_claim, resource_slice,
                     the_pod, with_device_claim)

GPU = "gpu.example.com"
NIC = "nic.example.com"


def kinds(p):
    return [f["kind"] for f in p["fixes"]]


def fix_of(p, kind):
    found = [f for f in p["fixes"] if f["kind"] == kind]
    assert found, f"no {kind} fix in {kinds(p)}: {p['fixSearch']}"
    return found[0]


def assert_fits(objects, fix, key="default/web"):
    after = pod_after(objects, fix, key)
    assert after["status"] == "Scheduled", after["message"]
    return after


def _cluster(devices=2, **slice_fields):
    return [node("a"), device_class(GPU), resource_slice("a", devices=devices, **slice_fields)]


def _claim_of(objects, name="gpus"):
    return next(o for o in objects if o["kind"] == "ResourceClaim" and o["metadata"]["name"] == name)


# ---- reduce-device-count -----------------------------------------------------------------------
def test_fewer_devices_when_no_node_has_as_many():
    objects = _cluster(devices=2) + [resource_claim("gpus", count=4), with_device_claim(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "reduce-device-count")
    assert fix["side"] == "pod"
    assert fix["changes"] == [{"action": "patch",
                               "target": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                          "namespace": "default", "name": "gpus"},
                               "patch": [{"op": "replace", "path": "/spec/devices/requests/0/exactly/count",
                                          "value": 2}]}]
    assert "2 device(s) instead of 4" in fix["description"]
    assert_fits(objects, fix)


def test_all_devices_becomes_as_many_as_are_free():
    held = allocated(resource_claim("other"), "a", ["dev-0"])
    objects = _cluster(devices=3) + [held, resource_claim("gpus", mode="All"), with_device_claim(pod("web"))]
    fix = fix_of(the_pod(objects), "reduce-device-count")
    assert fix["patch"] == [
        {"op": "replace", "path": "/spec/devices/requests/0/exactly/allocationMode", "value": "ExactCount"},
        {"op": "add", "path": "/spec/devices/requests/0/exactly/count", "value": 2}]
    assert_fits(objects, fix)


def test_fewer_devices_never_below_one_nor_for_admin_access():
    held = allocated(resource_claim("other"), "a", ["dev-0", "dev-1"])
    p = the_pod(_cluster() + [held, resource_claim("gpus", count=1), with_device_claim(pod("web"))])
    assert "reduce-device-count" not in kinds(p)
    claim = resource_claim("gpus", count=4, adminAccess=True)
    p = the_pod(_cluster(devices=2) + [claim, with_device_claim(pod("web"))])
    assert "reduce-device-count" not in kinds(p)


# ---- relax-device-selector / relax-device-constraint ------------------------------------------------
def test_selector_that_excludes_the_free_devices_dropped():
    claim = resource_claim("gpus", selectors=['device.attributes["gpu.example.com"].index >= 16'])
    objects = _cluster() + [claim, with_device_claim(pod("web"))]
    fix = fix_of(the_pod(objects), "relax-device-selector")
    assert fix["patch"] == [{"op": "remove", "path": "/spec/devices/requests/0/exactly/selectors/0"}]
    assert "which 2 free device(s) fail" in fix["description"]
    assert_fits(objects, fix)


def test_selector_of_a_class_is_never_dropped():
    objects = [node("a"), device_class(GPU, extra=['device.attributes["gpu.example.com"].index >= 16']),
               resource_slice("a"), resource_claim("gpus"), with_device_claim(pod("web"))]
    p = the_pod(objects)
    assert p["status"] == "Unschedulable"
    assert "relax-device-selector" not in kinds(p)
    assert not any(c["target"]["kind"] == "DeviceClass" for f in p["fixes"] for c in f["changes"])


def test_constraint_no_free_devices_meet_together_dropped():
    gpus = resource_slice("a", attributes={0: {"numa": {"int": 0}}, 1: {"numa": {"int": 0}}})
    nics = resource_slice("a", driver=NIC, devices=1, attributes={0: {"numa": {"int": 1}}})
    claim = resource_claim("gpus", constraints=[{"matchAttribute": "gpu.example.com/numa"}])
    claim["spec"]["devices"]["requests"].append({"name": "nic", "exactly": {"deviceClassName": NIC,
                                                                           "allocationMode": "ExactCount",
                                                                           "count": 1}})
    nics["spec"]["devices"][0]["attributes"] = {"gpu.example.com/numa": {"int": 1}}
    objects = [node("a"), device_class(GPU), device_class(NIC), gpus, nics, claim, with_device_claim(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "relax-device-constraint")
    assert fix["patch"] == [{"op": "remove", "path": "/spec/devices/constraints/0"}]
    assert_fits(objects, fix)


def test_constraint_never_dropped_when_the_devices_are_not_there_at_all():
    # Dropping the constraint cannot help: the node has no NIC for the request.
    claim = resource_claim("gpus", constraints=[{"matchAttribute": "gpu.example.com/numa"}])
    claim["spec"]["devices"]["requests"].append({"name": "nic", "exactly": {"deviceClassName": NIC,
                                                                           "allocationMode": "ExactCount",
                                                                           "count": 1}})
    objects = [node("a"), device_class(GPU), device_class(NIC), resource_slice("a"), claim,
               with_device_claim(pod("web"))]
    p = the_pod(objects)
    assert p["status"] == "Unschedulable"
    assert "relax-device-constraint" not in kinds(p)


# ---- use-device-class --------------------------------------------------------------------------------
def test_another_class_of_the_same_driver_with_free_devices():
    hopper = device_class("hopper.gpu.example.com", driver=GPU, extra=['device.attributes["gpu.example.com"]'
                                                                      '.index >= 16'])
    objects = [node("a"), device_class(GPU), hopper, resource_slice("a"),
               resource_claim("gpus", cls="hopper.gpu.example.com"), with_device_claim(pod("web"))]
    fix = fix_of(the_pod(objects), "use-device-class")
    assert fix["patch"] == [{"op": "replace", "path": "/spec/devices/requests/0/exactly/deviceClassName",
                             "value": GPU}]
    assert_fits(objects, fix)


def test_a_class_that_does_not_exist_replaced_by_the_nearest_name():
    objects = _cluster() + [resource_claim("gpus", cls="mig-1g.gpu.example.com"), with_device_claim(pod("web"))]
    p = the_pod(objects)
    assert p["preFilter"][-1]["plugin"] == "DynamicResources"
    fix = fix_of(p, "use-device-class")
    assert fix["patch"][0]["value"] == GPU and "which does not exist" in fix["description"]
    assert_fits(objects, fix)


def test_never_a_class_of_another_driver():
    # The GPUs are taken; the NIC class has free devices, but a GPU request never gets a NIC.
    held = allocated(resource_claim("other"), "a", ["dev-0", "dev-1"])
    objects = _cluster() + [device_class(NIC), resource_slice("a", driver=NIC), held, resource_claim("gpus"),
                            with_device_claim(pod("web"))]
    p = the_pod(objects)
    assert "use-device-class" not in kinds(p)
    for fix in p["fixes"]:
        assert all(op.get("value") != NIC for c in fix["changes"] for op in c["patch"] if isinstance(op, dict))


# ---- add-resource-slice ------------------------------------------------------------------------------
def test_devices_like_the_nodes_own_added_as_a_new_slice():
    held = allocated(resource_claim("other"), "a", ["dev-0", "dev-1"])
    objects = _cluster() + [held, resource_claim("gpus"), with_device_claim(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "add-resource-slice")
    assert fix["side"] == "cluster" and [c["action"] for c in fix["changes"]] == ["create"]
    made = fix["patch"][0]["value"]
    assert made["kind"] == "ResourceSlice" and made["spec"]["nodeName"] == "a"
    assert made["spec"]["pool"] == {"name": "a-added", "generation": 1, "resourceSliceCount": 1}
    assert [d["name"] for d in made["spec"]["devices"]] == ["dev-0-copy"]
    assert "add 1 device(s) like gpu.example.com/a/dev-0" in fix["description"]
    assert_fits(objects, fix)


def test_no_slice_when_no_device_matches_anywhere():
    claim = resource_claim("gpus", cls=NIC)
    objects = _cluster() + [device_class(NIC), claim, with_device_claim(pod("web"))]
    p = the_pod(objects)
    assert "add-resource-slice" not in kinds(p)
    assert any("nothing to copy" in u["reason"] for u in p["fixSearch"]["uncovered"])


def test_partitionable_devices_are_never_copied():
    objects = [node("a"), device_class(GPU),
               resource_slice("a", consumesCounters=[{"counterSet": "mem", "counters": {"m": {"value": "1"}}}]),
               resource_claim("gpus"), with_device_claim(pod("web"))]
    p = the_pod(objects)
    assert "add-resource-slice" not in kinds(p)


# ---- free-devices ------------------------------------------------------------------------------------
def _holder(name, uid):
    p = pod(name, node_name="a")
    p["metadata"]["uid"] = uid
    return p


def test_pods_holding_the_devices_deleted_and_the_controller_deallocates():
    holder = _holder("trainer", "uid-trainer")
    claim = allocated(resource_claim("trainer-gpus"), "a", ["dev-0", "dev-1"], users=[("trainer", "uid-trainer")])
    holder = with_device_claim(holder, "trainer-gpus")
    objects = _cluster() + [claim, holder, resource_claim("gpus"), with_device_claim(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "free-devices")
    assert fix["objects"] == 1
    delete, release = fix["changes"]
    assert delete == {"action": "delete", "patch": [], "target": {"apiVersion": "v1", "kind": "Pod",
                                                                  "namespace": "default", "name": "trainer"}}
    assert release["by"] == "resourceclaim-controller" and release["target"]["name"] == "trainer-gpus"
    assert release["patch"] == [{"op": "remove", "path": "/status/allocation"},
                                {"op": "remove", "path": "/status/reservedFor"}]
    assert_fits(objects, fix)


def test_never_a_daemonset_pod_holding_devices():
    holder = _holder("agent", "uid-agent")
    holder["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                                              "uid": "u-ds", "controller": True}]
    claim = allocated(resource_claim("agent-gpus"), "a", ["dev-0", "dev-1"], users=[("agent", "uid-agent")])
    objects = _cluster() + [claim, with_device_claim(holder, "agent-gpus"), resource_claim("gpus"),
                            with_device_claim(pod("web"))]
    p = the_pod(objects)
    assert "free-devices" not in kinds(p)


def test_a_template_claim_is_changed_in_its_template_and_by_the_controller():
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "four", "namespace": "default"},
                "spec": {"spec": copy.deepcopy(resource_claim("x", count=4)["spec"])}}
    made = resource_claim("web-gpu-abcde", count=4)
    made["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "gpu"}
    made["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "uid-web",
                                            "controller": True}]
    web = pod("web")
    web["metadata"]["uid"] = "uid-web"
    web["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "four"}]
    web["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "web-gpu-abcde"}]}
    objects = _cluster() + [template, made, web]
    fix = fix_of(the_pod(objects), "reduce-device-count")
    first, second = fix["changes"]
    assert first["target"]["kind"] == "ResourceClaimTemplate" and "by" not in first
    assert first["patch"][0]["path"] == "/spec/spec/devices/requests/0/exactly/count"
    assert second["by"] == "resourceclaim-controller" and second["target"]["name"] == "web-gpu-abcde"
    assert fix["objects"] == 1
    assert_fits(objects, fix)


def test_device_changes_leave_the_snapshot_as_it_was():
    held = allocated(resource_claim("other"), "a", ["dev-0", "dev-1"])
    objects = _cluster() + [held, resource_claim("gpus"), with_device_claim(pod("web")),
                            resource_claim("later-gpus"), with_device_claim(pod("later"), "later-gpus")]
    with_fix = explain(objects)
    without = explain(objects, fix=False)
    assert "add-resource-slice" in [f["kind"] for f in with_fix["pods"][0]["fixes"]]
    for a, b in zip(with_fix["pods"], without["pods"]):
        assert {k: v for k, v in a.items() if k not in ("fixes", "fixSearch", "fixAdvice")} == b
