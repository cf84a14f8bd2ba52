"""VolumeZone, from upstream's volume_zone_test.go (v1.35 facts).

Upstream's tests use fake listers; kube-scheduler uses informer listers,
whose not-found text names the resource in the singular
(`storageclass.storage.k8s.io "Class_0" not found`), as ported here.
"""

from __future__ import annotations

import pytest

from kschedx.plugins.volumezone import ERR_REASON_CONFLICT
from builders import framework, pvc, storage_class, verdict
from builders import capacity_node as node
from builders import csi_pv as pv
from builders import filter_all as run
from builders import pod_info as pending
from builders import volume_pod as pod

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"

SINGLE_ZONE_PVS = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", labels={BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", labels={ZONE: "us-west1-a", REGION: "us-west1-a"}),
]
SINGLE_ZONE_PVCS = [
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_2", volume_name="Vol_2"),
    pvc("PVC_3", volume_name="Vol_3"),
    pvc("PVC_4", volume_name="Vol_not_exist"),
    pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume_name="Vol_Stable_2"),
    pvc("PVC_Stable_3", volume_name="Vol_Stable_3"),
]

CONFLICT = ("UnschedulableAndUnresolvable", [ERR_REASON_CONFLICT])
OK = ("Success", [])


def zone_case(objects, claim, node_labels):
    claims = [claim] if claim else []
    fw = framework(node("host1", node_labels), pod("pod_1", claims=claims), *objects, version=VERSION)
    pre, filters, _ = run(fw, "VolumeZone", pending(fw, "pod_1"))
    return verdict(pre), (verdict(filters["host1"]) if filters else None)


SINGLE = [
    ("node without labels", "PVC_1", {}, OK),
    ("beta zone label matched", "PVC_1", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, OK),
    ("beta region label matched", "PVC_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}, OK),
    ("beta region label doesn't match", "PVC_2", {BETA_REGION: "no_us-west1", "uselessLabel": "none"}, CONFLICT),
    ("beta zone label doesn't match", "PVC_1", {BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}, CONFLICT),
    ("zone label matched", "PVC_Stable_1", {ZONE: "us-west1-a", "uselessLabel": "none"}, OK),
    ("region label matched", "PVC_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}, OK),
    ("region label doesn't match", "PVC_Stable_2", {REGION: "no_us-west1", "uselessLabel": "none"}, CONFLICT),
    ("zone label doesn't match", "PVC_Stable_1", {ZONE: "no_us-west1-a", "uselessLabel": "none"}, CONFLICT),
    ("pv with zone and region, node with only zone", "PVC_Stable_3", {ZONE: "us-west1-a"}, CONFLICT),
    ("pv with zone,node with beta zone", "PVC_Stable_1", {BETA_ZONE: "us-west1-a"}, CONFLICT),
    ("pv with beta label,node with ga label, matched", "PVC_1", {ZONE: "us-west1-a"}, OK),
    ("pv with beta label,node with ga label, don't match", "PVC_1", {ZONE: "us-west1-b"}, CONFLICT),
]


def test_pod_without_volume_skips():
    assert zone_case(SINGLE_ZONE_PVS + SINGLE_ZONE_PVCS, None, {BETA_ZONE: "us-west1-a"})[0] == ("Skip", [])


@pytest.mark.parametrize("name,claim,labels,want", SINGLE, ids=[c[0] for c in SINGLE])
def test_single_zone(name, claim, labels, want):
    assert zone_case(SINGLE_ZONE_PVS + SINGLE_ZONE_PVCS, claim, labels) == (OK, want)


MULTI_ZONE_PVS = [
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", labels={BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", labels={BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", labels={ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", labels={ZONE: "us-west1-c__us-west1-a"}),
]
MULTI_ZONE_PVCS = [
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_2", volume_name="Vol_2"),
    pvc("PVC_3", volume_name="Vol_3"),
    pvc("PVC_4", volume_name="Vol_not_exist"),
    pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume_name="Vol_Stable_2"),
]
MULTI = [
    ("node without labels", "PVC_3", {}, OK),
    ("beta zone label matched", "PVC_3", {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}, OK),
    ("beta zone label doesn't match", "PVC_1", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}, CONFLICT),
    ("zone label matched", "PVC_Stable_2", {ZONE: "us-west1-a", "uselessLabel": "none"}, OK),
    ("zone label doesn't match", "PVC_Stable_1", {ZONE: "us-west1-b", "uselessLabel": "none"}, CONFLICT),
]


@pytest.mark.parametrize("name,claim,labels,want", MULTI, ids=[c[0] for c in MULTI])
def test_multi_zone(name, claim, labels, want):
    assert zone_case(MULTI_ZONE_PVS + MULTI_ZONE_PVCS, claim, labels) == (OK, want)


def test_missing_pv_is_reported_as_upstream_does():
    got = zone_case(SINGLE_ZONE_PVS + SINGLE_ZONE_PVCS, "PVC_4", {ZONE: "us-west1-a"})
    assert got == (("UnschedulableAndUnresolvable", ['persistentvolume "Vol_not_exist" not found']), None)


def test_label_with_an_empty_zone_is_ignored():
    # Upstream's row has "us-west1-a__", a value the API server refuses (a
    # label value ends alphanumeric); an empty zone between two is one it stores.
    objects = [pv("Vol_bad", labels={ZONE: "us-west1-a____us-west1-b"}), pvc("PVC_bad", volume_name="Vol_bad")]
    assert zone_case(objects, "PVC_bad", {ZONE: "elsewhere"})[0] == ("Skip", [])


WITH_BINDING = [
    storage_class("Class_Immediate", mode="Immediate"),
    storage_class("Class_Wait", mode="WaitForFirstConsumer"),
    pv("Vol_1", labels={BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"),
    pvc("PVC_NoSC", sc="Class_0"),
    pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", sc="Class_Wait"),
    pvc("PVC_ImmediateSC", sc="Class_Immediate"),
]
TEST_NODE = {BETA_ZONE: "us-west1-a", "uselessLabel": "none"}


@pytest.mark.parametrize("claim,want", [
    ("PVC_1", (OK, OK)),
    ("PVC_EmptySC", (("UnschedulableAndUnresolvable", ["PersistentVolumeClaim had no pv name and storageClass name"]),
                     None)),
    ("PVC_NoSC", (("UnschedulableAndUnresolvable", ['storageclass.storage.k8s.io "Class_0" not found']), None)),
    ("PVC_ImmediateSC", (("UnschedulableAndUnresolvable", ["PersistentVolume had no name"]), None)),
    ("PVC_WaitSC", (("Skip", []), None)),
], ids=["label zone failure domain matched", "unbound volume empty storage class",
        "unbound volume no storage class", "unbound volume immediate binding mode",
        "unbound volume wait binding mode"])
def test_with_binding(claim, want):
    assert zone_case(WITH_BINDING, claim, TEST_NODE) == want


def test_class_without_binding_mode_is_immediate():
    """The API server stores a StorageClass without volumeBindingMode as
    Immediate, so upstream's "VolumeBindingMode not set" cannot happen."""
    objects = [storage_class("plain", mode=None), pvc("PVC_plain", sc="plain")]
    assert zone_case(objects, "PVC_plain", TEST_NODE)[0] == ("UnschedulableAndUnresolvable",
                                                             ["PersistentVolume had no name"])


def test_details_name_claim_volume_and_label():
    fw = framework(node("host1", {ZONE: "us-west1-b"}), pod("pod_1", claims=["PVC_Stable_1"]),
                   *SINGLE_ZONE_PVS, *SINGLE_ZONE_PVCS, version=VERSION)
    _, filters, _ = run(fw, "VolumeZone", pending(fw, "pod_1"))
    assert filters["host1"].details == {"claim": "default/PVC_Stable_1", "persistentVolume": "Vol_Stable_1",
                                        "label": ZONE, "volumeValues": ["us-west1-a"], "nodeValue": "us-west1-b"}
