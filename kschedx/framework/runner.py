"""One scheduling cycle, recorded in full.

Follows schedule_one.go and framework/runtime/framework.go of kube-scheduler
v1.35: PreEnqueue, PreFilter (Skip, PreFilterResult, rejection), Filter with
nominated pods, PostFilter, PreScore, Score, NormalizeScore, weights and
selection. Unlike kube-scheduler it evaluates every Filter plugin on every
node (for the explanation) while still knowing which failure kube-scheduler
itself would report: the first one in profile order.
"""

from __future__ import annotations

import random
from itertools import compress

from ..features import Features
from ..state.snapshot import NodeInfo, PodInfo, Snapshot
from .cycle_state import CycleState
from .fit_error import fit_error_message
from .interface import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore, PluginError, PreFilterResult
from .profile import Profile
from .records import (
    SKIPPED,
    FilterTable,
    FilterVerdict,
    NodeRecords,
    NodeResult,
    PluginScore,
    PodResult,
    ScoreTable,
)
from .sampling import SamplingState, best_of_some_window, walk
from .status import Code, Status

__all__ = ["Framework", "FilterVerdict", "NodeResult", "PluginScore", "PodResult", "NodeToStatus", "queue_order"]

# CycleState key: this cycle ends before PostFilter (Framework.schedule).
NO_POST_FILTER = "kschedx/no-post-filter"
ONE_FEASIBLE_NOTE = "only one feasible node: kube-scheduler selects it without scoring (scores shown for information)"


class Nominator:
    """Pending pods nominated to nodes (status.nominatedNodeName)."""

    def __init__(self):
        self.by_node: dict[str, list[PodInfo]] = {}
        self._node_of: dict[str, str] = {}  # uid -> node: removal looks at one node only

    def add(self, pi: PodInfo, node: str) -> None:
        self.remove(pi)
        self.by_node.setdefault(node, []).append(pi)
        self._node_of[pi.uid] = node

    def is_nominated(self, pi: PodInfo) -> bool:
        return pi.uid in self._node_of

    def remove(self, pi: PodInfo) -> None:
        node = self._node_of.pop(pi.uid, None)
        if node is None:
            return
        kept = [p for p in self.by_node[node] if p.uid != pi.uid]
        if kept:
            self.by_node[node] = kept
        else:
            del self.by_node[node]

    def nominated_pods_for_node(self, node: str) -> list[PodInfo]:
        return self.by_node.get(node, [])


class Framework:
    """The plugins of a profile bound to a snapshot: upstream's frameworkImpl,
    which is also the Handle plugins use to reach the snapshot."""

    def __init__(self, snapshot: Snapshot, *, tie_break: str = "random", seed: int | None = None, plugin_args=None,
                 plan=None, nominator: Nominator | None = None, rng: random.Random | None = None,
                 sampling: SamplingState | None = None, extenders=None, features: Features | None = None):
        """`plan`: the profile (ProfilePlan) to run, the default one when None.
        `features`: the version and feature gates every plugin reads as
        `handle.features` (the plan's, else the snapshot's); a plan made for
        other features is refused.
        Frameworks of several profiles over one snapshot share the nominator
        (upstream's one scheduling queue), the random source, the sampling
        state (the scheduler's next start index) and the configured extenders
        (framework/extenders.Extenders, or None)."""
        if features is None:
            features = plan.features if plan is not None and plan.features is not None else snapshot.features
        elif plan is not None and plan.features is not None and plan.features != features:
            raise ValueError(f"profile {plan.name} was planned for {plan.features!r}, not {features!r}")
        self.features = features
        self.snapshot = snapshot
        self.sampling = sampling if sampling is not None else SamplingState()
        self.cluster = snapshot.cluster
        self.nominator = nominator if nominator is not None else Nominator()
        self.tie_break = tie_break
        self.rng = rng if rng is not None else random.Random(seed)
        # Preemption dry-runs every potential node when kube-scheduler would
        # examine only some, to say what other orders could nominate; runs
        # that never report it (capacity, checking fixes) turn it off.
        self.preemption_search = True
        self._extensions = None  # see _pre_filter_extensions
        self.profile = Profile(self, plugin_args, plan)
        self.extenders = extenders

    # -- Handle ----------------------------------------------------------------
    def weight(self, plugin: str) -> int:
        return self.profile.weights.get(plugin, 1)

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo):
        self._run_pre_filter_extensions(state, pod, to_add, node, "add_pod", "AddPod")

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo):
        self._run_pre_filter_extensions(state, pod, to_remove, node, "remove_pod", "RemovePod")

    def _run_pre_filter_extensions(self, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo,
                                   method: str, point: str):
        """The one loop behind RunPreFilterExtensionAddPod / RemovePod: plugins
        that skipped at PreFilter are left out; a failure aborts the cycle."""
        for name, ext in self._pre_filter_extensions(state.skip_filter_plugins):
            st = getattr(ext, method)(state, pod, other, node)
            if st is not None and not st.is_success():
                raise PluginError(f'running {point} on PreFilter plugin "{name}": {st.message()}')

    def _pre_filter_extensions(self, skip: set) -> list:
        """(plugin name, PreFilterExtensions) of the PreFilter plugins that
        have them and are not in `skip`: kept for the last `skip` seen (the
        dry runs of one preemption ask thousands of times, with copies of one
        set), asked again when the profile's PreFilter plugins change."""
        plugins = self.profile.pre_filter
        kept = self._extensions
        if kept is not None and kept[0] == skip and kept[1] is plugins and kept[2] == len(plugins):
            return kept[3]
        exts = []
        for pl in plugins:
            ext = pl.pre_filter_extensions()
            if ext is not None and pl.name not in skip:
                exts.append((pl.name, ext))
        self._extensions = (frozenset(skip), plugins, len(plugins), exts)
        return exts

    def run_reserve_plugins_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """RunReservePluginsReserve: plugins remember the placement (VolumeBinding
        assumes its PV/PVC choices) so the next cycles of `simulate` see it. On
        failure every Reserve plugin is unreserved, as schedule_one does."""
        for pl in self.profile.reserve:
            st = pl.reserve(state, pod, node_name)
            if st is not None and not st.is_success():
                self.run_reserve_plugins_unreserve(state, pod, node_name)
                if st.is_rejected():
                    return st.with_plugin(pl.name)
                return Status.as_error(f'running Reserve plugin "{pl.name}": {st.message()}', plugin=pl.name)
        return None

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        for pl in reversed(self.profile.reserve):
            unreserve = getattr(pl, "unreserve", None)
            if unreserve is not None:
                unreserve(state, pod, node_name)

    def run_filter_plugins(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """RunFilterPlugins: stop at the first failure (what preemption uses)."""
        for pl in self.profile.filter:
            if pl.name in state.skip_filter_plugins:
                continue
            st = pl.filter(state, pod, node)
            if st is not None and not st.is_success():
                if not st.is_rejected():
                    raise PluginError(f'running "{pl.name}" filter plugin: {st.message()}')
                st.plugin = pl.name
                return st
        return None

    def _add_ge_nominated_pods(self, state: CycleState, pod: PodInfo, node: NodeInfo):
        nominated = self.nominator.nominated_pods_for_node(node.name)
        if not nominated:
            return False, state, node
        node_out = None
        state_out = None
        for npi in nominated:
            if npi.priority >= pod.priority and npi.uid != pod.uid:
                if node_out is None:
                    node_out = node.clone()
                    state_out = state.clone()
                node_out.add_pod(npi)
                self.run_pre_filter_extension_add_pod(state_out, pod, npi, node_out)
        if node_out is None:
            return False, state, node
        return True, state_out, node_out

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        added, state1, node1 = self._add_ge_nominated_pods(state, pod, node)
        st = self.run_filter_plugins(state1, pod, node1)
        if added and (st is None or st.is_success()):
            st = self.run_filter_plugins(state, pod, node)
        return st

    # -- recording filter pass ---------------------------------------------------
    def _evaluate_all_filters(self, state: CycleState, pod: PodInfo, node: NodeInfo, strict: bool) -> list[FilterVerdict]:
        """Every Filter plugin's verdict on one node.

        kube-scheduler stops at the first rejection, so an Error from a later
        plugin (or on a node it never filters) cannot fail its cycle: only
        with `strict`, and only before the first rejection, does an Error
        abort the cycle; otherwise it is recorded as that plugin's verdict."""
        verdicts = []
        rejected = False
        for pl in self.profile.filter:
            if pl.name in state.skip_filter_plugins:
                verdicts.append(FilterVerdict(pl.name, Status(Code.SKIP, plugin=pl.name)))
                continue
            try:
                st = pl.filter(state, pod, node)
            except PluginError as exc:
                if strict and not rejected:
                    raise
                st = Status.as_error(str(exc))
            details = None
            if st is not None:
                if st.is_success():
                    # A Success may carry an explanation (domain counts, the
                    # devices allocated): kept apart from the verdict.
                    details = st.details
                    st = None
                elif not st.is_rejected():
                    if strict and not rejected:
                        raise PluginError(f'running "{pl.name}" filter plugin: {st.message()}')
                    # kube-scheduler stops at the node's first rejection (and
                    # filters only candidate nodes): it never meets this
                    # error, so it is recorded, not raised.
                    st.plugin = pl.name
                else:
                    st.plugin = pl.name
                    rejected = True
            verdicts.append(FilterVerdict(pl.name, st, details))
        return verdicts

    @staticmethod
    def _first_failure(verdicts: list[FilterVerdict]) -> FilterVerdict | None:
        return next((v for v in verdicts if v.code not in (Code.SUCCESS, Code.SKIP)), None)

    def _record_node(self, state: CycleState, pod: PodInfo, node: NodeInfo, strict: bool = True) -> NodeResult:
        """Every Filter verdict on one node, with nominated pods as upstream
        counts them: first with them added, then (if that passed) without.
        `strict`: kube-scheduler itself filters this node (see above)."""
        added, state1, node1 = self._add_ge_nominated_pods(state, pod, node)
        verdicts = self._evaluate_all_filters(state1, pod, node1, strict)
        failed = self._first_failure(verdicts)
        if added and failed is None:
            verdicts = self._evaluate_all_filters(state, pod, node, strict)
            failed = self._first_failure(verdicts)
        res = NodeResult(node.name, verdicts)
        if failed is not None:
            res.status = failed.status
            res.first_failure = failed.plugin
        else:
            res.feasible = True
        return res

    # -- recording filter pass, all nodes at once ----------------------------------
    def _filter_table(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]):
        """Every Filter plugin's verdict on every node, plugin by plugin (the
        same verdicts `_evaluate_all_filters` gives node by node).

        Returns the FilterTable and, for each node with a verdict other than
        Success, its non-Success verdicts in profile order as (plugin index,
        Status, PluginError raised or None)."""
        names: list[str] = []
        columns: list = []
        tallies: list[dict] = []
        unsuccessful: dict[int, list] = {}
        for j, pl in enumerate(self.profile.filter):
            names.append(pl.name)
            tally: dict[str, int] = {}
            tallies.append(tally)
            if pl.name in state.skip_filter_plugins:
                columns.append(SKIPPED)
                continue
            col, raised = _filter_column(pl, state, pod, nodes)
            columns.append(col)
            if col is None:
                continue
            for i in compress(range(len(col)), col):  # the verdicts other than None
                st = col[i]
                if st.code != Code.SUCCESS:
                    st.plugin = pl.name
                    unsuccessful.setdefault(i, []).append((j, st, raised.get(i)))
                    if st.code != Code.SKIP:
                        for reason in st.reasons or (st.code.label,):
                            tally[reason] = tally.get(reason, 0) + 1
        return FilterTable(names, columns, tallies), unsuccessful

    @staticmethod
    def _table_outcome(table: FilterTable, verdicts, strict: bool):
        """(status, first failing plugin) of a node with non-Success verdicts
        in the table, or None when it passes after all (Skip only). With
        `strict`, an Error before the node's first rejection aborts the cycle,
        as in `_evaluate_all_filters`."""
        j, st, raised = verdicts[0]
        if st.is_rejected():
            return st, table.names[j]
        if strict:
            if raised is not None:
                raise raised
            raise PluginError(f'running "{table.names[j]}" filter plugin: {st.message()}')
        failed = next(((j, st) for j, st, _ in verdicts if st.code != Code.SKIP), None)
        return None if failed is None else (failed[1], table.names[failed[0]])

    def _nodes_with_nominated_pods(self, pod: PodInfo) -> set[str]:
        """Nodes where `_add_ge_nominated_pods` adds a pod (filtered one by one)."""
        return {
            node
            for node, pods in self.nominator.by_node.items()
            if any(npi.priority >= pod.priority and npi.uid != pod.uid for npi in pods)
        }

    def run_reserve_plugins(self, result: PodResult, node_name: str) -> None:
        """Reserve, for a pod placed on a node (simulate): plugins that keep
        state across pods (DynamicResources' in-flight allocations) record it."""
        if result.cycle_state is None:
            return
        st = self.run_reserve_plugins_reserve(result.cycle_state, result.pod_info, node_name)
        if st is not None:
            raise PluginError(st.message())

    # -- the cycle ---------------------------------------------------------------
    def run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        for pl in self.profile.pre_enqueue:
            st = pl.pre_enqueue(pod)
            if st is not None and not st.is_success():
                st.plugin = pl.name
                return st
        return None

    def schedule(self, pod: PodInfo, *, post_filter: bool = True) -> PodResult:
        """One scheduling cycle. `post_filter=False` stops an unschedulable
        pod's cycle before PostFilter (preemption): for callers that only ask
        whether a pod fits as it is (`explain --fix` checking a change)."""
        result = PodResult(pod)
        try:
            gate = self.run_pre_enqueue(pod)
        except PluginError as exc:
            result.status = "Error"
            result.message = str(exc)
            result.nodes = []
            return result
        if gate is not None:
            result.status = "Gated"
            result.gate = gate
            result.message = gate.message()
            return result
        state = CycleState()
        if not post_filter:
            state.write(NO_POST_FILTER, True)
        result.cycle_state = state
        try:
            self._schedule(state, pod, result)
        except PluginError as exc:
            result.status = "Error"
            result.message = str(exc)
            result.nodes = []
            result.selected_node = None
            result.top_nodes = []
            result.preemption = None
        return result

    def _run_pre_filter(self, state: CycleState, pod: PodInfo, result: PodResult):
        """RunPreFilterPlugins. Returns (PreFilterResult, rejection Status, plugins that narrowed nodes)."""
        nodes = self.snapshot.node_infos
        merged: PreFilterResult | None = None
        with_nodes: list[str] = []
        rejection = None
        for pl in self.profile.pre_filter:
            try:
                r, st = pl.pre_filter(state, pod, nodes)
            except PluginError as exc:
                raise PluginError(f'running PreFilter plugin "{pl.name}": {exc}') from None
            if st is not None and st.is_skip():
                st.plugin = pl.name
                state.skip_filter_plugins.add(pl.name)
                result.pre_filter.append(st)
                continue
            if st is not None and not st.is_success():
                st.plugin = pl.name
                result.pre_filter.append(st)
                if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    return None, st, []
                if st.code == Code.UNSCHEDULABLE:
                    rejection = st
                    continue
                raise PluginError(f'running PreFilter plugin "{pl.name}": {st.message()}')
            if r is not None and not r.all_nodes():
                with_nodes.append(pl.name)
            merged = (merged or PreFilterResult()).merge(r)
            if not merged.all_nodes() and not merged.node_names:
                names = sorted(with_nodes)
                if len(names) == 1:
                    msg = f"node(s) didn't satisfy plugin {names[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) {_go_list(names)} simultaneously"
                return merged, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), sorted(with_nodes)
        return merged, rejection, sorted(with_nodes)

    def _schedule(self, state: CycleState, pod: PodInfo, result: PodResult) -> None:
        snapshot = self.snapshot
        all_nodes = snapshot.node_infos
        if not all_nodes:
            result.message = "no nodes available to schedule pods"
            return
        pre_res, pre_status, narrowing = self._run_pre_filter(state, pod, result)

        node_status: dict[str, Status] = {}
        absent_status: Status | None = None
        if pre_status is not None:
            # Every node gets the PreFilter rejection; no Filter runs.
            pre_status_plugin = pre_status.plugin
            for ni in all_nodes:
                result.nodes.append(NodeResult(ni.name, [], pre_status, pre_status_plugin or None, False))
            absent_status = pre_status
            self._fit_error(state, pod, result, node_status, absent_status, pre_filter_msg=pre_status.message())
            return

        candidate_names = None  # every node
        if pre_res is not None and not pre_res.all_nodes():
            candidate_names = {ni.name for ni in all_nodes if ni.name in pre_res.node_names}
            absent_status = Status(
                Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) {_go_list(narrowing)}"
            )
            result.pre_filter_result = {"nodeNames": sorted(pre_res.node_names), "plugins": narrowing}

        # evaluateNominatedNode: a pod's nominated node is filtered first,
        # before the PreFilterResult narrows the candidates. When it fits it is
        # the only feasible node (no other node is filtered or scored); when it
        # does not, its status stays explicit even if the PreFilterResult left
        # it out.
        nominated_name = ((pod.pod.get("status") or {}).get("nominatedNodeName")) or ""
        nominated = snapshot.get(nominated_name) if nominated_name else None
        explicit: dict[str, NodeResult] = {}  # nodes filtered one by one
        if nominated is not None:
            explicit[nominated.name] = self._record_node(state, pod, nominated)
            if explicit[nominated.name].feasible and self.extenders is not None \
                    and not self.extenders.filter_nominated(result, pod, nominated, node_status):
                # Rejected by an extender: upstream then filters every node,
                # this one again (and asks the extenders again).
                del explicit[nominated.name]
                node_status.pop(nominated.name, None)
                nominated = None

        feasible = self._filter_nodes(state, pod, result, candidate_names, nominated, explicit, node_status,
                                      absent_status, narrowing)
        search = None
        if not (nominated is not None and explicit[nominated.name].feasible):
            # The nominated node's shortcut searches nothing: the start index stays.
            search = self._search(result, feasible, node_status, candidate_names, nominated)
            if search is not None and self.sampling.mode == "upstream":
                feasible = search.found
        if self.extenders is not None and (nominated is None or feasible != [nominated]):
            # findNodesThatPassExtenders, on the nodes the search kept (the
            # nominated node passed them already)
            feasible = self.extenders.filter(result, pod, feasible, node_status)
        if not feasible:
            self._fit_error(state, pod, result, node_status, absent_status)
            return

        totals = self._prioritize(state, pod, result, feasible)
        if search is not None and self.sampling.mode == "all" and result.status == "Scheduled":
            self._could_pick(result, feasible, totals if totals is not None else [0], search)

    def _filter_nodes(self, state, pod, result, candidate_names, nominated, explicit, node_status,
                      absent_status, narrowing) -> list[NodeInfo]:
        """Every Filter plugin on every node (the nominated node is done):
        returns the feasible nodes in node order, fills node_status with the
        failed candidates' statuses, and leaves the records to the result."""
        all_nodes = self.snapshot.node_infos
        nominated_fits = nominated is not None and explicit[nominated.name].feasible

        # Nodes holding nominated pods are filtered one by one (with and
        # without those pods); all others in one table, plugin by plugin.
        by_one = self._nodes_with_nominated_pods(pod) - explicit.keys()
        row_of = None  # node name -> table row; None: row i is all_nodes[i]
        batch = all_nodes
        if explicit or by_one:
            batch = [ni for ni in all_nodes if ni.name not in explicit and ni.name not in by_one]
            row_of = {ni.name: i for i, ni in enumerate(batch)}
        table, unsuccessful = self._filter_table(state, pod, batch)

        # Only nodes with a non-Success verdict and nodes filtered one by one
        # need a look of their own, in node order: the first Error kube-
        # scheduler would meet aborts the cycle.
        if row_of is None:
            interesting = sorted(unsuccessful)
        else:
            interesting = [j for j, ni in enumerate(all_nodes)
                           if ni.name not in row_of or row_of[ni.name] in unsuccessful]
        outcomes: dict[str, tuple | None] = {}  # table nodes: (status, plugin), None = passes
        for j in interesting:
            ni = all_nodes[j]
            name = ni.name
            if name in explicit:
                continue
            strict = (candidate_names is None or name in candidate_names) and not nominated_fits
            if row_of is not None and name not in row_of:
                explicit[name] = self._record_node(state, pod, ni, strict=strict)
            else:
                outcomes[name] = self._table_outcome(table, unsuccessful[j if row_of is None else row_of[name]], strict)

        if candidate_names is None and not explicit:
            # The common case: every node a candidate, all in the table.
            node_status.update((name, o[0]) for name, o in outcomes.items() if o is not None)
            feasible = [ni for ni in all_nodes if ni.name not in node_status] if node_status else list(all_nodes)
        else:
            feasible = self._classify(all_nodes, nominated, candidate_names, explicit, outcomes, node_status)
        result.node_records = NodeRecords(all_nodes, table, row_of, explicit, outcomes, candidate_names,
                                          nominated.name if nominated is not None else "", absent_status,
                                          ", ".join(narrowing))
        return [nominated] if nominated_fits else feasible

    @staticmethod
    def _classify(all_nodes, nominated, candidate_names, explicit, outcomes, node_status) -> list[NodeInfo]:
        """The feasible nodes, in node order; failed candidates go into
        node_status. Nodes the PreFilterResult left out are neither (their
        records say so, see NodeRecords)."""
        feasible = []
        for ni in all_nodes:
            name = ni.name
            if ni is nominated:
                if not explicit[name].feasible:
                    node_status[name] = explicit[name].status
                continue
            if candidate_names is not None and name not in candidate_names:
                continue
            nr = explicit.get(name)
            if nr is not None:
                if nr.feasible:
                    feasible.append(ni)
                else:
                    node_status[name] = nr.status
                continue
            outcome = outcomes.get(name)
            if outcome is None:
                feasible.append(ni)
            else:
                node_status[name] = outcome[0]
        return feasible

    # -- node sampling ------------------------------------------------------------
    def _search(self, result, feasible, node_status, candidate_names, nominated):
        """findNodesThatPassFilters' search over the Filter outcomes kschedx
        has for every node: how far kube-scheduler would go from the start
        index, and the start index of the next cycle. Returns the Search when
        kube-scheduler would stop before the last node (result.sampling then
        says so), None when it checks every node."""
        sampling = self.sampling
        all_nodes = self.snapshot.node_infos
        num_all = len(all_nodes)
        num_nodes = num_all if candidate_names is None else len(candidate_names)
        k = sampling.num_to_find(self.profile, num_nodes)
        start = sampling.next_start_node_index
        if k >= num_nodes:
            # Every node is checked: the failed ones (and a nominated node
            # that failed) are the statuses kube-scheduler records.
            sampling.advance(len(feasible) + len(node_status), num_all)
            return None
        order = sampling.order(self.snapshot)
        if candidate_names is not None:
            # kube-scheduler takes a PreFilterResult's nodes in Go map order
            # (random); kschedx keeps them in node-tree order.
            order = [ni for ni in order if ni.name in candidate_names]
        # A candidate is feasible unless it has a failure status.
        search = walk(order, lambda ni: ni.name not in node_status, start, k)
        processed = search.processed
        if nominated is not None and nominated.name in node_status and nominated.name not in search.failed:
            processed += 1  # its status was recorded when it was tried first
        sampling.advance(processed, num_all)
        plan = self.profile.plan
        pct = plan.percentage_of_nodes_to_score
        result.sampling = {
            "mode": sampling.mode,
            "percentageOfNodesToScore": pct if pct is not None else (sampling.global_percentage or 0),
            "numFeasibleNodesToFind": k,
            "nodes": num_nodes,
            "feasibleNodes": len(feasible),
            "startIndex": start,
            "processedNodes": processed,
            "nextStartIndex": sampling.next_start_node_index,
            "foundNodes": len(search.found),
        }
        return search

    def _could_pick(self, result, feasible, totals, search) -> None:
        """`all` mode: what a sampled search could have picked instead. From
        this cycle's start index: the best of the nodes it finds. From any
        start: every node that is best among some window of k consecutive
        feasible nodes in node-tree order. Scores are those kschedx computed
        over every feasible node."""
        info = result.sampling
        k = info["numFeasibleNodesToFind"]
        names = self.sampling.order_names(self.snapshot)
        if self.extenders is None:
            # The feasible nodes are the snapshot's own NodeInfos: they are
            # the keys (no names to gather for thousands of nodes).
            keys, order = feasible, self.sampling.order(self.snapshot)
            found = search.found
        else:
            # An extender may answer with Node objects (new NodeInfos).
            keys, order = [ni.name for ni in feasible], names
            found = [ni.name for ni in search.found]
        total_of = dict(zip(keys, totals))
        # Nodes an extender rejected after the search are no pick either.
        found = [n for n in found if n in total_of]
        best = max(map(total_of.__getitem__, found), default=None)
        best_found = [n for n in found if total_of[n] == best]
        info["startWindowBest"] = sorted(best_found if self.extenders is not None else [ni.name for ni in best_found])
        if len(feasible) <= k:
            info["couldBeMissed"] = False
            info["upstreamCouldPick"] = list(result.top_nodes)
            return
        got = list(map(total_of.get, order))  # None: not feasible
        if len(total_of) == len(names):
            ordered, values = names, got
        else:
            kept = [v is not None for v in got]
            ordered, values = list(compress(names, kept)), list(compress(got, kept))
        picks = best_of_some_window(values, k)
        info["couldBeMissed"] = True
        info["upstreamCouldPick"] = sorted(ordered[i] for i in picks)

    def _prioritize(self, state: CycleState, pod: PodInfo, result: PodResult, feasible: list[NodeInfo]):
        """Scores and selection; returns the feasible nodes' totals (None when
        the only feasible node is taken without scoring)."""
        if len(feasible) == 1:
            # kube-scheduler takes the only feasible node without running
            # PreScore/Score, so a scoring failure cannot fail this cycle.
            result.notes.append(ONE_FEASIBLE_NOTE)
            try:
                self._score(state, pod, result, feasible)
            except PluginError as exc:
                result.notes.append(f"scores not available: {exc}")
            result.top_nodes = [feasible[0].name]
            result.selected_node = feasible[0].name
            result.status = "Scheduled"
            return None
        totals = self._score(state, pod, result, feasible)
        if self.extenders is not None:
            self.extenders.prioritize(result, pod, feasible, totals)
        best = max(totals)
        top = sorted(ni.name for ni, total in zip(feasible, totals) if total == best)
        result.top_nodes = top
        if self.tie_break == "name" or len(top) == 1:
            result.selected_node = top[0]
        else:
            result.selected_node = self.rng.choice(top)
            result.tie_drawn = True
        result.status = "Scheduled"
        return totals

    def _score(self, state: CycleState, pod: PodInfo, result: PodResult, feasible: list[NodeInfo]) -> list[int]:
        """RunPreScorePlugins + RunScorePlugins; records scores, returns each
        feasible node's total."""
        for pl in self.profile.pre_score:
            try:
                st = pl.pre_score(state, pod, feasible)
            except PluginError as exc:
                st = Status.as_error(str(exc))
            if st is not None and st.is_skip():
                state.skip_score_plugins.add(pl.name)
            elif st is not None and not st.is_success():
                raise PluginError(f'running PreScore plugin "{pl.name}": {st.message()}')

        table = ScoreTable(state, pod, feasible)
        for pl in self.profile.score:
            weight = self.weight(pl.name)
            if pl.name in state.skip_score_plugins:
                table.add(pl, weight, None, None)
                continue
            raw = _score_column(pl, state, pod, feasible)
            normalized = raw
            normalize_all = getattr(pl, "normalize_all", None)
            if normalize_all is not None:
                normalized = normalize_all(state, pod, feasible, raw)
            elif pl.implements("normalize_score"):
                scores = [NodeScore(ni.name, r) for ni, r in zip(feasible, raw)]
                st = pl.normalize_score(state, pod, scores)
                if st is not None and not st.is_success():
                    raise PluginError(
                        f'running Normalize on Score plugins: plugin "{pl.name}" failed with: {st.message()}'
                    )
                normalized = [s.score for s in scores]
            if normalized and _out_of_range(normalized):
                invalid = next(s for s in normalized if s > MAX_NODE_SCORE or s < MIN_NODE_SCORE)
                raise PluginError(
                    f'applying score defaultWeights on Score plugins: plugin "{pl.name}" returns an invalid '
                    f"score {invalid}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                )
            table.add(pl, weight, raw, normalized)

        totals = table.totals()
        result.node_records.scored(table, totals)
        return totals

    def _fit_error(self, state, pod, result, node_status, absent_status, pre_filter_msg: str = "") -> None:
        message = fit_error_message(self.snapshot.num_nodes(), node_status, absent_status, pre_filter_msg)
        result.status = "Unschedulable"
        post_msg = self._run_post_filter(state, pod, result, node_status, absent_status)
        if post_msg:
            message += " " + post_msg
        result.message = message

    def _run_post_filter(self, state, pod, result, node_status, absent_status) -> str:
        """RunPostFilterPlugins; returns the PostFilter part of the message."""
        if not self.profile.post_filter or state.read(NO_POST_FILTER):
            return ""
        reasons: list[str] = []
        post_result = None
        final = None
        for pl in self.profile.post_filter:
            try:
                r, st = pl.post_filter(state, pod, NodeToStatus(node_status, absent_status, self.snapshot,
                                                                self.sampling.order(self.snapshot)))
            except PluginError as exc:
                r, st = None, Status.as_error(str(exc))
            st = st if st is not None else Status()
            if st.is_success():
                post_result, final = r, st.with_plugin(pl.name)
                break
            if st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                post_result, final = r, st.with_plugin(pl.name)
                break
            if not st.is_rejected():
                post_result, final = None, Status(Code.ERROR, *st.reasons, plugin=pl.name)
                break
            if r is not None:
                # A result that nominates "" is not a no-op: it clears the
                # pod's nomination (upstream ModeOverride).
                post_result = r
            reasons.extend(st.reasons)
        if final is None:
            final = Status(Code.UNSCHEDULABLE, *reasons)
        result.preemption = {
            "code": final.code.label,
            "message": final.message() or None,
            "nominatedNode": (post_result.nominated_node or None) if post_result else None,
            "pdbViolations": (post_result.details.get("pdbViolations", 0) if post_result else 0),
            "victims": (post_result.details.get("victims", []) if post_result else []),
        }
        if post_result is not None:
            for key, value in post_result.details.items():
                # *PodInfos keys carry objects for simulate, not for the document;
                # nodePreemption goes into the candidate nodes' records.
                if key not in result.preemption and not key.endswith("PodInfos") and key != "nodePreemption":
                    result.preemption[key] = value
            node_preemption = post_result.details.get("nodePreemption")
            if node_preemption:
                result.set_node_preemption(node_preemption)
            result.victims = post_result.details.get("victimPodInfos", [])
            result.cleared_nominations = post_result.details.get("clearedNominationPodInfos", [])
            # "" = the pod's nomination is cleared; None (no result) = unchanged.
            result.nominated_node = post_result.nominated_node or ""
        if final.is_success() and post_result is not None and post_result.nominated_node:
            result.selected_node = post_result.nominated_node
        return final.message()


def _filter_column(pl, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]):
    """One Filter plugin on every node: (statuses, {node index: PluginError}).

    A plugin's `filter_all` gives all statuses at once (None: every node
    passes); `filter` is called node by node otherwise, and also when
    filter_all fails, so that the failing node and its message are exact."""
    filter_all = getattr(pl, "filter_all", None)
    if filter_all is not None:
        try:
            return filter_all(state, pod, nodes), {}
        except PluginError:
            pass
    f = pl.filter
    try:
        return [f(state, pod, ni) for ni in nodes], {}
    except PluginError:
        pass
    col = []
    raised = {}
    for i, ni in enumerate(nodes):
        try:
            col.append(f(state, pod, ni))
        except PluginError as exc:
            col.append(Status.as_error(str(exc)))
            raised[i] = exc
    return col, raised


def _out_of_range(normalized: list) -> bool:
    """Whether a normalized score is outside [MIN_NODE_SCORE, MAX_NODE_SCORE];
    a column of one value (equal to its first, count's C loop) is checked once."""
    first = normalized[0]
    if normalized.count(first) == len(normalized):
        return first > MAX_NODE_SCORE or first < MIN_NODE_SCORE
    return max(normalized) > MAX_NODE_SCORE or min(normalized) < MIN_NODE_SCORE


def _score_column(pl, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]) -> list[int]:
    """One Score plugin on every feasible node (`score_all` when the plugin
    has it); a PluginError names the first node's failure, as upstream's."""
    score_all = getattr(pl, "score_all", None)
    try:
        if score_all is not None:
            try:
                return score_all(state, pod, nodes)
            except PluginError:
                pass
        score = pl.score
        return [score(state, pod, ni) for ni in nodes]
    except PluginError as exc:
        raise PluginError(f'running Score plugins: plugin "{pl.name}" failed with: {exc}') from None


class NodeToStatus:
    """What PostFilter plugins read: each node's status, absent ones sharing one.

    NodesForStatusCode lists nodes in `order`: the runner gives the node-tree
    order (SamplingState.order), which is upstream's own when PreFilter
    rejected every node (the snapshot's list); otherwise upstream ranges
    over a Go map (random order each cycle) and kschedx keeps node-tree
    order. Without `order`, the snapshot's list."""

    def __init__(self, explicit: dict[str, Status], absent: Status | None, snapshot: Snapshot, order=None):
        self.explicit = explicit
        self.absent = absent
        self.snapshot = snapshot
        self.order = order

    def get(self, name: str) -> Status | None:
        st = self.explicit.get(name)
        if st is None:
            return self.absent
        return st

    def nodes_for_status_code(self, code: Code) -> list[NodeInfo]:
        out = []
        for ni in self.order if self.order is not None else self.snapshot.node_infos:
            st = self.get(ni.name)
            if st is not None and st.code == code:
                out.append(ni)
        return out


def _go_list(items) -> str:
    """fmt's %v of a []string: [a b c]."""
    return "[" + " ".join(items) + "]"


def queue_order(pods: list[PodInfo]) -> list[PodInfo]:
    """PrioritySort: higher priority first, then earlier queue timestamp
    (creationTimestamp; pods without one count as added now), then input order."""
    far = None
    indexed = list(enumerate(pods))

    def key(item):
        i, pi = item
        ts = pi.creation_time
        return (-pi.priority, ts is None, ts.timestamp() if ts is not None else 0.0, i)

    del far
    return [pi for _, pi in sorted(indexed, key=key)]
