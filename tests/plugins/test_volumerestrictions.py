"""VolumeRestrictions, from upstream's volume_restrictions_test.go (v1.35 facts)."""

from __future__ import annotations

import pytest

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.framework.cycle_state import CycleState
from kschedx.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_RWOP_CONFLICT,
    PRE_FILTER_STATE_KEY,
)
from builders import framework, pvc, verdict
from builders import capacity_node as node
from builders import csi_pv as pv
from builders import filter_all as run
from builders import pod_info as pending
from builders import volume_pod as pod

from golden_compare import GOLDEN

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

GCE = {"gcePersistentDisk": {"pdName": "foo"}}
GCE2 = {"gcePersistentDisk": {"pdName": "bar"}}
AWS = {"awsElasticBlockStore": {"volumeID": "foo"}}
AWS2 = {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "lun": 0}}
ISCSI2 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "lun": 0}}


def vol(source, name="disk", read_only=None):
    src = {k: dict(v) for k, v in source.items()}
    if read_only is not None:
        next(iter(src.values()))["readOnly"] = read_only
    return {"name": name, **src}


def disk_case(new_volumes, existing_volumes):
    objects = [node("n1"), pod("new", volumes=new_volumes)]
    if existing_volumes is not None:
        objects.append(pod("existing", volumes=existing_volumes, node_name="n1"))
    fw = framework(*objects, version=VERSION)
    pre, filters, _ = run(fw, "VolumeRestrictions", pending(fw, "new"))
    return verdict(pre), verdict(filters.get("n1"))


SKIP = ("Skip", [])
OK = ("Success", [])
CONFLICT = ("Unschedulable", [ERR_REASON_DISK_CONFLICT])


@pytest.mark.parametrize("same,different", [(GCE, GCE2), (AWS, AWS2), (RBD, RBD2), (ISCSI, ISCSI2)],
                         ids=["gce", "aws", "rbd", "iscsi"])
class TestDiskConflicts:
    def test_nothing(self, same, different):
        assert disk_case([], None)[0] == SKIP

    def test_one_state(self, same, different):
        # The new pod has no volume: PreFilter skips, whatever the node holds.
        assert disk_case([], [vol(same)])[0] == SKIP

    def test_same_state(self, same, different):
        assert disk_case([vol(same)], [vol(same)]) == (OK, CONFLICT)

    def test_different_state(self, same, different):
        assert disk_case([vol(different)], [vol(same)]) == (OK, OK)


def test_volume_without_restriction_skips():
    assert disk_case([{"name": "volume with no restriction", "emptyDir": {}}], None)[0] == SKIP


@pytest.mark.parametrize("source,both_read_only_conflict", [(GCE, False), (ISCSI, False), (RBD, False), (AWS, True)],
                         ids=["gce", "iscsi", "rbd", "aws"])
def test_read_only_mounts(source, both_read_only_conflict):
    """GCE PD, iSCSI and RBD may be shared when every mount is read-only; an
    EBS volume never."""
    both = disk_case([vol(source, read_only=True)], [vol(source, read_only=True)])[1]
    one = disk_case([vol(source, read_only=True)], [vol(source)])[1]
    assert both == (CONFLICT if both_read_only_conflict else OK)
    assert one == CONFLICT


def test_rbd_needs_a_shared_monitor_pool_and_image():
    base = {"rbd": {"monitors": ["a"], "pool": "p", "image": "i"}}
    other_pool = {"rbd": {"monitors": ["a"], "pool": "q", "image": "i"}}
    default_pool = {"rbd": {"monitors": ["x", "a"], "image": "i", "pool": "rbd"}}
    assert disk_case([vol(base)], [vol(other_pool)])[1] == OK
    assert disk_case([vol({"rbd": {"monitors": ["a"], "image": "i"}})], [vol(default_pool)])[1] == CONFLICT


def test_disk_conflict_details_name_the_volume_and_pod():
    fw = framework(node("n1"), pod("new", volumes=[vol(GCE)]), pod("existing", volumes=[vol(GCE)], node_name="n1"), version=VERSION)
    _, filters, _ = run(fw, "VolumeRestrictions", pending(fw, "new"))
    assert filters["n1"].details == {"type": "gcePersistentDisk", "disk": "foo", "volume": "disk",
                                     "usedBy": "default/existing"}


# -- ReadWriteOncePod ---------------------------------------------------------------

RWOP1 = pvc("claim-with-rwop-1", modes=("ReadWriteOncePod",))
RWOP2 = pvc("claim-with-rwop-2", modes=("ReadWriteOncePod",))
RWX = pvc("claim-with-rwx", modes=("ReadWriteMany",))


def rwop_case(new_claims, existing, claims):
    objects = [node("node-1"), pod("new", claims=new_claims), *claims]
    for i, cs in enumerate(existing):
        objects.append(pod(f"existing-{i}", claims=cs, node_name="node-1"))
    fw = framework(*objects, version=VERSION)
    pre, filters, _ = run(fw, "VolumeRestrictions", pending(fw, "new"))
    return verdict(pre), verdict(filters.get("node-1")) if filters else None


def test_access_mode_nothing():
    assert rwop_case([], [], [])[0] == SKIP


def test_access_mode_failed_to_get_pvc():
    assert rwop_case(["claim-with-rwop-1"], [], [])[0] == (
        "UnschedulableAndUnresolvable", ['persistentvolumeclaim "claim-with-rwop-1" not found'])


def test_access_mode_no_conflict():
    assert rwop_case(["claim-with-rwop-1"], [["claim-with-rwx"]], [RWOP1, RWX])[0] == SKIP


def test_access_mode_conflict_unschedulable():
    got = rwop_case(["claim-with-rwop-1"], [["claim-with-rwop-1"], ["claim-with-rwx"]], [RWOP1, RWX])
    assert got == (OK, ("Unschedulable", [ERR_REASON_RWOP_CONFLICT]))


def test_access_mode_two_conflicts_unschedulable():
    got = rwop_case(["claim-with-rwop-1", "claim-with-rwop-2"],
                    [["claim-with-rwop-1", "claim-with-rwop-2"], ["claim-with-rwx"]], [RWOP1, RWOP2, RWX])
    assert got == (OK, ("Unschedulable", [ERR_REASON_RWOP_CONFLICT]))


def test_access_mode_conflict_is_cluster_wide():
    """A claim in use anywhere blocks every node (preemption may free it)."""
    fw = framework(node("node-1"), node("node-2"), RWOP1, pod("new", claims=["claim-with-rwop-1"]),
                   pod("owner", claims=["claim-with-rwop-1"], node_name="node-1"), version=VERSION)
    _, filters, _ = run(fw, "VolumeRestrictions", pending(fw, "new"))
    assert {n: verdict(s) for n, s in filters.items()} == {
        "node-1": ("Unschedulable", [ERR_REASON_RWOP_CONFLICT]),
        "node-2": ("Unschedulable", [ERR_REASON_RWOP_CONFLICT]),
    }
    assert filters["node-2"].details["readWriteOncePodClaims"] == [
        {"claim": "default/claim-with-rwop-1", "usedBy": ["default/owner"]}]


def test_add_and_remove_pod_update_the_count_and_clone_is_independent():
    fw = framework(node("node-1"), RWOP1, pod("new", claims=["claim-with-rwop-1"]),
                   pod("owner", claims=["claim-with-rwop-1"], node_name="node-1"),
                   pod("other", claims=["claim-with-rwop-1"], ns="default", priority=5), version=VERSION)
    pl = fw.profile.by_name["VolumeRestrictions"]
    new = pending(fw, "new")
    state = CycleState()
    pl.pre_filter(state, new, fw.snapshot.node_infos)
    assert state.read(PRE_FILTER_STATE_KEY).conflicting_ref_count == 1

    ni = fw.snapshot.get("node-1")
    owner = ni.pods[0]
    ext = pl.pre_filter_extensions()
    clone = state.clone()
    assert ext.remove_pod(clone, new, owner, ni) is None
    assert clone.read(PRE_FILTER_STATE_KEY).conflicting_ref_count == 0
    assert pl.filter(clone, new, ni) is None  # the victim's removal frees the claim
    assert state.read(PRE_FILTER_STATE_KEY).conflicting_ref_count == 1  # original untouched

    ext.add_pod(clone, new, pending(fw, "other"), ni)
    assert verdict(pl.filter(clone, new, ni)) == ("Unschedulable", [ERR_REASON_RWOP_CONFLICT])


def test_nominated_pods_count_only_when_prefilter_did_not_skip():
    """AddPod only runs for plugins that did not skip at PreFilter. With no
    scheduled user of the claim, PreFilter skips, so a pod nominated with the
    same ReadWriteOncePod claim does not block its node (upstream behaviour)."""
    nominated = pod("nominated", claims=["claim-with-rwop-1"], priority=10)
    claim = pvc("claim-with-rwop-1", modes=("ReadWriteOncePod",), volume_name="pv-1", bound=True)
    volume = pv("pv-1", claim="default/claim-with-rwop-1", modes=("ReadWriteOncePod",), phase="Bound")
    fw = framework(node("node-1"), node("node-2"), claim, volume, pod("new", claims=["claim-with-rwop-1"]), nominated, version=VERSION)
    fw.nominator.add(pending(fw, "nominated"), "node-1")
    result = fw.schedule(pending(fw, "new"))
    assert [(s.plugin, s.code.label) for s in result.pre_filter if s.plugin == "VolumeRestrictions"] == [
        ("VolumeRestrictions", "Skip")]
    assert all(n.feasible for n in result.nodes)

    # With a disk to check, PreFilter does not skip and the nominated pod's
    # use of the claim counts on node-1 only through AddPod.
    fw = framework(node("node-1"), node("node-2"), claim, volume, nominated,
                   pod("new", claims=["claim-with-rwop-1"], volumes=[vol(GCE)]), version=VERSION)
    fw.nominator.add(pending(fw, "nominated"), "node-1")
    result = fw.schedule(pending(fw, "new"))
    by_node = {n.name: n for n in result.nodes}
    assert by_node["node-1"].first_failure == "VolumeRestrictions"
    assert verdict(by_node["node-1"].status) == ("Unschedulable", [ERR_REASON_RWOP_CONFLICT])
    assert by_node["node-2"].feasible


def test_missing_claim_message_matches_upstream():
    """Golden case-1-106: a pod naming a missing claim is rejected at PreFilter
    and the message ends with the PostFilter's "not found"."""
    workload = load_workload([str(GOLDEN / "cases" / "case-1-106.yaml")])
    doc = explain(workload, tie_break="name")
    p = next(p for p in doc["pods"] if p["pod"] == "team-a/missing-claim-zt8sv")
    assert p["status"] == "Unschedulable"
    assert p["message"] == '0/8 nodes are available: persistentvolumeclaim "does-not-exist" not found. not found'
    assert p["preFilter"][-1]["plugin"] == "VolumeRestrictions"
    assert p["preFilter"][-1]["details"] == {"claim": "team-a/does-not-exist", "missing": "PersistentVolumeClaim"}
