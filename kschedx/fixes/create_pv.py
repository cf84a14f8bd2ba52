"""create-pv: a PersistentVolume for a claim of the pod that nothing else
would back, shaped like one the cluster has ("like", as add-node copies a
node): its volume source, node affinity and labels, sized for the claim.

- An Immediate claim without a class, of a class that does not exist, or
  of a kubernetes.io/no-provisioner class: a PV pre-bound to the claim
  (then the PV controller's binding, listed `by` it);
- a WaitForFirstConsumer claim of a no-provisioner class that no PV fits:
  a PV reachable from a node the pod otherwise fits (one candidate per
  distinct node affinity among the class's PVs).

Never for a claim whose class has a provisioner (it would create the
volume: see fixAdvice), a bound claim, or a class without a PV to copy
(kschedx invents no volume source: fixSearch.uncovered says so). The
volume itself must exist: the description says so."""

from __future__ import annotations

import copy

from ..config import names
from ..plugins.volumebinding.volume_binding import ERR_UNBOUND_IMMEDIATE
from ..storage.objects import WAIT_FOR_FIRST_CONSUMER, binding_mode, claim_class, is_fully_bound, volume_class
from .volumes import PV_CONTROLLER, bind, claim_names, create_change, provisions, pv_target, unique_name

KIND = "create-pv"
ORDER = 3
PLUGIN = names.VolumeBinding
ERR_NO_PV = "node(s) didn't find available persistent volumes to bind"


def _source(pv: dict) -> str:
    spec = pv.get("spec") or {}
    for key in ("local", "hostPath", "csi", "nfs", "iscsi", "fc", "awsElasticBlockStore", "gcePersistentDisk",
                "azureDisk", "cephfs", "rbd"):
        if key in spec:
            where = (spec[key].get("path") or spec[key].get("driver") or "") if isinstance(spec[key], dict) else ""
            return f"{key}{' ' + where if where else ''}"
    return "its volume source"


def _nodes_of(pv: dict) -> str:
    terms = (((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms") or []
    values = [v for t in terms for e in t.get("matchExpressions") or () for v in e.get("values") or ()]
    return f", node {', '.join(values)}" if values else ""


def new_pv(store: dict, like: dict, pvc: dict, *, pre_bound: bool) -> dict:
    """A copy of `like` for the claim: its size, access modes, class and
    volume mode; pre-bound (claimRef) when the claim binds at once."""
    pv = copy.deepcopy(like)
    name = unique_name(store, f"{like['metadata']['name']}-copy")
    meta = {"name": name}
    if (like.get("metadata") or {}).get("labels"):
        meta["labels"] = dict(like["metadata"]["labels"])
    pv["metadata"] = meta
    spec = pv.setdefault("spec", {})
    cspec = pvc.get("spec") or {}
    spec["capacity"] = {"storage": (cspec.get("resources") or {}).get("requests", {}).get("storage", "1Gi")}
    spec["accessModes"] = list(cspec.get("accessModes") or spec.get("accessModes") or ["ReadWriteOnce"])
    cls = claim_class(pvc)
    if cls:
        spec["storageClassName"] = cls
    else:
        spec.pop("storageClassName", None)
    if cspec.get("volumeMode"):
        spec["volumeMode"] = cspec["volumeMode"]
    else:
        spec.pop("volumeMode", None)
    spec.pop("claimRef", None)
    if pre_bound:
        spec["claimRef"] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                            "namespace": pvc["metadata"]["namespace"], "name": pvc["metadata"]["name"]}
    if isinstance((like.get("metadata") or {}).get("annotations"), dict):
        ann = {k: v for k, v in like["metadata"]["annotations"].items() if not k.startswith("pv.kubernetes.io/")}
        if ann:
            meta["annotations"] = ann
    pv.pop("status", None)
    pv["apiVersion"] = "v1"
    pv["kind"] = "PersistentVolume"
    return pv


def _like(cluster, cls: str, pvc: dict) -> list[dict]:
    """The class's PVs to copy: those whose source and affinity a new one
    can share (any claim's), one per distinct node affinity, by name."""
    seen = set()
    out = []
    for name in sorted(cluster.persistent_volumes):
        pv = cluster.persistent_volumes[name]
        if volume_class(pv) != cls:
            continue
        key = repr((pv.get("spec") or {}).get("nodeAffinity"))
        if key in seen:
            continue
        seen.add(key)
        out.append(pv)
    return out


def _unbound(search) -> list[dict]:
    ns = search.pod_info.namespace
    out = []
    for name in claim_names(search.pod_info):
        pvc = search.cluster.persistent_volume_claims.get(f"{ns}/{name}")
        if pvc is not None and not is_fully_bound(pvc) and not (pvc.get("spec") or {}).get("volumeName"):
            out.append(pvc)
    return out


def _immediate_candidate(search):
    """The Immediate claims' PVs, pre-bound, with the PV controller's binding."""
    from .search import CLUSTER, Candidate
    from .verify import Refused

    cluster = search.cluster
    changes, objects, words = [], [], []
    store = dict(cluster.persistent_volumes)
    for pvc in _unbound(search):
        cls = claim_class(pvc)
        sc = cluster.storage_classes.get(cls) if cls else None
        key = f"{pvc['metadata']['namespace']}/{pvc['metadata']['name']}"
        if sc is not None and binding_mode(sc) == WAIT_FOR_FIRST_CONSUMER:
            continue
        if provisions(sc):
            search.add_uncovered(PLUGIN, f"claim {key} waits for its StorageClass {cls}'s provisioner "
                                         f"{sc.get('provisioner')} (Immediate binding): kschedx does not write the "
                                         "PersistentVolume a provisioner would")
            return None
        like = _like(cluster, cls, pvc)
        if not like:
            search.add_uncovered(PLUGIN, f"claim {key}: no PersistentVolume of "
                                         f"{'StorageClass ' + cls if cls else 'no StorageClass'} to copy "
                                         "(kschedx does not invent a volume source)")
            return None
        pv = new_pv(store, like[0], pvc, pre_bound=True)
        store[pv["metadata"]["name"]] = pv
        try:
            stored = search.verifier.admitted(pv)
        except Refused:
            return None
        changes.append(create_change(pv))
        bound_changes, bound_objects = bind(pvc, stored)
        changes += bound_changes
        objects += bound_objects
        words.append(f"a PersistentVolume like {like[0]['metadata']['name']} ({_source(like[0])}"
                     f"{_nodes_of(like[0])}) with {pv['spec']['capacity']['storage']} for claim {key}")
    if not changes:
        return None
    change = "create " + "; ".join(words) + ": the volume itself must exist (point its source at one of that size)"
    return Candidate(KIND, CLUSTER, change, changes=changes, objects=objects, order=ORDER)


def _node_candidates(search, node: str | None):
    """WaitForFirstConsumer claims of no-provisioner classes: a PV like the
    class's, reachable from `node` (any node: the ones otherwise open first)."""
    from ..storage.objects import VolumeNodeAffinity
    from .search import CLUSTER, Candidate
    from .verify import Refused

    cluster = search.cluster
    out = []
    for pvc in _unbound(search):
        cls = claim_class(pvc)
        sc = cluster.storage_classes.get(cls) if cls else None
        if sc is None or binding_mode(sc) != WAIT_FOR_FIRST_CONSUMER or provisions(sc):
            continue
        key = f"{pvc['metadata']['namespace']}/{pvc['metadata']['name']}"
        like = _like(cluster, cls, pvc)
        if not like:
            search.add_uncovered(PLUGIN, f"claim {key}: no PersistentVolume of StorageClass {cls} to copy "
                                         "(kschedx does not invent a volume source)")
            continue
        nodes = [node] if node is not None else search.blockers.only(PLUGIN)
        for pv in like:
            affinity = VolumeNodeAffinity(pv)
            opens = [n for n in nodes if affinity.matches(search.snapshot.get(n).labels)]
            if not opens:
                continue
            made = new_pv(cluster.persistent_volumes, pv, pvc, pre_bound=False)
            try:
                stored = search.verifier.admitted(dict(made, status={"phase": "Available"}))
            except Refused:
                continue
            words = (f"create a PersistentVolume like {pv['metadata']['name']} ({_source(pv)}{_nodes_of(pv)}) with "
                     f"{made['spec']['capacity']['storage']} for claim {key}: the volume itself must exist "
                     "(point its source at one of that size)")
            available = {"action": "patch", "target": pv_target(made), "by": PV_CONTROLLER,
                         "patch": [{"op": "add", "path": "/status", "value": {"phase": "Available"}}]}
            out.append(Candidate(KIND, CLUSTER, words, changes=[create_change(made), available],
                                 objects=[("PersistentVolume", made["metadata"]["name"], stored)], order=ORDER,
                                 magnitude=len(out) + 1))
        break  # one claim at a time: its PV is what the nodes lack first
    return out


def find(search) -> list:
    from .search import MAX_CANDIDATES

    fixes = []
    st = search.blockers.pre_filter.get(PLUGIN) or {}
    if ERR_UNBOUND_IMMEDIATE in st.get("reasons", ()):
        cand = _immediate_candidate(search)
        if cand is not None:
            fix = search.check(cand)
            if fix is not None:
                fixes.append(fix)
        return fixes
    if not any(ERR_NO_PV in search.blockers.reasons(n, PLUGIN) for n in search.blockers.only(PLUGIN)):
        return fixes
    for cand in _node_candidates(search, None)[:MAX_CANDIDATES]:
        fix = search.check(cand)
        if fix is not None:
            fixes.append(fix)
            break
    return fixes


def parts(ctx, node: str):
    from .parts import Part

    if ERR_NO_PV not in ctx.blockers.reasons(node, PLUGIN):
        return []
    out = []
    for cand in _node_candidates(ctx.search, node)[:1]:
        out.append(Part(KIND, PLUGIN, cand.side, cand.change, objects=cand.objects, changes=cand.changes))
    return out
