"""VolumeBinding and its binder, from upstream's volume_binding_test.go,
binder_test.go and component-helpers' pv_helpers_test.go (v1.35 facts).

v1.35 has no PreFilterResult from VolumeBinding and StorageCapacityScoring
is off by default, so the score cases become "PreScore skips".
"""

from __future__ import annotations

import pytest

from kschedx.state import cache
from kschedx.framework.cycle_state import CycleState
from kschedx.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    BinderError,
    ClaimMatcher,
)
from kschedx.plugins.volumebinding.volume_binding import STATE_KEY
from kschedx.storage.objects import AffinityCache, is_delay_binding_mode
from builders import HOSTNAME, csi_driver, csi_node, framework, pv, pvc, storage_class, verdict
from builders import capacity_node as node
from builders import csi_storage_capacity as capacity
from builders import filter_all as run
from builders import pod_info as pending
from builders import volume_pod as pod

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

BIND = ERR_REASON_BIND_CONFLICT
NODE_CONFLICT = ERR_REASON_NODE_CONFLICT


def upstream_pv(name, sc, phase=None, capacity_=None, affinity=None, claim=None, source=None, labels=None,
                modes=None, uid=None):
    """makePV of the plugin tests: nothing but what is given."""
    return pv(name, sc, capacity=capacity_ or None, modes=modes or None, source=source, claim=claim or None,
              claim_uid=uid, affinity=affinity, labels=dict(labels or {}), status={"phase": phase} if phase else None)


def upstream_node(name, **labels):
    return node(name, {HOSTNAME: name, **labels})


CLASSES = [storage_class("immediate-sc", mode="Immediate", provisioner=""),
           storage_class("wait-sc", provisioner=""), storage_class("wait-hdd-sc", provisioner="")]


def plugin_case(claims, nodes, pvcs, pvs):
    fw = framework(*nodes, *CLASSES, *pvcs, *pvs, pod("pod-a", claims=claims), version=VERSION)
    pl = fw.profile.by_name["VolumeBinding"]
    state = CycleState()
    pod_info = pending(fw, "pod-a")
    result, pre = pl.pre_filter(state, pod_info, fw.snapshot.node_infos)
    assert result is None  # no PreFilterResult in v1.35
    if pre is not None and not pre.is_success():
        return verdict(pre), None, None
    filters = [verdict(pl.filter(state, pod_info, ni)) for ni in fw.snapshot.node_infos]
    return verdict(pre), filters, verdict(pl.pre_score(state, pod_info, fw.snapshot.node_infos))


OK = ("Success", [])
SKIP = ("Skip", [])


def unresolvable(*reasons):
    return ("UnschedulableAndUnresolvable", list(reasons))


ZONES = [("zone-a-node-a", "region-a", "zone-a"), ("zone-a-node-b", "region-a", "zone-a"),
         ("zone-b-node-a", "region-b", "zone-b"), ("zone-b-node-b", "region-b", "zone-b"),
         ("zone-c-node-a", "region-c", "zone-c"), ("zone-c-node-b", "region-c", "zone-c")]
ZONAL_NODES = [upstream_node(n, **{"topology.kubernetes.io/region": r, "topology.kubernetes.io/zone": z})
               for n, r, z in ZONES]


def zonal_pv(name, size, region, zone):
    return upstream_pv(name, "wait-sc", phase="Available", capacity_=size,
                       affinity={"topology.kubernetes.io/region": [region], "topology.kubernetes.io/zone": [zone]})


def local_pv(name, sc, size, host):
    return upstream_pv(name, sc, phase="Available", capacity_=size, affinity={HOSTNAME: [host]})


PLUGIN_CASES = [
    ("pod has not pvcs", [], [upstream_node("node-a")], [], [], (SKIP, None, None)),
    ("all bound", ["pvc-a"], [upstream_node("node-a")],
     [pvc("pvc-a", sc="wait-sc", volume_name="pv-a", bound=True)],
     [upstream_pv("pv-a", "wait-sc", phase="Available")], (OK, [OK], SKIP)),
    ("all bound with local volumes", ["pvc-a", "pvc-b"], [upstream_node("node-a")],
     [pvc("pvc-a", sc="wait-sc", volume_name="pv-a", bound=True),
      pvc("pvc-b", sc="wait-sc", volume_name="pv-b", bound=True)],
     [upstream_pv("pv-a", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]}),
      upstream_pv("pv-b", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]})], (OK, [OK], SKIP)),
    ("PVC does not exist", ["pvc-a"], [upstream_node("node-a")], [], [],
     (unresolvable('persistentvolumeclaim "pvc-a" not found'), None, None)),
    ("Part of PVCs do not exist", ["pvc-a", "pvc-b"], [upstream_node("node-a")],
     [pvc("pvc-a", sc="wait-sc", volume_name="pv-a", bound=True)], [],
     (unresolvable('persistentvolumeclaim "pvc-b" not found'), None, None)),
    ("immediate claims not bound", ["pvc-a"], [upstream_node("node-a")], [pvc("pvc-a", sc="immediate-sc")], [],
     (unresolvable("pod has unbound immediate PersistentVolumeClaims"), None, None)),
    ("unbound claims no matches", ["pvc-a"], [upstream_node("node-a")], [pvc("pvc-a", sc="wait-sc")], [],
     (OK, [unresolvable(BIND)], SKIP)),
    ("bound and unbound unsatisfied", ["pvc-a", "pvc-b"], [upstream_node("node-a", foo="barbar")],
     [pvc("pvc-a", sc="wait-sc", volume_name="pv-a", bound=True), pvc("pvc-b", sc="wait-sc")],
     [upstream_pv("pv-a", "wait-sc", phase="Available", affinity={"foo": ["bar"]})],
     (OK, [unresolvable(NODE_CONFLICT, BIND)], SKIP)),
    ("pv not found", ["pvc-a"], [upstream_node("node-a")], [pvc("pvc-a", sc="wait-sc", volume_name="pv-a", bound=True)],
     [], (OK, [unresolvable(ERR_REASON_PV_NOT_EXIST)], SKIP)),
    ("pv not found claim lost", ["pvc-a"], [upstream_node("node-a")],
     [pvc("pvc-a", sc="wait-sc", volume_name="pv-a", bound=True, phase="Lost")], [],
     (unresolvable('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'), None, None)),
    ("local volumes with close capacity are preferred", ["pvc-a"],
     [upstream_node("node-a"), upstream_node("node-b"), upstream_node("node-c")],
     [pvc("pvc-a", sc="wait-sc", request="50Gi", modes=())],
     [local_pv("pv-a-0", "wait-sc", "200Gi", "node-a"), local_pv("pv-a-1", "wait-sc", "200Gi", "node-a"),
      local_pv("pv-b-0", "wait-sc", "100Gi", "node-b"), local_pv("pv-b-1", "wait-sc", "100Gi", "node-b")],
     (OK, [OK, OK, unresolvable(BIND)], SKIP)),
    ("local volumes with close capacity are preferred (multiple pvcs)", ["pvc-0", "pvc-1"],
     [upstream_node("node-a"), upstream_node("node-b"), upstream_node("node-c")],
     [pvc("pvc-0", sc="wait-sc", request="50Gi", modes=()), pvc("pvc-1", sc="wait-hdd-sc", request="100Gi", modes=())],
     [local_pv("pv-a-0", "wait-sc", "200Gi", "node-a"), local_pv("pv-a-1", "wait-sc", "200Gi", "node-a"),
      local_pv("pv-a-2", "wait-hdd-sc", "200Gi", "node-a"), local_pv("pv-a-3", "wait-hdd-sc", "200Gi", "node-a"),
      local_pv("pv-b-0", "wait-sc", "100Gi", "node-b"), local_pv("pv-b-1", "wait-sc", "100Gi", "node-b"),
      local_pv("pv-b-2", "wait-hdd-sc", "100Gi", "node-b"), local_pv("pv-b-3", "wait-hdd-sc", "100Gi", "node-b")],
     (OK, [OK, OK, unresolvable(BIND)], SKIP)),
    ("zonal volumes with close capacity are preferred", ["pvc-a"], ZONAL_NODES,
     [pvc("pvc-a", sc="wait-sc", request="50Gi", modes=())],
     [zonal_pv("pv-a-0", "200Gi", "region-a", "zone-a"), zonal_pv("pv-a-1", "200Gi", "region-a", "zone-a"),
      zonal_pv("pv-b-0", "100Gi", "region-b", "zone-b"), zonal_pv("pv-b-1", "100Gi", "region-b", "zone-b")],
     (OK, [OK, OK, OK, OK, unresolvable(BIND), unresolvable(BIND)], SKIP)),
]


@pytest.mark.parametrize("name,claims,nodes,pvcs,pvs,want", PLUGIN_CASES, ids=[c[0] for c in PLUGIN_CASES])
def test_volume_binding(name, claims, nodes, pvcs, pvs, want):
    assert plugin_case(claims, nodes, pvcs, pvs) == want


def test_score_is_skipped_in_every_result():
    """StorageCapacityScoring is off: every feasible node shows the
    VolumeBinding score as skipped, raw 0."""
    fw = framework(upstream_node("node-a"), upstream_node("node-b"), *CLASSES,
                   pvc("pvc-a", sc="wait-sc", request="1Gi", modes=()),
                   local_pv("pv-a", "wait-sc", "5Gi", "node-a"), local_pv("pv-b", "wait-sc", "5Gi", "node-b"),
                   pod("pod-a", claims=["pvc-a"]), version=VERSION)
    result = fw.schedule(pending(fw, "pod-a"))
    assert result.status == "Scheduled"
    for nr in result.nodes:
        vb = next(s for s in nr.scores if s.plugin == "VolumeBinding")
        assert (vb.skipped, vb.raw, vb.normalized, vb.weight) == (True, 0, 0, 1)


def test_missing_storage_class_is_an_unbound_immediate_claim():
    """A claim naming a StorageClass that does not exist counts as Immediate
    binding: a legal cluster state, reported as kube-scheduler reports it."""
    fw = framework(upstream_node("node-a"), pvc("data", sc="gone"), pod("pod-a", claims=["data"]), version=VERSION)
    result = fw.schedule(pending(fw, "pod-a"))
    assert result.status == "Unschedulable"
    assert result.message == "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    st = next(s for s in result.pre_filter if s.plugin == "VolumeBinding")
    assert st.details == {"claims": [{"claim": "default/data", "storageClass": "gone",
                                      "verdict": "StorageClass does not exist: treated as Immediate binding"}]}


def test_missing_pv_of_a_bound_claim():
    """VolumeBinding reports the missing PV per node, but in the whole cycle
    VolumeZone's PreFilter looks the PV up first and rejects the pod."""
    fw = framework(upstream_node("node-a"), pvc("data", sc="wait-sc", volume_name="pv-x", bound=True), *CLASSES,
                   pod("pod-a", claims=["data"]), version=VERSION)
    _, filters, _ = run(fw, "VolumeBinding", pending(fw, "pod-a"))
    assert verdict(filters["node-a"]) == unresolvable(ERR_REASON_PV_NOT_EXIST)
    assert filters["node-a"].details == {"claims": [{"claim": "default/data", "persistentVolume": "pv-x",
                                                     "verdict": "bound to a PersistentVolume that does not exist"}]}
    result = fw.schedule(pending(fw, "pod-a"))
    assert result.message == '0/1 nodes are available: persistentvolume "pv-x" not found. not found'
    assert [(s.plugin, s.code.label) for s in result.pre_filter][-1] == ("VolumeZone", "UnschedulableAndUnresolvable")


def test_ephemeral_volume_waiting_for_its_claim():
    fw = framework(upstream_node("node-a"), pod("web", volumes=[{"name": "scratch", "ephemeral": {}}]), version=VERSION)
    pre, _, _ = run(fw, "VolumeBinding", pending(fw, "web"))
    assert verdict(pre) == unresolvable(
        'waiting for ephemeral volume controller to create the persistentvolumeclaim "web-scratch"')


def test_ephemeral_volume_not_owned_by_the_pod():
    fw = framework(upstream_node("node-a"), pvc("web-scratch", sc="wait-sc"),
                   pod("web", volumes=[{"name": "scratch", "ephemeral": {}}]), version=VERSION)
    pre, _, _ = run(fw, "VolumeBinding", pending(fw, "web"))
    assert verdict(pre) == unresolvable("PVC default/web-scratch was not created for pod default/web (pod is not owner)")


def test_claim_being_deleted():
    claim = pvc("data", sc="wait-sc")
    claim["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    fw = framework(upstream_node("node-a"), claim, pod("pod-a", claims=["data"]), version=VERSION)
    pre, _, _ = run(fw, "VolumeBinding", pending(fw, "pod-a"))
    assert verdict(pre) == unresolvable('persistentvolumeclaim "data" is being deleted')


# -- binder (binder_test.go) -----------------------------------------------------------

NODE_KEY = "nodeKey"
PROVISIONER = "test-provisioner"
BINDER_CLASSES = [
    storage_class("waitClassWithProvisioner", provisioner=PROVISIONER,
                  allowed=[{"matchLabelExpressions": [{"key": NODE_KEY, "values": ["node1", "reference-value"]}]}]),
    storage_class("immediateClass", mode="Immediate", provisioner=""),
    storage_class("waitClass", provisioner="kubernetes.io/no-provisioner"),
    storage_class("topoMismatchClass", provisioner=PROVISIONER,
                  allowed=[{"matchLabelExpressions": [{"key": NODE_KEY, "values": ["reference-value"]}]}]),
]
NS = "testns"
PVC_UID = "pvc-uid"


def make_pvc(name, size, sc, state="unbound", pv_name=None, selected_node=None):
    ann = {}
    if selected_node is not None:
        ann["volume.kubernetes.io/selected-node"] = selected_node
    obj = pvc(name, ns=NS, sc=sc, request=size, modes=(), uid=PVC_UID, annotations=ann, volume_mode="Filesystem")
    if state in ("prebound", "bound"):
        obj["spec"]["volumeName"] = pv_name
    if state == "bound":
        obj["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes"
    return obj


def make_pv(name, node_name, size, claim=None, sc="waitClass", labels=None, source=None, affinity=True):
    obj = upstream_pv(name, sc, phase="Available", capacity_=size,
                      affinity={NODE_KEY: [node_name]} if node_name and affinity else None,
                      claim=f"{NS}/{claim}" if claim else None, uid=PVC_UID if claim else None,
                      labels=labels, source=source)
    obj["spec"]["volumeMode"] = "Filesystem"
    return obj


UNBOUND = make_pvc("unbound-pvc", "1G", "waitClass")
UNBOUND2 = make_pvc("unbound-pvc2", "5G", "waitClass")
PREBOUND = make_pvc("prebound-pvc", "1G", "waitClass", "prebound", "pv-node1a")
BOUND = make_pvc("bound-pvc", "1G", "waitClass", "bound", "pv-bound")
IMMEDIATE_UNBOUND = make_pvc("immediate-unbound-pvc", "1G", "immediateClass")
IMMEDIATE_BOUND = make_pvc("immediate-bound-pvc", "1G", "immediateClass", "bound", "pv-bound-immediate")
PROVISIONED = make_pvc("provisioned-pvc", "1Gi", "waitClassWithProvisioner")
NO_PROVISIONER = make_pvc("no-provisioner-pvc", "1Gi", "waitClass")
TOPO_MISMATCH = make_pvc("topo-mismatch-pvc", "1Gi", "topoMismatchClass")
SELECTED_NODE = make_pvc("provisioned-pvc", "1Gi", "waitClassWithProvisioner", selected_node="node1")

PV_NODE1A = make_pv("pv-node1a", "node1", "5G")
PV_NODE1B = make_pv("pv-node1b", "node1", "10G")
PV_NODE2 = make_pv("pv-node2", "node2", "1G")
PV_BOUND = make_pv("pv-bound", "node1", "1G", claim="bound-pvc")
PV_NODE1A_BOUND = make_pv("pv-node1a", "node1", "5G", claim="unbound-pvc")
PV_BOUND_IMMEDIATE = make_pv("pv-bound-immediate", "node1", "1G", claim="immediate-bound-pvc", sc="immediateClass")
PV_BOUND_IMMEDIATE_NODE2 = make_pv("pv-bound-immediate", "node2", "1G", claim="immediate-bound-pvc",
                                   sc="immediateClass")

POD_UID = "test-pod-uid"


def generic_pvc(owned):
    obj = make_pvc("test-pod-test-volume", "1G", "immediateClass", "bound", "pv-bound")
    if owned:
        obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "test-pod", "uid": POD_UID,
                                               "controller": True}]
    return obj


def find_pod_volumes(claims, pvs, nodes, node_name="node1", extra=(), pod_volumes=None):
    """binder_test's findPodVolumes: the claims, then the node's verdict.
    Returns "fail" where upstream returns an error (or unbound immediate
    claims), else (sorted reasons, bindings {claim: pv}, provisioned claims)."""
    volumes = pod_volumes if pod_volumes is not None else [
        {"name": f"vol{i}", "persistentVolumeClaim": {"claimName": c["metadata"]["name"]}} for i, c in enumerate(claims)]
    objects = [*nodes, *BINDER_CLASSES, *claims, *pvs, *extra,
               pod("test-pod", ns=NS, volumes=volumes, uid=POD_UID)]
    fw = framework(*objects, version=VERSION)
    binder = fw.profile.by_name["VolumeBinding"].binder
    pod_info = pending(fw, "test-pod", NS)
    try:
        vc = binder.get_pod_volume_claims(pod_info)
        if vc.unbound_immediate:
            return "fail"
        volumes_, reasons = binder.find_pod_volumes(pod_info, vc, fw.snapshot.get(node_name))
    except BinderError:
        return "fail"
    bindings = {b.pvc["metadata"]["name"]: b.pv["metadata"]["name"] for b in volumes_.static_bindings}
    provisions = [p.pvc["metadata"]["name"] for p in volumes_.dynamic_provisions]
    return sorted(reasons), bindings, provisions


NODE1 = node("node1", {NODE_KEY: "node1"})
NODE2 = node("node2", {NODE_KEY: "node2"})
DRIVERS = {"no CSIDriver": None, "CSIDriver with capacity tracking": True,
           "CSIDriver without capacity tracking": False}

WITHOUT_PROVISIONING = [
    ("no-pvcs", [], [], ([], {}, []), [{"name": "empty", "emptyDir": {}}]),
    ("pvc-not-found", [], [], "fail", [{"name": "vol0", "persistentVolumeClaim": {"claimName": "bound-pvc"}}]),
    ("bound-pvc", [BOUND], [PV_BOUND], ([], {}, []), None),
    ("bound-pvc,pv-not-exists", [BOUND], [], ([ERR_REASON_PV_NOT_EXIST], {}, []), None),
    ("prebound-pvc", [PREBOUND], [PV_NODE1A_BOUND], "fail", None),
    ("unbound-pvc,pv-same-node", [UNBOUND], [PV_NODE2, PV_NODE1A, PV_NODE1B],
     ([], {"unbound-pvc": "pv-node1a"}, []), None),
    ("unbound-pvc,pv-different-node", [UNBOUND], [PV_NODE2], ([BIND], {}, []), None),
    ("two-unbound-pvcs", [UNBOUND, UNBOUND2], [PV_NODE1A, PV_NODE1B],
     ([], {"unbound-pvc": "pv-node1a", "unbound-pvc2": "pv-node1b"}, []), None),
    ("two-unbound-pvcs,order-by-size", [UNBOUND2, UNBOUND], [PV_NODE1A, PV_NODE1B],
     ([], {"unbound-pvc": "pv-node1a", "unbound-pvc2": "pv-node1b"}, []), None),
    ("two-unbound-pvcs,partial-match", [UNBOUND, UNBOUND2], [PV_NODE1A],
     ([BIND], {"unbound-pvc": "pv-node1a"}, []), None),
    ("one-bound,one-unbound", [UNBOUND, BOUND], [PV_BOUND, PV_NODE1A], ([], {"unbound-pvc": "pv-node1a"}, []), None),
    ("one-bound,one-unbound,no-match", [UNBOUND, BOUND], [PV_BOUND, PV_NODE2], ([BIND], {}, []), None),
    ("one-prebound,one-unbound", [UNBOUND, PREBOUND], [PV_NODE1A, PV_NODE1B], "fail", None),
    ("immediate-bound-pvc", [IMMEDIATE_BOUND], [PV_BOUND_IMMEDIATE], ([], {}, []), None),
    ("immediate-bound-pvc-wrong-node", [IMMEDIATE_BOUND], [PV_BOUND_IMMEDIATE_NODE2], ([NODE_CONFLICT], {}, []), None),
    ("immediate-unbound-pvc", [IMMEDIATE_UNBOUND], [], "fail", None),
    ("immediate-unbound-pvc,delayed-mode-bound", [IMMEDIATE_UNBOUND, BOUND], [PV_BOUND], "fail", None),
    ("immediate-unbound-pvc,delayed-mode-unbound", [IMMEDIATE_UNBOUND, UNBOUND], [], "fail", None),
    ("generic-ephemeral,no-pvc", [], [], "fail", [{"name": "no-such-pvc", "ephemeral": {}}]),
    ("generic-ephemeral,with-pvc", [generic_pvc(True)], [make_pv("pv-bound", "node1", "1G", claim="test-pod-test-volume")],
     ([], {}, []), [{"name": "test-volume", "ephemeral": {}}]),
    ("generic-ephemeral,wrong-pvc", [generic_pvc(False)],
     [make_pv("pv-bound", "node1", "1G", claim="test-pod-test-volume")], "fail",
     [{"name": "test-volume", "ephemeral": {}}]),
]


@pytest.mark.parametrize("driver", list(DRIVERS), ids=list(DRIVERS))
@pytest.mark.parametrize("name,claims,pvs,want,volumes", WITHOUT_PROVISIONING, ids=[c[0] for c in WITHOUT_PROVISIONING])
def test_find_pod_volumes_without_provisioning(driver, name, claims, pvs, want, volumes):
    extra = [] if DRIVERS[driver] is None else [csi_driver(PROVISIONER, DRIVERS[driver])]
    assert find_pod_volumes(claims, pvs, [NODE1], extra=extra, pod_volumes=volumes) == want


WITH_PROVISIONING = [
    ("one-provisioned", [PROVISIONED], [], ([], {}, ["provisioned-pvc"]), True),
    ("two-unbound-pvcs,one-matched,one-provisioned", [UNBOUND, PROVISIONED], [PV_NODE1A],
     ([], {"unbound-pvc": "pv-node1a"}, ["provisioned-pvc"]), True),
    ("one-bound,one-provisioned", [BOUND, PROVISIONED], [PV_BOUND], ([], {}, ["provisioned-pvc"]), True),
    ("one-binding,one-selected-node", [BOUND, SELECTED_NODE], [PV_BOUND], ([], {}, ["provisioned-pvc"]), True),
    ("immediate-unbound-pvc", [IMMEDIATE_UNBOUND], [], "fail", False),
    ("one-immediate-bound,one-provisioned", [IMMEDIATE_BOUND, PROVISIONED], [PV_BOUND_IMMEDIATE],
     ([], {}, ["provisioned-pvc"]), True),
    ("invalid-provisioner", [NO_PROVISIONER], [], ([BIND], {}, []), False),
    ("volume-topology-unsatisfied", [TOPO_MISMATCH], [], ([BIND], {}, []), False),
]


@pytest.mark.parametrize("driver", list(DRIVERS), ids=list(DRIVERS))
@pytest.mark.parametrize("name,claims,pvs,want,needs_capacity", WITH_PROVISIONING,
                         ids=[c[0] for c in WITH_PROVISIONING])
def test_find_pod_volumes_with_provisioning(driver, name, claims, pvs, want, needs_capacity):
    extra = [] if DRIVERS[driver] is None else [csi_driver(PROVISIONER, DRIVERS[driver])]
    if needs_capacity and DRIVERS[driver]:
        # Without CSIStorageCapacity objects, provisioning is blocked.
        reasons, bindings, _ = want
        want = (sorted(reasons + [ERR_REASON_NOT_ENOUGH_SPACE]), bindings, [])
    assert find_pod_volumes(claims, pvs, [NODE1], extra=extra) == want


def test_selected_node_elsewhere_fails_fast():
    claim = make_pvc("provisioned-pvc", "1Gi", "waitClassWithProvisioner", selected_node="node2")
    assert find_pod_volumes([claim], [], [NODE1]) == ([BIND], {}, [])


ZONE1_LABELS = {"failure-domain.beta.kubernetes.io/zone": "us-east-1",
                "failure-domain.beta.kubernetes.io/region": "us-east-1a"}
BOUND_MIGRATION = make_pvc("pvc-migration-bound", "1G", "waitClass", "bound", "pv-migration-bound")
MIGRATION_PV = make_pv("pv-migration-bound", "node1", "1G", claim="pvc-migration-bound", labels=ZONE1_LABELS,
                       source={"gcePersistentDisk": {"pdName": "test-disk", "fsType": "ext4"}}, affinity=False)
NODE1_ZONE1 = node("node1", {"topology.gke.io/zone": "us-east-1"})
NODE1_ZONE2 = node("node1", {"topology.gke.io/zone": "us-east-2"})


@pytest.mark.parametrize("name,node_obj,csinodes,want", [
    ("pvc-bound", NODE1_ZONE1, [csi_node("node1", {}, migrated="kubernetes.io/gce-pd")], []),
    ("pvc-bound,csinode-not-migrated", NODE1_ZONE1, [csi_node("node1", {}, migrated="")], []),
    ("pvc-bound,missing-csinode", NODE1_ZONE1, [], []),
    ("pvc-bound,node-different-zone", NODE1_ZONE2, [csi_node("node1", {}, migrated="kubernetes.io/gce-pd")],
     [NODE_CONFLICT]),
])
def test_find_pod_volumes_with_csi_migration(name, node_obj, csinodes, want):
    assert find_pod_volumes([BOUND_MIGRATION], [MIGRATION_PV], [node_obj], extra=csinodes) == (want, {}, [])


CAPACITY_CASES = [
    ("network-attached", [capacity("net", "waitClassWithProvisioner", None, "1Gi")], []),
    ("local-storage", [capacity("net", "waitClassWithProvisioner", {NODE_KEY: "node1"}, "1Gi")], []),
    ("multiple", [capacity("net", "waitClassWithProvisioner", None, "1Gi"),
                  capacity("net2", "waitClassWithProvisioner", {NODE_KEY: "node2"}, "1Gi"),
                  capacity("net3", "waitClassWithProvisioner", {NODE_KEY: "node1"}, "1Gi")], []),
    ("no-storage", [], [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("wrong-node", [capacity("net", "waitClassWithProvisioner", {NODE_KEY: "node2"}, "1Gi")],
     [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("wrong-storage-class", [capacity("net", "waitClass", {NODE_KEY: "node1"}, "1Gi")], [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("insufficient-storage", [capacity("net", "waitClassWithProvisioner", {NODE_KEY: "node1"}, "1Mi")],
     [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("insufficient-volume-size", [capacity("net", "waitClassWithProvisioner", {NODE_KEY: "node1"}, "1Gi", "1Mi")],
     [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("zero-storage", [capacity("net", "waitClassWithProvisioner", {NODE_KEY: "node1"}, "0Mi")],
     [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("zero-volume-size", [capacity("net", "waitClassWithProvisioner", {NODE_KEY: "node1"}, None, "0Mi")],
     [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("nil-storage", [capacity("net", "waitClassWithProvisioner", {NODE_KEY: "node1"})], [ERR_REASON_NOT_ENOUGH_SPACE]),
    ("no-node-topology", [capacity("net", "waitClassWithProvisioner", None, "1Gi", topology=False)],
     [ERR_REASON_NOT_ENOUGH_SPACE]),
]


@pytest.mark.parametrize("opt_in", [True, False], ids=["CSIDriver.StorageCapacity=true", "CSIDriver.StorageCapacity=false"])
@pytest.mark.parametrize("name,capacities,reasons", CAPACITY_CASES, ids=[c[0] for c in CAPACITY_CASES])
def test_capacity(opt_in, name, capacities, reasons):
    got = find_pod_volumes([PROVISIONED], [], [NODE1], extra=[csi_driver(PROVISIONER, opt_in), *capacities])
    want_reasons = reasons if opt_in else []
    assert got[0] == want_reasons
    assert got[2] == ([] if want_reasons else ["provisioned-pvc"])


# -- FindMatchingVolume (pv_helpers_test.go) -----------------------------------------------

def match_volume(uid, name, size, available, sc="", affinity=None, claim=None):
    obj = upstream_pv(name, sc, phase="Available" if available else None, capacity_=size,
                      affinity={"key1": [affinity]} if affinity else None, claim=claim,
                      source={"local": {}}, modes=("ReadWriteOnce", "ReadOnlyMany"))
    obj["metadata"]["uid"] = uid
    obj["spec"]["volumeMode"] = "Filesystem"
    return obj


MATCH_VOLUMES = [
    match_volume("local-small", "local001", "5G", True),
    match_volume("local-pd-very-large", "local002", "200E", True, sc="large"),
    match_volume("affinity-pv", "affinity001", "100G", True, sc="wait", affinity="value1"),
    match_volume("affinity-pv2", "affinity002", "150G", True, sc="wait", affinity="value1"),
    match_volume("affinity-prebound", "affinity003", "100G", True, sc="wait", affinity="value1",
                 claim="myns/claim02"),
    match_volume("affinity-pv3", "affinity003", "200G", True, sc="wait", affinity="value3"),
    match_volume("affinity-pv4", "affinity004", "200G", False, sc="wait", affinity="value4"),
]


def match_claim(name, modes=("ReadWriteOnce",)):
    return pvc(name, ns="myns", sc="wait", request="100G", modes=modes, volume_mode="Filesystem")


@pytest.mark.parametrize("name,claim,labels,excluded,want", [
    ("success-match", match_claim("claim01"), {"key1": "value1"}, set(), "affinity-pv"),
    ("success-prebound", match_claim("claim02"), {"key1": "value1"}, set(), "affinity-prebound"),
    ("success-exclusion", match_claim("claim01"), {"key1": "value1"}, {"affinity001"}, "affinity-pv2"),
    ("fail-exclusion", match_claim("claim01"), {"key1": "value1"}, {"affinity001", "affinity002"}, None),
    ("fail-accessmode", match_claim("claim01", ("ReadWriteMany",)), {"key1": "value1"}, set(), None),
    ("fail-nodeaffinity", match_claim("claim01"), {"key1": "value2"}, set(), None),
    ("fail-prebound-node-affinity", match_claim("claim02"), {"key1": "value3"}, set(), None),
    ("fail-nonavaliable", match_claim("claim04"), {"key1": "value4"}, set(), None),
    ("success-bad-and-good-node-affinity", match_claim("claim03"), {"key1": "value3"}, set(), "affinity-pv3"),
])
def test_find_matching_volume_with_node(name, claim, labels, excluded, want):
    got = ClaimMatcher(claim, MATCH_VOLUMES, AffinityCache()).find(labels, excluded)
    assert (got["metadata"]["uid"] if got else None) == want


def test_volume_mode_and_selector_and_class_filter_candidates():
    base = dict(sc="wait", capacity_="10Gi", phase="Available")
    pvs = [upstream_pv("block", **base), upstream_pv("labelled", labels={"tier": "gold"}, **base),
           upstream_pv("other-class", "fast", phase="Available", capacity_="10Gi")]
    pvs[0]["spec"]["volumeMode"] = "Block"
    claim = pvc("c", sc="wait", request="1Gi", modes=(), selector={"matchLabels": {"tier": "gold"}})
    assert ClaimMatcher(claim, pvs, AffinityCache()).find({}, set())["metadata"]["name"] == "labelled"
    claim = pvc("c", sc="wait", request="1Gi", modes=(), volume_mode="Block")
    assert ClaimMatcher(claim, pvs, AffinityCache()).find({}, set())["metadata"]["name"] == "block"


def test_invalid_claim_selector_is_an_error():
    claim = pvc("c", sc="wait", selector={"matchExpressions": [{"key": "k", "operator": "Bogus"}]})
    with pytest.raises(BinderError, match="error creating internal label selector for claim: default/c"):
        ClaimMatcher(claim, [], AffinityCache()).find({}, set())


def test_equal_sizes_pick_the_first_by_name():
    pvs = [upstream_pv(n, "wait", phase="Available", capacity_="5Gi") for n in ("pv-b", "pv-a", "pv-c")]
    fw = framework(upstream_node("node-a"), storage_class("wait"), *pvs, pvc("c", sc="wait", request="1Gi", modes=()),
                   pod("p", claims=["c"]), version=VERSION)
    binder = fw.profile.by_name["VolumeBinding"].binder
    claims = binder.get_pod_volume_claims(pending(fw, "p"))
    volumes, reasons = binder.find_pod_volumes(pending(fw, "p"), claims, fw.snapshot.get("node-a"))
    assert reasons == [] and volumes.static_bindings[0].pv["metadata"]["name"] == "pv-a"


@pytest.mark.parametrize("sc,want", [(None, False), ("not-here", False), ("no-mode", False),
                                     ("immediate-mode", False), ("wait-mode", True)])
def test_delay_binding_mode(sc, want):
    fw = framework(storage_class("no-mode", mode=None), storage_class("immediate-mode", mode="Immediate"),
                   storage_class("wait-mode"), version=VERSION)
    assert is_delay_binding_mode(fw.cluster, pvc("c", sc=sc)) is want


def test_allowed_topologies_with_an_invalid_term_match_nothing():
    from kschedx.storage.objects import match_topology_selector_terms

    assert match_topology_selector_terms(None, {"a": "b"})
    assert not match_topology_selector_terms([{}], {"a": "b"})
    assert not match_topology_selector_terms([{"matchLabelExpressions": [{"key": "a", "values": []}]}], {"a": "b"})
    assert match_topology_selector_terms([{"matchLabelExpressions": [{"key": "a", "values": []}]},
                                          {"matchLabelExpressions": [{"key": "a", "values": ["b"]}]}], {"a": "b"})


# -- Reserve: what simulate sees ---------------------------------------------------------------

def local_pv_case():
    return [node("l1", {HOSTNAME: "l1"}), node("l2", {HOSTNAME: "l2"}),
            storage_class("local"),
            upstream_pv("pv-l1", "local", phase="Available", capacity_="10Gi", affinity={HOSTNAME: ["l1"]},
                        modes=("ReadWriteOnce",)),
            pvc("c1", sc="local", request="5Gi"), pvc("c2", sc="local", request="5Gi"),
            pod("p1", claims=["c1"]), pod("p2", claims=["c2"])]


def test_reserve_assumes_the_chosen_pv_for_later_cycles():
    """Golden hand-local-pv (simulate): once p1 is placed on l1 and its PV
    assumed for c1, p2 finds no PV anywhere."""
    fw = framework(*local_pv_case(), version=VERSION)
    p1, p2 = pending(fw, "p1"), pending(fw, "p2")
    r1 = fw.schedule(p1)
    assert (r1.status, r1.selected_node) == ("Scheduled", "l1")
    cache.assume_pod(fw.snapshot, p1, "l1")
    assert fw.run_reserve_plugins_reserve(r1.cycle_state, p1, "l1") is None
    assert r1.cycle_state.read(STATE_KEY).all_bound is False
    assumed = fw.profile.by_name["VolumeBinding"].binder.pv_cache.get("pv-l1")
    assert assumed["spec"]["claimRef"]["name"] == "c1"
    assert fw.cluster.persistent_volumes["pv-l1"]["spec"].get("claimRef") is None  # API object untouched

    r2 = fw.schedule(p2)
    assert r2.status == "Unschedulable"
    assert r2.message.startswith("0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.")

    fw.run_reserve_plugins_unreserve(r1.cycle_state, p1, "l1")
    assert fw.schedule(p2).status == "Scheduled"


def test_reserve_assumes_the_selected_node_of_a_provisioned_claim():
    objects = [node("n1", {NODE_KEY: "node1"}), node("n2", {NODE_KEY: "node1"}),
               storage_class("dyn", provisioner=PROVISIONER), pvc("shared", sc="dyn", request="1Gi"),
               pod("a", claims=["shared"]), pod("b", claims=["shared"])]
    fw = framework(*objects, version=VERSION)
    a, b = pending(fw, "a"), pending(fw, "b")
    ra = fw.schedule(a)
    assert ra.selected_node == "n1"
    cache.assume_pod(fw.snapshot, a, "n1")
    fw.run_reserve_plugins_reserve(ra.cycle_state, a, "n1")
    rb = fw.schedule(b)
    by_node = {n.name: n for n in rb.nodes}
    assert by_node["n1"].feasible
    assert verdict(by_node["n2"].status) == unresolvable(BIND)
    assert by_node["n2"].status.details == {"claims": [
        {"claim": "default/shared", "storageClass": "dyn", "verdict": "being provisioned for node n1"}]}


def test_reserve_with_everything_bound_assumes_nothing():
    fw = framework(upstream_node("node-a"), *CLASSES, pvc("pvc-a", sc="wait-sc", volume_name="pv-a", bound=True),
                   upstream_pv("pv-a", "wait-sc", phase="Bound", claim="default/pvc-a"), pod("pod-a", claims=["pvc-a"]), version=VERSION)
    pa = pending(fw, "pod-a")
    r = fw.schedule(pa)
    assert fw.run_reserve_plugins_reserve(r.cycle_state, pa, "node-a") is None
    assert r.cycle_state.read(STATE_KEY).all_bound is True
    assert fw.profile.by_name["VolumeBinding"].binder.pv_cache.assumed == {}


def test_filter_details_explain_each_claim():
    objects = [node("n1", {NODE_KEY: "node1", HOSTNAME: "n1"}), *BINDER_CLASSES,
               make_pvc("data", "1Gi", "waitClass"), make_pvc("scratch", "1Gi", "topoMismatchClass"),
               pod("app", ns=NS, claims=["data", "scratch"])]
    fw = framework(*objects, version=VERSION)
    _, filters, _ = run(fw, "VolumeBinding", pending(fw, "app", NS))
    assert verdict(filters["n1"]) == unresolvable(BIND)
    notes = filters["n1"].details["claims"]
    assert notes[-1]["claim"] == "testns/data"
    assert notes[-1]["verdict"] == "no available PersistentVolume matches and the class cannot provision one"


def test_csi_migration_translation_error_is_an_error_status():
    pv_ = make_pv("pv-migration-bound", None, "1G", claim="pvc-migration-bound",
                  labels={"topology.kubernetes.io/zone": "us-east1-b__europe-west1-b"},
                  source={"gcePersistentDisk": {"pdName": "d"}})
    fw = framework(NODE1_ZONE1, BOUND_MIGRATION, pv_, *BINDER_CLASSES,
                   csi_node("node1", {}, migrated="kubernetes.io/gce-pd"),
                   pod("p", ns=NS, claims=["pvc-migration-bound"]), version=VERSION)
    _, filters, _ = run(fw, "VolumeBinding", pending(fw, "p", NS))
    assert verdict(filters["node1"])[0] == "Error"
    assert verdict(filters["node1"])[1][0].startswith("could not translate pv: failed to get region from zones")


def test_bound_claims_are_checked_in_order_and_stop_at_the_first_failure():
    """checkBoundClaims returns at the first claim that fails: a missing PV
    after a mismatching one only reports the node conflict."""
    claims = [make_pvc("a", "1G", "waitClass", "bound", "pv-a"), make_pvc("b", "1G", "waitClass", "bound", "pv-missing")]
    assert find_pod_volumes(claims, [make_pv("pv-a", "node2", "1G", claim="a")], [NODE1]) == ([NODE_CONFLICT], {}, [])
    assert find_pod_volumes(claims[::-1], [make_pv("pv-a", "node2", "1G", claim="a")], [NODE1]) == (
        [ERR_REASON_PV_NOT_EXIST], {}, [])


def test_state_is_shared_by_clones():
    fw = framework(upstream_node("node-a"), *CLASSES, pvc("pvc-a", sc="wait-sc"), pod("pod-a", claims=["pvc-a"]), version=VERSION)
    _, _, state = run(fw, "VolumeBinding", pending(fw, "pod-a"))
    assert state.clone().read(STATE_KEY) is state.read(STATE_KEY)
