"""The PodTopologySpread plugin (podtopologyspread/plugin.go): args, the
system default constraints, and the extension points."""

from __future__ import annotations

from ...config import names
from ...config.pluginargs import checked_plugin_args
from ...framework.declaration import Declaration, reads
from ...framework.events import ActionType as A, NODE, POD, Register
from ...framework.interface import EventReach, Plugin, PluginError, features_of
from ...framework.status import Code, Status
from ...state.pod_index import index_of
from . import filtering, scoring
from .common import (DO_NOT_SCHEDULE_ACTION, HONOR, SCHEDULE_ANYWAY, SYSTEM_DEFAULT_CONSTRAINTS, SpreadError,
                     get_constraints)


# A PreFilter or PreScore that skips keeps Filter or Score from running, so a
# state is missing only when the configuration disables PreFilter (PreScore)
# but not Filter (Score): kube-scheduler fails the cycle with an Error then,
# worded differently for each state.
_NOT_FOUND = {
    filtering.PRE_FILTER_STATE_KEY: f'reading "{filtering.PRE_FILTER_STATE_KEY}" from cycleState: not found',
    scoring.PRE_SCORE_STATE_KEY: f'error reading "{scoring.PRE_SCORE_STATE_KEY}" from cycleState: not found',
}


def _read(state, key):
    s = state.read(key)
    if s is None:
        raise PluginError(_NOT_FOUND[key])
    return s


class _Extensions:
    def add_pod(self, state, pod_info, pod_info_to_add, node_info):
        filtering.update_with_pod(_read(state, filtering.PRE_FILTER_STATE_KEY), pod_info_to_add, pod_info,
                                  node_info, 1)
        return None

    def remove_pod(self, state, pod_info, pod_info_to_remove, node_info):
        filtering.update_with_pod(_read(state, filtering.PRE_FILTER_STATE_KEY), pod_info_to_remove, pod_info,
                                  node_info, -1)
        return None


class PodTopologySpread(Plugin):
    name = names.PodTopologySpread

    def __init__(self, handle, args=None):
        fts = features_of(handle)
        super().__init__(handle, checked_plugin_args(self.name, args, fts))
        self.match_label_keys = fts.enable_match_label_keys_in_pod_topology_spread
        self.comparison_operators = fts.enable_taint_toleration_comparison_operators
        if self.args["defaultingType"] == "System":
            self.default_constraints = list(SYSTEM_DEFAULT_CONSTRAINTS)
            self.system_defaulted = True
        else:
            self.default_constraints = list(self.args.get("defaultConstraints") or ())
            self.system_defaulted = False
        self._extensions = _Extensions()

    # -- PreFilter / Filter ----------------------------------------------------------------
    def pre_filter(self, state, pod_info, nodes):
        try:
            constraints = get_constraints(self, pod_info, DO_NOT_SCHEDULE_ACTION)
        except SpreadError as exc:
            return None, Status.as_error(
                f"get constraints from pod: obtaining pod's hard topology spread constraints: {exc}")
        if not constraints:
            return None, Status(Code.SKIP)
        snapshot = self.handle.snapshot
        index = index_of(snapshot)
        own = index is not None and nodes is snapshot.node_infos
        state.write(filtering.PRE_FILTER_STATE_KEY, filtering.compute_pre_filter_state(
            constraints, pod_info, nodes, index if own else None, snapshot.by_name if own else None))
        return None, None

    def pre_filter_extensions(self):
        return self._extensions

    def filter(self, state, pod_info, node_info):
        s = state.read(filtering.PRE_FILTER_STATE_KEY)
        if s is None:
            # An Error Status, which the framework names with this plugin.
            return Status.as_error(_NOT_FOUND[filtering.PRE_FILTER_STATE_KEY])
        return filtering.filter_node(s, pod_info, node_info)

    def filter_all(self, state, pod_info, nodes):
        s = state.read(filtering.PRE_FILTER_STATE_KEY)
        if s is None:
            return [Status.as_error(_NOT_FOUND[filtering.PRE_FILTER_STATE_KEY]) for _ in nodes]
        return filtering.filter_nodes(s, pod_info, nodes)

    # -- PreScore / Score ------------------------------------------------------------------------
    def pre_score(self, state, pod_info, filtered_nodes):
        all_nodes = self.handle.snapshot.node_infos
        if not all_nodes:
            return Status(Code.SKIP)
        own = bool(pod_info.spec.get("topologySpreadConstraints"))
        # Only the pod's own constraints (or configured defaults) require every
        # topology key on a node: with the system defaults a node without a
        # zone label still spreads by hostname.
        require_all = own or not self.system_defaulted
        s = scoring.PreScoreState()
        try:
            s.constraints = get_constraints(self, pod_info, SCHEDULE_ANYWAY)
        except SpreadError as exc:
            return Status.as_error(
                f"calculating preScoreState: obtaining pod's soft topology spread constraints: {exc}")
        if not s.constraints:
            return Status(Code.SKIP)
        s.namespace = pod_info.namespace
        s.memos = [{} for _ in s.constraints]
        snapshot = self.handle.snapshot
        index = index_of(snapshot)
        scoring.init_pre_score_state(s, filtered_nodes, require_all)
        scoring.count_all_nodes(s, pod_info, all_nodes, require_all, index,
                                snapshot.by_name if all_nodes is snapshot.node_infos else None)
        state.write(scoring.PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state, pod_info, node_info) -> int:
        return scoring.score_node(_read(state, scoring.PRE_SCORE_STATE_KEY), node_info)

    def score_all(self, state, pod_info, nodes) -> list[int]:
        return scoring.score_nodes(_read(state, scoring.PRE_SCORE_STATE_KEY), nodes)

    def normalize_score(self, state, pod_info, scores):
        scoring.normalize(_read(state, scoring.PRE_SCORE_STATE_KEY), scores)
        return None

    def normalize_all(self, state, pod_info, nodes, scores) -> list[int]:
        return scoring.normalize_all(_read(state, scoring.PRE_SCORE_STATE_KEY), nodes, scores)

    def score_details(self, state, pod_info, node_info):
        s = state.read(scoring.PRE_SCORE_STATE_KEY)
        if s is None:
            return None
        return scoring.score_details(s, node_info)

    def score_details_all(self, state, pod_info, nodes) -> list:
        s = state.read(scoring.PRE_SCORE_STATE_KEY)
        if s is None:
            return [None] * len(nodes)
        return scoring.score_details_all(s, nodes)

    def event_reach(self, state, pod_info) -> EventReach:
        """Pods of the pod's namespace its constraints select; their topology
        keys, and the pod's node affinity keys where nodes are counted by
        it; taints where nodes are counted by them; the set of nodes where
        a DoNotSchedule constraint counts domains (a domain may come or go)."""
        pre_filter = state.read(filtering.PRE_FILTER_STATE_KEY)
        pre_score = state.read(scoring.PRE_SCORE_STATE_KEY)
        constraints = [*(pre_filter.constraints if pre_filter is not None else ()),
                       *(pre_score.constraints if pre_score is not None else ())]
        if not constraints:
            return EventReach()
        namespace = pod_info.namespace
        selectors = [c.selector for c in constraints]

        def pods(pod: dict) -> bool:
            meta = pod.get("metadata") or {}
            if (meta.get("namespace") or "default") != namespace:
                return False
            labels = meta.get("labels") or {}
            return any(sel.matches(labels) for sel in selectors)

        keys = {c.topology_key for c in constraints}
        if any(c.node_affinity_policy == HONOR for c in constraints):
            keys |= node_affinity_keys(pod_info.spec)
        return EventReach(pods=pods, label_keys=frozenset(keys), node_set=pre_filter is not None,
                          taints=any(c.node_taints_policy == HONOR for c in constraints))


def node_affinity_keys(spec: dict) -> set:
    """The node label keys a pod's nodeSelector and required node affinity read."""
    keys = set(spec.get("nodeSelector") or ())
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}
    for term in required.get("nodeSelectorTerms") or ():
        for expr in (term or {}).get("matchExpressions") or ():
            keys.add(expr.get("key"))
    return keys


DECLARATION = Declaration(
    name=names.PodTopologySpread,
    factory=PodTopologySpread,
    points=frozenset({"preFilter", "filter", "preScore", "score"}),
    # The system's default constraints select pods by the Services and
    # controllers that own the pod; explicit constraints count pods anywhere.
    reads=(reads("Service", "ReplicationController", "ReplicaSet", "StatefulSet", pods=("default-spread",),
                 same_namespace=True),
           reads(POD, pods=("spread",), actions=A.Add | A.Update)),
    events=(Register(POD, A.Add | A.UpdatePodLabel | A.UpdatePodToleration | A.Delete),
            Register(NODE, A.Add | A.Delete | A.UpdateNodeLabel | A.UpdateNodeTaint)),
    gates=frozenset({"MatchLabelKeysInPodTopologySpread", "TaintTolerationComparisonOperators"}),
    details="spread",
)
