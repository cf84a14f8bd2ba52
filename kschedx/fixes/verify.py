"""Checking a fix: the real scheduling cycle (the framework's own runner) on
a changed copy of the pod, or on the snapshot changed in place for the time
of one cycle and restored exactly afterwards.

The snapshot is shared by every pod of an `explain` run, so a change is
undone field for field: a node's object is put back, an added node taken
out, removed pods added back and each node's pod lists restored in their
order (preemption walks them in order).
"""

from __future__ import annotations

import copy
from contextlib import contextmanager

from ..framework.journal import Journal
from ..framework.simulation import probe_cycle
from ..util.errors import KschedxError
from ..state.dra import DRA_KINDS, objects_replaced as dra_objects_replaced
from ..state import cache
from ..state.types import PodInfo
from ..sources.admission import Admission
from .jsonpatch import PatchError, apply_patch


_ABSENT = object()


class Refused(Exception):
    """A change the API server would refuse (raised while making it)."""


class Verifier:
    """Runs cycles for one pod's fixes and counts them (the search's budget).

    `workload`: when the pod was expanded from a workload of a POD_FILE
    (sources/workloads.py: a WorkloadRef), `raw_pod` is the pod its
    template makes as written, a patch of it is a patch of the workload's
    template (workload_target.py), and the pod checked is the one the
    patched workload expands into. `owner`: a live pod's controller, named
    in the fixes of the pod (workload_target.Owner)."""

    def __init__(self, fw, raw_pod: dict, pod_info: PodInfo, workload=None, owner=None):
        self.fw = fw
        self.snapshot = fw.snapshot
        self.cluster = fw.snapshot.cluster
        self.raw_pod = raw_pod
        self.pod_info = pod_info
        self.workload = workload
        self.owner = owner
        self.runs = 0
        self._admission = Admission(self.cluster.priority_classes, self.cluster.runtime_classes)
        # id(PodInfo) -> (it, objects its workload's expansion made): in the
        # cluster while that pod's cycle runs.
        self._made: dict[int, tuple] = {}

    # -- the pod ---------------------------------------------------------------
    def patched_pod(self, patch: list[dict]) -> PodInfo | None:
        """The pod as the API server would store it with `patch` applied to
        it as written (then admitted again: defaults, priority from its
        class...); None when the patch does not apply or the API server
        would refuse the result."""
        try:
            made = []
            if self.workload is not None:
                from .workload_target import expanded_pod

                pod, made = expanded_pod(self.workload, patch)
                if pod is None:
                    return None
            else:
                pod = apply_patch(self.raw_pod, patch)
            self._admission.pod(pod, "fix")
        except (PatchError, KschedxError, KeyError, TypeError, ValueError, AttributeError):
            return None
        original = self.pod_info.pod
        pod["metadata"]["uid"] = self.pod_info.uid
        pod["metadata"]["name"] = self.pod_info.name
        claims = (original.get("status") or {}).get("resourceClaimStatuses")
        if claims:
            # Claims the resourceclaim controller made for the pod stay its own.
            pod["status"] = dict(pod.get("status") or {}, resourceClaimStatuses=claims)
        pi = PodInfo(pod)
        if made:
            from ..state.cluster import obj_key

            self._made[id(pi)] = (pi, [(o["kind"], obj_key(o), o) for o in made])
        return pi

    def pod_change(self, patch: list[dict]) -> tuple[dict, dict | None]:
        """The change a fix lists for a patch of the pod: the pod's own, or
        its workload's template; and the owner to name for a live pod."""
        from .workload_target import owner_document, workload_change

        if self.workload is not None:
            return workload_change(self.workload, patch), None
        target = {"apiVersion": "v1", "kind": "Pod", "namespace": self.pod_info.namespace,
                  "name": self.pod_info.name}
        owner = owner_document(self.owner, self.raw_pod, patch, self) if self.owner is not None else None
        return {"action": "patch", "target": target, "patch": patch}, owner

    def run(self, pi: PodInfo | None = None, *, preemption: bool = False):
        """One cycle of the pod (or of its changed copy), as the pod's own
        first cycle (node sampling from the first node). Ties are broken by a
        random source of its own, so checking fixes leaves the run's random
        choices and sampling position for the next pods as they were."""
        pi = pi if pi is not None else self.pod_info
        self.runs += 1
        made = self._made.get(id(pi))
        # A fix is checked on whether the pod fits (or preemption helps), not
        # on what else preemption's candidate search could reach.
        if made is not None and made[0] is pi:
            with self.objects_changed(made[1]):
                return probe_cycle(self.fw, pi, post_filter=preemption)
        return probe_cycle(self.fw, pi, post_filter=preemption)

    def verdict(self, result, preemption: bool = False) -> dict | None:
        """What a check's result achieves (the fix's `verified`), None when
        it did not place the pod (or, for `preemption`, nominate a node)."""
        return preemption_outcome(result) if preemption else outcome(result)

    def exhausted(self) -> bool:
        """Whether the checks took all they may beyond the search's count of
        them (sequence.py counts the cycles of its checks)."""
        return False

    # -- the snapshot, changed for one cycle ---------------------------------------
    @contextmanager
    def node_replaced(self, node: dict):
        """The node of that name as `node` (labels, taints, unschedulable)."""
        ni = self.snapshot.get(node["metadata"]["name"])
        saved = ni.node
        ni.set_node(node)
        try:
            yield ni
        finally:
            ni.set_node(saved)  # a new generation too: caches keyed on it see a change

    @contextmanager
    def node_added(self, node: dict):
        """A new node, as the cache adds one (name order in the snapshot,
        last in its zone of the node tree, its images counted), running the
        DaemonSet pods that would run there (a new node's room is theirs
        first)."""
        from ..sources.node_templates import MadeNode

        with self.template_node_added(MadeNode(None, node["metadata"]["name"], node, [], [])):
            yield self.snapshot.get(node["metadata"]["name"])

    @contextmanager
    def template_node_added(self, made):
        """A node made from a node template, as it joins the cluster: its
        slices, static pods and DaemonSet pods (each placed by its cycle)."""
        journal = Journal(self.snapshot, [self.fw])

        def run_pod(pi):
            # Not counted in the search's budget: a DaemonSet pod's cycle
            # looks at its one node (its matchFields PreFilterResult).
            r = probe_cycle(self.fw, pi)
            r.placed_node = None
            if r.status == "Scheduled":
                journal.assume_pod(pi, r.selected_node)
                r.placed_node = r.selected_node
            return r

        try:
            journal.join_node(made, run_pod)
            yield
        finally:
            journal.rollback()

    @contextmanager
    def pods_removed(self, pods: list[PodInfo]):
        """The pods deleted from their nodes; put back afterwards, each node's
        lists in their former order."""
        snap = self.snapshot
        saved = {}
        for pi in pods:
            node = snap.assigned_pod_node.get(pi.uid)
            if node is None:
                continue
            ni = snap.by_name[node]
            if node not in saved:
                saved[node] = (list(ni.pods), list(ni.pods_with_affinity), list(ni.pods_with_required_anti_affinity))
        removed = []
        try:
            for pi in pods:
                node = snap.assigned_pod_node.get(pi.uid)
                if node is None:
                    continue
                stored = snap.pod_infos.get(pi.uid, pi)
                cache.forget_pod(snap, stored)
                removed.append((stored, node))
            yield
        finally:
            for stored, node in reversed(removed):
                cache.assume_pod(snap, stored, node)
            for node, (pods_, aff, anti) in saved.items():
                ni = snap.by_name[node]
                ni.pods[:] = pods_
                ni.pods_with_affinity[:] = aff
                ni.pods_with_required_anti_affinity[:] = anti


    @contextmanager
    def objects_changed(self, changes: list[tuple[str, str, dict | None]]):
        """(kind, key, object or None = deleted) made in the ClusterState's
        stores (PersistentVolume, PersistentVolumeClaim, ResourceSlice,
        ResourceClaim...) for the time of one cycle; the plugins caching what
        they derive from those kinds start afresh (Plugin.cluster_objects_changed).
        Everything is put back afterwards, entry for entry."""
        cluster = self.cluster
        saved = []
        kinds = set()
        restores = []
        try:
            for kind, key, obj in changes:
                store = cluster.store(kind)
                old = store.get(key, _ABSENT)
                saved.append((store, key, old))
                if obj is None:
                    store.pop(key, None)
                else:
                    store[key] = obj
                if old is _ABSENT or obj is None or old.get("status") != obj.get("status"):
                    kinds.add(kind)
            frozen = frozenset(kinds)
            if frozen & DRA_KINDS:
                restores.append(dra_objects_replaced(self.snapshot))
            for plugin in self.fw.profile.plugins:
                hook = getattr(plugin, "cluster_objects_changed", None)
                restore = hook(frozen) if hook is not None else None
                if restore is not None:
                    restores.append(restore)
            yield
        finally:
            for restore in reversed(restores):
                restore()
            for store, key, old in reversed(saved):
                if old is _ABSENT:
                    store.pop(key, None)
                else:
                    store[key] = old

    def admitted(self, obj: dict) -> dict:
        """A created object as the API server would store it (namespace
        defaulted, shape and storage rules checked); Refused otherwise."""
        from ..storage.validation import check_storage_object

        obj = copy.deepcopy(obj)
        try:
            self._admission.metadata(obj, "fix")
            if obj.get("kind") in ("PersistentVolume", "PersistentVolumeClaim", "StorageClass"):
                check_storage_object(obj, "fix")
        except (KschedxError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise Refused(str(exc)) from None
        return obj


def feasible_nodes(result) -> list[str]:
    """The nodes that passed every Filter in a cycle, in node order."""
    records = result.node_records
    if records is not None and records.score_table is not None:
        return [ni.name for ni in records.score_table.nodes]
    return [nr.name for nr in result.nodes if nr.feasible]


def outcome(result) -> dict | None:
    """What a fix achieves, when the cycle places the pod: None otherwise."""
    if result.status != "Scheduled":
        return None
    feasible = feasible_nodes(result)
    return {"status": "Scheduled", "selectedNode": result.selected_node, "feasibleNodes": len(feasible),
            "nodes": feasible[:5]}


def preemption_outcome(result) -> dict | None:
    """A cycle whose PostFilter nominates a node: the nominated node and victims."""
    pre = result.preemption or {}
    if result.status == "Scheduled" or not pre.get("nominatedNode"):
        return None
    return {"status": result.status, "selectedNode": None, "nominatedNode": pre["nominatedNode"],
            "victims": copy.deepcopy(pre.get("victims") or [])}
