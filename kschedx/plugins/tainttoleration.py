"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule scores."""

from __future__ import annotations

from itertools import compress

from ..config import names
from ..framework.declaration import Declaration
from ..framework.events import ActionType as A, NODE, POD, Register
from ..framework.interface import MAX_NODE_SCORE, Plugin, PluginError, features_of
from ..framework.status import Code, Status
from .helper.normalize_score import default_normalize_score, default_normalize_values
from ..api.taints import DO_NOT_SCHEDULE, find_matching_untolerated_taint, tolerations_tolerate_taint

ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
_PRE_SCORE_KEY = "PreScoreTaintToleration"


class TaintToleration(Plugin):
    name = names.TaintToleration

    def __init__(self, handle, args=None):
        super().__init__(handle, args)
        self.comparison_operators = features_of(handle).enable_taint_toleration_comparison_operators

    def pre_filter(self, state, pod_info, nodes):
        """From 1.37; it skips only pods of a deferred resize
        (InPlacePodVerticalScalingSchedulerPreemption, not reproduced), so
        every pending pod passes it."""
        return None, None

    def filter(self, state, pod_info, node_info):
        taint = find_matching_untolerated_taint(node_info.taints, pod_info.spec.get("tolerations"), DO_NOT_SCHEDULE,
                                                self.comparison_operators)
        if taint is None:
            return None
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ERR_REASON_UNTOLERATED,
            details={"taint": {k: taint[k] for k in ("key", "value", "effect") if taint.get(k)}},
        )

    def filter_all(self, state, pod_info, nodes):
        return _only_tainted(nodes, lambda ni: self.filter(state, pod_info, ni), None)

    def pre_score(self, state, pod_info, nodes):
        tols = [t for t in pod_info.spec.get("tolerations") or () if (t.get("effect") or "") in ("", "PreferNoSchedule")]
        state.write(_PRE_SCORE_KEY, tols)
        return None

    def score(self, state, pod_info, node_info) -> int:
        return self._count(_pre_score_state(state), node_info)

    def score_all(self, state, pod_info, nodes) -> list[int]:
        tols = _pre_score_state(state)
        return _only_tainted(nodes, lambda ni: self._count(tols, ni), 0)

    def _count(self, tols, node_info) -> int:
        """The node's PreferNoSchedule taints the pod does not tolerate."""
        count = 0
        for taint in node_info.taints:
            if taint.get("effect") == "PreferNoSchedule" and not tolerations_tolerate_taint(
                    tols, taint, self.comparison_operators):
                count += 1
        return count

    def normalize_score(self, state, pod_info, scores):
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

    def normalize_all(self, state, pod_info, nodes, scores: list[int]) -> list[int]:
        return default_normalize_values(MAX_NODE_SCORE, True, scores)


def _pre_score_state(state) -> list:
    """The tolerations PreScore kept (possibly none). PreScore never skips, so
    a missing state means the configuration disabled PreScore but not Score:
    kube-scheduler fails the cycle then rather than read the pod again."""
    tols = state.read(_PRE_SCORE_KEY)
    if tols is None:
        raise PluginError(f'failed to read "{_PRE_SCORE_KEY}" from cycleState: not found')
    return tols


def _only_tainted(nodes, per_node, untainted):
    """per_node(ni) for the nodes with taints; `untainted` (what per_node
    gives a node without taints) for the others. None stands for a list of
    None (every node passes)."""
    out = None
    for i in compress(range(len(nodes)), [ni.taints for ni in nodes]):
        value = per_node(nodes[i])
        if value != untainted:
            if out is None:
                out = [untainted] * len(nodes)
            out[i] = value
    if out is None and untainted is not None:
        out = [untainted] * len(nodes)
    return out


DECLARATION = Declaration(
    name=names.TaintToleration,
    factory=TaintToleration,
    points=frozenset({"filter", "preScore", "score"}),
    points_from=(("1.37", frozenset({"preFilter"})),),
    events=(Register(NODE, A.Add | A.UpdateNodeTaint), Register(POD, A.UpdatePodToleration)),
    gates=frozenset({"TaintTolerationComparisonOperators"}),
    details="taints",
    node_local=True,
)
