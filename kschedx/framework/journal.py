"""Changes a run makes to its cluster and snapshot between scheduling cycles
(a node cordoned, a node added with its ResourceSlices, a pod terminating,
gone or assumed), each as kube-scheduler's cache would see it, and undone
exactly, in reverse, by rollback(): the node lists in their former order,
the aggregates and indexes, the stores and what plugins derive from them.

Used by what-if runs (a drain, nodes from templates) and by checks that
try a node for one cycle (`explain --fix`, a template's probe).
"""

from __future__ import annotations

from ..state import cache
from ..state.dra import DRA_KINDS, objects_replaced as dra_objects_replaced
from ..state.types import PodInfo

_ABSENT = object()


class Journal:
    """The changes made through it to one snapshot (and its cluster)."""

    def __init__(self, snapshot, frameworks=()):
        self.snapshot = snapshot
        self.cluster = snapshot.cluster
        self.frameworks = list(frameworks)
        self._undo: list = []

    def on_rollback(self, undo) -> None:
        """Something else to undo, in its turn."""
        self._undo.append(undo)

    def mark(self) -> int:
        return len(self._undo)

    def rollback(self, mark: int = 0) -> None:
        """Undo every change made since `mark`, the last first."""
        while len(self._undo) > mark:
            self._undo.pop()()

    # -- nodes ----------------------------------------------------------------------------
    def add_node(self, node: dict):
        """A new node, without pods: in the cluster's nodes (last: the node
        tree adds it at the end of its zone) and the snapshot (name order)."""
        snap = self.snapshot
        self.cluster.nodes.append(node)
        ni = cache.add_node(snap, node)

        def undo():
            for pi in list(ni.pods):
                cache.forget_pod(snap, pi)
            cache.remove_node(snap, ni.name)
            self.cluster.nodes.remove(node)

        self._undo.append(undo)
        return ni

    def update_node(self, node: dict) -> None:
        """The node of that name becomes `node` (a cordon)."""
        snap = self.snapshot
        name = node["metadata"]["name"]
        old = snap.by_name[name].node
        cache.update_node(snap, node)
        nodes = self.cluster.nodes
        at = next((i for i, n in enumerate(nodes) if n is old), None)
        if at is not None:
            nodes[at] = node

        def undo():
            cache.update_node(snap, old)
            if at is not None:
                nodes[at] = old

        self._undo.append(undo)

    # -- pods -------------------------------------------------------------------------------
    def _keep_order(self, node: str):
        """What puts the node's pod lists back in their order after the
        aggregates were undone."""
        ni = self.snapshot.by_name[node]
        saved = (list(ni.pods), list(ni.pods_with_affinity), list(ni.pods_with_required_anti_affinity))

        def restore():
            current = self.snapshot.by_name.get(node)
            if current is not None:
                current.pods[:], current.pods_with_affinity[:], current.pods_with_required_anti_affinity[:] = \
                    saved[0], saved[1], saved[2]

        return restore

    def assume_pod(self, pi: PodInfo, node: str) -> PodInfo:
        """The pod on the node (AssumePod); returns the PodInfo stored."""
        snap = self.snapshot
        restore = self._keep_order(node)
        cache.assume_pod(snap, pi, node)
        stored = snap.pod_infos[pi.uid]

        def undo():
            cache.forget_pod(snap, stored)
            restore()

        self._undo.append(undo)
        return stored

    def remove_pod(self, pi: PodInfo) -> None:
        """The pod gone from its node (RemovePod)."""
        snap = self.snapshot
        node = snap.assigned_pod_node.get(pi.uid)
        if node is None:
            return
        stored = snap.pod_infos[pi.uid]
        restore = self._keep_order(node)
        cache.forget_pod(snap, stored)

        def undo():
            cache.assume_pod(snap, stored, node)
            restore()

        self._undo.append(undo)

    def update_pod(self, pi: PodInfo, pod: dict) -> PodInfo:
        """The bound pod's object becomes `pod` (a deletionTimestamp set):
        the cache's UpdatePod, a RemovePod then an AddPod of the new object."""
        node = self.snapshot.assigned_pod_node[pi.uid]
        self.remove_pod(pi)
        return self.assume_pod(self.snapshot.pod_info(pod), node)

    # -- other objects ------------------------------------------------------------------------
    def put_objects(self, changes) -> None:
        """(kind, key, object or None = deleted) in the cluster's stores
        (ResourceSlice, ResourceClaim, PodDisruptionBudget...); plugins
        caching what they derive from those kinds start afresh."""
        cluster = self.cluster
        saved = []
        kinds = set()
        for kind, key, obj in changes:
            store = cluster.store(kind)
            old = store.get(key, _ABSENT)
            saved.append((store, key, old))
            if obj is None:
                store.pop(key, None)
            else:
                store[key] = obj
            kinds.add(kind)
        restores = []
        frozen = frozenset(kinds)
        if frozen & DRA_KINDS:
            restores.append(dra_objects_replaced(self.snapshot))
        for fw in self.frameworks:
            for plugin in fw.profile.plugins:
                hook = getattr(plugin, "cluster_objects_changed", None)
                restore = hook(frozen) if hook is not None else None
                if restore is not None:
                    restores.append(restore)

        def undo():
            for restore in reversed(restores):
                restore()
            for store, key, old in reversed(saved):
                if old is _ABSENT:
                    store.pop(key, None)
                else:
                    store[key] = old

        self._undo.append(undo)

    # -- a node from a template ------------------------------------------------------------------
    def join_node(self, made, run_pod, free=lambda namespace, name: True) -> list[dict]:
        """A node made from a template (sources/node_templates.MadeNode)
        joins the cluster as a new node of its pool does: the Node, its
        ResourceSlices, its static pods, then one pod of each DaemonSet that
        should run there, each through `run_pod(PodInfo)` (the run's cycle
        and placement; the pod is pinned to the node, so the cycle places it
        there or says why not), which returns its PodResult. Returns each
        DaemonSet pod's outcome."""
        from ..sources.admission import Admission
        from ..sources.fixtures import Origin
        from ..sources.workloads import daemon_pods_for_node
        from ..state.cluster import obj_key

        node_name = made.name
        self.add_node(made.node)
        if made.slices:
            self.put_objects([("ResourceSlice", obj_key(s), s) for s in made.slices])
        for pod in made.pods:
            self.assume_pod(self.snapshot.pod_info(pod), node_name)
        daemon_sets = [o for o in self.cluster.workloads if o.get("kind") == "DaemonSet"]
        admission = Admission(self.cluster.priority_classes, self.cluster.runtime_classes)
        out = []
        for pod in daemon_pods_for_node(made.node, daemon_sets, free):
            admission.pod(pod, Origin(f"DaemonSet {pod['metadata']['namespace']}/"
                                      f"{pod['metadata']['ownerReferences'][0]['name']}"))
            r = run_pod(PodInfo(pod))
            placed = getattr(r, "placed_node", None)
            entry = {"pod": f"{pod['metadata']['namespace']}/{pod['metadata']['name']}", "status": r.status,
                     "placedNode": placed}
            if placed != node_name:
                entry["message"] = r.message
            out.append(entry)
        return out
