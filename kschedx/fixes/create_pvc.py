"""create-pvc: the pod names a PersistentVolumeClaim that does not exist;
create it, in one of the ways the cluster could back it:

1. bound to an Available PersistentVolume (its class, access mode, size
   and volume mode; smallest first; the PV controller's binding listed
   when the class binds at once, as a class name with no StorageClass
   object does);
2. of the default StorageClass, when it binds for the first consumer;
3. of another class that provisions for the first consumer.

Sizes of 2 and 3 are 1Gi (the description says to set the size the app
needs); a claim of an Immediate class with a provisioner is never proposed
(the provisioner's volume, not the claim, would decide the node). Nothing
backs the claim: fixSearch.uncovered says so."""

from __future__ import annotations

from ..config import names
from ..storage.objects import WAIT_FOR_FIRST_CONSUMER, binding_mode, storage_capacity, volume_class
from .volumes import available, bind, create_change, default_class, immediate, provisions

KIND = "create-pvc"
ORDER = 11
SIZE = "1Gi"


def _missing(search) -> list[tuple[str, str]]:
    """(namespace, name) of the claims the pod names that do not exist."""
    out = []
    for plugin in (names.VolumeRestrictions, names.VolumeBinding):
        st = search.blockers.pre_filter.get(plugin) or {}
        details = st.get("details") or {}
        if details.get("missing") == "PersistentVolumeClaim" and "volume" not in details:
            ns, _, name = details["claim"].partition("/")
            if (ns, name) not in out:
                out.append((ns, name))
    return out


def _claim(ns: str, name: str, cls: str, modes: list, size: str, mode: str | None = None) -> dict:
    spec = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}, "storageClassName": cls}
    if mode:
        spec["volumeMode"] = mode
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": ns},
            "spec": spec}


def _class_words(cluster, cls: str) -> str:
    if not cls:
        return "no StorageClass"
    if cls not in cluster.storage_classes:
        return f"StorageClass {cls}, which does not exist: bound at once"
    return f"StorageClass {cls}"


def _ways(search, ns: str, name: str):
    """(words, claim, bind with this PV or None), best first."""
    cluster = search.cluster
    pvs = sorted((pv for pv in cluster.persistent_volumes.values() if available(pv, ns, name)),
                 key=lambda pv: (storage_capacity(pv).milli_value(), pv["metadata"]["name"]))
    for pv in pvs:
        # A class name with no StorageClass object still binds: the PV
        # controller matches PVs by the name alone, and a missing class binds
        # as Immediate (never waits for a consumer).
        cls = volume_class(pv)
        modes = (pv.get("spec") or {}).get("accessModes") or ["ReadWriteOnce"]
        mode = "ReadWriteOnce" if "ReadWriteOnce" in modes else modes[0]
        size = ((pv.get("spec") or {}).get("capacity") or {}).get("storage")
        if not size:
            continue
        pvc = _claim(ns, name, cls, [mode], size, (pv.get("spec") or {}).get("volumeMode"))
        words = (f"create PersistentVolumeClaim {ns}/{name} for PersistentVolume {pv['metadata']['name']} "
                 f"({size}, {mode}, {_class_words(cluster, cls)})")
        yield words, pvc, (pv if immediate(cluster, cls) else None)
    wffc = []
    default = default_class(cluster)
    if default is not None:
        wffc.append(default)
    wffc += sorted((sc for sc in cluster.storage_classes.values() if sc is not default),
                   key=lambda sc: sc["metadata"]["name"])
    for sc in wffc:
        if binding_mode(sc) != WAIT_FOR_FIRST_CONSUMER or not provisions(sc):
            continue
        cls = sc["metadata"]["name"]
        pvc = _claim(ns, name, cls, ["ReadWriteOnce"], SIZE)
        which = "the default StorageClass" if sc is default else "StorageClass"
        yield (f"create PersistentVolumeClaim {ns}/{name} of {which} {cls} ({SIZE}: set the size the app needs; "
               f"{sc.get('provisioner')} provisions it for the node the pod goes to)"), pvc, None


def find(search) -> list:
    from .search import MAX_CANDIDATES, POD, Candidate
    from .verify import Refused

    missing = _missing(search)
    if not missing:
        return []
    if len(missing) > 1:
        search.add_uncovered(names.VolumeRestrictions, "more than one claim the pod names does not exist")
        return []
    ns, name = missing[0]
    fixes = []
    tried = 0
    for words, pvc, pv in _ways(search, ns, name):
        if tried >= MAX_CANDIDATES or search.done():
            break
        try:
            stored = search.verifier.admitted(pvc)
        except Refused:
            continue
        objects = [("PersistentVolumeClaim", f"{ns}/{name}", stored)]
        changes = [create_change(pvc)]
        if pv is not None:
            changes += bind(pvc, pv)[0]
            objects = bind(stored, pv)[1]
        tried += 1
        fix = search.check(Candidate(KIND, POD, words, changes=changes, objects=objects, order=ORDER,
                                     magnitude=tried))
        if fix is not None:
            fixes.append(fix)
    if not tried:
        search.add_uncovered(names.VolumeRestrictions, f"no StorageClass or PersistentVolume could back claim {ns}/{name}"
                                                   " (kschedx does not invent a volume source)")
    return fixes
