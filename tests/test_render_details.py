"""The `--node` story's sentences for volume verdicts."""

from __future__ import annotations

from kschedx.render.details import detail_lines


def test_node_volume_limits_lines():
    d = {"driver": "ebs.csi.aws.com", "limit": 3, "attached": 3, "new": 1, "volumes": [
        {"volume": "data", "claim": "default/a", "persistentVolume": None, "driver": "ebs.csi.aws.com",
         "storageClass": "gp3"},
        {"volume": "old", "claim": "default/b", "persistentVolume": "pv-b", "driver": "ebs.csi.aws.com",
         "volumeHandle": "vol-1"},
        {"volume": "pd", "inTreePlugin": "kubernetes.io/gce-pd", "driver": "pd.csi.storage.gke.io",
         "volumeHandle": "h"}]}
    assert detail_lines("NodeVolumeLimits", d) == [
        "ebs.csi.aws.com: 3 attached + 1 new > limit 3 (CSINode allocatable.count)",
        "claim default/a: not provisioned yet, counted for class gp3",
        "claim default/b -> PV pv-b (handle vol-1)",
        "inline kubernetes.io/gce-pd volume pd as pd.csi.storage.gke.io (handle h)",
    ]


def test_volume_zone_line():
    d = {"claim": "default/c", "persistentVolume": "pv", "label": "topology.kubernetes.io/zone",
         "volumeValues": ["a", "b"], "nodeValue": None}
    assert detail_lines("VolumeZone", d) == [
        "PV pv (claim default/c) needs topology.kubernetes.io/zone in [a, b]; the node has no such label"]


def test_volume_binding_and_restrictions_lines():
    assert detail_lines("VolumeBinding", {"claims": [{"claim": "ns/c", "storageClass": "local", "verdict": "x"}]}) == [
        "claim ns/c (class local): x"]
    assert detail_lines("VolumeRestrictions", {"readWriteOncePodClaims": [{"claim": "ns/c", "usedBy": ["ns/p"]}],
                                               "conflictingReferences": 1}) == [
        "ReadWriteOncePod claim ns/c is in use by ns/p"]
    assert detail_lines("VolumeRestrictions", {"claim": "ns/x", "missing": "PersistentVolumeClaim"}) == [
        "PersistentVolumeClaim ns/x does not exist"]


def test_other_plugins_and_odd_shapes_fall_back_to_key_values():
    assert detail_lines("NodePorts", {"conflictingPorts": ["TCP/80"]}) == ['conflictingPorts: ["TCP/80"]']
    assert detail_lines("VolumeZone", {"unexpected": 1}) == ["unexpected: 1"]
    assert detail_lines("VolumeZone", None) == []
