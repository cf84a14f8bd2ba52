"""The PodDisruptionBudgets of a run as the API server holds them: the status
as read, each eviction as the Eviction API writes it, and the disruption
controller's status again once the pods of a budget have changed
(api/disruption.py has the arithmetic).

The statuses are written to the cluster's store as they change, so that a
later preemption in the run reads what kube-scheduler's informer would.
"""

from __future__ import annotations

import copy

from ..api import disruption
from ..state.cluster import obj_key


class Budgets:
    """The run's budgets. `pods_of_namespace(ns)` gives every pod of a
    namespace the controller's lister would list now (bound, terminating,
    pending); `ready(pod)` whether a pod counts as Ready."""

    def __init__(self, cluster, journal, pods_of_namespace, ready):
        self.cluster = cluster
        self.journal = journal
        self.pods_of_namespace = pods_of_namespace
        self.ready = ready
        self.read: dict[str, dict] = {}
        self.evictions: dict[str, int] = {}
        self.refusals: dict[str, int] = {}
        self.touched: set[str] = set()
        self.touched_ever: set[str] = set()
        self.computed: list[str] = []  # budgets read without a status: the controller's computed instead
        for key, pdb in cluster.pod_disruption_budgets.items():
            status = pdb.get("status") or {}
            if "disruptionsAllowed" not in status:
                self.computed.append(key)
        for key in sorted(self.computed):
            self._write(key, self.controller_status(key))
        for key, pdb in cluster.pod_disruption_budgets.items():
            self.read[key] = copy.deepcopy(pdb.get("status") or {})

    # -- reading ---------------------------------------------------------------------------
    def of_namespace(self, namespace: str) -> list[tuple[str, dict]]:
        return [(key, pdb) for key, pdb in sorted(self.cluster.pod_disruption_budgets.items())
                if ((pdb.get("metadata") or {}).get("namespace") or "default") == namespace]

    def guarding(self, pod: dict) -> list[str]:
        """The budgets selecting the pod (the Eviction API's rule)."""
        ns = (pod.get("metadata") or {}).get("namespace") or "default"
        return [key for key, pdb in self.of_namespace(ns) if disruption.selects(pdb, pod)]

    def status(self, key: str) -> dict:
        return (self.cluster.pod_disruption_budgets[key].get("status") or {})

    # -- the Eviction API --------------------------------------------------------------------
    def evict(self, pod: dict) -> disruption.Eviction:
        """One eviction of `pod` (Ready as `ready` says); an allowed one
        writes the budget's new status."""
        ns = (pod.get("metadata") or {}).get("namespace") or "default"
        answer = disruption.evict(pod, self.of_namespace(ns), ready=self.ready(pod))
        if answer.outcome == "Evicted":
            self._write(answer.pdb, answer.status)
            self.evictions[answer.pdb] = self.evictions.get(answer.pdb, 0) + 1
        elif answer.refused and answer.pdb and answer.code in (429, 403):
            self.refusals[answer.pdb] = self.refusals.get(answer.pdb, 0) + 1
        return answer

    def touch(self, pod: dict) -> None:
        """A pod the budgets select changed (evicted, gone, created, placed):
        their controller syncs them at the end of the round."""
        keys = self.guarding(pod)
        self.touched.update(keys)
        self.touched_ever.update(keys)

    # -- the disruption controller ---------------------------------------------------------------
    def controller_status(self, key: str) -> dict:
        pdb = self.cluster.pod_disruption_budgets[key]
        ns = (pdb.get("metadata") or {}).get("namespace") or "default"
        pods = [p for p in self.pods_of_namespace(ns) if _selected(pdb, p)]
        return disruption.controller_status(pdb, pods, self.scale_of, ready=self.ready)

    def resync(self) -> bool:
        """The controller syncs every budget touched since the last sync:
        True when a status changed."""
        changed = False
        touched, self.touched = sorted(self.touched), set()
        for key in touched:
            new = self.controller_status(key)
            if _comparable(new) != _comparable(self.status(key)):
                self._write(key, new)
                changed = True
        return changed

    def scale_of(self, ref: dict, namespace: str):
        """getExpectedScale's finders in their order: ReplicationController,
        Deployment (through its ReplicaSet), ReplicaSet, StatefulSet; then
        the scale subresource, which the kinds below do not have."""
        cluster = self.cluster
        kind, name, uid = ref.get("kind"), ref.get("name"), ref.get("uid")
        key = f"{namespace}/{name}"

        def same(obj):
            return obj is not None and (not uid or (obj.get("metadata") or {}).get("uid") == uid)

        if kind == "ReplicationController":
            rc = cluster.replication_controllers.get(key)
            if same(rc):
                return uid, _replicas(rc)
        if kind == "ReplicaSet":
            rs = cluster.replica_sets.get(key)
            if same(rs):
                owner = disruption.controller_of(rs)
                if owner is not None and owner.get("kind") == "Deployment":
                    dep = _workload(cluster, "Deployment", namespace, owner.get("name"))
                    if dep is not None and (not owner.get("uid") or
                                            (dep.get("metadata") or {}).get("uid") == owner.get("uid")):
                        return (dep.get("metadata") or {}).get("uid") or owner.get("uid"), _replicas(dep)
                    return None
                return uid, _replicas(rs)
        if kind == "StatefulSet":
            sts = cluster.stateful_sets.get(key)
            if same(sts):
                return uid, _replicas(sts)
        if kind == "Job":
            raise disruption.SyncError("jobs.batch does not implement the scale subresource")
        if kind == "DaemonSet":
            raise disruption.SyncError("daemonsets.apps does not implement the scale subresource")
        return None

    # -- the store --------------------------------------------------------------------------------
    def _write(self, key: str, status: dict) -> None:
        pdb = dict(self.cluster.pod_disruption_budgets[key], status=status)
        self.journal.put_objects([("PodDisruptionBudget", key, pdb)])

    def report(self) -> list[dict]:
        """Each budget a pod of the run touched: read and final status, and
        its evictions and refusals."""
        out = []
        keys = sorted(set(self.evictions) | set(self.refusals) | self.touched_ever)
        for key in keys:
            out.append({"pdb": key, "read": _summary(self.read.get(key) or {}),
                        "final": _summary(self.status(key)), "evictions": self.evictions.get(key, 0),
                        "refusals": self.refusals.get(key, 0),
                        **({"computed": True} if key in self.computed else {})})
        return out


def _selected(pdb: dict, pod: dict) -> bool:
    sel = disruption.budget_selector(pdb)
    return sel is not None and sel.matches((pod.get("metadata") or {}).get("labels") or {})


def _replicas(obj: dict) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def _workload(cluster, kind: str, namespace: str, name: str) -> dict | None:
    for obj in cluster.workloads:
        if obj.get("kind") == kind and obj_key(obj) == f"{namespace}/{name}":
            return obj
    return None


def _comparable(status: dict) -> tuple:
    return tuple((k, status.get(k)) for k in ("currentHealthy", "desiredHealthy", "expectedPods",
                                              "disruptionsAllowed")) + (
        tuple(sorted((status.get("disruptedPods") or {}).keys())),
        tuple((c.get("status"), c.get("reason"), c.get("message")) for c in status.get("conditions") or ()
              if isinstance(c, dict)))


def _summary(status: dict) -> dict:
    return {"currentHealthy": status.get("currentHealthy", 0), "desiredHealthy": status.get("desiredHealthy", 0),
            "expectedPods": status.get("expectedPods", 0), "disruptionsAllowed": status.get("disruptionsAllowed", 0)}
