"""One pod's fix search: the candidates it checks, each through one
scheduling cycle (verify.py), within its budget; and the Fix each verified
change becomes."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field

from .blockers import Blockers
from .jsonpatch import PatchError, apply_patch
from .verify import Refused, Verifier

# Cycles one pod's search may run (bisections included), and fixes shown.
MAX_RUNS = 48
MAX_FIXES = 8
# Candidates each kind checks at most (bisection steps not counted).
MAX_CANDIDATES = 3
# Failed candidates whose cycle is kept, to look for what else still blocks
# (the chained search of combine.py).
MAX_KEPT_ATTEMPTS = 8

POD = "pod"
CLUSTER = "cluster"


@dataclass
class Fix:
    kind: str
    side: str  # POD or CLUSTER
    change: str  # what to do, in words
    changes: list[dict]  # {"action": patch|create|delete, "target": {...}, "patch": [...], "by"?: controller}
    verified: dict
    magnitude: float = 1.0  # within a kind: smaller is a smaller change
    order: int = 0  # the kind's place among kinds of its side
    parts: list[str] | None = None  # a combination: the kinds it joins
    owner: dict | None = None  # the object a live pod's owner would change instead
    widening: object = None  # widens.Widening: how far it lets pods go beyond what was asked

    @property
    def objects(self) -> int:
        """Objects the user changes (what a controller then does is not counted)."""
        return sum(1 for c in self.changes if not c.get("by"))

    def rank(self) -> tuple:
        """Fixes that widen less first (widens.py), then fewer objects, the
        pod's side before the cluster's, the kinds in their order, the
        smaller quantity."""
        level = self.widening.level if self.widening is not None else 0
        return (level, self.objects, 0 if self.side == POD else 1, self.order, self.magnitude, self.change)

    def description(self) -> str:
        v = self.verified
        if "nodeCount" in v:  # a sequence placed again (fixes/sequence.py)
            n, names = v["nodeCount"], v.get("nodes") or []
            more = f" and {n - len(names)} more" if n > len(names) else ""
            pre = (f", {v['placedByPreemption']} by preempting {len(v.get('victims') or ())} pod(s)"
                   if v.get("placedByPreemption") else "")
            kept = (f"; the {v['othersKeptPlaced']} other pod(s) placed before still are"
                    if v.get("othersKeptPlaced") else "")
            if "replicas" in v:
                return (f"{self.change}: all {v['replicas']} replicas placed, on {n} node(s) "
                        f"({', '.join(names)}{more}){pre}{kept}")
            return f"{self.change}: placed on {v['selectedNode']} when the pods are placed again{pre}{kept}"
        if v.get("nominatedNode"):
            victims = v.get("victims") or []
            return (f"{self.change}: preemption nominates {v['nominatedNode']}, evicting "
                    f"{len(victims)} pod(s)" + (f" ({', '.join(x['pod'] for x in victims)})" if victims else ""))
        n = v.get("feasibleNodes", 0)
        names = v.get("nodes") or []
        more = f" and {n - len(names)} more" if n > len(names) else ""
        return f"{self.change}: fits on {n} node(s) ({', '.join(names)}{more}), scheduled on {v['selectedNode']}"

    def document(self) -> dict:
        first = next((c for c in self.changes if not c.get("by")), self.changes[0])
        doc = {
            "kind": self.kind,
            "side": self.side,
            "description": self.description(),
            "objects": self.objects,
            "widening": self.widening.name if self.widening is not None else "none",
            "widens": [dict(e) for e in self.widening.entries] if self.widening is not None else [],
            "target": first["target"],
            "patch": first["patch"],
            "changes": self.changes,
            "verified": self.verified,
        }
        if self.parts:
            doc["parts"] = list(self.parts)
        if self.owner:
            doc["owner"] = self.owner
        return doc


def pod_target(pi) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "namespace": pi.namespace, "name": pi.name}


def node_target(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "namespace": None, "name": name}


def object_target(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "namespace": meta.get("namespace"),
            "name": meta.get("name")}


@dataclass
class Candidate:
    """A change to check, as data (so that two can be joined, combine.py):

    - `pod_patch`: a JSON Patch of the pod as written (or of its workload's
      template, workload_target.py);
    - `claim_edits`: claim key -> JSON Patch of that ResourceClaim (written
      to it or to its template, claims.py);
    - `node_patches`: node name -> JSON Patch of that Node;
    - `objects`: (kind, key, object or None) put in the cluster's stores
      (created PVCs, PVs, ResourceSlices; claims a controller changes);
    - `removed`: pods deleted (PodInfos of the snapshot);
    - `new_nodes`: Node objects added;
    - `changes`: how a fix lists what the last four make (the pod's and
      the claims' changes are listed from their patches);
    - `apply`: context manager factories making anything else for a cycle.
    """

    kind: str
    side: str
    change: str
    pod_patch: list[dict] | None = None
    changes: list[dict] = field(default_factory=list)
    apply: tuple = ()
    magnitude: float = 1.0
    order: int = 0
    parts: list[str] | None = None
    claim_edits: dict = field(default_factory=dict)
    node_patches: dict = field(default_factory=dict)
    objects: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    new_nodes: list = field(default_factory=list)
    # A join (combine.py): (its parts, the node it was made for, the single
    # change it was chained on), to look for a smaller join that verifies.
    joined: tuple | None = None


def candidate_key(cand: Candidate) -> str:
    """What a candidate changes, as one string (two candidates making the
    same changes have the same key)."""
    import json

    return json.dumps([cand.pod_patch or None, cand.claim_edits, cand.node_patches,
                       [(k, key) for k, key, _ in cand.objects], sorted(pi.uid for pi in cand.removed),
                       cand.new_nodes, cand.changes, len(cand.apply)],
                      sort_keys=True, default=str)


@dataclass
class Attempt:
    """A candidate whose cycle did not place the pod, with that cycle's
    result (kept for the first few: what still blocks after it)."""

    candidate: Candidate
    result: object = None
    _blockers: Blockers | None = None

    def blockers(self) -> Blockers | None:
        if self._blockers is None and self.result is not None:
            self._blockers = Blockers.from_result(self.result)
            self.result = None  # the records are big at scale: the blockers are all that is read
        return self._blockers


@dataclass
class Search:
    """One pod's search: its blockers, the verifier, and the budget."""

    verifier: Verifier
    blockers: Blockers
    pod_doc: dict
    max_runs: int = MAX_RUNS
    tried: int = 0
    combinations: int = 0
    fixes: list = field(default_factory=list)
    attempts: list = field(default_factory=list)
    # {"plugin", "reason"}: failures no kind could draw a candidate for.
    uncovered: list = field(default_factory=list)
    # {"kind", "text"}: what kschedx says but cannot check (never a fix).
    advice: list = field(default_factory=list)
    # Fixes of the side being searched (`phase`) after which that side stops
    # (find.py: large snapshots); `stopped`: it did.
    enough: int | None = None
    phase: str = POD
    stopped: bool = False
    # Candidates checked that did not place the pod (candidate_key): a
    # smaller join (combine.smallest) equal to one is known not to verify.
    failed: set = field(default_factory=set)
    # Node templates (--node-template): where add-node's new nodes come from.
    templates: list = field(default_factory=list)
    # The last check that did not place the pod: what its cycle showed still
    # blocks is where a stepped change (spread.py's maxSkew) goes next.
    last_failed: Attempt | None = None

    @property
    def pod_info(self):
        return self.verifier.pod_info

    @property
    def raw_pod(self) -> dict:
        return self.verifier.raw_pod

    @property
    def snapshot(self):
        return self.verifier.snapshot

    @property
    def cluster(self):
        return self.verifier.cluster

    def has_budget(self, runs: int = 1) -> bool:
        return self.verifier.runs + runs <= self.max_runs and not self.verifier.exhausted()

    def done(self) -> bool:
        """No more cycles: the budget is spent, or enough fixes of the side
        being searched are verified."""
        if not self.has_budget():
            return True
        if self.enough is not None and sum(1 for f in self.fixes if f.side == self.phase) >= self.enough:
            self.stopped = True
            return True
        return False

    def add_uncovered(self, plugin: str, reason: str) -> None:
        entry = {"plugin": plugin, "reason": reason}
        if entry not in self.uncovered:
            self.uncovered.append(entry)

    def add_advice(self, kind: str, text: str) -> None:
        entry = {"kind": kind, "text": text}
        if entry not in self.advice:
            self.advice.append(entry)

    def try_pod_patch(self, kind: str, change: str, patch: list[dict], *, magnitude: float = 1.0,
                      order: int = 0, preemption: bool = False) -> Fix | None:
        """The pod with `patch` applied, through one cycle: a Fix when it is placed
        (or, with `preemption`, when preemption nominates a node for it)."""
        return self.check(Candidate(kind, POD, change, pod_patch=patch, magnitude=magnitude, order=order),
                          preemption=preemption)

    def try_cluster_change(self, kind: str, change: str, changes: list[dict], apply, *, magnitude: float = 1.0,
                           order: int = 0) -> Fix | None:
        """`apply()`: a context manager making the change on the snapshot for one cycle."""
        return self.check(Candidate(kind, CLUSTER, change, changes=changes, apply=(apply,), magnitude=magnitude,
                                    order=order))

    def check(self, cand: Candidate, *, preemption: bool = False, combination: bool = False) -> Fix | None:
        """One cycle with the candidate's changes made: a Fix when the pod is
        placed. A change the objects cannot take (a patch that does not
        apply, an object the API server would refuse) is not a candidate.
        Only the budget stops a check here (a bisection's "largest that
        fits" must stay true); enough fixes stop the search between kinds."""
        if not self.has_budget():
            return None
        pi = None
        if cand.pod_patch:
            pi = self.verifier.patched_pod(cand.pod_patch)
            if pi is None:
                return None
        claim_changes: list[dict] = []
        objects = list(cand.objects)
        if cand.claim_edits:
            from .claims import claim_changes as made_of

            made = made_of(self, cand.claim_edits)
            if made is None:
                return None
            claim_changes, claim_objects, _ = made
            objects += claim_objects
        nodes = []
        for name, ops in cand.node_patches.items():
            ni = self.snapshot.get(name)
            try:
                nodes.append(apply_patch(ni.node, ops))
            except PatchError:
                return None
        self.tried += 1
        if combination:
            self.combinations += 1
        v = self.verifier
        with ExitStack() as stack:
            try:
                if objects:
                    stack.enter_context(v.objects_changed(objects))
                if cand.removed:
                    stack.enter_context(v.pods_removed(cand.removed))
                for node in nodes:
                    stack.enter_context(v.node_replaced(node))
                for node in cand.new_nodes:
                    stack.enter_context(v.node_added(node))
                for apply in cand.apply:
                    stack.enter_context(apply())
            except Refused:
                self.tried -= 1
                if combination:
                    self.combinations -= 1
                return None
            result = v.run(pi, preemption=preemption)
            verified = v.verdict(result, preemption)
        if verified is None:
            self.last_failed = None
            if not preemption:
                self.failed.add(candidate_key(cand))
            if not preemption and hasattr(result, "node_records"):
                self.last_failed = Attempt(cand, result)
                if len(self.attempts) < MAX_KEPT_ATTEMPTS:
                    self.attempts.append(self.last_failed)
            return None
        changes = []
        owner = None
        if cand.pod_patch:
            pod_change, owner = v.pod_change(cand.pod_patch)
            changes.append(pod_change)
        changes += claim_changes
        changes += cand.changes
        from .widens import widening

        widened = widening(self, cand.kind, cand.parts, cand.pod_patch, changes, verified)
        return Fix(cand.kind, cand.side, cand.change, changes, verified, cand.magnitude, cand.order,
                   parts=cand.parts, owner=owner, widening=widened)
