"""The preemption Evaluator of kube-scheduler v1.35 (framework/preemption).

Preempt: eligibility, the nodes where removing pods may help (those whose
Filter failure was Unschedulable, not UnschedulableAndUnresolvable), a dry run
per node on copies of the node and of the cycle state (sampled from an offset,
stopping once enough candidates are found), and the choice of one candidate:
fewest PDB violations, lowest highest-victim priority, smallest priority sum,
fewest victims, latest start time of the most important victims.

Upstream runs the dry runs in parallel, over potential nodes in Go map
order, and keeps candidates in a map; where that makes the outcome depend on
timing or map order, kschedx goes through the potential nodes in node-tree
order from the offset, one after another, and among equal candidates takes
the smallest node name (--tie-break name) or a seeded random one. Every
choice is recorded in the PostFilterResult details, and so is what other
orders could nominate (`search`, `alternatives`: preemption_search.py),
computed from one dry run per potential node.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..api.labels import SelectorError, label_selector
from .fit_error import fit_error_message
from .interface import PostFilterResult, features_of
from .preemption_memo import DryRunMemo, Kept, same_pods
from .preemption_search import outcome_shares
from .status import Code, Status

MAX_INT32 = 2**31 - 1
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE = "no candidate node for preemption"
# The most outcomes `alternatives` lists (most likely first, the chosen one always).
ALTERNATIVES_SHOWN = 50

CRITERIA = (
    "fewest PDB violations",
    "lowest highest-victim priority",
    "smallest sum of victim priorities",
    "fewest victims",
    "latest start time of the most important victims",
)


# -- ordering of pods ------------------------------------------------------------------
def _start_key(pi):
    """GetPodStartTime: pods without status.startTime count as started now,
    i.e. after every pod that has one (and at the same instant as each other)."""
    return (1, 0.0) if pi.start_time is None else (0, pi.start_time.timestamp())


def importance_key(pi) -> tuple:
    """MoreImportantPod as a key, smaller first: (-priority, start key);
    kept on the PodInfo (a pod is compared many times, in many dry runs)."""
    key = pi.importance
    if key is None:
        key = pi.importance = (-pi.priority, *_start_key(pi))
    return key


def more_important_pod(a, b) -> bool:
    """util.MoreImportantPod: higher priority, then earlier start time."""
    return importance_key(a) < importance_key(b)


# -- PodDisruptionBudgets ---------------------------------------------------------------
@dataclass
class Budget:
    """A PDB as preemption reads it: namespace, selector, disruptions allowed."""

    key: str
    namespace: str
    selector: object  # labels.Selector, or None when it matches nothing
    allowed: int
    disrupted: frozenset


def budgets_from_cluster(cluster) -> list[Budget]:
    out = []
    for key in sorted(cluster.pod_disruption_budgets):
        pdb = cluster.pod_disruption_budgets[key]
        meta = pdb.get("metadata") or {}
        spec = pdb.get("spec") or {}
        status = pdb.get("status") or {}
        try:
            sel = label_selector(spec.get("selector"))
        except SelectorError:
            sel = None  # an invalid selector matches no pod
        # A nil or empty selector matches nothing, too.
        if sel is not None and (sel.is_empty() or sel.nothing):
            sel = None
        out.append(Budget(
            key=key,
            namespace=meta.get("namespace", "default"),
            selector=sel,
            allowed=int(status.get("disruptionsAllowed") or 0),
            disrupted=frozenset((status.get("disruptedPods") or {}).keys()),
        ))
    return out


def split_by_pdb_violation(pods: list, budgets: list[Budget], first_violation_stops: bool = False) -> tuple[list, list]:
    """filterPodsWithPDBViolation: keeps the order; a pod violates when some
    matching budget would go below zero by evicting it (and the pods before
    it). Before 1.37 a pod takes one from every budget it matches; from 1.37
    (`first_violation_stops`, FilterVictimsWithPDBViolation) it stops at the
    first budget it violates, leaving the later ones untouched."""
    allowed = [b.allowed for b in budgets]
    violating, non_violating = [], []
    for pi in pods:
        violated = False
        if pi.labels:
            for i, b in enumerate(budgets):
                if b.namespace != pi.namespace or b.selector is None:
                    continue
                if not b.selector.matches(pi.labels):
                    continue
                if pi.name in b.disrupted:
                    # Already being evicted through the API: not counted again.
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
                    if first_violation_stops:
                        break
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


# -- candidates ---------------------------------------------------------------------------
@dataclass
class Candidate:
    name: str
    victims: list  # PodInfo, most important first
    num_pdb_violations: int
    lost_on: str | None = None
    # scores(), when known already (kept with a dry run).
    known_scores: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def highest_priority(self) -> int:
        return self.victims[0].priority

    @property
    def priority_sum(self) -> int:
        # MaxInt32+1 added to each so that negative priorities still count
        # more victims as worse.
        return sum(v.priority + MAX_INT32 + 1 for v in self.victims)

    def earliest_start(self):
        """GetEarliestPodStartTime: the earliest start among the victims of the
        highest priority (None = now)."""
        first = self.victims[0]
        best = first
        max_prio = first.priority
        for v in self.victims:
            if v.priority == max_prio:
                if _start_key(v) < _start_key(best):
                    best = v
            elif v.priority > max_prio:
                max_prio = v.priority
                best = v
        return best

    def scores(self):
        """The scores of pickOneNodeForPreemption, higher is better, in order."""
        if self.known_scores is not None:
            return self.known_scores
        return (
            -self.num_pdb_violations,
            -self.highest_priority,
            -self.priority_sum,
            -len(self.victims),
            # A later start is better; "now" is the latest of all.
            _start_key(self.earliest_start()),
        )


@dataclass
class DryRun:
    candidates: list[Candidate] = field(default_factory=list)
    statuses: dict = field(default_factory=dict)  # node -> Status (failed dry runs)
    errors: list[str] = field(default_factory=list)
    potential: int = 0
    offset: int = 0
    num_candidates: int = 0
    evaluated: int = 0
    # Every candidate of the potential nodes, in their order: the search's
    # input (None when the dry runs did not cover every potential node).
    all_candidates: list[Candidate] | None = None


class Evaluator:
    """preemption.Evaluator bound to a plugin that provides the Interface:
    get_offset_and_num_candidates, pod_eligible_to_preempt_others,
    select_victims_on_node, is_preemption_allowed."""

    def __init__(self, plugin_name: str, handle, interface):
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface
        self.memo = DryRunMemo()

    def preempt(self, state, pod, m) -> tuple[PostFilterResult | None, Status]:
        nominated = ((pod.pod.get("status") or {}).get("nominatedNodeName")) or ""
        ok, msg = self.interface.pod_eligible_to_preempt_others(pod, m.get(nominated))
        if not ok:
            return None, Status(Code.UNSCHEDULABLE, msg)

        all_nodes = self.handle.snapshot.node_infos
        run = self.find_candidates(state, all_nodes, pod, m)
        if run.errors and not run.candidates:
            return None, Status.as_error(aggregate_errors(run.errors))
        details = self._details(run)
        if run.all_candidates is not None and not run.candidates:
            details["search"] = self._search_dict(run, 0, 0)
        if not run.candidates:
            message = fit_error_message(
                len(all_nodes), run.statuses, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, PREEMPTION_NOT_HELPFUL))
            # Nominating "" clears a nomination the pod may have (ModeOverride).
            return PostFilterResult("", details), Status(Code.UNSCHEDULABLE, message)

        candidates = run.candidates
        extenders = getattr(self.handle, "extenders", None)
        calls: list[dict] = []
        if extenders is not None:
            # callExtenders: extenders with a preemptVerb may change the candidates.
            candidates, error = extenders.process_preemption(
                self.handle, pod, candidates, calls, lambda node, victims, pdb: Candidate(node, victims, pdb))
            if error is not None:
                return None, Status.as_error(error)
            if calls:
                details["extenders"] = calls
        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.UNSCHEDULABLE, NO_CANDIDATE)
        self._search(run, details, best, bool(calls))
        details["candidates"] = [self._candidate_dict(c, c is best) for c in candidates]
        details["victims"] = [{"pod": v.key, "priority": v.priority, "node": best.name} for v in best.victims]
        details["pdbViolations"] = best.num_pdb_violations
        details["victimPodInfos"] = list(best.victims)
        lower = self.lower_priority_nominated_pods(pod, best.name)
        details["clearedNominations"] = [p.key for p in lower]
        details["clearedNominationPodInfos"] = lower
        if features_of(self.handle).preemption_reports_placement:
            return PostFilterResult(best.name, details), Status(
                Code.SUCCESS, f"found a potential placement for pod on node {best.name}, preempting "
                              f"{len(best.victims)} victims")
        return PostFilterResult(best.name, details), Status()

    # -- finding candidates -----------------------------------------------------------
    def find_candidates(self, state, all_nodes, pod, m) -> DryRun:
        if not all_nodes:
            return DryRun(errors=["no nodes available"])
        # Only nodes whose failure removing pods could resolve, in node-tree
        # order (upstream: map order on the usual path, see NodeToStatus).
        potential = m.nodes_for_status_code(Code.UNSCHEDULABLE)
        if not potential:
            return DryRun()
        budgets = budgets_from_cluster(self.handle.cluster)
        offset, num = self.interface.get_offset_and_num_candidates(len(potential))
        dry_run = self._dry_runner(state, pod, budgets, len(all_nodes))
        if num >= len(potential) or not getattr(self.handle, "preemption_search", True):
            run = self.dry_run_preemption(state, pod, potential, budgets, offset, num, dry_run=dry_run)
            if num >= len(potential):
                # The walk examined every potential node (it stops early only
                # once every node is a candidate): its candidates are all.
                position = {ni.name: i for i, ni in enumerate(potential)}
                run.all_candidates = sorted(run.candidates, key=lambda c: position[c.name])
            return run
        # kube-scheduler examines only some: what every order could find
        # needs every node's dry run, which the walk from the offset reads.
        results = [dry_run(ni) for ni in potential]
        run = self.dry_run_preemption(state, pod, potential, budgets, offset, num, results)
        run.all_candidates = [c for c, _ in results if c is not None]
        return run

    def _dry_runner(self, state, pod, budgets, num_nodes: int):
        """dry_run_node for this cycle, answered from the memo where it can
        be (preemption_memo.py)."""
        memo = self.memo
        handle = self.handle
        shape = memo.shape_key(handle, state, pod) if getattr(handle, "dry_run_memo", True) else None
        if shape is None:
            def dry_run_each(ni):
                memo.dry_runs += 1
                return self.dry_run_node(state, pod, ni, budgets)
            return dry_run_each
        kept_by_node = memo.shape(shape, handle.cluster, num_nodes).by_node
        nominator = handle.nominator
        nominated_on = memo.nominated_on
        verify = memo.verify

        def dry_run(ni):
            name = ni.name
            kept = kept_by_node.get(name)
            nominated = nominated_on(nominator, pod, name) if name in nominator.by_node else ()
            if kept is not None and (kept.generation != ni.generation or not same_pods(kept.nominated, nominated)):
                kept = None
            if kept is not None and not verify:
                memo.hits += 1
                return kept.candidate, kept.status
            memo.dry_runs += 1
            c, status = self.dry_run_node(state, pod, ni, budgets)
            if c is not None:
                c.known_scores = c.scores()
            if kept is not None:
                memo.check(kept, c, status)
                return kept.candidate, kept.status
            kept_by_node[name] = Kept(ni.generation, nominated, c, status)
            return c, status
        return dry_run

    def dry_run_node(self, state, pod, node_info, budgets) -> tuple[Candidate | None, Status | None]:
        """SelectVictimsOnNode on copies of the node and of the cycle state:
        (the candidate, None) or (None, why not)."""
        node_copy = node_info.clone()
        victims, num_pdb, status = self.interface.select_victims_on_node(state.clone(), pod, node_copy, budgets)
        if status is None and victims:
            return Candidate(node_copy.name, victims, num_pdb), None
        if status is None:
            status = Status.as_error(f'expected at least one victim pod on node "{node_copy.name}"')
        return None, status

    def dry_run_preemption(self, state, pod, potential, budgets, offset: int, num: int, results=None,
                           dry_run=None) -> DryRun:
        """DryRunPreemption, one node after another from `offset`, stopping
        once `num` candidates are found, one of them without a PDB
        violation. `results`: every potential node's dry_run_node, when
        done already (the walk then only reads them); `dry_run`: how a node
        is dry-run otherwise (dry_run_node by default)."""
        if dry_run is None:
            def dry_run(ni):
                return self.dry_run_node(state, pod, ni, budgets)
        run = DryRun(potential=len(potential), offset=offset, num_candidates=num)
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        for i in range(len(potential)):
            j = (offset + i) % len(potential)
            run.evaluated += 1
            c, status = results[j] if results is not None else dry_run(potential[j])
            if c is not None:
                # Each list holds at most `num` candidates; extra ones are dropped.
                target = non_violating if c.num_pdb_violations == 0 else violating
                if len(target) < num:
                    c.lost_on = None  # a kept candidate may have lost in an earlier cycle
                    target.append(c)
                if non_violating and len(non_violating) + len(violating) >= num:
                    break
                continue
            if status.code == Code.ERROR:
                run.errors.append(status.message())
            run.statuses[potential[j].name] = status
        # Upstream lists each kind in the order its parallel dry runs finished;
        # kschedx by node name (the choice does not depend on the order).
        run.candidates = sorted(non_violating, key=_name_of) + sorted(violating, key=_name_of)
        return run

    # -- choosing one -------------------------------------------------------------------
    def select_candidate(self, candidates: list[Candidate]) -> Candidate | None:
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        return self.pick_one_node_for_preemption(candidates)

    def pick_one_node_for_preemption(self, candidates: list[Candidate]) -> Candidate:
        """Each criterion keeps the best-scoring nodes; the first criterion that
        leaves one node decides. Upstream then takes the first of the tied
        nodes in map order: kschedx takes the smallest name (or a seeded
        random one with --tie-break random)."""
        remaining = sorted(candidates, key=lambda c: c.name)
        scores = {c.name: c.scores() for c in remaining}  # node names are unique
        for level, criterion in enumerate(CRITERIA):
            best = max(scores[c.name][level] for c in remaining)
            kept = []
            for c in remaining:
                if scores[c.name][level] == best:
                    kept.append(c)
                else:
                    c.lost_on = criterion
            remaining = kept
            if len(remaining) == 1:
                return remaining[0]
        if getattr(self.handle, "tie_break", "name") == "name":
            chosen = remaining[0]
            tie = "tied on every criterion; kube-scheduler takes any of them, kschedx the smallest node name"
        else:
            chosen = self.handle.rng.choice(remaining)
            tie = "tied on every criterion; chosen at random among them"
        for c in remaining:
            if c is not chosen:
                c.lost_on = tie
        return chosen

    def lower_priority_nominated_pods(self, pod, node_name: str) -> list:
        """Pods nominated to the node with a lower priority lose their
        nomination when the preemptor is nominated there."""
        return [p for p in self.handle.nominator.nominated_pods_for_node(node_name) if p.priority < pod.priority]

    # -- what other examination orders could nominate ----------------------------------
    def _search(self, run: DryRun, details: dict, best: Candidate, extenders_called: bool) -> None:
        """`search` (how many nodes, candidates wanted, whether the outcome
        could differ), `alternatives` (each possible outcome and its share)
        and each candidate node's part (`nodePreemption`, for its record),
        from every potential node's dry run (preemption_search.py)."""
        cands = run.all_candidates
        if cands is None:
            return
        keys = [c.scores() for c in cands]
        shares = outcome_shares(keys, [c.num_pdb_violations == 0 for c in cands], run.num_candidates)
        outcomes = shares.outcomes
        search = details["search"] = self._search_dict(run, outcomes, len(cands))
        if extenders_called:
            # The extenders would answer another set of candidates in another
            # order: kschedx asks them once, about the set it found.
            search["alternativesOmitted"] = "preemption extenders"
            return
        details["nodePreemption"] = NodePreemption(cands, shares)
        if outcomes <= 1:
            return
        possible = [i for i, n in enumerate(shares.numerators) if n]
        possible.sort(key=lambda i: -shares.numerators[i])  # stable: node-tree order among equal shares
        shown = possible[:ALTERNATIVES_SHOWN]
        chosen = next(i for i, c in enumerate(cands) if c.name == best.name)
        if chosen not in shown:
            shown[-1] = chosen
        details["alternatives"] = [
            {"nominatedNode": cands[i].name,
             "victims": [{"pod": v.key, "priority": v.priority} for v in cands[i].victims],
             "pdbViolations": cands[i].num_pdb_violations,
             "share": round(shares.value(i), 6),
             "chosen": i == chosen}
            for i in shown
        ]

    @staticmethod
    def _search_dict(run: DryRun, outcomes: int, with_victims: int) -> dict:
        return {
            "potentialNodes": run.potential,
            "candidatesWanted": run.num_candidates,
            "nodesWithVictims": with_victims,
            "couldDiffer": outcomes > 1,
            "outcomes": outcomes,
        }

    # -- explanation ----------------------------------------------------------------------
    @staticmethod
    def _candidate_dict(c: Candidate, selected: bool) -> dict:
        start = c.earliest_start().start_time
        return {
            "node": c.name,
            "selected": selected,
            "victims": [v.key for v in c.victims],
            "numVictims": len(c.victims),
            "pdbViolations": c.num_pdb_violations,
            "highestPriority": c.highest_priority,
            "prioritySum": sum(v.priority for v in c.victims),
            "earliestStartTime": start.isoformat().replace("+00:00", "Z") if start is not None else None,
            "lostOn": None if selected else c.lost_on,
        }

    def _details(self, run: DryRun) -> dict:
        return {
            "victims": [],
            "pdbViolations": 0,
            "sampling": {
                "potentialNodes": run.potential,
                "offset": run.offset,
                "numCandidates": run.num_candidates,
                "evaluatedNodes": run.evaluated,
            },
            "candidates": [],
            "dryRunFailures": [
                {"node": name, "code": st.code.label, "reasons": list(st.reasons)}
                for name, st in sorted(run.statuses.items())
            ],
        }


class NodePreemption(Mapping):
    """Each candidate node's part in the search, by node name (the records'
    `preemption`), made when a record asks for it: a run that writes no
    node records (simulate --detail placements) builds none of it."""

    __slots__ = ("_cands", "_shares", "_index")

    def __init__(self, cands: list[Candidate], shares):
        self._cands = cands
        self._shares = shares
        self._index = None

    def __getitem__(self, name: str) -> dict:
        if self._index is None:
            self._index = {c.name: i for i, c in enumerate(self._cands)}
        i = self._index[name]
        c, shares = self._cands[i], self._shares
        return {"numVictims": len(c.victims), "pdbViolations": c.num_pdb_violations,
                "couldBeNominated": bool(shares.numerators[i]), "share": round(shares.value(i), 6)}

    def __iter__(self):
        return (c.name for c in self._cands)

    def __len__(self) -> int:
        return len(self._cands)


def _name_of(c: Candidate) -> str:
    return c.name


def aggregate_errors(errors: list[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message, or the distinct
    messages in brackets."""
    if len(errors) == 1:
        return errors[0]
    seen = []
    for e in errors:
        if e not in seen:
            seen.append(e)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"
