"""DynamicResources with what v1.36 turns on, in a whole scheduling cycle
(upstream dynamicresources_test.go TestPlugin facts, and what the v1.36
source gives): binding conditions in Filter, extended resources backed by
DeviceClasses (DynamicResources, NodeResourcesFit and the scorers), device
taints, consumable capacity, the Score fix; each with the gates as v1.35 and
v1.36 set them by default and flipped with --feature-gates, to show which
gate changes which verdict."""

from __future__ import annotations

import copy

import pytest
import yaml

from builders import framework
from kschedx.features import Features
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.queue import queue_order
from kschedx.state.dra import time_nanos
from kschedx.state.types import PodInfo

V135, V136 = Features("1.35"), Features("1.36")

NODES = """
apiVersion: v1
kind: Node
metadata: {name: worker, labels: {kubernetes.io/hostname: worker}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: worker-2, labels: {kubernetes.io/hostname: worker-2}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: some-class}
spec:
  selectors: [{cel: {expression: 'device.driver == "some-driver"'}}]
"""


def slice_(node, *devices, name=None):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name or f"{node}-devices"},
            "spec": {"driver": "some-driver", "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [d if isinstance(d, dict) else {"name": d} for d in devices]}}


def pod(claims=(), requests=None, name="my-pod", uid="1234"):
    c = {"name": "c", "image": "x"}
    if requests:
        c["resources"] = {"requests": dict(requests), "limits": dict(requests)}
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": uid},
         "spec": {"containers": [c]}}
    if claims:
        p["spec"]["resourceClaims"] = [{"name": f"rc-{i}", "resourceClaimName": n} for i, n in enumerate(claims)]
    return p


def claim(name, requests=None, status=None, owned=False):
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if owned:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": "1234",
                                    "controller": True}]
    c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
         "spec": {"devices": {"requests": requests or [{"name": "req-1", "exactly": {"deviceClassName": "some-class"}}]}}}
    if status:
        c["status"] = status
    return c


def schedule(features, *objects, read_at=None):
    fw = framework(*yaml.safe_load_all(NODES), *copy.deepcopy(objects), features=features)
    if read_at is not None:
        fw.cluster.read_at = read_at
    pi = queue_order([PodInfo(p) for p in fw.cluster.pending_pods()])[0]
    return fw.schedule(pi)


def filters(result, plugin):
    out = {}
    for n in result.nodes:
        v = next((v for v in n.filters if v.plugin == plugin), None)
        if v is not None:
            out[n.name] = (v.code.label, list(v.status.reasons) if v.status else [])
    return out


def gates(version, **settings):
    return Features(version, settings)


OK = ("Success", [])
CANNOT = ("UnschedulableAndUnresolvable", ["cannot allocate all claims"])
UNAVAILABLE = ("UnschedulableAndUnresolvable", ["resourceclaim not available on the node"])


# -- a gate that changes a verdict: device taints, binding conditions -------------------------
TAINTED = slice_("worker", {"name": "dev-1", "taints": [{"key": "broken", "value": "yes", "effect": "NoSchedule"}]})


@pytest.mark.parametrize("features, verdict", [
    (V135, OK),  # DRADeviceTaints alpha, off: taints are not looked at
    (V136, CANNOT),  # beta, on
    (gates("1.36", DRADeviceTaints=False), OK),
    (gates("1.35", DRADeviceTaints=True), CANNOT),
], ids=["1.35", "1.36", "1.36-DRADeviceTaints=false", "1.35-DRADeviceTaints=true"])
def test_device_taints_gate_changes_the_verdict(features, verdict):
    r = schedule(features, pod(["c1"]), claim("c1"), TAINTED)
    assert filters(r, "DynamicResources")["worker"] == verdict


def test_tolerated_device_taint():
    tol = {"key": "broken", "operator": "Exists", "effect": "NoSchedule"}
    c = claim("c1", [{"name": "req-1", "exactly": {"deviceClassName": "some-class", "tolerations": [tol]}}])
    r = schedule(V136, pod(["c1"]), c, TAINTED)
    assert r.selected_node == "worker"


BINDING = slice_("worker", {"name": "dev-1", "bindingConditions": ["Attached"], "bindingFailureConditions": ["Failed"]})


@pytest.mark.parametrize("features, verdict", [
    (V135, CANNOT),  # a device with binding conditions is never picked without the feature
    (V136, OK),
    (gates("1.36", DRADeviceBindingConditions=False), CANNOT),
    (gates("1.35", DRADeviceBindingConditions=True), OK),
], ids=["1.35", "1.36", "1.36-DRADeviceBindingConditions=false", "1.35-DRADeviceBindingConditions=true"])
def test_binding_conditions_gate_changes_the_verdict(features, verdict):
    r = schedule(features, pod(["c1"]), claim("c1"), BINDING)
    assert filters(r, "DynamicResources")["worker"] == verdict


# -- binding conditions of allocated claims (Filter) ----------------------------------------------
ALLOCATED_AT = "2026-01-01T00:00:00Z"


def allocated_claim(devices_status=None, timestamp=ALLOCATED_AT):
    alloc = {"devices": {"results": [{"request": "req-1", "driver": "some-driver", "pool": "worker", "device": "dev-1",
                                      "bindingConditions": ["Attached"], "bindingFailureConditions": ["Failed"]}]},
             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}}
    if timestamp:
        alloc["allocationTimestamp"] = timestamp
    status = {"allocation": alloc, "reservedFor": [{"resource": "pods", "name": "my-pod", "uid": "1234"}]}
    if devices_status is not None:
        status["devices"] = [{"driver": "some-driver", "pool": "worker", "device": "dev-1",
                              "conditions": devices_status}]
    return claim("c1", status=status)


def cond(t, s):
    return {"type": t, "status": s, "reason": "r", "message": "m", "lastTransitionTime": ALLOCATED_AT}


START = time_nanos(ALLOCATED_AT) / 1e9


@pytest.mark.parametrize("conditions, read_at, verdict", [
    (None, START + 60, OK),  # no device status yet: waiting, not timed out
    (None, START + 601, UNAVAILABLE),  # waiting longer than bindingTimeout (600s)
    (None, None, OK),  # no time known (a snapshot file): never timed out
    ([cond("Attached", "False")], START + 601, UNAVAILABLE),
    ([cond("Attached", "True")], START + 601, OK),  # ready: the timeout does not matter
    ([cond("Attached", "False"), cond("Failed", "True")], START + 1, UNAVAILABLE),  # binding failed
], ids=["waiting", "timed-out", "no-clock", "not-ready-timed-out", "ready", "failed"])
def test_allocated_claim_binding_readiness(conditions, read_at, verdict):
    r = schedule(V136, pod(["c1"]), allocated_claim(conditions), slice_("worker", "dev-1"), read_at=read_at)
    assert filters(r, "DynamicResources")["worker"] == verdict


def test_binding_readiness_is_not_checked_without_the_gates():
    r = schedule(V135, pod(["c1"]), allocated_claim([cond("Failed", "True")]), slice_("worker", "dev-1"),
                 read_at=START + 10_000)
    assert filters(r, "DynamicResources")["worker"] == OK


def test_binding_timeout_from_args():
    args = {"DynamicResources": {"bindingTimeout": "30s"}}
    fw = framework(*yaml.safe_load_all(NODES), pod(["c1"]), allocated_claim(None), slice_("worker", "dev-1"),
                   features=V136, plugin_args=args)
    fw.cluster.read_at = START + 31
    r = fw.schedule(queue_order([PodInfo(p) for p in fw.cluster.pending_pods()])[0])
    assert filters(r, "DynamicResources")["worker"] == UNAVAILABLE


# -- extended resources backed by a DeviceClass (DRAExtendedResource) --------------------------------
GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu-class"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "some-driver"'}}],
                      "extendedResourceName": "example.com/gpu"}}


def device_plugin_node(name, gpus):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110", "example.com/gpu": str(gpus)}}}


def gpu_objects(gpus=2):
    return (pod(requests={"example.com/gpu": str(gpus)}), GPU_CLASS, slice_("worker", "gpu-0", "gpu-1"),
            device_plugin_node("worker-3", 4))


def test_extended_resource_backed_by_devices_v136():
    r = schedule(V136, *gpu_objects())
    assert filters(r, "NodeResourcesFit") == {"worker": OK, "worker-2": OK, "worker-3": OK}
    # worker: two devices of the class; worker-2: none (left to DRA, which finds
    # nothing); worker-3: a device plugin offers the resource (Fit checks it).
    assert filters(r, "DynamicResources") == {"worker": OK, "worker-2": CANNOT, "worker-3": OK}
    nr = next(n for n in r.nodes if n.name == "worker")
    v = next(v for v in nr.filters if v.plugin == "DynamicResources")
    alloc = (v.details or v.status.details)["claims"][0]["allocation"]
    assert [(x["request"], x["device"]) for x in alloc["devices"]["results"]] == [
        ("container-0-request-0", "gpu-0"), ("container-0-request-0", "gpu-1")]


@pytest.mark.parametrize("features, fit_worker", [
    (V135, ("UnschedulableAndUnresolvable", ["Insufficient example.com/gpu"])),
    (gates("1.35", DRAExtendedResource=True), OK),
    (gates("1.36", DRAExtendedResource=False), ("UnschedulableAndUnresolvable", ["Insufficient example.com/gpu"])),
], ids=["1.35", "1.35-DRAExtendedResource=true", "1.36-DRAExtendedResource=false"])
def test_extended_resource_gate_changes_the_verdict(features, fit_worker):
    r = schedule(features, *gpu_objects())
    assert filters(r, "NodeResourcesFit")["worker"] == fit_worker


def test_extended_resource_more_than_the_devices():
    r = schedule(V136, *gpu_objects(gpus=3))
    assert filters(r, "DynamicResources")["worker"] == CANNOT
    assert r.selected_node == "worker-3"


def test_implicit_device_class_resource_name():
    p = pod(requests={"deviceclass.resource.kubernetes.io/gpu-class": "1"})
    r = schedule(V136, p, GPU_CLASS, slice_("worker", "gpu-0"))
    assert r.selected_node == "worker"


def test_unmapped_extended_resource_on_a_node_without_it():
    # A pod asking for a mapped resource and for an unmapped one: DynamicResources
    # refuses nodes that do not list the unmapped one at all.
    p = pod(requests={"example.com/gpu": "1", "vendor.io/fpga": "1"})
    r = schedule(V136, p, GPU_CLASS, slice_("worker", "gpu-0"))
    assert filters(r, "DynamicResources")["worker"] == ("UnschedulableAndUnresolvable", ["cannot fit resource"])


def test_extended_resource_devices_count_in_scoring():
    # BalancedAllocation over cpu, memory and the extended resource: the
    # node's devices stand for its capacity of it (1 of 2 in use after the pod).
    args = {"NodeResourcesBalancedAllocation": {"resources": [
        {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": "example.com/gpu", "weight": 1}]}}
    objects = gpu_objects(1)
    fw = framework(*yaml.safe_load_all(NODES), *copy.deepcopy(objects), features=V136, plugin_args=args)
    pl = fw.profile.by_name["NodeResourcesBalancedAllocation"]
    ni = fw.snapshot.get("worker")
    details = pl.score_details(CycleState(), PodInfo(objects[0]), ni)
    assert details["fractions"]["example.com/gpu"] == "1/2"


# -- Score: prioritized list (v1.36 needs DRAPrioritizedList and pairs claims with their allocation) -----
def test_score_of_an_allocated_claim_with_subrequests():
    spec = [{"name": "req-1", "firstAvailable": [{"name": "big", "deviceClassName": "some-class"},
                                                  {"name": "small", "deviceClassName": "some-class"}]}]
    allocated = claim("c1", spec, status={
        "allocation": {"devices": {"results": [{"request": "req-1/small", "driver": "some-driver", "pool": "worker",
                                                "device": "dev-1"}]}},
        "reservedFor": [{"resource": "pods", "name": "my-pod", "uid": "1234"}]})
    other = claim("c2")
    objects = (pod(["c1", "c2"]), allocated, other, slice_("worker", "dev-1", "dev-2"),
               slice_("worker-2", "dev-1", "dev-2", name="w2"))

    def raw_scores(features):
        r = schedule(features, *objects)
        return {n.name: next(s for s in n.scores if s.plugin == "DynamicResources").raw for n in r.nodes if n.scores}

    # v1.36: the allocated claim's own allocation picked subrequest #1: 8 - 1 = 7.
    assert raw_scores(V136) == {"worker": 7, "worker-2": 7}
    # Without DRAPrioritizedList v1.36 scores 0.
    assert raw_scores(gates("1.36", DRAPrioritizedList=False)) == {"worker": 0, "worker-2": 0}


@pytest.mark.parametrize("features, want", [
    # upstream balanced_allocation_test.go (v1.35, DRAExtendedResource on):
    # "include DRA resource on a node for balanced resource allocation"
    (gates("1.35", DRAExtendedResource=True), {"node1": 62, "node2": 63}),
    # v1.36 scores the improvement (derived from the v1.36 formula:
    # node1 59 -> 62 gives 76, node2 63 -> 63 gives 75)
    (V136, {"node1": 76, "node2": 75}),
], ids=["1.35-DRAExtendedResource=true", "1.36"])
def test_balanced_allocation_counts_dra_devices(features, want):
    ext = "example.com/gpu"

    def node(name):
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                "status": {"allocatable": {"cpu": "3500m", "memory": "40000", "pods": "110"}}}

    def running(name, on, cpu, mem=None):
        req = {"cpu": cpu} if mem is None else {"cpu": cpu, "memory": mem}
        p = pod(requests=req, name=name, uid=f"uid-{name}")
        p["spec"]["nodeName"] = on
        return p

    devices = slice_("node1", *(f"gpu-{i}" for i in range(8)))
    incoming = pod(requests={ext: "1"})
    args = {"NodeResourcesBalancedAllocation": {"resources": [
        {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": ext, "weight": 1}]}}
    fw = framework(node("node1"), node("node2"), running("a", "node1", "3000m"), running("b", "node2", "3000m", "5000"),
                   GPU_CLASS, devices, incoming, features=features, plugin_args=args)
    pl = fw.profile.by_name["NodeResourcesBalancedAllocation"]
    state = CycleState()
    pi = PodInfo(incoming)
    assert pl.pre_score(state, pi, fw.snapshot.node_infos) is None
    assert {ni.name: pl.score(state, pi, ni) for ni in fw.snapshot.node_infos} == want


# -- DeviceTaintRules (DRADeviceTaintRules, off by default in both versions) -------------------------
TAINT_RULE = {"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "broken-dev-1"},
              "spec": {"deviceSelector": {"driver": "some-driver", "pool": "worker", "device": "dev-1"},
                       "taint": {"key": "broken", "value": "yes", "effect": "NoSchedule"}}}


@pytest.mark.parametrize("features, verdict", [
    (V136, OK),  # DRADeviceTaintRules beta but off: the rule is not applied
    (gates("1.36", DRADeviceTaintRules=True), CANNOT),
    (gates("1.35", DRADeviceTaints=True, DRADeviceTaintRules=True), CANNOT),
], ids=["1.36", "1.36-DRADeviceTaintRules=true", "1.35-both-gates"])
def test_device_taint_rules(features, verdict):
    r = schedule(features, pod(["c1"]), claim("c1"), slice_("worker", "dev-1"), TAINT_RULE)
    assert filters(r, "DynamicResources")["worker"] == verdict


def test_device_taint_rule_selects_by_device_name():
    r = schedule(gates("1.36", DRADeviceTaintRules=True), pod(["c1"]), claim("c1"), slice_("worker", "dev-0", "dev-1"),
                 TAINT_RULE)
    assert r.selected_node == "worker"
    assert filters(r, "DynamicResources")["worker"] == OK


# -- upstream TestPlugin's extended-resource cases (dynamicresources_test.go) ----------------------
def one_node(allocatable_gpus=None):
    alloc = {"cpu": "8", "memory": "16Gi", "pods": "110"}
    if allocatable_gpus is not None:
        alloc["example.com/gpu"] = str(allocatable_gpus)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker", "labels": {"kubernetes.io/hostname": "worker"}},
            "status": {"allocatable": alloc}}


def run_one(node, *objects):
    fw = framework(node, *copy.deepcopy(objects), features=V136)
    pi = queue_order([PodInfo(p) for p in fw.cluster.pending_pods()])[0]
    r = fw.schedule(pi)
    pre = next((s for s in r.pre_filter if s.plugin == "DynamicResources"), None)
    return r, pre


PLAIN_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "plain"},
               "spec": {"selectors": [{"cel": {"expression": 'device.driver == "some-driver"'}}]}}


def test_non_dra_extended_resource_skips_prefilter():
    # "non-DRA-extended-resource-name-with-zero-allocatable": no class maps the name.
    r, pre = run_one(one_node(0), pod(requests={"example.com/gpu": "1"}), PLAIN_CLASS, slice_("worker", "gpu-0"))
    assert pre.code.label == "Skip"


def test_extended_resource_with_zero_allocatable_goes_to_dra():
    # "extended-resource-name-with-zero-allocatable": the node lists the resource at 0.
    r, _ = run_one(one_node(0), pod(requests={"example.com/gpu": "1"}), GPU_CLASS, slice_("worker", "gpu-0"))
    assert r.selected_node == "worker"
    assert filters(r, "NodeResourcesFit")["worker"] == OK


def test_extended_resource_without_devices():
    # "extended-resource-name-no-resource": Filter cannot allocate, PostFilter
    # has nothing to deallocate.
    r, _ = run_one(one_node(), pod(requests={"example.com/gpu": "1"}), GPU_CLASS)
    assert filters(r, "DynamicResources")["worker"] == CANNOT
    assert "cannot allocate all claims. still not schedulable" in r.message


def test_extended_resource_claim_left_from_an_earlier_cycle():
    # "extended-resource-name-with-resources-has-claim": the pod's claim already
    # has requests: every node refuses it, PostFilter deletes it.
    p = pod(requests={"example.com/gpu": "1"})
    left = claim("my-pod-extended-resources-abcde", [{"name": "container-0-request-0", "exactly": {
        "deviceClassName": "gpu-class", "allocationMode": "ExactCount", "count": 1}}], owned=True)
    left["metadata"]["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
    r, _ = run_one(one_node(), p, GPU_CLASS, slice_("worker", "gpu-0"), left)
    assert filters(r, "DynamicResources")["worker"] == ("UnschedulableAndUnresolvable",
                                                        ["cannot schedule extended resource claim"])
    assert "cannot schedule extended resource claim. deletion of ResourceClaim completed" in r.message


def test_one_resource_from_a_device_plugin_one_from_dra():
    # "extended-resource-one-device-plugin-one-dra".
    other = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "fpga-class"},
             "spec": {"selectors": [{"cel": {"expression": 'device.driver == "some-driver"'}}],
                      "extendedResourceName": "example.com/fpga"}}
    p = pod(requests={"example.com/gpu": "1", "example.com/fpga": "1"})
    r, _ = run_one(one_node(2), p, GPU_CLASS, other, slice_("worker", "fpga-0"))
    assert r.selected_node == "worker"
    nr = next(n for n in r.nodes if n.name == "worker")
    v = next(v for v in nr.filters if v.plugin == "DynamicResources")
    alloc = (v.details or v.status.details)["claims"][0]["allocation"]
    assert [(x["request"], x["device"]) for x in alloc["devices"]["results"]] == [("container-0-request-0", "fpga-0")]
