"""explain --fix for volumes: free-rwop-claim, create-pvc, create-pv,
use-storage-class and the advice kschedx gives where it checks nothing;
each proposed where it helps, checked by applying it to the objects as
written and explaining again, and never proposed where it must not be."""

from __future__ import annotations

from fixhelp import (explain, node, pod, pod_after, priority_class, pv, pvc, storage_class, the_pod,
                     with_claim)

TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}


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


def _rwop(holder_labels=None, owner=None, priority=None):
    holder = with_claim(pod("owner", node_name="a", labels=holder_labels))
    if owner:
        holder["metadata"]["ownerReferences"] = [owner]
    if priority:
        holder["spec"]["priorityClassName"] = priority
    return [node("a"), node("b"), pv("pv-data", modes=("ReadWriteOncePod",), claim="data"),
            pvc("data", modes=("ReadWriteOncePod",), volume="pv-data"), holder]


# ---- free-rwop-claim -------------------------------------------------------------------------
def test_free_rwop_claim_deletes_the_pod_holding_it():
    objects = _rwop() + [with_claim(pod("web"))]
    p = the_pod(objects)
    assert p["status"] == "Unschedulable"
    fix = fix_of(p, "free-rwop-claim")
    assert fix["side"] == "cluster" and fix["objects"] == 1
    assert fix["changes"] == [{"action": "delete", "patch": [],
                               "target": {"apiVersion": "v1", "kind": "Pod", "namespace": "default",
                                          "name": "owner"}}]
    assert "holds claim default/data, ReadWriteOncePod" in fix["description"]
    assert_fits(objects, fix)


def test_free_rwop_claim_names_the_controller_that_makes_the_holder_again():
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "u-db", "controller": True}
    p = the_pod(_rwop(owner=owner) + [with_claim(pod("web"))])
    assert "its StatefulSet db makes a new pod that competes for the claim" in fix_of(p, "free-rwop-claim")[
        "description"]


def test_free_rwop_claim_never_deletes_a_daemonset_pod():
    owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u-ds", "controller": True}
    p = the_pod(_rwop(owner=owner) + [with_claim(pod("web"))])
    assert "free-rwop-claim" not in kinds(p)


def test_free_rwop_claim_not_when_preemption_frees_it():
    objects = [priority_class("low", 10), priority_class("high", 1000)] + _rwop(priority="low")
    web = with_claim(pod("web"))
    web["spec"]["priorityClassName"] = "high"
    p = the_pod(objects + [web])
    assert (p["preemption"] or {}).get("nominatedNode")
    assert "free-rwop-claim" not in kinds(p)


# ---- create-pvc --------------------------------------------------------------------------------
def test_create_pvc_bound_to_an_available_volume():
    objects = [node("a"), pv("spare", size="5Gi"), with_claim(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "create-pvc")
    assert fix["side"] == "pod" and fix["objects"] == 1  # the binding is the PV controller's
    create, bind_claim, bind_volume = fix["changes"]
    assert create["action"] == "create" and create["target"]["kind"] == "PersistentVolumeClaim"
    claim = create["patch"][0]["value"]
    assert claim["spec"] == {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}},
                             "storageClassName": ""}
    assert bind_claim["by"] == bind_volume["by"] == "persistentvolume-controller"
    assert {"op": "add", "path": "/spec/volumeName", "value": "spare"} in bind_claim["patch"]
    assert bind_volume["target"]["name"] == "spare"
    assert "for PersistentVolume spare (5Gi, ReadWriteOnce, no StorageClass)" in fix["description"]
    assert_fits(objects, fix)


def test_create_pvc_bound_to_a_volume_whose_class_has_no_object():
    # The PV controller matches a volume by its class name alone, and a
    # claim whose class does not exist binds at once: the smaller volume of
    # class "manual" (no StorageClass object) is the claim's first way.
    objects = [node("a"), storage_class("standard", provisioner="ebs.csi.aws.com", default=True),
               pv("small", size="5Gi", cls="manual"), pv("big", size="50Gi", cls=""), with_claim(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "create-pvc")
    create, bind_claim, bind_volume = fix["changes"]
    assert create["patch"][0]["value"]["spec"]["storageClassName"] == "manual"
    assert bind_claim["by"] == bind_volume["by"] == "persistentvolume-controller"
    assert bind_volume["target"]["name"] == "small"
    assert "for PersistentVolume small (5Gi, ReadWriteOnce, StorageClass manual, which does not exist" \
        in fix["description"]
    assert_fits(objects, fix)
    volumes = [c["target"]["name"] for f in p["fixes"] if f["kind"] == "create-pvc" for c in f["changes"]
               if c["target"]["kind"] == "PersistentVolume"]
    assert volumes == ["small", "big"]


def test_create_pvc_of_the_default_class_that_provisions_for_the_first_consumer():
    objects = [node("a"), storage_class("standard", provisioner="ebs.csi.aws.com", default=True),
               with_claim(pod("web"))]
    fix = fix_of(the_pod(objects), "create-pvc")
    assert [c["action"] for c in fix["changes"]] == ["create"]
    assert fix["patch"][0]["value"]["spec"]["storageClassName"] == "standard"
    assert "1Gi: set the size the app needs" in fix["description"]
    assert_fits(objects, fix)


def test_create_pvc_never_for_an_immediate_class_with_a_provisioner():
    # Its volume (the provisioner's, wherever it puts it) would decide the node: never proposed.
    objects = [node("a"), storage_class("fast", provisioner="ebs.csi.aws.com", mode="Immediate", default=True),
               with_claim(pod("web"))]
    p = the_pod(objects)
    assert "create-pvc" not in kinds(p)
    assert p["fixSearch"]["uncovered"][0]["plugin"] == "VolumeRestrictions"


def test_create_pvc_never_for_an_ephemeral_volume():
    web = pod("web")
    web["spec"]["volumes"] = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]
    p = the_pod([node("a"), storage_class("standard", provisioner="ebs.csi.aws.com", default=True), web])
    assert p["status"] == "Unschedulable"
    assert "create-pvc" not in kinds(p)


# ---- create-pv ---------------------------------------------------------------------------------
def test_create_pv_for_an_immediate_claim_of_a_class_without_provisioner():
    objects = [node("a"), storage_class("manual", mode="Immediate"),
               pv("used", size="1Gi", cls="manual", claim="other"), pvc("other", cls="manual", volume="used"),
               pvc("data", size="3Gi", cls="manual"), with_claim(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "create-pv")
    assert fix["side"] == "cluster" and fix["objects"] == 1
    create = fix["changes"][0]
    volume = create["patch"][0]["value"]
    assert volume["metadata"]["name"] == "used-copy"
    assert volume["spec"]["capacity"] == {"storage": "3Gi"} and volume["spec"]["storageClassName"] == "manual"
    assert volume["spec"]["claimRef"] == {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                          "namespace": "default", "name": "data"}
    assert [c.get("by") for c in fix["changes"][1:]] == ["persistentvolume-controller"] * 2
    assert "the volume itself must exist" in fix["description"]
    assert_fits(objects, fix)


def test_create_pv_for_a_local_claim_no_volume_is_big_enough_for():
    objects = [node("a"), node("b"), storage_class("local"), pv("local-a", size="5Gi", cls="local", node_name="a"),
               pvc("data", size="10Gi", cls="local"), with_claim(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "create-pv")
    volume = fix["patch"][0]["value"]
    assert volume["spec"]["capacity"] == {"storage": "10Gi"}
    assert volume["spec"]["nodeAffinity"] == objects[3]["spec"]["nodeAffinity"]
    assert "claimRef" not in volume["spec"] and "status" not in volume
    assert fix["changes"][1] == {"action": "patch", "by": "persistentvolume-controller",
                                 "target": {"apiVersion": "v1", "kind": "PersistentVolume", "namespace": None,
                                            "name": "local-a-copy"},
                                 "patch": [{"op": "add", "path": "/status", "value": {"phase": "Available"}}]}
    assert fix["verified"]["selectedNode"] == "a"
    assert_fits(objects, fix)


def test_create_pv_never_for_a_class_whose_provisioner_makes_it():
    objects = [node("a"), storage_class("fast", provisioner="ebs.csi.aws.com", mode="Immediate"),
               pv("other", cls="fast", claim="x"), pvc("data", cls="fast"), with_claim(pod("web"))]
    p = the_pod(objects)
    assert p["fixes"] == [] and p["fixSearch"]["candidates"] == 0
    (uncovered,) = p["fixSearch"]["uncovered"]
    assert uncovered["plugin"] == "VolumeBinding"
    assert "waits for its StorageClass fast's provisioner ebs.csi.aws.com" in uncovered["reason"]
    (advice,) = p["fixAdvice"]
    assert advice["kind"] == "await-provisioning" and "ebs.csi.aws.com provisions it" in advice["text"]


def test_create_pv_never_without_a_volume_to_copy():
    objects = [node("a"), storage_class("manual", mode="Immediate"), pvc("data", cls="manual"),
               with_claim(pod("web"))]
    p = the_pod(objects)
    assert "create-pv" not in kinds(p)
    assert "no PersistentVolume of StorageClass manual to copy" in p["fixSearch"]["uncovered"][0]["reason"]


# ---- use-storage-class -------------------------------------------------------------------------
def test_use_storage_class_of_the_same_provisioner_binding_for_the_first_consumer():
    objects = [node("a"), storage_class("fast", provisioner="ebs.csi.aws.com", mode="Immediate"),
               storage_class("fast-wffc", provisioner="ebs.csi.aws.com"), pvc("data", cls="fast"),
               with_claim(pod("web"))]
    p = the_pod(objects)
    fix = fix_of(p, "use-storage-class")
    assert fix["side"] == "pod"
    assert fix["changes"] == [{"action": "patch",
                               "target": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                          "namespace": "default", "name": "data"},
                               "patch": [{"op": "replace", "path": "/spec/storageClassName",
                                          "value": "fast-wffc"}]}]
    assert "a claim's class cannot change in place" in fix["description"]
    assert_fits(objects, fix)


def test_use_storage_class_never_of_another_provisioner():
    objects = [node("a"), storage_class("fast", provisioner="ebs.csi.aws.com", mode="Immediate"),
               storage_class("other", provisioner="pd.csi.storage.gke.io"), pvc("data", cls="fast"),
               with_claim(pod("web"))]
    assert "use-storage-class" not in kinds(the_pod(objects))


# ---- volume-attach-room ------------------------------------------------------------------------
def _csi_node(name, count):
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": name},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": name, "allocatable": {"count": count}}]}}


def test_attach_limits_get_advice_never_a_change_of_the_driver_limit():
    objects = [node("a"), node("b", taints=[TAINT]), _csi_node("a", 1), _csi_node("b", 1),
               pv("pv-1", claim="one"), pvc("one", volume="pv-1"), with_claim(pod("user", node_name="a"), "one"),
               pv("pv-2", claim="data"), pvc("data", volume="pv-2"), with_claim(pod("web"))]
    p = the_pod(objects)
    assert p["status"] == "Unschedulable"
    (advice,) = [a for a in p["fixAdvice"] if a["kind"] == "volume-attach-room"]
    assert advice["text"] == ("1 node(s) are at their volume attach limit; room for the pod's volumes on b "
                              "(kept off by TaintToleration)")
    assert not any(c["target"]["kind"] == "CSINode" for f in p["fixes"] for c in f["changes"])
    for fix in p["fixes"]:
        assert_fits(objects, fix)


def test_volume_changes_leave_the_snapshot_as_it_was():
    """Pods after one whose fixes created claims and volumes see the cluster unchanged."""
    objects = [node("a"), storage_class("local"), pv("local-a", size="5Gi", cls="local", node_name="a"),
               pvc("data", size="10Gi", cls="local"), with_claim(pod("web")),
               pv("spare", size="5Gi"), with_claim(pod("later"), "missing")]
    with_fix = explain(objects)
    without = explain(objects, fix=False)
    assert [f["kind"] for p in with_fix["pods"] for f in p["fixes"]]
    for a, b in zip(with_fix["pods"], without["pods"]):
        assert {k: v for k, v in a.items() if k not in ("fixes", "fixSearch", "fixAdvice")} == b


# ---- move-to-volume-node -----------------------------------------------------------------------
ZONE = "topology.kubernetes.io/zone"


def test_move_to_the_zone_of_the_pods_volume():
    objects = [node("a", labels={ZONE: "z1"}), node("b", labels={ZONE: "z2"}),
               pv("pv-b", node_name="b", claim="data"), pvc("data", volume="pv-b"),
               with_claim(pod("web", nodeSelector={ZONE: "z1"}))]
    p = the_pod(objects)
    fix = fix_of(p, "move-to-volume-node")
    assert fix["patch"] == [{"op": "replace", "path": "/spec/nodeSelector/topology.kubernetes.io~1zone",
                             "value": "z2"}]
    assert fix["verified"]["selectedNode"] == "b"
    assert "relax-node-affinity" in kinds(p)  # dropping the selector is the other way
    # Never a node's zone changed.
    assert not any(c["target"]["kind"] == "Node" and any("zone" in op["path"] for op in c["patch"])
                   for f in p["fixes"] for c in f["changes"])
    assert_fits(objects, fix)


def test_no_move_when_no_volume_keeps_the_pod_off():
    objects = [node("a", labels={ZONE: "z1"}), node("b", labels={ZONE: "z2"}),
               pod("web", nodeSelector={ZONE: "z3"})]
    assert "move-to-volume-node" not in kinds(the_pod(objects))
