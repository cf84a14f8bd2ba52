"""A what-if run: the cluster changes (a drain, nodes added) played as the
controllers around the scheduler would make them, between scheduling
cycles, and every pod that then needs a node placed by the run's own step
(framework/simulation.Simulation), in queue order with the pending pods.

The drain, node by node in the order given (kubectl drain's), in rounds:

1. Every drained node is cordoned first (spec.unschedulable, and the taint
   node.kubernetes.io/unschedulable:NoSchedule the node lifecycle
   controller adds).
2. The node's pods (namespace, name: the API's list order) go through
   kubectl's filters; an error refuses the node before any eviction.
3. A round: each pod still to evict is evicted through the Eviction API
   (api/disruption.py) against the budgets as they are; an evicted pod
   terminates (deletionTimestamp set, still on its node, holding what it
   requested); a ReplicaSet's (or Job's) new pod is created at once.
4. The pods waiting for a node (the new ones and those the run has not
   placed) are scheduled in queue order.
5. End of the round: the terminating pods are gone (a StatefulSet's new pod
   is created now, and scheduled next round); the pods placed count as
   Ready; the disruption controller syncs the budgets they touched.
6. A refused eviction (429) is retried next round. A round that changes
   nothing ends the node: its pods left are blocked (kubectl drain would
   retry every 5s for ever; with --timeout it gives up on the node and goes
   on with the next, as kschedx does).

A round stands for "until kubectl's next retry": replacements are usually
scheduled in milliseconds and Ready in seconds, kubectl retries every 5 s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..api import disruption
from ..framework.journal import Journal
from ..framework.queue import queue_order
from ..framework.simulation import Simulation, without_nomination
from ..result.document import pod_dict
from ..sources import replacements
from ..state.cluster import obj_key
from ..state.types import PodInfo
from . import drain as kubectl
from .budgets import Budgets

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
# What a deletionTimestamp holds in the run (it has no clock; only its
# presence is read).
DELETION_TIME = "1970-01-01T00:00:00Z"
# Rounds one node's drain may take at most, beyond one per pod (a guard).
EXTRA_ROUNDS = 10


@dataclass(eq=False)
class Entry:
    """A pod the run schedules: its PodInfo, its document (its last cycle),
    the cluster generation of that cycle, where it went."""

    pi: PodInfo
    replaces: dict | None = None  # replacementFor
    doc: dict | None = None
    tried: int = -1
    placed: str | None = None
    seq: int = 0


@dataclass(eq=False)
class NodeDrain:
    """One node's drain as it goes."""

    node: str
    cordon: str = "cordoned"  # or "already cordoned"
    outcome: str = ""  # Drained, Refused, Blocked, Failed
    listed: list = field(default_factory=list)
    pods: dict = field(default_factory=dict)  # key -> drain.PodReport
    to_evict: list = field(default_factory=list)  # pod dicts still to evict, list order
    terminating: list = field(default_factory=list)  # PodInfos evicted, not gone yet
    waiting_gone: list = field(default_factory=list)  # (evicted pod dict, ref) recreated once gone
    errors: list = field(default_factory=list)
    kubectl: list = field(default_factory=list)
    rounds: int = 0
    race: bool = False
    failed: list = field(default_factory=list)  # (key, line)
    blocked_by: dict | None = None  # the refusal that never ends


class Play:
    """What-if changes on one run (`scheds`: dispatch.Schedulers).

    `detail`, `nodes`, `encoder`: as simulate's (which records each pod's
    document keeps)."""

    def __init__(self, workload, scheds, *, detail: str = "full", nodes=None, encoder=None, documents: bool = True):
        self.workload = workload
        self.scheds = scheds
        self.snapshot = scheds.snapshot
        self.cluster = scheds.snapshot.cluster
        self.sim = Simulation(scheds)
        self.journal = Journal(self.snapshot, scheds.frameworks)
        self.detail = detail
        self.nodes = nodes
        self.encoder = encoder
        self.keep_documents = documents
        self.pending: list[Entry] = []
        self.entries: list[Entry] = []
        self.by_uid: dict[str, Entry] = {}
        self.ready: set[str] = set()  # placed by the run, Ready since a round ended
        self.run_placed: set[str] = set()  # placed by the run
        self.placed_in_round: list[Entry] = []
        self.generation = 0
        self.seq = 0
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.keys = {f"{p['metadata'].get('namespace') or 'default'}/{p['metadata']['name']}" for p in self.cluster.pods}
        self.budgets: Budgets | None = None
        self.drains: list[NodeDrain] = []
        self.options = None
        self.unready_budgets: set[str] = set()
        self.added: list[dict] = []  # nodes added: {"name", "template", "daemonSetPods"}
        for pi in workload.pods:
            self._queue(pi)

    # -- names --------------------------------------------------------------------------------
    def free(self, namespace: str, name: str) -> bool:
        return f"{namespace}/{name}" not in self.keys

    # -- the queue --------------------------------------------------------------------------------
    def _queue(self, pi: PodInfo, replaces: dict | None = None) -> Entry:
        e = Entry(pi, replaces)
        self.pending.append(e)
        self.by_uid[pi.uid] = e
        self.keys.add(pi.key)
        return e

    def waiting(self) -> list[Entry]:
        """The pods not placed whose last cycle is older than the last change
        that can free room (kube-scheduler moves them back to its active
        queue on such events), in queue order."""
        due = [e for e in self.pending if e.tried < self.generation]
        order = self.scheds.queue_order(queue_order([e.pi for e in due]))
        by_id = {id(e.pi): e for e in due}
        return [by_id[id(pi)] for pi in order]

    def waiting_all(self) -> list[Entry]:
        """Every pod not placed, in queue order."""
        order = self.scheds.queue_order(queue_order([e.pi for e in self.pending]))
        by_id = {id(e.pi): e for e in self.pending}
        return [by_id[id(pi)] for pi in order]

    def schedule_pending(self, preempt: bool = True) -> int:
        """Each pod waiting, in queue order, through the run's step."""
        placed = 0
        for e in self.waiting():
            if e not in self.pending:
                continue
            placed += self.step(e, preempt=preempt)
        return placed

    def step(self, e: Entry, preempt: bool = True) -> bool:
        detail = self.detail
        settled = False

        def settle(r):
            nonlocal settled
            settled = self.keep_documents and (detail == "full" or (detail == "failures" and r.status != "Scheduled"))
            return settled

        r = self.sim.step(e.pi, settle=settle, preempt=preempt)
        e.tried = self.generation
        if e.seq == 0:
            self.seq += 1
            e.seq = self.seq
        if r.status != "Scheduled" and r.nominated_node:
            for v in r.victims:
                self._victim(v, e.pi.key)
            pending_uids = {x.pi.uid: x for x in self.pending}
            for np in r.cleared_nominations:
                other = pending_uids.get(np.uid)
                if other is not None:
                    other.pi = without_nomination(other.pi)
        if self.keep_documents:
            if detail == "placements" or (detail == "failures" and (r.placed_node or not settled)):
                r.drop_nodes()
            doc = pod_dict(r, "simulate", self.nodes, self.encoder)
            doc["profile"] = getattr(r, "profile", None) or self.scheds.primary.profile.name
            if doc["status"] == "NoProfile" and e.pi.uid in self.workload.asked:
                doc["askedByName"] = True
            if e.replaces is not None:
                doc["replacementFor"] = e.replaces
            source = self.workload.sources.get(e.pi.uid)
            if source:
                doc["source"] = dict(source)
            e.doc = doc
        else:
            e.doc = {"status": r.status, "placedNode": r.placed_node, "message": r.message,
                     "nominated": bool(r.nominated_node)}
        if e not in self.entries:
            self.entries.append(e)
        if r.placed_node:
            e.placed = r.placed_node
            self.run_placed.add(e.pi.uid)
            self.pending.remove(e)
            self.placed_in_round.append(e)
            if self.budgets is not None:
                self.budgets.touch(self.snapshot.pod_infos[e.pi.uid].pod)
            return True
        return False

    def _victim(self, v, preemptor: str) -> None:
        """A pod preemption deleted: a pod the run placed gains preemptedBy."""
        e = self.by_uid.get(v.uid)
        if e is not None and e.doc is not None:
            e.doc["preemptedBy"] = preemptor
            if "source" in e.doc:
                e.doc["source"] = e.doc.pop("source")
        if self.budgets is not None:
            self.budgets.touch(v.pod)
        self.generation += 1

    # -- readiness -------------------------------------------------------------------------------
    def is_ready(self, pod: dict) -> bool:
        """Whether a pod counts as Ready for the budgets: a pod this run
        placed once its round ended; a pod of the snapshot as its Ready
        condition says (one written without any condition is taken as
        Ready, and said so)."""
        uid = pod["metadata"].get("uid")
        if uid in self.ready:
            return True
        if not (pod.get("spec") or {}).get("nodeName") or uid in self.run_placed:
            return False
        if disruption.has_ready_condition(pod):
            return disruption.is_pod_ready(pod)
        if self.budgets is not None:
            self.unready_budgets.update(self.budgets.guarding(pod))
        return True

    def pods_of_namespace(self, namespace: str) -> list[dict]:
        bound = [pi.pod for pi in self.snapshot.pod_infos.values() if pi.namespace == namespace]
        waiting = [e.pi.pod for e in self.pending if e.pi.namespace == namespace]
        own = {e.pi.uid for e in self.pending}
        others = [p for p in self.snapshot.pending_pods
                  if (p["metadata"].get("namespace") or "default") == namespace and p["metadata"]["uid"] not in own
                  and p["metadata"]["uid"] not in self.snapshot.pod_infos]
        return bound + waiting + others

    # -- the drain ----------------------------------------------------------------------------------
    def drain(self, options: kubectl.DrainOptions) -> None:
        """Cordon every node, then drain them one after another."""
        self.options = options
        self.budgets = Budgets(self.cluster, self.journal, self.pods_of_namespace, self.is_ready)
        for key in self.budgets.computed:
            self.warnings.append(f"PodDisruptionBudget {key} has no status: the drain uses the status the "
                                 "disruption controller would write")
        for name in options.nodes:
            self.drains.append(self._cordon(name))
        for nd in self.drains:
            self._list(nd)
            if nd.outcome == "Refused":
                continue
            self.run_rounds(nd)
        if self.unready_budgets:
            self.warnings.append("pods without a Ready condition are taken as Ready by the PodDisruptionBudgets "
                                 f"{', '.join(sorted(self.unready_budgets))} (a snapshot records it; a hand-written "
                                 "fixture may not)")

    def _cordon(self, name: str) -> NodeDrain:
        nd = NodeDrain(name)
        ni = self.snapshot.get(name)
        node = ni.node
        spec = node.get("spec") or {}
        taints = list(spec.get("taints") or [])
        has_taint = any(t.get("key") == UNSCHEDULABLE_TAINT["key"] and t.get("effect") == "NoSchedule"
                        for t in taints)
        if spec.get("unschedulable"):
            nd.cordon = "already cordoned"
        if not spec.get("unschedulable") or not has_taint:
            new = dict(node, spec=dict(spec, unschedulable=True,
                                       taints=taints if has_taint else taints + [dict(UNSCHEDULABLE_TAINT)]))
            self.journal.update_node(new)
        nd.kubectl.append(f"node/{name} {nd.cordon}")
        return nd

    def _daemon_set(self, namespace: str, name: str) -> str | None:
        if "DaemonSet" in self.cluster.unreadable_kinds:
            return None
        for obj in self.cluster.workloads:
            if obj.get("kind") == "DaemonSet" and obj_key(obj) == f"{namespace}/{name}":
                return None
        return f'daemonsets.apps "{name}" not found'

    def _list(self, nd: NodeDrain) -> None:
        ni = self.snapshot.get(nd.node)
        pods = sorted((pi.pod for pi in ni.pods), key=_key)
        listed = kubectl.filter_pods(pods, self.options, self._daemon_set)
        nd.listed = listed
        for item in listed:
            # An error first: a pod whose DaemonSet is gone is not kept by
            # --ignore-daemonsets, kubectl refuses the node for it.
            if item.reason == kubectl.ERROR:
                nd.pods[item.key] = kubectl.PodReport(item.key, "Refused", item.filter)
            elif item.filter == "DaemonSet" and not item.delete:
                nd.pods[item.key] = kubectl.PodReport(item.key, "Stays", "DaemonSet")
            elif item.filter == "Mirror":
                nd.pods[item.key] = kubectl.PodReport(item.key, "Stays", "Mirror")
            else:
                nd.pods[item.key] = kubectl.PodReport(item.key, "NotEvicted", item.filter)
        errors = kubectl.error_texts(listed)
        if errors:
            nd.outcome = "Refused"
            nd.errors = errors
            nd.kubectl.append(kubectl.unable_line(nd.node, kubectl.aggregate(errors)))
            return
        warnings = kubectl.warnings_text(listed)
        if warnings:
            nd.kubectl.append(f"Warning: {warnings}")
        nd.to_evict = [item.pod for item in listed if item.delete]
        # Several pods of one budget that cannot take them all at once: which
        # goes first is a race between kubectl's goroutines.
        by_budget: dict[str, int] = {}
        for pod in nd.to_evict:
            for key in self.budgets.guarding(pod):
                by_budget[key] = by_budget.get(key, 0) + 1
        nd.race = any(n > max(0, self.budgets.status(k).get("disruptionsAllowed") or 0) and n > 1
                      for k, n in by_budget.items())

    def run_rounds(self, nd: NodeDrain) -> None:
        """Rounds until the node's pods are all gone, or a round changes nothing."""
        limit = nd.rounds + len(nd.pods) + EXTRA_ROUNDS
        while (nd.to_evict or nd.terminating or nd.waiting_gone) and nd.rounds < limit:
            nd.rounds += 1
            progress = self._evict_round(nd)
            progress |= self.schedule_pending() > 0
            progress |= self._end_round(nd)
            if not nd.to_evict and not nd.terminating and not nd.waiting_gone:
                break
            if not progress:
                break
        if self.schedule_pending():
            self.settle()
        self._conclude(nd)

    def settle(self) -> None:
        """The pods placed since the last round count as Ready; the budgets
        they touched are synced."""
        for e in self.placed_in_round:
            self.ready.add(e.pi.uid)
        self.placed_in_round = []
        if self.budgets is not None:
            self.budgets.resync()

    def _evict_round(self, nd: NodeDrain) -> bool:
        progress = False
        still = []
        for pod in nd.to_evict:
            key = _key(pod)
            ns, name = key.split("/", 1)
            report = nd.pods[key]
            nd.kubectl.append(kubectl.evicting_line(key))
            if self.options.disable_eviction:
                answer = disruption.Eviction("Deleted", why="--disable-eviction: deleted without the Eviction API")
            else:
                answer = self.budgets.evict(pod)
            if answer.refused:
                refusal = {"round": nd.rounds, "code": answer.code, "message": answer.message}
                if answer.pdb:
                    refusal["pdb"] = answer.pdb
                if answer.cause:
                    refusal["cause"] = answer.cause
                report.refusals.append(refusal)
                if answer.code == 429:
                    nd.kubectl.append(kubectl.retry_line(ns, name, answer.message))
                    still.append(pod)
                    nd.blocked_by = refusal
                else:
                    line = kubectl.failed_line(ns, name, answer.message)
                    nd.kubectl.append(line)
                    nd.failed.append((key, line))
                    report.action = "Failed"
                continue
            progress = True
            report.action = "Deleted" if answer.outcome == "Deleted" else "Evicted"
            report.round = nd.rounds
            if answer.why:
                report.reason = answer.why
            if answer.outcome == "Evicted":
                report.budget = {"pdb": answer.pdb,
                                 "disruptionsAllowed": (answer.status.get("disruptionsAllowed") or 0) + 1}
            self._terminate(nd, pod, report)
        nd.to_evict = still
        return progress

    def _terminate(self, nd: NodeDrain, pod: dict, report) -> None:
        """The evicted pod terminates (deletionTimestamp, condition
        DisruptionTarget); its controller reacts."""
        pi = self.snapshot.pod_infos[pod["metadata"]["uid"]]
        already = pod["metadata"].get("deletionTimestamp") is not None
        new = dict(pod)
        new["metadata"] = dict(pod["metadata"], deletionTimestamp=DELETION_TIME)
        status = dict(pod.get("status") or {})
        conditions = [c for c in status.get("conditions") or () if c.get("type") != "DisruptionTarget"]
        if not self.options.disable_eviction:
            conditions.append({"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI",
                               "message": "Eviction API: evicting"})
        status["conditions"] = conditions
        new["status"] = status
        stored = self.journal.update_pod(pi, new)
        nd.terminating.append(stored)
        if self.budgets is not None:
            self.budgets.touch(new)
        ref = replacements.controller_ref(pod)
        if ref is None or ref.get("kind") == "DaemonSet":
            report.lost = True
            report.note = ("no controller recreates it" if ref is None
                           else "its DaemonSet is gone: nothing recreates it")
            return
        job = None
        if ref.get("kind") == "Job":
            job = self._object("Job", pi.namespace, ref.get("name"))
            why = _job_gives_up(job)
            if why:
                report.lost = True
                report.note = why
                return
        if replacements.when_created(ref.get("kind"), job) == replacements.WHEN_GONE:
            nd.waiting_gone.append((pod, ref, report))
            return
        if already:
            # Terminating before the drain: its controller made its new pod
            # then (it is in the snapshot, pending or placed).
            report.note = "already terminating: its controller created its new pod before the snapshot"
            return
        self._recreate(nd, pod, ref, report)

    def _recreate(self, nd: NodeDrain, pod: dict, ref: dict, report) -> None:
        generation = 1 + sum(1 for e in self.entries + self.pending
                             if e.replaces and e.replaces["pod"] == _key(pod))
        new = replacements.replacement_pod(pod, ref, self.free, generation)
        if (new.get("spec") or {}).get("resourceClaims"):
            from ..plugins.dynamicresources.controller import instantiate_pod_claims

            new.setdefault("status", {})
            before = set(self.cluster.resource_claims)
            self.warnings.extend(instantiate_pod_claims(new, self.cluster.resource_claim_templates,
                                                        self.cluster.resource_claims))
            made = [k for k in self.cluster.resource_claims if k not in before]
            store = self.cluster.resource_claims

            def forget(made=made):
                for k in made:
                    store.pop(k, None)

            self.journal.on_rollback(forget)
        replaces = {"pod": _key(pod), "node": nd.node, "round": nd.rounds,
                    "controller": {"kind": ref.get("kind"), "name": ref.get("name")}, "from": "pod"}
        workload = self._workload_of(pi_namespace(pod), ref)
        if workload:
            replaces["controller"]["workload"] = workload
        if ref.get("kind") not in ("ReplicaSet", "ReplicationController", "StatefulSet", "Job"):
            replaces["note"] = (f"{ref.get('kind')} is not a controller kschedx knows: the new pod is made as a "
                                "ReplicaSet would make it")
        pi = PodInfo(new)
        e = self._queue(pi, replaces)
        report.replacement = {"pod": pi.key}
        report.entry = e

    def _object(self, kind: str, namespace: str, name: str) -> dict | None:
        for obj in self.cluster.workloads:
            if obj.get("kind") == kind and obj_key(obj) == f"{namespace}/{name}":
                return obj
        return None

    def _workload_of(self, namespace: str, ref: dict) -> str | None:
        if ref.get("kind") == "ReplicaSet":
            rs = self.cluster.replica_sets.get(f"{namespace}/{ref.get('name')}")
            owner = disruption.controller_of(rs) if rs is not None else None
            if owner is not None and owner.get("kind") == "Deployment":
                return f"Deployment {namespace}/{owner.get('name')}"
        return None

    def _end_round(self, nd: NodeDrain) -> bool:
        progress = False
        for pi in nd.terminating:
            self.journal.remove_pod(pi)
            self.generation += 1
            progress = True
            nd.kubectl.append(f"pod/{pi.name} {'deleted' if self.options.disable_eviction else 'evicted'}")
        nd.terminating = []
        for pod, ref, report in nd.waiting_gone:
            self._recreate(nd, pod, ref, report)
            progress = True
        nd.waiting_gone = []
        for e in self.placed_in_round:
            self.ready.add(e.pi.uid)
        self.placed_in_round = []
        if self.budgets is not None and self.budgets.resync():
            progress = True
        return progress

    def _record_replacements(self, nd: NodeDrain) -> None:
        """Each evicted pod's new pod as the run left it: its node, or Pending."""
        for report in nd.pods.values():
            e = report.entry
            if e is not None:
                report.replacement = {"pod": e.pi.key, "placedNode": e.placed,
                                      "status": (e.doc or {}).get("status", "Pending")}

    def _conclude(self, nd: NodeDrain) -> None:
        self._record_replacements(nd)
        if nd.to_evict:
            for pod in nd.to_evict:
                report = nd.pods[_key(pod)]
                report.action = "Blocked"
                ns, name = _key(pod).split("/", 1)
                report.note = ("kubectl drain retries it every 5s and never finishes; with --timeout it ends with: "
                               + kubectl.timeout_line(ns, name))
            nd.outcome = "Blocked"
        elif nd.failed:
            nd.outcome = "Failed"
            pending = [k for k, _ in nd.failed]
            nd.kubectl.append(f'There are pending pods in node "{nd.node}" when an error occurred: '
                              f'{kubectl.aggregate([line for _, line in nd.failed])}')
            nd.kubectl.extend(f"pod/{k.split('/', 1)[1]}" for k in pending)
            nd.kubectl.append(kubectl.unable_line(nd.node, kubectl.aggregate([line for _, line in nd.failed])))
        else:
            nd.outcome = "Drained"
            nd.kubectl.append(f"node/{nd.node} drained")

    # -- nodes added ----------------------------------------------------------------------------------
    def add_node(self, made) -> dict:
        """A node made from a template joins the cluster, its DaemonSet pods
        placed by the run's step first; pods waiting are due again."""

        def run_pod(pi):
            self.keys.add(pi.key)
            return self.sim.step(pi, preempt=False)

        ds = self.journal.join_node(made, run_pod, self.free)
        self.generation += 1
        record = {"name": made.name, "template": made.template.name, "daemonSetPods": ds}
        self.added.append(record)
        return record

    def run(self, drain=None, nodes=()) -> None:
        """The whole run: the drain (if any) and the pending pods; then the
        nodes made from templates (if any), the pods still waiting tried
        again, and the drains they unblock resumed."""
        if drain is not None:
            self.drain(drain)
        self.schedule_pending()
        self.settle()
        if nodes:
            for made in nodes:
                self.add_node(made)
            self.schedule_pending()
            self.settle()
            self.resume_drains()

    def resume_drains(self) -> None:
        """Drains that stopped (blocked) go on: the cluster changed. Every
        drain's new pods are recorded again, as a drain that ended before the
        nodes came may have a new pod they placed."""
        for nd in self.drains:
            if nd.outcome == "Blocked":
                nd.outcome = ""
                self.run_rounds(nd)
            else:
                self._record_replacements(nd)

    def close(self) -> None:
        """Take back what the run changed in the cluster it shares with other
        runs (nodes, stores, claims); its snapshot is its own."""
        self.journal.rollback()

    # -- the result ---------------------------------------------------------------------------------
    def documents(self) -> list[dict]:
        """Every pod's document (its last cycle), in the order first scheduled;
        then the pods never tried."""
        out = [e.doc for e in sorted(self.entries, key=lambda e: e.seq) if e.doc is not None]
        return out


def pi_namespace(pod: dict) -> str:
    return (pod.get("metadata") or {}).get("namespace") or "default"


def _key(pod: dict) -> str:
    return f"{pi_namespace(pod)}/{pod['metadata']['name']}"


def _job_gives_up(job: dict | None) -> str:
    """Why the Job makes no new pod for an evicted one (its failure counts
    toward backoffLimit unless a podFailurePolicy rule ignores a
    DisruptionTarget), or ""."""
    if job is None:
        return ""
    spec = job.get("spec") or {}
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or ():
        if rule.get("action") == "Ignore" and any(
                c.get("type") == "DisruptionTarget" for c in rule.get("onPodConditions") or ()):
            return ""
    limit = spec.get("backoffLimit", 6)
    failed = (job.get("status") or {}).get("failed") or 0
    if failed + 1 > limit:
        return (f"the eviction is the Job's failure {failed + 1}, past its backoffLimit {limit}: the Job fails and "
                "creates no new pod")
    return ""


def class_key(pi: PodInfo) -> str:
    """Pods a node template answers alike: the same namespace, labels,
    priority and spec but for their identity."""
    spec = {k: v for k, v in pi.spec.items() if k not in ("nodeName", "hostname", "subdomain")}
    return json.dumps([pi.namespace, pi.labels, pi.priority, spec], sort_keys=True, default=str)
