"""The DynamicResources plugin: facts from upstream's dynamicresources_test.go
(PreEnqueue / PreFilter / Filter / PostFilter / Score verdicts and texts),
with each version's default feature gates (v1.36 unless a test says; the
texts and Score pairing that changed in v1.36 are checked for both)."""

from __future__ import annotations

import pytest
import yaml

from builders import framework
from kschedx.features import Features
from kschedx.framework.cycle_state import CycleState
from kschedx.framework.queue import queue_order
from kschedx.framework.status import Code
from kschedx.state.types import PodInfo

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

BASE = """
apiVersion: v1
kind: Node
metadata: {name: worker, labels: {kubernetes.io/hostname: worker}}
status: {capacity: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: worker-2, labels: {kubernetes.io/hostname: worker-2}}
status: {capacity: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: some-class}
spec:
  selectors: [{cel: {expression: 'device.driver == "some-driver"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: worker-some-driver}
spec:
  driver: some-driver
  nodeName: worker
  pool: {name: worker, generation: 1, resourceSliceCount: 1}
  devices: [{name: instance-1}]
"""

POD = """
apiVersion: v1
kind: Pod
metadata: {name: my-pod, namespace: default, uid: "1234"}
spec:
  containers: [{name: c, image: x}]
"""


def claim(name="my-pod-my-resource", *, owned=True, allocated_on=None, reserved_for=None, deleting=False,
          class_name="some-class", requests=None):
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if owned:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": "1234", "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    c = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
         "spec": {"devices": {"requests": requests or [{"name": "req-1", "exactly": {"deviceClassName": class_name}}]}}}
    status = {}
    if allocated_on is not None:
        status["allocation"] = {
            "devices": {"results": [{"request": "req-1", "driver": "some-driver", "pool": allocated_on, "device": "instance-1"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [allocated_on]}]}]}}
    if reserved_for:
        status["reservedFor"] = [{"resource": "pods", "name": n, "uid": u} for n, u in reserved_for]
    if status:
        c["status"] = status
    return c


def pod(*, claim_name=None, template=None, status_name=None):
    p = yaml.safe_load(POD)
    rc = {"name": "my-resource"}
    if template:
        rc["resourceClaimTemplateName"] = template
    else:
        rc["resourceClaimName"] = claim_name or "my-pod-my-resource"
    p["spec"]["resourceClaims"] = [rc]
    p["spec"]["containers"][0]["resources"] = {"claims": [{"name": "my-resource"}]}
    if status_name is not None:
        p["status"] = {"resourceClaimStatuses": [{"name": "my-resource", "resourceClaimName": status_name}]}
    return p


V135, V136 = Features("1.35"), Features("1.36")


def run(pod_obj, *objects, features=None):
    fw = framework(*yaml.safe_load_all(BASE), pod_obj, *objects, features=features, version=VERSION)
    pi = queue_order([PodInfo(p) for p in fw.cluster.pending_pods()])[0]
    return fw, pi, fw.schedule(pi)


def dra_filter(result, node):
    nr = next(n for n in result.nodes if n.name == node)
    v = next(v for v in nr.filters if v.plugin == "DynamicResources")
    return v.code, (v.status.reasons if v.status else [])


def test_pod_without_claims_is_skipped_everywhere():
    fw, pi, r = run(yaml.safe_load(POD))
    assert ("DynamicResources", Code.SKIP) in [(s.plugin, s.code) for s in r.pre_filter]
    assert all(dra_filter(r, n.name)[0] == Code.SKIP for n in r.nodes)
    for n in r.nodes:
        assert next(s for s in n.scores if s.plugin == "DynamicResources").raw == 0


def test_post_filter_without_claims():
    pl = framework(version=VERSION).profile.by_name["DynamicResources"]
    state = CycleState()
    pi = PodInfo(yaml.safe_load(POD))
    assert pl.pre_filter(state, pi, [])[1].code == Code.SKIP
    res, st = pl.post_filter(state, pi, None)
    assert (res, st.code, st.reasons) == (None, Code.UNSCHEDULABLE, ["no new claims to deallocate"])


def test_claim_missing_is_gated():
    _, _, r = run(pod())
    assert r.status == "Gated"
    assert (r.gate.code, r.gate.reasons) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                             ['could not find ResourceClaim "default/my-pod-my-resource"'])


def test_template_claim_not_created_yet_is_gated():
    _, _, r = run(pod(template="my-template"))
    assert r.gate.reasons == ['pod "default/my-pod": ResourceClaim not created yet']


@pytest.mark.parametrize("features, text", [
    (V135, "ResourceClaim default/my-pod-my-resource was not created for pod default/my-pod (pod is not owner)"),
    (V136, "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod (Pod is not owner)"),
], ids=["1.35", "1.36"])
def test_generated_claim_must_be_owned_by_the_pod(features, text):
    _, _, r = run(pod(template="t", status_name="my-pod-my-resource"), claim(owned=False), features=features)
    assert r.gate.reasons == [text]


def test_generated_claim_owned_is_scheduled():
    _, _, r = run(pod(template="t", status_name="my-pod-my-resource"), claim())
    assert (r.status, r.selected_node) == ("Scheduled", "worker")


def test_status_entry_without_claim_name_is_skipped():
    p = pod(template="t")
    p["status"] = {"resourceClaimStatuses": [{"name": "my-resource"}]}
    _, _, r = run(p)
    assert r.status == "Scheduled"
    assert ("DynamicResources", Code.SKIP) in [(s.plugin, s.code) for s in r.pre_filter]


def test_deleted_claim_is_gated():
    _, _, r = run(pod(), claim(deleting=True))
    assert r.gate.reasons == ['resourceclaim "my-pod-my-resource" is being deleted']


def test_missing_class():
    _, _, r = run(pod(), claim(class_name="no-such-class"))
    assert r.status == "Unschedulable"
    assert r.message.startswith("0/2 nodes are available: request req-1: device class no-such-class does not exist. "
                                "no new claims to deallocate")


def test_missing_class_of_subrequest():
    req = [{"name": "req-1", "firstAvailable": [{"name": "a", "deviceClassName": "some-class"},
                                                {"name": "b", "deviceClassName": "gone"}]}]
    _, _, r = run(pod(), claim(requests=req))
    assert r.pre_filter[-1].reasons == ["request req-1/b: device class gone does not exist"]


def test_unknown_request_type():
    _, _, r = run(pod(), claim(requests=[{"name": "req-1"}]))
    assert r.pre_filter[-1].reasons == ["resource claim default/my-pod-my-resource, request req-1: unknown request type"]


def test_empty_class_name_is_an_error():
    _, _, r = run(pod(), claim(requests=[{"name": "req-1", "exactly": {"deviceClassName": ""}}]))
    assert r.status == "Error"
    assert r.message == 'running PreFilter plugin "DynamicResources": request req-1: unsupported request type'


def test_allocates_on_the_node_with_devices():
    _, _, r = run(pod(), claim())
    assert dra_filter(r, "worker") == (Code.SUCCESS, [])
    assert dra_filter(r, "worker-2") == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["cannot allocate all claims"])
    assert r.selected_node == "worker"


def test_device_in_use_by_other_claim():
    other = claim("other", owned=False, allocated_on="worker")
    _, _, r = run(pod(), claim(), other)
    assert dra_filter(r, "worker") == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["cannot allocate all claims"])
    assert r.message.startswith("0/2 nodes are available: 2 cannot allocate all claims. still not schedulable")


def test_allocated_claim_restricts_nodes():
    c = claim(allocated_on="worker", reserved_for=[("my-pod", "1234")])
    _, _, r = run(pod(), c)
    assert dra_filter(r, "worker") == (Code.SUCCESS, [])
    assert dra_filter(r, "worker-2") == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ["resourceclaim not available on the node"])


def test_unavailable_allocated_claim_is_deallocated_by_post_filter():
    # Allocated for a node that no longer exists and not reserved: PostFilter
    # deallocates it (upstream writes that; kschedx reports it).
    _, _, r = run(pod(), claim(allocated_on="gone"))
    assert r.status == "Unschedulable"
    assert r.message.startswith(
        "0/2 nodes are available: 2 resourceclaim not available on the node. deallocation of ResourceClaim completed")


def test_unavailable_claim_reserved_by_others_is_kept():
    c = claim(allocated_on="nowhere", reserved_for=[("someone-else", "999")])
    _, _, r = run(pod(), c)
    assert r.message.startswith("0/2 nodes are available: 2 resourceclaim not available on the node. still not schedulable")


def prioritized_claim():
    req = [{"name": "req-1", "firstAvailable": [
        {"name": "big", "deviceClassName": "some-class", "allocationMode": "ExactCount", "count": 2},
        {"name": "small", "deviceClassName": "some-class", "allocationMode": "ExactCount", "count": 1}]}]
    return claim(requests=req)


def test_score_of_prioritized_list():
    two = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "worker-2-devices"},
           "spec": {"driver": "some-driver", "nodeName": "worker-2",
                    "pool": {"name": "worker-2", "generation": 1, "resourceSliceCount": 1},
                    "devices": [{"name": "instance-1"}, {"name": "instance-2"}]}}
    _, _, r = run(pod(), prioritized_claim(), two)
    scores = {n.name: next(s for s in n.scores if s.plugin == "DynamicResources") for n in r.nodes if n.scores}
    # subrequest #0 scores 8, #1 scores 7; normalized against the best node.
    assert (scores["worker-2"].raw, scores["worker-2"].normalized) == (8, 100)
    assert (scores["worker"].raw, scores["worker"].normalized) == (7, 87)
    assert r.selected_node == "worker-2"


def _allocated_then_unallocated(features):
    allocated = claim("first", allocated_on="worker", reserved_for=[("my-pod", "1234")], owned=False)
    p = pod()
    p["spec"]["resourceClaims"] = [{"name": "a", "resourceClaimName": "first"},
                                   {"name": "b", "resourceClaimName": "second"}]
    second = claim("second", owned=False)
    second["spec"]["devices"]["requests"] = [{"name": "req-1", "exactly": {"deviceClassName": "some-class"}}]
    extra = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "worker-more"},
             "spec": {"driver": "some-driver", "nodeName": "worker",
                      "pool": {"name": "worker-more", "generation": 1, "resourceSliceCount": 1},
                      "devices": [{"name": "instance-2"}]}}
    return run(p, allocated, second, extra, features=features)[2]


def test_score_fails_for_allocated_claim_before_unallocated_one_v135():
    # v1.35 pairs claim i with allocation i over all claims: with the
    # allocated claim first, scoring errors out.
    r = _allocated_then_unallocated(V135)
    # With a single feasible node kube-scheduler selects it without scoring,
    # so the Score error only shows up in the informational scores.
    assert r.status == "Scheduled"
    assert any(n.startswith("scores not available:") and n.endswith(
        'plugin "DynamicResources" failed with: number of allocations 1 is smaller than number of claims')
        and n.count("running Score plugins") == 1  # named by the framework only
        for n in r.notes), r.notes


def test_score_pairs_each_claim_with_its_own_allocation_v136():
    # v1.36: an allocated claim brings its own allocation; the Filter result
    # goes to the claim that needed it.
    r = _allocated_then_unallocated(V136)
    assert r.status == "Scheduled"
    assert not any(n.startswith("scores not available:") for n in r.notes), r.notes
    worker = next(n for n in r.nodes if n.name == "worker")
    assert next(s for s in worker.scores if s.plugin == "DynamicResources").raw == 0


def test_in_flight_claim_makes_next_pod_wait():
    fw, pi, r = run(pod(), claim())
    assert r.status == "Scheduled"
    fw.run_reserve_plugins(r, r.selected_node)
    r2 = fw.schedule(pi)
    assert r2.pre_filter[-1].reasons == ["resource claim default/my-pod-my-resource is in the process of being allocated"]


def test_details_name_the_rejecting_selector():
    req = [{"name": "req-1", "exactly": {"deviceClassName": "some-class",
                                          "selectors": [{"cel": {"expression": 'device.attributes["some-driver"].model == "x"'}}]}}]
    _, _, r = run(pod(), claim(requests=req))
    # The device has no attribute "model": a CEL runtime error is an Error for the pod.
    assert r.status == "Error"
    assert r.message == ('running "DynamicResources" filter plugin: claim default/my-pod-my-resource: selector #0: '
                         "CEL runtime error: no such key: model")


def test_details_of_rejection():
    other = claim("other", owned=False, allocated_on="worker")
    _, _, r = run(pod(), claim(), other)
    nr = next(n for n in r.nodes if n.name == "worker")
    v = next(v for v in nr.filters if v.plugin == "DynamicResources")
    cand = (v.details or v.status.details)["claims"][0]["requests"][0]["candidates"]
    assert cand == [{"device": "some-driver/worker/instance-1", "reason": "already allocated to claim default/other"}]


def _poolless_nodes(n):
    return [{"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": f"plain-{i}", "labels": {"kubernetes.io/hostname": f"plain-{i}"}},
             "status": {"capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"}}} for i in range(n)]


def _dra_verdicts(result):
    out = {}
    for nr in result.nodes:
        v = next(v for v in nr.filters if v.plugin == "DynamicResources")
        out[nr.name] = (v.code, v.status.reasons if v.status else [], v.status.details if v.status else None)
    return out


@pytest.mark.parametrize("requests", [
    None,  # one device: fits on worker only
    [{"name": "req-1", "exactly": {"deviceClassName": "some-class", "count": 2}}],  # fits nowhere
    [{"name": "req-1", "exactly": {"deviceClassName": "some-class", "allocationMode": "All"}}],
    [{"name": "req-1", "exactly": {"deviceClassName": "some-class", "count": 64}}],  # an error on every node
])
def test_nodes_without_pools_share_one_allocation_outcome(monkeypatch, requests):
    """Nodes that reach no pool are allocated once per cycle: each gets what
    its own allocation would have given (the same verdict, text and details)."""
    from kschedx.plugins.dynamicresources import plugin as dra_plugin

    def cycle():
        fw = framework(*yaml.safe_load_all(BASE), pod(), claim(requests=requests), *_poolless_nodes(4), version=VERSION)
        pi = queue_order([PodInfo(p) for p in fw.cluster.pending_pods()])[0]
        return fw.schedule(pi)

    allocations = []
    allocate = dra_plugin.DynamicResources._allocate
    monkeypatch.setattr(dra_plugin.DynamicResources, "_allocate",
                        staticmethod(lambda run_: allocations.append(run_.node_info.name) or allocate(run_)))
    shared = cycle()
    # worker has the pool; worker-2 and the plain nodes reach none.
    assert sorted(allocations) == ["plain-0", "worker"]

    for memo in ("poolless", "poolless_status"):
        monkeypatch.setattr(dra_plugin._StateData, memo, property(lambda self: None, lambda self, v: None))
    allocations.clear()
    alone = cycle()
    assert sorted(allocations) == ["plain-0", "plain-1", "plain-2", "plain-3", "worker", "worker-2"]
    assert _dra_verdicts(shared) == _dra_verdicts(alone)
    assert shared.message == alone.message
