"""Preemption's dry runs kept from one cycle to the next.

A dry run (SelectVictimsOnNode on copies of a node and of the cycle state)
is a function of what it reads: the preemptor as scheduling reads it, the
cycle state its PreFilter left, the node's NodeInfo, the pods nominated to
the node with at least the preemptor's priority, and the PodDisruptionBudgets.
When every plugin that filters the preemptor is node-local (its declaration
says so: its state comes from the pod alone and its verdict reads only the
node filtered), the cycle state is a function of the pod too, and a dry run
done in an earlier cycle for an identical preemptor answers again for every
node whose NodeInfo has not changed since (NodeInfo.generation), with the
same nominated pods and the same budgets. That is what makes kschedx's exact
candidate search (one dry run per potential node, preemption.py) cost about
one dry run per node that changed: a preemption changes one node.

Anything else (InterPodAffinity or PodTopologySpread filtering the pod,
volumes, claims, a plugin of another distribution) and nothing is kept: the
dry runs are those of the cycle itself. Tests hold every answer to a dry run
done again (`verify`) and whole documents with the memo on and off.
"""

from __future__ import annotations

import json
from collections import OrderedDict

from ..sources.trim import trim_pod
from .declaration import traits_of
from .registry import in_tree

# Dry runs kept, at most, per node of the cluster (several preemptor shapes).
ENTRIES_PER_NODE = 4


class MemoMismatch(AssertionError):
    """A kept dry run that a new one contradicts (verify mode only)."""


class Kept:
    """One node's dry run for one preemptor shape: what it was done against
    (the node's generation, the nominated pods it added) and its outcome
    (the Candidate, its scores known, or the failure Status)."""

    __slots__ = ("generation", "nominated", "candidate", "status")

    def __init__(self, generation, nominated, candidate, status):
        self.generation = generation
        self.nominated = nominated
        self.candidate = candidate
        self.status = status


class ShapeMemo:
    """The dry runs of one preemptor shape, by node name, all against the
    same PodDisruptionBudgets."""

    __slots__ = ("budgets", "by_node")

    def __init__(self, budgets: tuple):
        self.budgets = budgets
        self.by_node: dict[str, Kept] = {}


class DryRunMemo:
    """Dry-run outcomes by preemptor shape and node (one per Evaluator, which
    lives as long as its Framework). `enabled` False: every dry run is done
    (the reference the tests compare with); `verify`: every kept answer is
    checked against a dry run done again (tests)."""

    # Class defaults: the tests switch every memo of a run off, or to verify.
    default_enabled = True
    default_verify = False

    def __init__(self):
        self.enabled = self.default_enabled
        self.verify = self.default_verify
        self.dry_runs = 0  # dry runs done (not answered from the memo)
        self.hits = 0
        self._shapes: OrderedDict[str, ShapeMemo] = OrderedDict()

    # -- what a dry run depends on ------------------------------------------------
    def shape_key(self, handle, state, pod) -> str | None:
        """The preemptor as its dry runs read it, or None when they read more
        than the pod and the node (then nothing is kept)."""
        if not self.enabled:
            return None
        features = handle.features
        registry = in_tree(features)
        traits = None
        skip = state.skip_filter_plugins
        profile = handle.profile
        for pl in (*profile.pre_filter, *profile.filter):
            if pl.name in skip:
                continue
            entry = registry.get(pl.name)
            d = entry.declaration if entry is not None else None
            if d is None or not d.node_local or d.factory is not type(pl):
                return None
            reads = d.reads_for(features)
            if reads:
                if traits is None:
                    traits = traits_of(pod.pod)
                if any(r.pods & traits for r in reads):
                    return None
        # The trimmed pod (what scheduling reads; sources/trim.py) but its
        # identity, and the priority its victims are chosen by.
        trimmed = trim_pod(pod.pod)
        meta = {k: v for k, v in (trimmed.get("metadata") or {}).items()
                if k not in ("name", "generateName", "uid", "resourceVersion", "generation", "creationTimestamp")}
        return json.dumps([pod.priority, meta, trimmed.get("spec"), trimmed.get("status")],
                          default=repr, separators=(",", ":"))

    @staticmethod
    def nominated_on(nominator, pod, node_name: str) -> tuple:
        """The pods the dry run adds to the node (AddNominatedPods: at least
        the preemptor's priority, not the preemptor)."""
        pods = nominator.by_node.get(node_name)
        if not pods:
            return ()
        return tuple(p for p in pods if p.priority >= pod.priority and p.uid != pod.uid)

    def shape(self, key: str, cluster, num_nodes: int) -> ShapeMemo:
        """The memo of one shape, emptied when the budgets changed. The other
        shapes, least recently used first, are dropped past (ENTRIES_PER_NODE
        - 1) entries a node, leaving room for this one's."""
        pdbs = cluster.pod_disruption_budgets
        budgets = tuple((k, pdbs[k]) for k in sorted(pdbs))
        memo = self._shapes.pop(key, None)
        if memo is None or not _same_budgets(memo.budgets, budgets):
            memo = ShapeMemo(budgets)
        others = sum(len(m.by_node) for m in self._shapes.values())
        while others > (ENTRIES_PER_NODE - 1) * num_nodes:
            _, dropped = self._shapes.popitem(last=False)
            others -= len(dropped.by_node)
        self._shapes[key] = memo
        return memo

    @staticmethod
    def check(kept: Kept, candidate, status) -> None:
        """verify mode: a kept answer equals the dry run done again."""
        a, b = kept.candidate, candidate
        same = (a is None) == (b is None) and (kept.status is None) == (status is None)
        if same and a is not None:
            same = (a.name == b.name and a.num_pdb_violations == b.num_pdb_violations
                    and len(a.victims) == len(b.victims) and all(x is y for x, y in zip(a.victims, b.victims))
                    and a.scores() == b.scores())
        if same and status is not None:
            same = kept.status.code == status.code and list(kept.status.reasons) == list(status.reasons)
        if not same:
            raise MemoMismatch(f"a kept dry run differs from a new one: {a!r} {kept.status!r} / {b!r} {status!r}")

    def clear(self) -> None:
        self._shapes.clear()


def same_pods(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _same_budgets(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x[0] == y[0] and x[1] is y[1] for x, y in zip(a, b))
