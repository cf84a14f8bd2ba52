"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule scores."""

from __future__ import annotations

from ..framework.interface import MAX_NODE_SCORE, Plugin
from ..framework.status import Code, Status
from .helper.normalize_score import default_normalize_score
from .helper.taints import DO_NOT_SCHEDULE, find_matching_untolerated_taint, tolerations_tolerate_taint

ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
_PRE_SCORE_KEY = "PreScoreTaintToleration"


class TaintToleration(Plugin):
    name = "TaintToleration"

    def filter(self, state, pod_info, node_info):
        taint = find_matching_untolerated_taint(node_info.taints, pod_info.spec.get("tolerations"), DO_NOT_SCHEDULE)
        if taint is None:
            return None
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            ERR_REASON_UNTOLERATED,
            details={"taint": {k: taint[k] for k in ("key", "value", "effect") if taint.get(k)}},
        )

    def pre_score(self, state, pod_info, nodes):
        tols = [t for t in pod_info.spec.get("tolerations") or () if (t.get("effect") or "") in ("", "PreferNoSchedule")]
        state.write(_PRE_SCORE_KEY, tols)
        return None

    def score(self, state, pod_info, node_info) -> int:
        tols = state.read(_PRE_SCORE_KEY)
        count = 0
        for taint in node_info.taints:
            if taint.get("effect") == "PreferNoSchedule" and not tolerations_tolerate_taint(tols, taint):
                count += 1
        return count

    def normalize_score(self, state, pod_info, scores):
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None


PLUGIN = TaintToleration
