"""explain --watch: what a prediction depends on, kept from the cycle that
made it, and whether an event can change it (Trigger.wants asks,
commands/triggers.py).

A pod's verdict is its status, the node chosen (selectedNode and every top
node), and a preemption's nomination and victims. Pods of one scheduling key
(identical replicas) share one Reach, as they share one cycle. After a cycle,
what can change the verdict of a pod predicted Scheduled, or rejected on
every node, is:

- for the plugins whose declaration is node-local (node_local: they read the
  pod and the node filtered or scored): an event on that node only. The
  node's Filter verdict is asked again (its plugins' PreFilter state is the
  pod's own) and its raw scores from those plugins: a node that becomes
  feasible or not changes the set every normalized score and the spreading
  weights are taken over, and the scores are then computed again over the
  new set (`rescore`, when the batch runs); a feasible node whose total
  rises to the best joins the top; a top node changed in any way is asked
  about by a new cycle;
- for the other plugins: what each says it reads beyond that node
  (Plugin.event_reach: the pods its selectors and terms reach, node label
  keys, taints, the set of nodes, images); a plugin that does not say is
  moved by every event.

Pods rejected at PreFilter, nominated pods, pods that preempt or could
(eligible, with lower-priority pods about), gated pods, errors and runs with
extenders have no Reach: the declaration-based rules decide for them.
"""

from __future__ import annotations

from ..framework.interface import EventReach
from ..framework.registry import in_tree
from ..framework.declaration import traits_of

# Kinds of change a Reach decides (Event.change): an event on one node.
NARROWED = frozenset({"pod", "node-changed", "node-images", "node-added", "node-removed"})


class Reach:
    """What one cycle's verdict depends on (see the module doc)."""

    __slots__ = ("pod", "state", "status", "top", "best", "feasible", "totals", "local", "reaches", "candidates",
                 "_pos", "rescore_nodes", "_asked", "_answer")

    def __init__(self):
        self._pos = None
        self.rescore_nodes: set = set()
        self._asked = None
        self._answer = False

    # -- made from a cycle ------------------------------------------------------------
    @classmethod
    def of(cls, fw, pi, r, lowest_priority: int) -> "Reach | None":
        """The Reach of a cycle's result, or None when the declaration-based
        rules decide for this pod (see the module doc). `lowest_priority`:
        the lowest priority of a pod in the cluster (preemption)."""
        if r.status not in ("Scheduled", "Unschedulable") or r.cycle_state is None:
            return None
        if fw.extenders is not None or ((pi.pod.get("status") or {}).get("nominatedNodeName")):
            return None
        if r.preemption is not None and (r.preemption.get("nominatedNode") or pi.priority > lowest_priority):
            return None  # it preempts, or lower-priority pods about could be victims one day
        if any(st.code.label not in ("Success", "Skip") for st in r.pre_filter):
            return None  # rejected at PreFilter
        records = r.node_records
        if records is None:
            return None
        self = cls()
        self.pod = pi
        self.state = r.cycle_state
        self.status = r.status
        self.top = frozenset(r.top_nodes or ())
        self.candidates = records.candidates
        features = fw.features
        registry = in_tree(features)
        traits = None
        state = self.state
        reaches = []
        local_scores = []
        table = records.score_table
        profile = fw.profile
        active = {p.name: p for p in (*profile.pre_filter, *profile.filter) if p.name not in state.skip_filter_plugins}
        if r.status == "Scheduled":  # a pod rejected everywhere was not scored
            active.update((p.name, p) for p in (*profile.pre_score, *profile.score)
                          if p.name not in state.skip_score_plugins)
        for pl in active.values():
            entry = registry.get(pl.name)
            d = entry.declaration if entry is not None else None
            local = d is not None and d.node_local and d.factory is type(pl)
            if local:
                reads = d.reads_for(features)
                if reads:
                    if traits is None:
                        traits = traits_of(pi.pod)
                    local = not any(r_.pods & traits for r_ in reads)
            if not local:
                try:
                    reaches.append(pl.event_reach(state, pi))
                except Exception:  # a plugin's own failure: every event moves the pod
                    reaches.append(None)
        self.reaches = reaches
        if r.status == "Scheduled":
            if table is None or records.totals is None:
                return None
            # Names, not NodeInfos: a Reach outlives the snapshot it was made on
            # (a long watch builds its snapshot again now and then).
            self.feasible = [ni.name for ni in table.nodes]
            self.totals = list(records.totals)
            self.best = max(self.totals)
            for j, pl in enumerate(table.plugins):
                raw = table.raw[j]
                if raw is None or not _is_local(registry, pl, features, pi):
                    continue
                normalizes = getattr(pl, "normalize_all", None) is not None or pl.implements("normalize_score")
                local_scores.append((pl, table.weights[j], list(raw), normalizes))
        else:
            self.feasible = []
            self.totals = []
            self.best = None
        self.local = local_scores
        return self

    # -- an event ---------------------------------------------------------------------
    def wants(self, trigger, checker) -> bool:
        """Whether the event (a Trigger) can change the verdict; a node that
        may have become feasible or not is kept for `rescore` instead."""
        if self._asked is trigger:
            return self._answer
        self._asked = trigger
        self._answer = answer = self._wants(trigger, checker)
        return answer

    def _wants(self, t, checker) -> bool:
        change = t.change
        reaches = self.reaches
        if change == "pod":
            for pod in t.pods:
                for r in reaches:
                    if r is None or (r.pods is not None and r.pods(pod)):
                        return True
            return self._local(t.node, checker)
        if change == "node-images":
            return any(r is None or r.images & t.images for r in reaches)
        if change == "node-changed":
            for r in reaches:
                if r is None or r.label_keys & t.label_keys or (r.taints and t.taints_changed) \
                        or r.images & t.images:
                    return True
            return self._local(t.node, checker)
        if change == "node-added":
            if any(r is None or r.node_set for r in reaches):
                return True
            self._count(t.node, checker)
            return self._local(t.node, checker)
        if change == "node-removed":
            for r in reaches:
                if r is None or r.node_set:
                    return True
                if r.pods is not None and any(r.pods(pod) for pod in t.pods):
                    return True
            self._count(t.node, checker)
            return self._local(t.node, checker)
        return True

    def _position(self) -> dict:
        pos = self._pos
        if pos is None:
            pos = self._pos = {name: i for i, name in enumerate(self.feasible)}
        return pos

    def _count(self, node: str, checker) -> None:
        """A node added or removed, where a Score plugin counts the nodes
        (EventReach.node_count): every score may move, the feasible set's
        scores are computed again at the batch (`rescore`), as when the set
        itself changes; a top node removed still makes the pod due (`_local`)."""
        if self.status == "Scheduled" and any(r.node_count for r in self.reaches):
            self.rescore_nodes.add(node)
            checker.flag(self)

    def _local(self, node: str, checker) -> bool:
        """An event on `node` moved nothing the non-local plugins read: is
        the verdict changed through that node alone?"""
        ni = checker.node(node)
        fits = ni is not None and (self.candidates is None or node in self.candidates) \
            and checker.fits(self.pod, self.state, ni)
        if self.status != "Scheduled":
            return fits  # a node that fits now: the pod is no longer rejected everywhere
        top = node in self.top
        if top and not fits:
            return True  # a top node gone or rejecting the pod
        pos = self._position()
        i = pos.get(node)
        if (i is not None) != fits or node in self.rescore_nodes:
            self.rescore_nodes.add(node)  # the feasible set changes: scores again at the batch
            checker.flag(self)
            return False
        if not fits:
            return False
        delta = 0
        news = []
        for k, (pl, weight, raw, normalizes) in enumerate(self.local):
            new = checker.score(pl, self.pod, self.state, ni)
            if new is None:
                return True  # it failed: a new cycle says how
            if new != raw[i]:
                if normalizes:
                    if top:
                        return True
                    self.rescore_nodes.add(node)
                    checker.flag(self)
                    return False
                delta += weight * (new - raw[i])
                news.append((k, new))
        if not news:
            return False
        total = self.totals[i] + delta
        if total > self.best or (total == self.best) != top:
            return True  # it joins the best, or a best node no longer is
        self.totals[i] = total
        for k, new in news:
            self.local[k][2][i] = new
        return False

    # -- at the batch -------------------------------------------------------------------
    def rescore(self, checker) -> bool:
        """The nodes kept for it have become feasible or not: the scores over
        the feasible nodes now. True when the verdict changed (then the pod
        is explained again); otherwise what is kept is the new scores."""
        flagged = self.rescore_nodes
        self.rescore_nodes = set()
        if not flagged:
            return False
        if self.status != "Scheduled":
            return True
        pos = self._position()
        feasible = []
        for ni in checker.nodes():
            name = ni.name
            if name in flagged:
                if (self.candidates is None or name in self.candidates) and checker.fits(self.pod, self.state, ni):
                    feasible.append(ni)
            elif name in pos:
                feasible.append(ni)
        if not feasible:
            return True
        table, totals = checker.score_all(self.pod, self.state, feasible)
        best = max(totals)
        top = frozenset(ni.name for ni, total in zip(feasible, totals) if total == best)
        if top != self.top:
            return True
        self.feasible, self.totals, self.best, self._pos = [ni.name for ni in feasible], list(totals), best, None
        by_name = {pl.name: j for j, pl in enumerate(table.plugins)}
        local = []
        for pl, w, _, normalizes in self.local:
            j = by_name.get(pl.name)
            if j is None or table.raw[j] is None:
                return True  # skipped now: a new cycle says what changed
            local.append((pl, w, list(table.raw[j]), normalizes))
        self.local = local
        return False


def _is_local(registry, pl, features, pi) -> bool:
    entry = registry.get(pl.name)
    d = entry.declaration if entry is not None else None
    if d is None or not d.node_local or d.factory is not type(pl):
        return False
    reads = d.reads_for(features)
    return not (reads and any(r.pods & traits_of(pi.pod) for r in reads))


class Checker:
    """A node filtered and scored again for a pod, against the state now:
    the frameworks of the last batch (plugins read the live snapshot)."""

    def __init__(self, scheds, flagged: dict | None = None):
        self.scheds = scheds
        self.snapshot = scheds.snapshot
        # Reaches with nodes to score again -> (when the first was flagged,
        # why) (the watch's: it outlives a checker); `now` and `reason`: the
        # event's.
        self.flagged = flagged if flagged is not None else {}
        self.now = 0.0
        self.reason = ""

    def flag(self, reach: "Reach") -> None:
        self.flagged.setdefault(reach, (self.now, self.reason))

    def node(self, name: str):
        return self.snapshot.by_name.get(name)

    def nodes(self):
        return self.snapshot.node_infos

    def fits(self, pi, state, ni) -> bool:
        fw = self.scheds.framework_for(pi)
        try:
            # The Filter plugins a Reach asks write nothing into the state
            # (those that do, VolumeBinding and DynamicResources, make a pod's
            # Reach None when they run): no copy of it.
            st = fw.run_filter_plugins_with_nominated_pods(state, pi, ni)
        except Exception:  # a plugin's error there: let a new cycle say it
            return True
        return st is None or st.is_success()

    def score(self, pl, pi, state, ni) -> int | None:
        fw = self.scheds.framework_for(pi)
        mine = next((p for p in fw.profile.score if p.name == pl.name), None)
        if mine is None:
            return None
        try:
            return mine.score(state, pi, ni)
        except Exception:
            return None

    def score_all(self, pi, state, feasible):
        fw = self.scheds.framework_for(pi)
        s = state.clone()
        s.skip_score_plugins = set()
        table, totals = fw.score_nodes(s, pi, feasible)
        return table, totals


NO_REACH = EventReach()
