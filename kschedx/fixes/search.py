"""One pod's fix search: the candidates it checks, each through one
scheduling cycle (verify.py), within its budget; and the Fix each verified
change becomes."""

from __future__ import annotations

from dataclasses import dataclass, field

from .blockers import Blockers
from .verify import Verifier, outcome, preemption_outcome

# Cycles one pod's search may run (bisections included), and fixes shown.
MAX_RUNS = 48
MAX_FIXES = 8
# Candidates each kind checks at most (bisection steps not counted).
MAX_CANDIDATES = 3

POD = "pod"
CLUSTER = "cluster"


@dataclass
class Fix:
    kind: str
    side: str  # POD or CLUSTER
    change: str  # what to do, in words
    changes: list[dict]  # {"action": patch|create|delete, "target": {...}, "patch": [...]}
    verified: dict
    magnitude: float = 1.0  # within a kind: smaller is a smaller change
    order: int = 0  # the kind's place among kinds of its side

    @property
    def objects(self) -> int:
        return len(self.changes)

    def rank(self) -> tuple:
        return (self.objects, 0 if self.side == POD else 1, self.order, self.magnitude, self.change)

    def description(self) -> str:
        v = self.verified
        if v.get("nominatedNode"):
            victims = v.get("victims") or []
            return (f"{self.change}: preemption nominates {v['nominatedNode']}, evicting "
                    f"{len(victims)} pod(s)" + (f" ({', '.join(x['pod'] for x in victims)})" if victims else ""))
        n = v.get("feasibleNodes", 0)
        names = v.get("nodes") or []
        more = f" and {n - len(names)} more" if n > len(names) else ""
        return f"{self.change}: fits on {n} node(s) ({', '.join(names)}{more}), scheduled on {v['selectedNode']}"

    def document(self) -> dict:
        first = self.changes[0]
        return {
            "kind": self.kind,
            "side": self.side,
            "description": self.description(),
            "objects": self.objects,
            "target": first["target"],
            "patch": first["patch"],
            "changes": self.changes,
            "verified": self.verified,
        }


def pod_target(pi) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "namespace": pi.namespace, "name": pi.name}


def node_target(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "namespace": None, "name": name}


@dataclass
class Search:
    """One pod's search: its blockers, the verifier, and the budget."""

    verifier: Verifier
    blockers: Blockers
    pod_doc: dict
    max_runs: int = MAX_RUNS
    tried: int = 0
    fixes: list = field(default_factory=list)

    @property
    def pod_info(self):
        return self.verifier.pod_info

    @property
    def raw_pod(self) -> dict:
        return self.verifier.raw_pod

    @property
    def snapshot(self):
        return self.verifier.snapshot

    def has_budget(self, runs: int = 1) -> bool:
        return self.verifier.runs + runs <= self.max_runs

    def try_pod_patch(self, kind: str, change: str, patch: list[dict], *, magnitude: float = 1.0,
                      order: int = 0, preemption: bool = False) -> Fix | None:
        """The pod with `patch` applied, through one cycle: a Fix when it is placed
        (or, with `preemption`, when preemption nominates a node for it)."""
        if not self.has_budget():
            return None
        pi = self.verifier.patched_pod(patch)
        if pi is None:
            return None
        self.tried += 1
        result = self.verifier.run(pi, preemption=preemption)
        verified = preemption_outcome(result) if preemption else outcome(result)
        if verified is None:
            return None
        return Fix(kind, POD, change, [{"action": "patch", "target": pod_target(self.pod_info), "patch": patch}],
                   verified, magnitude, order)

    def try_cluster_change(self, kind: str, change: str, changes: list[dict], apply, *, magnitude: float = 1.0,
                           order: int = 0) -> Fix | None:
        """`apply()`: a context manager making the change on the snapshot for one cycle."""
        if not self.has_budget():
            return None
        self.tried += 1
        with apply():
            result = self.verifier.run()
            verified = outcome(result)
        if verified is None:
            return None
        return Fix(kind, CLUSTER, change, changes, verified, magnitude, order)
