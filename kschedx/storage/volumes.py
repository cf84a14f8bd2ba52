"""A pod's volumes, classified once per pod.

Generic ephemeral volumes are backed by a PVC the ephemeral volume
controller creates, named `<pod>-<volume>` and owned by the pod
(component-helpers/storage/ephemeral).
"""

from __future__ import annotations

from .objects import controller_uid, meta

PVC = "persistentVolumeClaim"
EPHEMERAL = "ephemeral"
INLINE = "inline"


class PodVolume:
    __slots__ = ("name", "source", "kind", "claim_name")

    def __init__(self, vol: dict, pod_name: str):
        self.name = vol.get("name") or ""
        self.source = vol
        if vol.get(PVC) is not None:
            self.kind = PVC
            self.claim_name = (vol[PVC] or {}).get("claimName") or ""
        elif vol.get(EPHEMERAL) is not None:
            self.kind = EPHEMERAL
            self.claim_name = f"{pod_name}-{self.name}"
        else:
            self.kind = INLINE
            self.claim_name = ""

    def __repr__(self):
        return f"PodVolume({self.name}, {self.kind}, {self.claim_name})"


def pod_volumes(pod_info) -> list[PodVolume]:
    return pod_info.cached("PodVolumes", _classify)


def _classify(pi) -> list[PodVolume]:
    return [PodVolume(v, pi.name) for v in pi.spec.get("volumes") or ()]


def ephemeral_owner_error(pod_info, pvc: dict) -> str | None:
    """ephemeral.VolumeIsForPod: the claim must be controlled by this pod."""
    m = meta(pvc)
    if m.get("namespace") != pod_info.namespace or controller_uid(pvc) != pod_info.uid:
        return (f"PVC {m.get('namespace', '')}/{m.get('name', '')} was not created for pod "
                f"{pod_info.namespace}/{pod_info.name} (pod is not owner)")
    return None
