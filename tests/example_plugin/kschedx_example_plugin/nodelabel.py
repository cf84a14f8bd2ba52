"""NodeLabelPreference: an out-of-tree plugin as a third party writes one.

Filter: a node must carry every label key of `requiredLabels`.
Score: the integer value of the node's `scoreLabel` label (0 when absent or
not an integer), normalized so that the highest node gets 100.

Args (its pluginConfig entry): {requiredLabels: [key, ...], scoreLabel: key}.
Invalid args make the constructor raise ValueError, as a kube-scheduler
plugin factory returns an error: the configuration is then rejected.
"""

from __future__ import annotations

from kschedx.framework.interface import MAX_NODE_SCORE, Plugin
from kschedx.framework.status import Code, Status

ERR_REASON_MISSING_LABELS = "node(s) didn't have the required labels"
_ARGS = ("requiredLabels", "scoreLabel")


class NodeLabelPreference(Plugin):
    name = "NodeLabelPreference"

    def __init__(self, handle, args=None):
        super().__init__(handle, args)
        unknown = sorted(set(self.args) - set(_ARGS))
        if unknown:
            raise ValueError(f'unknown arg "{unknown[0]}": the args are {", ".join(_ARGS)}')
        required = self.args.get("requiredLabels", [])
        if not isinstance(required, list) or not all(isinstance(k, str) and k for k in required):
            raise ValueError(f"requiredLabels: must be a list of label keys, got {required!r}")
        score_label = self.args.get("scoreLabel", "")
        if not isinstance(score_label, str):
            raise ValueError(f"scoreLabel: must be a label key, got {score_label!r}")
        self.required = tuple(required)
        self.score_label = score_label

    def filter(self, state, pod_info, node_info):
        missing = [k for k in self.required if k not in node_info.labels]
        if not missing:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_MISSING_LABELS,
                      details={"missingLabels": missing})

    def score(self, state, pod_info, node_info) -> int:
        value = node_info.labels.get(self.score_label) if self.score_label else None
        try:
            return max(int(value), 0) if value is not None else 0
        except ValueError:
            return 0

    def score_details(self, state, pod_info, node_info):
        if not self.score_label:
            return None
        return {"label": self.score_label, "value": node_info.labels.get(self.score_label)}

    def normalize_score(self, state, pod_info, scores):
        highest = max((s.score for s in scores), default=0)
        if highest:
            for s in scores:
                s.score = s.score * MAX_NODE_SCORE // highest
        return None
