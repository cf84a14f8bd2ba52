"""NodeVolumeLimits (CSILimits), from upstream's csi_test.go (v1.35 facts,
and what 1.36 changes: Portworx, VolumeLimitScaling's driver opt-in), plus
the in-tree translation it relies on."""

from __future__ import annotations

import pytest

from kschedx.plugins.nodevolumelimits.csi import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
from kschedx.storage import csi_translation as tr
from builders import api_object, csi_driver, csi_node, framework, metadata, pvc, storage_class, verdict
from kschedx.features import Features, default_features
from builders import capacity_node as node
from builders import csi_pv as pv
from builders import filter_all as run
from builders import pod_info as pending
from builders import volume_pod as pod

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
NODE = "node-for-max-pd-test-1"
SC = "csi-sc"

EXCEEDED = ("Unschedulable", [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED])
OK = ("Success", [])


def storage_objects(drivers):
    """The PVs and claims upstream's fake listers hold for these drivers."""
    out = []
    for d in drivers:
        for j in range(4):
            name = f"csi-{d}-{j}"
            if d == EBS_IN_TREE:
                source = {"awsElasticBlockStore": {"volumeID": name}}
            elif d == HOSTPATH_IN_TREE:
                source = {"hostPath": {"path": "/tmp"}}
            else:
                source = {"csi": {"driver": d, "volumeHandle": name}}
            out.append(pv(name, source=source, phase="Bound"))
            out.append(pvc(name, volume_name=name))
    out.append(pvc("csi-4", sc=SC))
    out.append(pvc("csi-5"))
    out.append(pvc("csi-6", sc=SC, volume_name="missing-in-action"))
    out.append(storage_class(SC, mode="Immediate", provisioner=drivers[0]))
    return out


def attachments(count, drivers):
    out = []
    for d in drivers:
        for j in range(count):
            out.append(api_object("storage.k8s.io/v1", "VolumeAttachment", metadata(f"va-{d}-{j}".replace("/", "-")),
                                  spec={"nodeName": NODE, "attacher": d,
                                        "source": {"persistentVolumeName": f"csi-{d}-{j}"}}))
    return out


def claims_pod(*claims):
    return {"claims": list(claims)}


def volumes_pod(*volumes, name=None, ns=None, uid=None):
    return {"volumes": list(volumes), "name": name, "ns": ns, "uid": uid}


RUNNING = claims_pod("csi-ebs.csi.aws.com-3")
PENDING_VOLUME = claims_pod("csi-4")
UNBOUND_PVC_2 = claims_pod("csi-4")
MISSING_PV = claims_pod("csi-6")
NO_SC = claims_pod("csi-5")
GCE_TWO = claims_pod("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
IN_TREE_ONE = claims_pod("csi-kubernetes.io/aws-ebs-0")
IN_TREE_TWO = claims_pod("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
EBS_ONE = claims_pod("csi-ebs.csi.aws.com-0")
EBS_TWO = claims_pod("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
HOSTPATH_ONE = claims_pod("csi-kubernetes.io/hostpath-0")
EPHEMERAL = volumes_pod({"name": "xyz", "ephemeral": {}}, name="abc", ns="test", uid="12345")
EPHEMERAL_TWO = volumes_pod({"name": "x", "ephemeral": {}}, {"name": "y", "ephemeral": {}},
                            name="abc", ns="test", uid="12345II")
IN_TREE_INLINE = volumes_pod({"name": "inline", "awsElasticBlockStore": {"volumeID": "aws-inline1"}})
IN_TREE_INLINE_SAME_ID = volumes_pod({"name": "inline", "awsElasticBlockStore": {"volumeID": "csi-ebs.csi.aws.com-1"}})
CONFIGMAP_SECRET = [{"name": "cm", "configMap": {}}, {"name": "secret", "secret": {}}]
ONLY_CONFIGMAP_SECRET = volumes_pod(*CONFIGMAP_SECRET)
PVC_WITH_CONFIGMAP_SECRET = volumes_pod(*CONFIGMAP_SECRET,
                                        {"name": "pvc", "persistentVolumeClaim": {"claimName": "csi-ebs.csi.aws.com-0"}})
EPHEMERAL_WITH_CONFIGMAP_SECRET = volumes_pod(*CONFIGMAP_SECRET, {"name": "xyz", "ephemeral": {}}, name="abc", ns="test")
INLINE_WITH_CONFIGMAP_SECRET = volumes_pod(*CONFIGMAP_SECRET,
                                           {"name": "inline", "awsElasticBlockStore": {"volumeID": "aws-inline1"}})


def ephemeral_claim(name, owner_uid=None):
    return pvc(name, ns="test", sc=SC, owner_uid=owner_uid)


EPHEMERAL_CLAIM = ephemeral_claim("abc-xyz", "12345")
CONFLICTING_CLAIM = ephemeral_claim("abc-xyz")
EPHEMERAL_CLAIM_X = ephemeral_claim("abc-x", "12345II")
EPHEMERAL_CLAIM_Y = ephemeral_claim("abc-y", "12345II")


def make_pod(spec, name, node_name=None):
    return pod(spec.get("name") or name, ns=spec.get("ns") or "default", claims=spec.get("claims", ()),
               volumes=spec.get("volumes", ()), node_name=node_name, uid=spec.get("uid"))


def limits_case(new, existing, max_vols, drivers, limit_source, va_count=0, extra_claims=()):
    objects = [node(NODE)]
    new_pod = make_pod(new, "new")
    objects.append(new_pod)
    for i, e in enumerate(existing):
        objects.append(make_pod(e, f"existing-{i}", node_name=NODE))
    objects.extend(storage_objects(drivers))
    objects.extend(extra_claims)
    objects.extend(attachments(va_count, drivers))
    if limit_source in ("csinode", "csinode-with-no-limit"):
        count = max_vols if limit_source == "csinode" else None
        # upstream's table enables EBS migration on every CSINode it builds
        objects.append(csi_node(NODE, {d: count for d in drivers}, migrated=EBS_IN_TREE))
    fw = framework(*objects, version=VERSION)
    pre, filters, _ = run(fw, "NodeVolumeLimits", pending(fw, new_pod["metadata"]["name"],
                                                          new_pod["metadata"]["namespace"]))
    if pre is not None and pre.is_skip():
        return verdict(pre)
    return verdict(filters[NODE])


CASES = [
    ("should count VolumeAttachments towards volume limit when no pods exist",
     EBS_ONE, [], 2, [EBS], "csinode", 2, (), EXCEEDED),
    ("should schedule pod when VolumeAttachments count does not exceed limit",
     EBS_ONE, [], 2, [EBS], "csinode", 1, (), OK),
    ("fits when node volume limit >= new pods CSI volume", EBS_ONE, [RUNNING, EBS_TWO], 4, [EBS], "csinode", 0, (), OK),
    ("doesn't when node volume limit <= pods CSI volume",
     EBS_ONE, [RUNNING, EBS_TWO], 2, [EBS], "csinode", 0, (), EXCEEDED),
    ("should when driver does not support volume limits",
     EBS_ONE, [RUNNING, EBS_TWO], 2, [EBS], "csinode-with-no-limit", 0, (), OK),
    ("count pending PVCs towards volume limit <= pods CSI volume",
     EBS_ONE, [PENDING_VOLUME, EBS_TWO], 2, [EBS], "csinode", 0, (), EXCEEDED),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume",
     EBS_ONE, [PENDING_VOLUME, UNBOUND_PVC_2, EBS_TWO], 4, [EBS], "csinode", 0, (), OK),
    ("should count PVCs with invalid PV name but valid SC",
     EBS_ONE, [MISSING_PV, EBS_TWO], 2, [EBS], "csinode", 0, (), EXCEEDED),
    ("don't count pvcs with missing SC towards volume limit", EBS_ONE, [RUNNING, NO_SC], 2, [EBS], "csinode", 0, (), OK),
    ("count pvcs with the same type towards volume limit",
     EBS_ONE, [GCE_TWO, EBS_TWO], 2, [EBS, GCE], "csinode", 0, (), EXCEEDED),
    ("don't count pvcs with different type towards volume limit",
     GCE_TWO, [EBS_TWO, RUNNING], 2, [EBS, GCE], "csinode", 0, (), OK),
    ("should count in-tree volumes if migration is enabled",
     IN_TREE_ONE, [IN_TREE_TWO], 2, [EBS_IN_TREE, EBS], "csinode", 0, (), EXCEEDED),
    ("nil csi node", IN_TREE_INLINE, [IN_TREE_TWO], 0, [EBS_IN_TREE, EBS], "", 0, (), OK),
    ("should count unbound in-tree volumes if migration is enabled",
     PENDING_VOLUME, [IN_TREE_TWO], 2, [EBS_IN_TREE, EBS], "csinode", 0, (), EXCEEDED),
    ("should not limit pod if volume used does not report limits",
     IN_TREE_ONE, [IN_TREE_TWO], 2, [EBS_IN_TREE, EBS], "csinode-with-no-limit", 0, (), OK),
    ("should not count non-migratable in-tree volumes",
     HOSTPATH_ONE, [EBS_TWO], 2, [HOSTPATH_IN_TREE, EBS], "csinode", 0, (), OK),
    ("should count in-tree inline volumes if migration is enabled",
     IN_TREE_INLINE, [IN_TREE_TWO], 2, [EBS_IN_TREE, EBS], "csinode", 0, (), EXCEEDED),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_ONE, [EBS_TWO], 2, [EBS_IN_TREE, EBS], "csinode", 0, (), EXCEEDED),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_INLINE, [EBS_TWO, IN_TREE_ONE], 3, [EBS_IN_TREE, EBS], "csinode", 0, (), EXCEEDED),
    ("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)",
     IN_TREE_INLINE_SAME_ID, [EBS_TWO, IN_TREE_ONE], 3, [EBS_IN_TREE, EBS], "csinode", 0, (), OK),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
     EBS_ONE, [IN_TREE_TWO], 2, [EBS_IN_TREE, EBS], "csinode", 0, (), EXCEEDED),
    ("ephemeral volume missing", EPHEMERAL, [], 0, [EBS], "csinode-with-no-limit", 0, (),
     ("UnschedulableAndUnresolvable", ['looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'])),
    ("ephemeral volume not owned", EPHEMERAL, [], 0, [EBS], "csinode-with-no-limit", 0, (CONFLICTING_CLAIM,),
     ("Error", ["PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"])),
    ("ephemeral volume unbound", EPHEMERAL, [], 0, [EBS], "csinode-with-no-limit", 0, (EPHEMERAL_CLAIM,), OK),
    ("ephemeral doesn't when node volume limit <= pods CSI volume",
     EPHEMERAL, [RUNNING, EBS_TWO], 2, [EBS], "csinode", 0, (EPHEMERAL_CLAIM,), EXCEEDED),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
     EBS_ONE, [RUNNING, EPHEMERAL_TWO], 2, [EBS], "csinode", 0, (EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y), EXCEEDED),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
     EBS_ONE, [RUNNING, EPHEMERAL, EBS_TWO], 3, [EBS], "csinode", 0, (EPHEMERAL_CLAIM,), EXCEEDED),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
     EBS_ONE, [RUNNING, EPHEMERAL, EBS_TWO], 5, [EBS], "csinode", 0, (EPHEMERAL_CLAIM,), OK),
    ("skip Filter when the pod only uses secrets and configmaps",
     ONLY_CONFIGMAP_SECRET, [], 2, [EBS], "csinode", 0, (), ("Skip", [])),
    ("don't skip Filter when the pod has pvcs", PVC_WITH_CONFIGMAP_SECRET, [], 2, [EBS], "csinode", 0, (), OK),
    ("don't skip Filter when the pod has ephemeral volumes",
     EPHEMERAL_WITH_CONFIGMAP_SECRET, [], 0, [EBS], "csinode-with-no-limit", 0, (),
     ("UnschedulableAndUnresolvable", ['looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found'])),
    ("don't skip Filter when the pod has inline migratable volumes",
     INLINE_WITH_CONFIGMAP_SECRET, [IN_TREE_TWO], 2, [EBS_IN_TREE, EBS], "csinode", 0, (), EXCEEDED),
]


@pytest.mark.parametrize("name,new,existing,max_vols,drivers,source,va,extra,want", CASES, ids=[c[0] for c in CASES])
def test_csi_limits(name, new, existing, max_vols, drivers, source, va, extra, want):
    assert limits_case(new, existing, max_vols, drivers, source, va, extra) == want


def test_details_give_driver_counts_and_the_claim():
    fw = framework(node(NODE), make_pod(EBS_ONE, "new"), make_pod(RUNNING, "e0", NODE), make_pod(EBS_TWO, "e1", NODE),
                   *storage_objects([EBS]), csi_node(NODE, {EBS: 2}), version=VERSION)
    _, filters, _ = run(fw, "NodeVolumeLimits", pending(fw, "new"))
    assert filters[NODE].details == {
        "driver": EBS, "limit": 2, "attached": 3, "new": 1,
        "volumes": [{"volume": "v0", "claim": "default/csi-ebs.csi.aws.com-0",
                     "persistentVolume": "csi-ebs.csi.aws.com-0", "driver": EBS,
                     "volumeHandle": "csi-ebs.csi.aws.com-0"}],
    }


def test_shared_volume_is_counted_once():
    """A pod whose claim is already used on the node adds nothing."""
    fw = framework(node(NODE), make_pod(EBS_TWO, "new"), make_pod(EBS_TWO, "e0", NODE),
                   *storage_objects([EBS]), csi_node(NODE, {EBS: 2}), version=VERSION)
    _, filters, _ = run(fw, "NodeVolumeLimits", pending(fw, "new"))
    assert filters[NODE] is None


def test_gce_pd_inline_counts_only_on_nodes_with_a_csinode():
    inline = {"name": "pd", "gcePersistentDisk": {"pdName": "disk-1"}}
    existing = {"name": "pd", "gcePersistentDisk": {"pdName": "disk-0"}}
    fw = framework(node("with-csinode"), node("without"), pod("new", volumes=[inline]),
                   pod("e0", volumes=[existing], node_name="with-csinode"),
                   pod("e1", volumes=[existing], node_name="without"),
                   csi_node("with-csinode", {GCE: 1}), version=VERSION)
    _, filters, _ = run(fw, "NodeVolumeLimits", pending(fw, "new"))
    assert verdict(filters["with-csinode"]) == EXCEEDED
    assert filters["without"] is None
    assert filters["with-csinode"].details["volumes"] == [
        {"volume": "pd", "inTreePlugin": tr.GCE_PD, "driver": GCE,
         "volumeHandle": "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/disk-1"}]


@pytest.mark.parametrize("version, without_annotation", [("1.35", None), ("1.36", EXCEEDED)])
def test_portworx_counts_when_the_csinode_says_it_migrated_until_1_36(version, without_annotation):
    """1.35: only with the CSINode's migrated-plugins annotation; 1.36 (gate
    CSIMigrationPortworx and the annotation check removed): on any node with
    a CSINode."""
    source = {"portworxVolume": {"volumeID": "px-1"}}
    volumes = [{"name": "px", **source}]
    for migrated, want in ((None, without_annotation), ("kubernetes.io/portworx-volume", EXCEEDED)):
        fw = framework(node(NODE), pod("new", volumes=volumes),
                       pod("e0", volumes=[{"name": "px", "portworxVolume": {"volumeID": "px-0"}}], node_name=NODE),
                       csi_node(NODE, {"pxd.portworx.com": 1}, migrated=migrated),
                       features=default_features(version))
        _, filters, _ = run(fw, "NodeVolumeLimits", pending(fw, "new"))
        assert (verdict(filters[NODE]) if filters[NODE] else None) == want


NOT_INSTALLED = ("Unschedulable", [f"{EBS} CSI driver is not installed on the node"])


@pytest.mark.parametrize("version, driver, csinode_drivers, want", [
    # Gate off (both versions' default): never checked.
    ("1.35-default", csi_driver(EBS), {GCE: 5}, OK),
    # 1.35: a CSIDriver object asks for the check.
    ("1.35", csi_driver(EBS), {GCE: 5}, NOT_INSTALLED),
    ("1.35", csi_driver(EBS), {EBS: 5}, OK),
    ("1.35", None, {GCE: 5}, OK),  # no CSIDriver: maybe not a CSI driver, allowed
    # 1.36: only a CSIDriver with preventPodSchedulingIfMissing: true.
    ("1.36", csi_driver(EBS), {GCE: 5}, OK),
    ("1.36", csi_driver(EBS, prevent_pod_scheduling_if_missing=False), {GCE: 5}, OK),
    ("1.36", csi_driver(EBS, prevent_pod_scheduling_if_missing=True), {GCE: 5}, NOT_INSTALLED),
    ("1.36", csi_driver(EBS, prevent_pod_scheduling_if_missing=True), {EBS: 5}, OK),
    ("1.36", csi_driver(EBS, prevent_pod_scheduling_if_missing=True), None, NOT_INSTALLED),  # no CSINode
])
def test_volume_limit_scaling_wants_the_driver_installed(version, driver, csinode_drivers, want):
    features = (default_features("1.35") if version == "1.35-default"
                else Features(version, {"VolumeLimitScaling": True}))
    objects = [node(NODE), pod("new", claims=[f"csi-{EBS}-0"]), *storage_objects([EBS])]
    if driver is not None:
        objects.append(driver)
    if csinode_drivers is not None:
        objects.append(csi_node(NODE, csinode_drivers))
    fw = framework(*objects, features=features)
    _, filters, _ = run(fw, "NodeVolumeLimits", pending(fw, "new"))
    assert (verdict(filters[NODE]) if filters[NODE] else OK) == want


def test_invalid_inline_ebs_id_is_an_error():
    fw = framework(node(NODE), pod("new", volumes=[{"name": "bad", "awsElasticBlockStore": {"volumeID": "aws://z/x"}}]),
                   csi_node(NODE, {EBS: 1}), version=VERSION)
    _, filters, _ = run(fw, "NodeVolumeLimits", pending(fw, "new"))
    assert verdict(filters[NODE]) == (
        "Error", ["converting volume(bad) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID "
                  "Invalid format for AWS volume (aws://z/x)"])


# -- translation ------------------------------------------------------------------------

@pytest.mark.parametrize("kid,want", [
    ("vol-123", "vol-123"), ("aws:///vol-123", "vol-123"), ("aws://us-east-1a/vol-abc", "vol-abc"), ("plain", "plain"),
])
def test_ebs_volume_id(kid, want):
    assert tr.ebs_volume_id(kid) == want


@pytest.mark.parametrize("labels,handle", [
    ({"topology.kubernetes.io/zone": "us-east1-b"}, "projects/UNSPECIFIED/zones/us-east1-b/disks/d"),
    ({"failure-domain.beta.kubernetes.io/zone": "us-east1-b__us-east1-c"}, "projects/UNSPECIFIED/regions/us-east1/disks/d"),
    ({}, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d"),
])
def test_gce_pv_handle(labels, handle):
    out = tr.translate_pv(pv("p", labels=labels, source={"gcePersistentDisk": {"pdName": "d"}}))
    assert out["spec"]["csi"] == {"driver": GCE, "volumeHandle": handle}
    assert "gcePersistentDisk" not in out["spec"]


def test_gce_regional_pv_across_regions_cannot_be_translated():
    with pytest.raises(tr.TranslationError, match="failed to get region from zones"):
        tr.translate_pv(pv("p", labels={"topology.kubernetes.io/zone": "us-east1-b__europe-west1-b"},
                           source={"gcePersistentDisk": {"pdName": "d"}}))


def test_zone_labels_become_the_drivers_topology_key():
    got = tr.translate_pv(pv("p", labels={"failure-domain.beta.kubernetes.io/zone": "us-east-1",
                                          "failure-domain.beta.kubernetes.io/region": "us-east-1a"},
                             source={"gcePersistentDisk": {"pdName": "d"}}))
    assert got["spec"]["nodeAffinity"] == {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "topology.gke.io/zone", "operator": "In", "values": ["us-east-1"]}]}]}}


def test_node_affinity_zone_key_is_renamed_and_beta_region_moves_to_ga():
    got = tr.translate_pv(pv("p", source={"awsElasticBlockStore": {"volumeID": "vol-1"}},
                             affinity={"failure-domain.beta.kubernetes.io/zone": ["a"],
                                       "failure-domain.beta.kubernetes.io/region": ["r"]}))
    assert got["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "topology.ebs.csi.aws.com/zone", "operator": "In", "values": ["a"]},
        {"key": "topology.kubernetes.io/region", "operator": "In", "values": ["r"]},
    ]
