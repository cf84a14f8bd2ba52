"""use-storage-class: an Immediate claim of the pod waits for its class's
provisioner, which would pick the volume's topology without the pod; the
same claim with a WaitForFirstConsumer class of the same provisioner is
provisioned where the pod goes. A claim's class cannot change in place:
the description says to recreate it (it is unbound: no data is lost)."""

from __future__ import annotations

from ..config import names
from ..plugins.volumebinding.volume_binding import ERR_UNBOUND_IMMEDIATE
from ..storage.objects import BETA_STORAGE_CLASS_ANNOTATION, WAIT_FOR_FIRST_CONSUMER, binding_mode, claim_class
from .volumes import provisioner, provisions, pvc_target

KIND = "use-storage-class"
ORDER = 12
PLUGIN = names.VolumeBinding


def find(search) -> list:
    from .search import POD, Candidate

    st = search.blockers.pre_filter.get(PLUGIN) or {}
    if ERR_UNBOUND_IMMEDIATE not in st.get("reasons", ()):
        return []
    cluster = search.cluster
    changes, objects, words = [], [], []
    for note in (st.get("details") or {}).get("claims") or ():
        if note.get("persistentVolume"):
            return []  # pre-bound: the PV controller finishes it
        pvc = cluster.persistent_volume_claims.get(note["claim"])
        if pvc is None or BETA_STORAGE_CLASS_ANNOTATION in ((pvc.get("metadata") or {}).get("annotations") or {}):
            return []
        cls = claim_class(pvc)
        sc = cluster.storage_classes.get(cls) if cls else None
        if not provisions(sc):
            return []  # no provisioner to wait for: create-pv's business
        same = sorted(o["metadata"]["name"] for o in cluster.storage_classes.values()
                      if provisioner(o) == provisioner(sc) and binding_mode(o) == WAIT_FOR_FIRST_CONSUMER)
        if not same:
            return []
        ops = [{"op": "replace", "path": "/spec/storageClassName", "value": same[0]}]
        changes.append({"action": "patch", "target": pvc_target(pvc), "patch": ops})
        patched = dict(pvc, spec=dict(pvc.get("spec") or {}, storageClassName=same[0]))
        objects.append(("PersistentVolumeClaim", note["claim"], patched))
        words.append(f"recreate claim {note['claim']} with StorageClass {same[0]} (WaitForFirstConsumer, the same "
                     f"provisioner {provisioner(sc)}, instead of {cls}: a claim's class cannot change in place)")
    if not changes:
        return []
    fix = search.check(Candidate(KIND, POD, "; ".join(words), changes=changes, objects=objects, order=ORDER))
    return [fix] if fix is not None else []
