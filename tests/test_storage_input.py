"""Malformed storage objects are input errors naming file, object and field."""

from __future__ import annotations

import pytest

from kschedx.util.errors import InputError
from builders import csi_node, pvc, storage_class
from builders import admitted as build
from builders import csi_pv as pv
from builders import volume_pod as pod


@pytest.mark.parametrize("obj,field", [
    (dict(pv("a"), spec={"nodeAffinity": "zone-a"}), "spec.nodeAffinity"),
    (dict(pv("a"), spec={"nodeAffinity": {"required": {"nodeSelectorTerms": ["x"]}}}),
     "spec.nodeAffinity.required.nodeSelectorTerms[0]"),
    (dict(pv("a"), spec={"accessModes": "ReadWriteOnce"}), "spec.accessModes"),
    (dict(pv("a"), spec={"claimRef": ["default", "c"]}), "spec.claimRef"),
    (dict(pvc("c"), spec={"selector": "tier=gold"}), "spec.selector"),
    (dict(pvc("c"), spec={"resources": ["1Gi"]}), "spec.resources"),
    (dict(storage_class("s"), allowedTopologies=[{"matchLabelExpressions": [{"key": "k", "values": "v"}]}]),
     "allowedTopologies[0].matchLabelExpressions[0].values"),
    (csi_node("n", {"d": "three"}), "spec.drivers[0].allocatable.count"),
    (pod("p", volumes=[{"name": "v", "persistentVolumeClaim": "data"}]), "spec.volumes[0].persistentVolumeClaim"),
])
def test_malformed_objects_name_the_field(obj, field):
    with pytest.raises(InputError) as err:
        build(obj)
    assert field in str(err.value)
    assert "test.yaml" in str(err.value)


def test_invalid_storage_quantity():
    with pytest.raises(InputError, match="spec.resources.requests.storage"):
        build(pvc("c", request="ten gigs"))


def test_invalid_csi_storage_capacity_quantity():
    cap = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "c"},
           "storageClassName": "s", "capacity": "lots"}
    with pytest.raises(InputError, match="capacity"):
        build(cap)


def test_missing_references_are_not_input_errors():
    """A claim naming a missing class or PV is a legal cluster state."""
    cluster = build(pvc("c", sc="gone", volume_name="pv-gone"), pod("p", claims=["c", "missing"]))
    assert "default/c" in cluster.persistent_volume_claims
