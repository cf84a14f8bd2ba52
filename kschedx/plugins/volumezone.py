"""VolumeZone: a pod goes where its bound volumes' zone and region labels allow.

PreFilter reads the zone/region labels (GA and deprecated failure-domain
keys) of the PVs the pod's claims are bound to; a claim waiting for its
first consumer has no PV yet and is left to VolumeBinding. Filter requires,
on nodes that carry any topology label, the node's value (under the same
key, or its GA equivalent) to be one of the PV's `__`-separated values.
"""

from __future__ import annotations

from ..config import names
from ..framework.declaration import Declaration, reads
from ..framework.events import ActionType as A, NODE, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, Register, STORAGE_CLASS
from ..framework.interface import Plugin
from ..framework.status import Code, Status
from ..storage.objects import (
    WAIT_FOR_FIRST_CONSUMER,
    NotFound,
    binding_mode,
    claim_class,
    get_pv,
    get_pvc,
    get_storage_class,
    meta,
    spec,
)

NAME = names.VolumeZone
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_TO_GA = {LABEL_BETA_REGION: LABEL_REGION, LABEL_BETA_ZONE: LABEL_ZONE}


class PVTopology:
    __slots__ = ("pv_name", "claim", "key", "values")

    def __init__(self, pv_name: str, claim: str, key: str, values: frozenset):
        self.pv_name = pv_name
        self.claim = claim
        self.key = key
        self.values = values


class StateData:
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[PVTopology]):
        self.topologies = topologies

    def clone(self):
        return self


def label_zones_to_set(value: str) -> frozenset | None:
    """LabelZonesToSet; None when an element is empty (the label is ignored)."""
    zones = set()
    for z in value.split("__"):
        z = z.strip()
        if not z:
            return None
        zones.add(z)
    return frozenset(zones)


def pv_topologies(pv: dict, claim: str) -> list[PVTopology]:
    labels = meta(pv).get("labels") or {}
    out = []
    for key in TOPOLOGY_LABELS:
        if key in labels:
            zones = label_zones_to_set(labels[key])
            if zones is None:
                continue
            out.append(PVTopology(meta(pv).get("name", ""), claim, key, zones))
    return out


class VolumeZone(Plugin):
    name = NAME

    def pre_filter(self, state, pod_info, nodes):
        topologies, status = self._pv_topologies_of_pod(pod_info)
        if status is not None:
            return None, status
        if not topologies:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, StateData(topologies))
        return None, None

    def _pv_topologies_of_pod(self, pod_info):
        cluster = self.handle.cluster
        out: list[PVTopology] = []
        for v in pod_info.spec.get("volumes") or ():
            src = v.get("persistentVolumeClaim")
            if src is None:
                continue
            name = src.get("claimName", "")
            if not name:
                return None, _unresolvable("PersistentVolumeClaim had no name")
            claim = f"{pod_info.namespace}/{name}"
            try:
                pvc = get_pvc(cluster, pod_info.namespace, name)
            except NotFound as exc:
                return None, _unresolvable(str(exc), claim=claim)
            pv_name = spec(pvc).get("volumeName") or ""
            if not pv_name:
                sc_name = claim_class(pvc)
                if not sc_name:
                    return None, _unresolvable("PersistentVolumeClaim had no pv name and storageClass name", claim=claim)
                try:
                    sc = get_storage_class(cluster, sc_name)
                except NotFound as exc:
                    return None, _unresolvable(str(exc), claim=claim, storageClass=sc_name)
                if binding_mode(sc) == WAIT_FOR_FIRST_CONSUMER:
                    continue
                return None, _unresolvable("PersistentVolume had no name", claim=claim, storageClass=sc_name)
            try:
                pv = get_pv(cluster, pv_name)
            except NotFound as exc:
                return None, _unresolvable(str(exc), claim=claim, persistentVolume=pv_name)
            out.extend(pv_topologies(pv, claim))
        return out, None

    def filter(self, state, pod_info, node_info):
        if not pod_info.spec.get("volumes"):
            return None
        data = state.read(PRE_FILTER_STATE_KEY)
        if data is None:
            topologies, status = self._pv_topologies_of_pod(pod_info)
            if status is not None:
                return status
        else:
            topologies = data.topologies
        labels = node_info.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None
        for t in topologies:
            v = labels.get(t.key)
            if v is None:
                v = labels.get(_TO_GA.get(t.key, t.key))
            if v is None or v not in t.values:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT, details={
                    "claim": t.claim,
                    "persistentVolume": t.pv_name,
                    "label": t.key,
                    "volumeValues": sorted(t.values),
                    "nodeValue": v,
                })
        return None


def _unresolvable(message: str, **details) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message, details=details or None)


DECLARATION = Declaration(
    name=names.VolumeZone,
    factory=VolumeZone,
    points=frozenset({"preFilter", "filter"}),
    reads=(reads(PERSISTENT_VOLUME, STORAGE_CLASS, pods=("volumes",)),
           reads(PERSISTENT_VOLUME_CLAIM, pods=("volumes",), same_namespace=True)),
    events=(Register(STORAGE_CLASS, A.Add), Register(NODE, A.Add | A.UpdateNodeLabel),
            Register(PERSISTENT_VOLUME_CLAIM, A.Add | A.Update), Register(PERSISTENT_VOLUME, A.Add | A.Update)),
    details="volume-zone",
)
