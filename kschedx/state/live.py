"""A cluster state kept up to date by watch events (`explain --watch`).

The first state is exactly a one-shot read's: the cluster read and admitted
(state/cluster.py), its snapshot built by build_snapshot. From there each
event (sources/watch.py) changes only what it touches: a pod bound, deleted
or added changes its node's NodeInfo and the pod index, a node its place in
the node list, an object its kind's dict. What a re-read of the same cluster
would build is the rule for every order that can show in a result:

- pods in key order ("namespace/name", the API's list order) on each node
  and among the pending pods (NodeInfo.insert_pod / delete_pod);
- nodes in name order, in `cluster.nodes` (node-tree order) and the snapshot;
- each kind's dict in key order, namespaces listed first and the ones only
  used after them (synthesize_namespaces);
- image states counted across nodes (Snapshot.image_existence).

A pod bound to a node not (yet) there is kept aside, as build_snapshot
ignores it, and placed when its node comes. An object the API server served
but admission refuses is left out with one warning (a one-shot read would
stop there). `describe()` dumps what a result can depend on, for tests to
compare with a fresh build of the same objects.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field

from ..features import Features, default_features
from ..sources.fixtures import Origin
from ..sources.watch import ADDED, DELETED, MODIFIED, WatchEvent
from ..util.errors import InputError
from .cluster import ClusterState, admit_object, admit_pod, indexed_attribute, obj_key
from . import cache
from .snapshot import build_snapshot
from .types import PodInfo, SpecFacts, request_options, reset_signatures, signature_count, spec_facts_key

# Pods sharing PodInfo facts (SpecFacts) by spec: started again past this many.
FACTS_LIMIT = 50_000
# A pod bound to a missing node is warned about when that lasts this long:
# kinds come on separate streams, and a pod may come before its node.
ORPHAN_GRACE = 60.0
# Compaction of label signatures: when there are more than this many beyond
# twice those in use.
SIGNATURE_SLACK = 10_000

# Kinds whose objects name a namespace a pod may not: a namespace they use
# exists implicitly (synthesize_namespaces).
_NS_USERS = ("PersistentVolumeClaim", "ResourceClaim", "Service")


@dataclass(slots=True)
class Change:
    """What an event changed, as the watch's triggers read it.

    what: pending-added, pending-changed, pending-gone (deleted or finished
    while pending), bound (a pending pod got a node), arrived (a bound pod
    appeared), left (a bound pod went, or finished), pod-changed (a bound pod
    changed; detail "status" when nothing scheduling counts changed),
    node-added, node-removed (extra: the pods it held), node-changed
    (detail: labels, spec, status, metadata; old and obj: the node before
    and after), node-images (old and obj too),
    nomination (a pending pod's nominated node; old: the pod before), object
    (any other kind; detail: its key; extra: its namespace, and the watch
    event's type: ADDED, MODIFIED, DELETED)."""

    kind: str
    what: str
    node: str | None = None
    pod: dict | None = None
    old: dict | None = None
    detail: str = ""
    extra: dict | None = None
    obj: dict | None = None


@dataclass
class _Relist:
    seen: set = field(default_factory=set)


class LiveCluster:
    def __init__(self, cluster: ClusterState, *, source: str = "cluster", clock=time.monotonic,
                 features: Features | None = None):
        from ..sources.admission import Admission

        self.cluster = cluster
        # The version and gates every snapshot of the run is built for.
        self.features = features if features is not None else default_features()
        self.origin = Origin(source)
        self.clock = clock
        admission = cluster.admission
        if admission is None:
            admission = cluster.admission = Admission(cluster.priority_classes, cluster.runtime_classes,
                                                      share_specs=True)
        admission.go_live()
        self.admission = admission
        self.version = 0
        self.facts: dict = {}
        self.warned: set[str] = set()  # objects refused, said once each
        self.notices: list[str] = []  # warnings to say now (the consumer takes them)
        self._relists: dict[str, _Relist] = {}
        self.pods: dict[str, dict] = {}  # key -> every non-terminal pod (pending, bound, orphan)
        self.pending: dict[str, dict] = {}  # key -> pending pod
        self._pending_keys: list[str] = []  # sorted, parallel to snapshot.pending_pods
        self.orphans: dict[str, dict[str, dict]] = {}  # node name -> {key: pod bound to it}
        self._orphan_since: dict[str, float] = {}
        self.listed_namespaces: set[str] = {name for name, ns in cluster.namespaces.items()
                                             if ns["metadata"].get("uid")}
        self.ns_used: Counter = Counter()
        for pod in cluster.pods:
            key = _pod_key(pod)
            self.pods[key] = pod
            self.ns_used[pod["metadata"]["namespace"]] += 1
        for kind in _NS_USERS:
            for obj in getattr(cluster, indexed_attribute(kind)).values():
                self.ns_used[obj["metadata"].get("namespace", "default")] += 1
        self.snapshot = None
        self._build()

    # -- the snapshot -----------------------------------------------------------------
    def _build(self) -> None:
        """The snapshot of the current objects, as a read builds it."""
        cluster = self.cluster
        if not cluster.pods:
            cluster.pods = self.cluster_pods()
        cluster.facts_groups = cluster.facts_groups if self.snapshot is None else None
        self.snapshot = build_snapshot(cluster, self.features)
        snap = self.snapshot
        # A pod's dicts are the truth from here: the list would keep every
        # deleted pod alive for hours.
        by_node = snap.by_name
        self.pending = {}
        self.orphans = {}
        for pod in cluster.pods:
            name = pod["spec"].get("nodeName")
            key = _pod_key(pod)
            if not name:
                self.pending[key] = pod
            elif name not in by_node:
                self.orphans.setdefault(name, {})[key] = pod
                self._orphan_since.setdefault(name, self.clock())
        self._pending_keys = [_pod_key(p) for p in snap.pending_pods]
        if self._pending_keys != sorted(self._pending_keys):
            order = sorted(range(len(self._pending_keys)), key=self._pending_keys.__getitem__)
            snap.pending_pods[:] = [snap.pending_pods[i] for i in order]
            self._pending_keys.sort()
        snap.warnings = []  # said by warnings(), from the orphans
        self.signatures_in_use = len({pi.signature for pi in snap.pod_infos.values()}) + len(self.pending)
        cluster.pods = []
        cluster.facts_groups = None
        cluster.replaced_specs = []

    def cluster_pods(self) -> list[dict]:
        """Every pod in key order: the list a re-read gives."""
        return [self.pods[k] for k in sorted(self.pods)]

    def maybe_compact(self) -> bool:
        """Label signatures are made for every new label set (each Job, each
        rollout) and never freed: when most of them are no longer used, and
        when the parsed-term caches have filled, build the snapshot again from
        the current objects, forgetting them all. Between batches only."""
        if not self.should_compact():
            return False
        self.compact()
        return True

    def should_compact(self) -> bool:
        """Whether maybe_compact would build the snapshot again now (a caller
        holding what was derived from the old one lets it go first: the
        build freezes what is alive, reference cycles included)."""
        from . import podaffinity

        index = self.snapshot.pod_index
        in_use = len(index.sig_nodes) + len(self.pending) if index is not None else self.signatures_in_use
        sizes = podaffinity.cache_sizes()
        if (signature_count() <= 2 * in_use + SIGNATURE_SLACK
                and sizes["terms"] < podaffinity._TERM_CACHE_LIMIT
                and sizes["podTerms"] < podaffinity._TERM_CACHE_LIMIT):
            if sizes["nodeCounts"] > 2 * len(self.snapshot.node_infos) + 1_000:
                podaffinity.forget_node_counts()
            return False
        return True

    def compact(self) -> None:
        from ..storage import objects as storage_objects
        from . import podaffinity

        if self.snapshot is not None:
            self.snapshot.drop_columns()  # the one cycle in a snapshot: let it go
            self.snapshot = None
        self.facts.clear()
        reset_signatures()
        podaffinity.clear_caches()
        storage_objects.clear_caches()
        self._build()

    def _pod_info(self, pod: dict) -> PodInfo:
        key = spec_facts_key(pod)
        facts = self.facts.get(key) if key is not None else None
        pi = PodInfo(pod, facts, request_options(self.features))
        if facts is None and key is not None:
            if len(self.facts) >= FACTS_LIMIT:
                self.facts.clear()
            self.facts[key] = SpecFacts(pi)
        return pi

    # -- events -------------------------------------------------------------------------
    def apply(self, ev: WatchEvent) -> list[Change]:
        """One watch event's changes (none when nothing scheduling reads changed)."""
        if ev.type in (ADDED, MODIFIED, DELETED):
            changes = self._object(ev.kind, ev.type, ev.obj, ev.extra)
        elif ev.type == "RELIST_BEGIN":
            self._relists[ev.kind] = _Relist()
            return []
        elif ev.type == "RELIST_PAGE":
            changes = []
            relist = self._relists.setdefault(ev.kind, _Relist())
            for obj in ev.items or ():
                relist.seen.add(_key_of(ev.kind, obj))
                changes.extend(self._object(ev.kind, MODIFIED, obj, None))
        elif ev.type == "RELIST_END":
            changes = self._end_relist(ev.kind)
        else:
            return []
        if changes:
            self.version += 1
        return changes

    def _end_relist(self, kind: str) -> list[Change]:
        relist = self._relists.pop(kind, None)
        if relist is None:
            return []
        known = self._known_keys(kind)
        changes = []
        for key in [k for k in known if k not in relist.seen]:
            changes.extend(self._delete(kind, key))
        return changes

    def _known_keys(self, kind: str) -> list[str]:
        if kind == "Pod":
            return list(self.pods)
        if kind == "Node":
            return list(self.snapshot.by_name)
        if kind == "Namespace":
            return list(self.listed_namespaces)
        attr = indexed_attribute(kind)
        return list(getattr(self.cluster, attr)) if attr else []

    def _object(self, kind: str, type_: str, obj: dict, extra) -> list[Change]:
        if type_ == DELETED:
            return self._delete(kind, _key_of(kind, obj), obj, extra)
        try:
            if kind == "Pod":
                if not admit_pod(self.admission, obj, self.origin):
                    return self._delete(kind, _key_of(kind, obj), obj, extra)
            elif kind == "Node" or indexed_attribute(kind):
                admit_object(self.admission, obj, self.origin)
            else:
                return []
        except InputError as e:
            self._refused(obj, e)
            return []
        if kind == "Pod":
            return self._put_pod(obj, extra)
        if kind == "Node":
            return self._put_node(obj)
        return self._put_other(kind, obj)

    def _refused(self, obj: dict, e: InputError) -> None:
        text = f"left out an object the API server served: {e} (a conforming API server never stores such an object)"
        if text not in self.warned:
            if len(self.warned) >= 500:
                self.warned.clear()  # bounded: said long ago, may be said again
            self.warned.add(text)
            self.notices.append(text)

    def _delete(self, kind: str, key: str, obj: dict | None = None, extra=None) -> list[Change]:
        if kind == "Pod":
            return self._remove_pod(key, extra, finished=obj is not None and _terminal(obj))
        if kind == "Node":
            return self._remove_node(key)
        return self._remove_other(kind, key)

    # -- pods -----------------------------------------------------------------------------
    def _put_pod(self, pod: dict, extra) -> list[Change]:
        key = _pod_key(pod)
        old = self.pods.get(key)
        changes: list[Change] = []
        if old is not None and old["metadata"].get("uid") != pod["metadata"].get("uid"):
            changes.extend(self._remove_pod(key, None))  # deleted and made again under its name
            old = None
        if old is not None and same_object(old, pod):
            return []
        if old is None:
            self._count_namespace(pod["metadata"]["namespace"], 1)
        self.pods[key] = pod
        node = pod["spec"].get("nodeName") or None
        old_node = (old["spec"].get("nodeName") or None) if old is not None else None
        if old is None:
            if node:
                self._place(key, pod)
                changes.append(Change("Pod", "arrived", node=node, pod=pod, extra=extra))
            else:
                self._add_pending(key, pod)
                changes.append(Change("Pod", "pending-added", pod=pod))
            return changes
        if not old_node:
            if node:
                self._drop_pending(key)
                self._place(key, pod)
                changes.append(Change("Pod", "bound", node=node, pod=pod, old=old, extra=extra))
                return changes
            self._replace_pending(key, pod)
            changes.append(Change("Pod", "pending-changed", pod=pod, old=old, detail=_pod_diff(old, pod)))
            nominated = (pod.get("status") or {}).get("nominatedNodeName")
            if nominated and nominated != (old.get("status") or {}).get("nominatedNodeName"):
                changes.append(Change("Pod", "nomination", node=nominated, pod=pod, old=old))
            return changes
        removed = self._unplace(key, old)
        if node:
            pi = self._place(key, pod)
            detail = "status" if (node == old_node and removed is not None and pi is not None
                                  and _same_facts(removed, pi)) else ""
            changes.append(Change("Pod", "pod-changed", node=node, pod=pod, old=old, detail=detail,
                                  extra={"from": old_node}))
        else:  # a pod cannot leave its node; taken as gone and pending again
            self._add_pending(key, pod)
            changes.append(Change("Pod", "left", node=old_node, pod=old))
            changes.append(Change("Pod", "pending-added", pod=pod))
        return changes

    def _remove_pod(self, key: str, extra, finished: bool = False) -> list[Change]:
        old = self.pods.pop(key, None)
        if old is None:
            return []
        self._count_namespace(old["metadata"]["namespace"], -1)
        node = old["spec"].get("nodeName") or None
        detail = "finished" if finished else "deleted"
        if not node:
            self._drop_pending(key)
            return [Change("Pod", "pending-gone", pod=old, detail=detail, extra=extra)]
        self._unplace(key, old)
        return [Change("Pod", "left", node=node, pod=old, detail=detail, extra=extra)]

    def _place(self, key: str, pod: dict) -> PodInfo | None:
        """A bound pod onto its node, or aside until its node comes."""
        pi = self._pod_info(pod)
        if not cache.add_pod(self.snapshot, pi):
            name = pi.node_name
            self.orphans.setdefault(name, {})[key] = pod
            self._orphan_since.setdefault(name, self.clock())
            return None
        return pi

    def _unplace(self, key: str, pod: dict) -> PodInfo | None:
        uid = pod["metadata"]["uid"]
        snap = self.snapshot
        pi = snap.pod_infos.get(uid)
        if pi is not None:
            cache.remove_pod(snap, pi)
            return pi
        name = pod["spec"].get("nodeName")
        aside = self.orphans.get(name)
        if aside is not None:
            aside.pop(key, None)
            if not aside:
                del self.orphans[name]
                self._orphan_since.pop(name, None)
        return None

    def _add_pending(self, key: str, pod: dict) -> None:
        self.pending[key] = pod
        i = bisect_left(self._pending_keys, key)
        self._pending_keys.insert(i, key)
        self.snapshot.pending_pods.insert(i, pod)

    def _drop_pending(self, key: str) -> None:
        if self.pending.pop(key, None) is None:
            return
        i = bisect_left(self._pending_keys, key)
        del self._pending_keys[i]
        del self.snapshot.pending_pods[i]

    def _replace_pending(self, key: str, pod: dict) -> None:
        self.pending[key] = pod
        i = bisect_left(self._pending_keys, key)
        self.snapshot.pending_pods[i] = pod

    def pending_pod(self, key: str) -> dict | None:
        return self.pending.get(key)

    # -- nodes ------------------------------------------------------------------------------
    def _put_node(self, node: dict) -> list[Change]:
        name = node["metadata"]["name"]
        snap = self.snapshot
        nodes = self.cluster.nodes
        ni = snap.by_name.get(name)
        if ni is not None:
            if same_object(ni.node, node):
                return []
            old = ni.node
            changed = cache.update_node(snap, node)
            nodes[self._node_index(name)] = node
            if changed <= {"images"}:
                return [Change("Node", "node-images", node=name, old=old, obj=node)] if changed else []
            if changed <= {"metadata", "images"}:
                return []  # annotations and such: no plugin reads them of a node
            return [Change("Node", "node-changed", node=name, detail=",".join(sorted(changed - {"images"})), old=old,
                           obj=node)]
        nodes.insert(self._node_index(name), node)
        cache.add_node(snap, node)
        changes = [Change("Node", "node-added", node=name)]
        aside = self.orphans.pop(name, None)
        self._orphan_since.pop(name, None)
        for key in sorted(aside or ()):
            pod = aside[key]
            self._place(key, pod)
            changes.append(Change("Pod", "arrived", node=name, pod=pod))
        return changes

    def _node_index(self, name: str) -> int:
        return bisect_left(self.cluster.nodes, name, key=_node_name)

    def _remove_node(self, name: str) -> list[Change]:
        snap = self.snapshot
        if name not in snap.by_name:
            return []
        pis = cache.remove_node(snap, name)
        del self.cluster.nodes[self._node_index(name)]
        if pis:
            self.orphans[name] = {pi.key: pi.pod for pi in pis}
            self._orphan_since.setdefault(name, self.clock())
        # The pods that were there (they wait for the node), for what reads them.
        return [Change("Node", "node-removed", node=name, extra={"pods": [pi.pod for pi in pis or ()]})]

    # -- other kinds --------------------------------------------------------------------------
    def _put_other(self, kind: str, obj: dict) -> list[Change]:
        key = obj_key(obj)
        if kind == "Namespace":
            old = self.cluster.namespaces.get(key) if key in self.listed_namespaces else None
            if old is not None and same_object(old, obj):
                return []
            self.listed_namespaces.add(key)
            self.cluster.namespaces[key] = obj
            self._order_namespaces()
            return [Change(kind, "object", detail=key, extra={"type": MODIFIED if old is not None else ADDED})]
        store = getattr(self.cluster, indexed_attribute(kind))
        old = store.get(key)
        if old is not None and same_object(old, obj):
            return []
        store[key] = obj
        if old is None:
            _sort_in_place(store)
            if kind in _NS_USERS:
                self._count_namespace(obj["metadata"].get("namespace", "default"), 1)
        if kind == "PriorityClass":
            self.admission.classes_changed()
        return [Change(kind, "object", detail=key, extra={"namespace": obj["metadata"].get("namespace"),
                                                           "type": MODIFIED if old is not None else ADDED})]

    def _remove_other(self, kind: str, key: str) -> list[Change]:
        if kind == "Namespace":
            if key not in self.listed_namespaces:
                return []
            self.listed_namespaces.discard(key)
            self.cluster.namespaces.pop(key, None)
            self._order_namespaces()
            return [Change(kind, "object", detail=key, extra={"type": DELETED})]
        attr = indexed_attribute(kind)
        if attr is None:
            return []
        old = getattr(self.cluster, attr).pop(key, None)
        if old is None:
            return []
        if kind in _NS_USERS:
            self._count_namespace(old["metadata"].get("namespace", "default"), -1)
        if kind == "PriorityClass":
            self.admission.classes_changed()
        return [Change(kind, "object", detail=key, extra={"namespace": old["metadata"].get("namespace"),
                                                           "type": DELETED})]

    def _count_namespace(self, name: str, delta: int) -> None:
        before = self.ns_used[name] > 0
        self.ns_used[name] += delta
        if self.ns_used[name] <= 0:
            del self.ns_used[name]
        if before != (name in self.ns_used) and name not in self.listed_namespaces:
            self._order_namespaces()

    def _order_namespaces(self) -> None:
        """Listed namespaces in key order, then the ones only used (synthesized)."""
        from .cluster import synthesize_namespaces

        namespaces = self.cluster.namespaces
        listed = {k: namespaces[k] for k in sorted(self.listed_namespaces) if k in namespaces}
        namespaces.clear()
        namespaces.update(listed)
        synthesize_namespaces(self.cluster, set(self.ns_used))

    # -- what a read of this state would say ---------------------------------------------------
    def warnings(self, *, now: float | None = None, grace: float = ORPHAN_GRACE) -> list[str]:
        """The warnings a one-shot read of this state gives: pods bound to
        nodes that are not there (once that has lasted `grace`), and
        PodDisruptionBudgets without disruptionsAllowed."""
        now = self.clock() if now is None else now
        out = []
        for name in sorted(self.orphans):
            if now - self._orphan_since.get(name, now) >= grace:
                out.append(f"ignored {len(self.orphans[name])} pod(s) bound to node {name!r}, "
                           "which is not in the snapshot")
        for key, pdb in sorted(self.cluster.pod_disruption_budgets.items()):
            if "disruptionsAllowed" not in (pdb.get("status") or {}):
                out.append(f"PodDisruptionBudget {key} has no status.disruptionsAllowed: "
                           "preemption takes it as 0, as kube-scheduler would")
        return out

    def take_notices(self) -> list[str]:
        notices, self.notices = self.notices, []
        return notices

    def describe(self) -> dict:
        return describe(self.cluster, self.snapshot, pending=self.snapshot.pending_pods)


# -- helpers ------------------------------------------------------------------------------


def _pod_key(pod: dict) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


def _key_of(kind: str, obj: dict) -> str:
    meta = obj.get("metadata") or {}
    if kind == "Pod":
        return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))


def _node_name(node: dict) -> str:
    return node["metadata"]["name"]


def _terminal(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _sort_in_place(store: dict) -> None:
    items = sorted(store.items())
    store.clear()
    store.update(items)


def same_object(a: dict, b: dict) -> bool:
    """Equal but for metadata.resourceVersion (which nothing scheduling reads)."""
    if a.keys() != b.keys():
        return False
    for k, v in a.items():
        w = b[k]
        if k == "metadata" and isinstance(v, dict) and isinstance(w, dict):
            if v.keys() != w.keys():
                return False
            for m, x in v.items():
                if m != "resourceVersion" and x != w[m]:
                    return False
        elif k == "status" and a.get("kind") == "Pod" and isinstance(v, dict) and isinstance(w, dict):
            if v is not w and _without_ready(v) != _without_ready(w):
                return False
        elif v is not w and v != w:
            return False
    return True


def _without_ready(status: dict) -> dict:
    """A pod's status but its Ready condition: snapshots keep Ready for a
    drain's budgets; no scheduling plugin reads it, so a probe flapping is
    no change to explain again."""
    conditions = status.get("conditions")
    if not conditions:
        return status
    kept = [c for c in conditions if not (isinstance(c, dict) and c.get("type") == "Ready")]
    return {**status, "conditions": kept} if kept else {k: x for k, x in status.items() if k != "conditions"}


def _pod_diff(old: dict, new: dict) -> str:
    """What changed of a pending pod, in a few words."""
    parts = []
    if old["spec"] != new["spec"]:
        if old["spec"].get("schedulingGates") != new["spec"].get("schedulingGates"):
            parts.append("scheduling gates")
        else:
            parts.append("spec")
    om, nm = old["metadata"], new["metadata"]
    if om.get("labels") != nm.get("labels"):
        parts.append("labels")
    if (old.get("status") or {}) != (new.get("status") or {}):
        parts.append("status")
    return ", ".join(parts) or "metadata"


def _same_facts(a: PodInfo, b: PodInfo) -> bool:
    """Whether two PodInfos count the same on a node (a status-only update)."""
    return (a.resource == b.resource and a.non0_cpu == b.non0_cpu and a.non0_mem == b.non0_mem
            and a.host_ports == b.host_ports and a.pvc_names == b.pvc_names and a.labels == b.labels
            and a.priority == b.priority and a.has_affinity == b.has_affinity
            and a.signature == b.signature and a.pod["spec"] == b.pod["spec"])


def _no_rv(obj: dict) -> dict:
    """An object without metadata.resourceVersion, which a live state keeps
    from the last change that mattered (same_object)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "resourceVersion" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "resourceVersion"}}


def describe(cluster: ClusterState, snapshot, pending=None) -> dict:
    """What a result can depend on, in the order it can see it: for tests to
    compare a live state with a fresh build of the same objects."""
    from .node_columns import NodeColumns
    from .pod_index import index_of

    def res(r):
        return (r.milli_cpu, r.memory, r.ephemeral_storage, sorted(r.scalar.items()))

    nodes = []
    for ni in snapshot.node_infos:
        nodes.append({
            "name": ni.name,
            "node": _no_rv(ni.node),
            "pods": [p.key for p in ni.pods],
            "podDicts": [_no_rv(p.pod) for p in ni.pods],
            "affinity": [p.key for p in ni.pods_with_affinity],
            "antiAffinity": [p.key for p in ni.pods_with_required_anti_affinity],
            "requested": res(ni.requested),
            "nonZero": res(ni.non_zero_requested),
            "allocatable": res(ni.allocatable),
            "ports": sorted((ip, sorted(s)) for ip, s in ni.used_ports.ports.items()),
            "pvcs": sorted(ni.pvc_ref_counts.items()),
            "images": [(k, v.size, v.num_nodes) for k, v in ni.image_states.items()],
        })
    from .types import SIGNATURE_INFO

    idx = index_of(snapshot)
    index = {"signatures": sorted((repr(SIGNATURE_INFO[sig]), sorted(nodes_.items()))
                                  for sig, nodes_ in idx.sig_nodes.items()),
             "terms": sorted(sorted(n.items()) for _, n in idx.terms_nodes.values())} if idx is not None else None
    columns = NodeColumns(snapshot.node_infos) if snapshot.node_columns is None else snapshot.node_columns
    col_rows = [[getattr(columns, c)[ni.row] for c in ("alloc_cpu", "alloc_mem", "req_cpu", "req_mem", "nz_cpu",
                                                        "nz_mem", "num_pods")] for ni in snapshot.node_infos]
    fresh = NodeColumns.__new__(NodeColumns)
    for name in ("alloc_cpu", "alloc_mem", "alloc_eph", "allowed_pods", "req_cpu", "req_mem", "req_eph",
                 "nz_cpu", "nz_mem", "num_pods"):
        setattr(fresh, name, [0] * len(snapshot.node_infos))
    expected_rows = []
    for r, ni in enumerate(snapshot.node_infos):
        fresh._fill(ni, r)
        expected_rows.append([getattr(fresh, c)[r] for c in ("alloc_cpu", "alloc_mem", "req_cpu", "req_mem",
                                                              "nz_cpu", "nz_mem", "num_pods")])
    kinds = {}
    from .cluster import _INDEXED_KINDS

    for kind, attr in _INDEXED_KINDS.items():
        kinds[kind] = [(k, _no_rv(v)) for k, v in getattr(cluster, attr).items()]
    return {
        "nodeOrder": [n["metadata"]["name"] for n in cluster.nodes],
        "nodes": nodes,
        "pending": [_pod_key(p) for p in (snapshot.pending_pods if pending is None else pending)],
        "pendingDicts": [_no_rv(p) for p in (snapshot.pending_pods if pending is None else pending)],
        "podInfos": sorted(snapshot.pod_infos),
        "assigned": sorted(snapshot.assigned_pod_node.items()),
        "index": index,
        "columnsMatch": col_rows == expected_rows,
        "kinds": kinds,
        "unreadable": dict(cluster.unreadable_kinds),
    }
