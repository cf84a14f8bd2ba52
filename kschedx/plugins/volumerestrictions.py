"""VolumeRestrictions: volumes that cannot be shared.

Two rules, as in kube-scheduler v1.35:
- a ReadWriteOncePod claim already used by a scheduled pod makes the pod
  unschedulable everywhere (preemption may free the claim, so the status is
  Unschedulable); PreFilter counts the users, AddPod/RemovePod keep the
  count right for nominated pods and preemption dry runs;
- the in-tree disks upstream still checks on the same node: a GCE PD unless
  every mount is read-only, an AWS EBS volume always, an iSCSI IQN or an RBD
  image (shared monitor, same pool and image) unless every mount is read-only.
"""

from __future__ import annotations

from ..config import names
from ..framework.declaration import Declaration, reads
from ..framework.events import ActionType as A, NODE, PERSISTENT_VOLUME_CLAIM, POD, Register
from ..framework.interface import Plugin
from ..framework.status import Code, Status
from ..storage.objects import READ_WRITE_ONCE_POD, NotFound, access_modes, get_pvc

NAME = names.VolumeRestrictions
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

_RESTRICTED_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


class PreFilterState:
    """The pod's ReadWriteOncePod claims and how many scheduled pods use them."""

    __slots__ = ("rwop_claims", "conflicting_ref_count", "users")

    def __init__(self, rwop_claims: frozenset, conflicting_ref_count: int, users: dict):
        self.rwop_claims = rwop_claims
        self.conflicting_ref_count = conflicting_ref_count
        self.users = users  # claim name -> pods using it (for the explanation)

    def conflicting_refs_of(self, pod_info) -> int:
        n = 0
        for v in pod_info.spec.get("volumes") or ():
            pvc = v.get("persistentVolumeClaim")
            if pvc is not None and pvc.get("claimName", "") in self.rwop_claims:
                n += 1
        return n

    def update_with_pod(self, pod_info, multiplier: int) -> None:
        self.conflicting_ref_count += multiplier * self.conflicting_refs_of(pod_info)

    def clone(self) -> "PreFilterState":
        return PreFilterState(self.rwop_claims, self.conflicting_ref_count, self.users)


def needs_restrictions_check(volume: dict) -> bool:
    return any(volume.get(src) is not None for src in _RESTRICTED_SOURCES)


def is_volume_conflict(volume: dict, existing_pod: dict) -> bool:
    for ev in existing_pod["spec"].get("volumes") or ():
        disk, edisk = volume.get("gcePersistentDisk"), ev.get("gcePersistentDisk")
        if disk is not None and edisk is not None:
            if disk.get("pdName", "") == edisk.get("pdName", "") and not (disk.get("readOnly") and edisk.get("readOnly")):
                return True
        ebs, eebs = volume.get("awsElasticBlockStore"), ev.get("awsElasticBlockStore")
        if ebs is not None and eebs is not None:
            if ebs.get("volumeID", "") == eebs.get("volumeID", ""):
                return True
        iscsi, eiscsi = volume.get("iscsi"), ev.get("iscsi")
        if iscsi is not None and eiscsi is not None:
            if iscsi.get("iqn", "") == eiscsi.get("iqn", "") and not (iscsi.get("readOnly") and eiscsi.get("readOnly")):
                return True
        rbd, erbd = volume.get("rbd"), ev.get("rbd")
        if rbd is not None and erbd is not None:
            if (
                _have_overlap(rbd.get("monitors") or [], erbd.get("monitors") or [])
                and rbd.get("pool", "rbd") == erbd.get("pool", "rbd")
                and rbd.get("image", "") == erbd.get("image", "")
                and not (rbd.get("readOnly") and erbd.get("readOnly"))
            ):
                return True
    return False


def _have_overlap(a: list, b: list) -> bool:
    return bool(set(a) & set(b))


def _disk_id(volume: dict) -> dict:
    for src in _RESTRICTED_SOURCES:
        s = volume.get(src)
        if s is None:
            continue
        if src == "gcePersistentDisk":
            return {"type": src, "disk": s.get("pdName", "")}
        if src == "awsElasticBlockStore":
            return {"type": src, "disk": s.get("volumeID", "")}
        if src == "iscsi":
            return {"type": src, "disk": s.get("iqn", "")}
        return {"type": src, "disk": f"{s.get('pool', 'rbd')}/{s.get('image', '')}"}
    return {}


def _restricted_volumes(pod_info) -> list:
    return pod_info.cached(
        "VolumeRestrictionsVolumes",
        lambda pi: [v for v in pi.spec.get("volumes") or () if needs_restrictions_check(v)],
    )


class VolumeRestrictions(Plugin):
    name = NAME

    def pre_filter(self, state, pod_info, nodes):
        needs_check = bool(_restricted_volumes(pod_info))
        try:
            rwop = self._read_write_once_pod_claims(pod_info)
        except NotFound as exc:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc),
                                details={"claim": f"{pod_info.namespace}/{exc.name}", "missing": "PersistentVolumeClaim"})
        snapshot = self.handle.snapshot
        users = {}
        count = 0
        for claim in sorted(rwop):
            key = f"{pod_info.namespace}/{claim}"
            if snapshot.is_pvc_used_by_pods(key):
                # At most one pod can use a ReadWriteOncePod claim.
                count += 1
                users[claim] = _pods_using_claim(snapshot, pod_info.namespace, claim)
        if not needs_check and count == 0:
            return None, Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(frozenset(rwop), count, users))
        return None, None

    def _read_write_once_pod_claims(self, pod_info) -> set:
        cluster = self.handle.cluster
        claims = set()
        for v in pod_info.spec.get("volumes") or ():
            src = v.get("persistentVolumeClaim")
            if src is None:
                continue
            pvc = get_pvc(cluster, pod_info.namespace, src.get("claimName", ""))
            if READ_WRITE_ONCE_POD in access_modes(pvc):
                claims.add(pvc["metadata"]["name"])
        return claims

    def pre_filter_extensions(self):
        return self

    def add_pod(self, state, pod_info, pod_info_to_add, node_info):
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return _missing_state()
        s.update_with_pod(pod_info_to_add, 1)
        return None

    def remove_pod(self, state, pod_info, pod_info_to_remove, node_info):
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return _missing_state()
        s.update_with_pod(pod_info_to_remove, -1)
        return None

    def filter(self, state, pod_info, node_info):
        for v in _restricted_volumes(pod_info):
            for existing in node_info.pods:
                if is_volume_conflict(v, existing.pod):
                    return Status(Code.UNSCHEDULABLE, ERR_REASON_DISK_CONFLICT,
                                  details=dict(_disk_id(v), volume=v.get("name", ""), usedBy=existing.key))
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return _missing_state()
        if s.conflicting_ref_count > 0:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_RWOP_CONFLICT, details={
                "readWriteOncePodClaims": [
                    {"claim": f"{pod_info.namespace}/{c}", "usedBy": s.users.get(c, [])} for c in sorted(s.rwop_claims)
                ],
                "conflictingReferences": s.conflicting_ref_count,
            })
        return None


def _pods_using_claim(snapshot, namespace: str, claim: str) -> list[str]:
    key = f"{namespace}/{claim}"
    users = []
    for ni in snapshot.node_infos:
        if key not in ni.pvc_ref_counts:
            continue
        for pi in ni.pods:
            if pi.namespace == namespace and claim in pi.pvc_names:
                users.append(pi.key)
    return sorted(users)


def _missing_state() -> Status:
    # PreFilter did not run for this pod (an Error status, as upstream).
    return Status.as_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')


DECLARATION = Declaration(
    name=names.VolumeRestrictions,
    factory=VolumeRestrictions,
    points=frozenset({"preFilter", "filter"}),
    reads=(reads(PERSISTENT_VOLUME_CLAIM, pods=("volumes",), same_namespace=True),),
    events=(Register(POD, A.Delete), Register(NODE, A.Add), Register(PERSISTENT_VOLUME_CLAIM, A.Add)),
    details="volume-restrictions",
)
