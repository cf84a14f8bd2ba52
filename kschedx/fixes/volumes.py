"""What the volume fixes share: the pod's claims, classes, and the binding
the PersistentVolume controller makes (a fix lists it with `by:
persistentvolume-controller`, so that a replay makes it too)."""

from __future__ import annotations

import copy

from ..storage.objects import ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, IMMEDIATE
from ..storage.objects import NOT_SUPPORTED_PROVISIONER as NO_PROVISIONER
from ..storage.objects import binding_mode
from .jsonpatch import apply_patch

PV_CONTROLLER = "persistentvolume-controller"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"


def claim_names(pod_info) -> list[str]:
    """The PersistentVolumeClaims the pod's volumes name (not ephemeral ones)."""
    out = []
    for v in pod_info.spec.get("volumes") or ():
        src = v.get("persistentVolumeClaim")
        if src is not None and src.get("claimName") and src["claimName"] not in out:
            out.append(src["claimName"])
    return out


def provisioner(sc: dict | None) -> str:
    return (sc or {}).get("provisioner") or ""


def provisions(sc: dict | None) -> bool:
    """A class whose provisioner creates volumes (not kubernetes.io/no-provisioner)."""
    return bool(provisioner(sc)) and provisioner(sc) != NO_PROVISIONER


def immediate(cluster, class_name: str) -> bool:
    """Whether claims of the class bind at once (no class, or a missing one,
    binds as Immediate)."""
    sc = cluster.storage_classes.get(class_name) if class_name else None
    return sc is None or binding_mode(sc) == IMMEDIATE


def default_class(cluster) -> dict | None:
    """DefaultStorageClass admission: the newest default class."""
    defaults = [sc for sc in cluster.storage_classes.values()
                if ((sc.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true"]
    if not defaults:
        return None
    defaults.sort(key=lambda sc: sc["metadata"]["name"])
    defaults.sort(key=lambda sc: sc["metadata"].get("creationTimestamp") or "", reverse=True)
    return defaults[0]


def pvc_target(pvc: dict) -> dict:
    meta = pvc["metadata"]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": meta.get("namespace"),
            "name": meta["name"]}


def pv_target(pv: dict) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "namespace": None, "name": pv["metadata"]["name"]}


def bind(pvc: dict, pv: dict) -> tuple[list[dict], list[tuple]]:
    """The PV controller binding the claim to the volume: (changes `by` it,
    the bound objects as (kind, key, object))."""
    meta = pvc["metadata"]
    ann = dict(meta.get("annotations") or {})
    ann.update({ANN_BIND_COMPLETED: "yes", ANN_BOUND_BY_CONTROLLER: "yes"})
    size = (pv.get("spec") or {}).get("capacity") or {}
    pvc_ops = [{"op": "add", "path": "/spec/volumeName", "value": pv["metadata"]["name"]},
               {"op": "add", "path": "/metadata/annotations", "value": ann},
               {"op": "add", "path": "/status", "value": {"phase": "Bound",
                                                          "accessModes": list((pvc.get("spec") or {}).get(
                                                              "accessModes") or []),
                                                          "capacity": dict(size)}}]
    ref = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": meta.get("namespace"),
           "name": meta["name"]}
    if meta.get("uid"):
        ref["uid"] = meta["uid"]
    pv_ops = [{"op": "add", "path": "/spec/claimRef", "value": ref},
              {"op": "add", "path": "/status", "value": {"phase": "Bound"}}]
    changes = [{"action": "patch", "target": pvc_target(pvc), "patch": pvc_ops, "by": PV_CONTROLLER},
               {"action": "patch", "target": pv_target(pv), "patch": pv_ops, "by": PV_CONTROLLER}]
    bound_pvc = apply_patch(pvc, pvc_ops)
    bound_pv = apply_patch(pv, pv_ops)
    return changes, [("PersistentVolumeClaim", f"{meta.get('namespace')}/{meta['name']}", bound_pvc),
                     ("PersistentVolume", pv["metadata"]["name"], bound_pv)]


def create_change(obj: dict) -> dict:
    meta = obj["metadata"]
    return {"action": "create",
            "target": {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "namespace": meta.get("namespace"),
                       "name": meta["name"]},
            "patch": [{"op": "add", "path": "", "value": copy.deepcopy(obj)}]}


def available(pv: dict, namespace: str, name: str) -> bool:
    """A PV no other claim holds (no claimRef, or one naming this claim)."""
    ref = (pv.get("spec") or {}).get("claimRef")
    phase = (pv.get("status") or {}).get("phase")
    if ref:
        return ref.get("namespace") == namespace and ref.get("name") == name and phase != "Released"
    return phase in (None, "Available", "Pending")


def unique_name(store: dict, base: str) -> str:
    name, n = base, 2
    while name in store:
        name, n = f"{base}-{n}", n + 1
    return name

