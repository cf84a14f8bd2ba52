"""The extension points of one profile run over a snapshot (upstream's
framework/runtime/framework.go): the Framework is the Handle plugins reach
the snapshot through, and the runner of each extension point: PreEnqueue,
PreFilter (Skip, PreFilterResult, rejection) and its AddPod/RemovePod
extensions, Filter with nominated pods, PreScore, Score, NormalizeScore and
the weights, PostFilter, Reserve.

Unlike kube-scheduler, a cycle's recording pass evaluates every Filter
plugin on every node (for the explanation) while still knowing which
failure kube-scheduler itself would meet: the first one in profile order.
The scheduling algorithm that calls these runners is schedule_one.py.
"""

from __future__ import annotations

import random
from itertools import compress

from ..features import Features
from ..state.snapshot import Snapshot
from ..state.types import NodeInfo, PodInfo
from . import schedule_one
from .cycle_state import CycleState
from .fit_error import go_list
from .interface import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore, NodeToStatus, PluginError, PreFilterResult
from .profile import Profile
from .queue import Nominator
from .records import SKIPPED, FilterTable, FilterVerdict, NodeResult, PodResult, ScoreTable
from .sampling import SamplingState
from .status import Code, Status

__all__ = ["Framework"]


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

    def pre_filter_extensions(self, state: CycleState) -> list:
        """The PreFilterExtensions RunPreFilterExtensionAddPod / RemovePod
        call for this cycle (empty: adding or removing a pod changes no
        state but the node's)."""
        return self._pre_filter_extensions(state.skip_filter_plugins)

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

    def add_ge_nominated_pods(self, state: CycleState, pod: PodInfo, node: NodeInfo):
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
        added, state1, node1 = self.add_ge_nominated_pods(state, pod, node)
        st = self.run_filter_plugins(state1, pod, node1)
        if added and (st is None or st.is_success()):
            st = self.run_filter_plugins(state, pod, node)
        return st

    # -- the recording filter pass -----------------------------------------------
    def evaluate_all_filters(self, state: CycleState, pod: PodInfo, node: NodeInfo, strict: bool) -> list[FilterVerdict]:
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
    def first_failure(verdicts: list[FilterVerdict]) -> FilterVerdict | None:
        return next((v for v in verdicts if v.code not in (Code.SUCCESS, Code.SKIP)), None)

    def record_node(self, state: CycleState, pod: PodInfo, node: NodeInfo, strict: bool = True) -> NodeResult:
        """Every Filter verdict on one node, with nominated pods as upstream
        counts them: first with them added, then (if that passed) without.
        `strict`: kube-scheduler itself filters this node (see above)."""
        added, state1, node1 = self.add_ge_nominated_pods(state, pod, node)
        verdicts = self.evaluate_all_filters(state1, pod, node1, strict)
        failed = self.first_failure(verdicts)
        if added and failed is None:
            verdicts = self.evaluate_all_filters(state, pod, node, strict)
            failed = self.first_failure(verdicts)
        res = NodeResult(node.name, verdicts)
        if failed is not None:
            res.status = failed.status
            res.first_failure = failed.plugin
        else:
            res.feasible = True
        return res

    # -- recording filter pass, all nodes at once ----------------------------------
    def filter_table(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]):
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
    def table_outcome(table: FilterTable, verdicts, strict: bool):
        """(status, first failing plugin) of a node with non-Success verdicts
        in the table, or None when it passes after all (Skip only). With
        `strict`, an Error before the node's first rejection aborts the cycle,
        as in `evaluate_all_filters`."""
        j, st, raised = verdicts[0]
        if st.is_rejected():
            return st, table.names[j]
        if strict:
            if raised is not None:
                raise raised
            raise PluginError(f'running "{table.names[j]}" filter plugin: {st.message()}')
        failed = next(((j, st) for j, st, _ in verdicts if st.code != Code.SKIP), None)
        return None if failed is None else (failed[1], table.names[failed[0]])

    def nodes_with_nominated_pods(self, pod: PodInfo) -> set[str]:
        """Nodes where `add_ge_nominated_pods` adds a pod (filtered one by one)."""
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

    # -- the cycle's extension points ----------------------------------------------
    def run_pre_enqueue(self, pod: PodInfo) -> Status | None:
        for pl in self.profile.pre_enqueue:
            st = pl.pre_enqueue(pod)
            if st is not None and not st.is_success():
                st.plugin = pl.name
                return st
        return None

    def schedule(self, pod: PodInfo, *, post_filter: bool = True, record: bool = True) -> PodResult:
        """One scheduling cycle of the pod (schedule_one.schedule_pod)."""
        return schedule_one.schedule_pod(self, pod, post_filter=post_filter, record=record)

    def run_pre_filter_plugins(self, state: CycleState, pod: PodInfo, result: PodResult):
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
                    msg = f"node(s) didn't satisfy plugin(s) {go_list(names)} simultaneously"
                return merged, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), sorted(with_nodes)
        return merged, rejection, sorted(with_nodes)

    def run_score_plugins(self, state: CycleState, pod: PodInfo, result: PodResult, feasible: list[NodeInfo]) -> list[int]:
        """RunPreScorePlugins + RunScorePlugins; records scores, returns each
        feasible node's total."""
        table, totals = self.score_nodes(state, pod, feasible)
        result.node_records.scored(table, totals)
        return totals

    def score_nodes(self, state: CycleState, pod: PodInfo, feasible: list[NodeInfo]) -> tuple[ScoreTable, list[int]]:
        """RunPreScorePlugins + RunScorePlugins over the feasible nodes: the
        ScoreTable and each node's total (run_score_plugins records them)."""
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

        return table, table.totals()

    def run_post_filter_plugins(self, state: CycleState, pod: PodInfo, node_status: dict,
                                absent_status: Status | None):
        """RunPostFilterPlugins: (the PostFilterResult kept, the final Status)."""
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
        return post_result, final


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
