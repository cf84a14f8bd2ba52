"""NodeAffinity: nodeSelector and required node affinity filter; preferred
node affinity scores. matchFields on metadata.name narrows the candidate nodes
at PreFilter, as upstream does. The `addedAffinity` arg adds a required node
selector every pod must match and preferred terms scored for every pod."""

from __future__ import annotations

from ..config import names
from ..framework.declaration import Declaration
from ..framework.events import ActionType as A, NODE, Register
from ..framework.interface import MAX_NODE_SCORE, Plugin, PreFilterResult, features_of
from ..config.pluginargs import checked_plugin_args
from ..framework.status import Code, Status
from ..api.labels import NodeSelector, NodeSelectorTerm, SelectorError, is_empty_term, selector_from_set
from .helper.combinations import verdict_per_combination
from .helper.normalize_score import default_normalize_score, default_normalize_values

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
_PRE_FILTER_KEY = "PreFilterNodeAffinity"
_PRE_SCORE_KEY = "PreScoreNodeAffinity"
_ABSENT = object()  # a label key a node does not have


class RequiredNodeAffinity:
    """nodeaffinity.GetRequiredNodeAffinity: nodeSelector AND required terms."""

    def __init__(self, pod_spec: dict):
        node_selector = pod_spec.get("nodeSelector")
        self.label_selector = None
        self.selector_error = None
        if node_selector:
            try:
                self.label_selector = selector_from_set(node_selector)
            except SelectorError as exc:
                self.selector_error = str(exc)
        required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        self.node_selector = NodeSelector(required) if required is not None else None

    def label_keys(self) -> tuple | None:
        """The node label keys the verdict depends on, or None when it may
        depend on more (the node's name, through matchFields)."""
        keys = []
        if self.label_selector is not None:
            keys.extend(r.key for r in self.label_selector.requirements)
        if self.node_selector is not None:
            for t in self.node_selector.terms:
                if t.fields is not None:
                    return None
                if t.labels is not None:
                    keys.extend(r.key for r in t.labels.requirements)
        return tuple(dict.fromkeys(keys))

    def matches_every_node(self) -> bool:
        """Neither a nodeSelector nor required terms: nothing to check."""
        return self.selector_error is None and self.label_selector is None and self.node_selector is None

    def matches(self, node_info) -> bool:
        if self.selector_error is not None:
            return False
        if self.label_selector is not None and not self.label_selector.matches(node_info.labels):
            return False
        if self.node_selector is not None:
            return self.node_selector.matches(node_info.labels, node_info.name)
        return True


def required_node_affinity(pod_info) -> RequiredNodeAffinity:
    return pod_info.cached("RequiredNodeAffinity", lambda pi: RequiredNodeAffinity(pi.spec))


def preferred_terms(pod_info):
    def compute(pi):
        prefs = ((pi.spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "preferredDuringSchedulingIgnoredDuringExecution"
        )
        if prefs is None:
            return None
        terms = []
        for t in prefs:
            weight = t.get("weight") or 0
            pref = t.get("preference") or {}
            if weight == 0 or is_empty_term(pref):
                continue
            terms.append((weight, NodeSelectorTerm(pref)))
        return terms

    return pod_info.cached("PreferredNodeAffinity", compute)


class NodeAffinity(Plugin):
    name = names.NodeAffinity

    def __init__(self, handle, args=None):
        args = checked_plugin_args(self.name, args, features_of(handle))
        super().__init__(handle, args)
        added = args.get("addedAffinity") or {}
        required = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.added_node_selector = NodeSelector(required) if required is not None else None
        # NewPreferredSchedulingTerms drops weight-0 and empty terms, but a
        # non-empty list still makes PreScore run for every pod.
        self.added_preferred = None
        prefs = added.get("preferredDuringSchedulingIgnoredDuringExecution")
        if prefs:
            self.added_preferred = [(t["weight"], NodeSelectorTerm(t.get("preference") or {})) for t in prefs
                                    if t.get("weight") and not is_empty_term(t.get("preference") or {})]
        self._added_cache: dict = {}

    def pre_filter(self, state, pod_info, nodes):
        spec = pod_info.spec
        required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        if required is None and self.added_node_selector is None and not spec.get("nodeSelector"):
            return None, Status(Code.SKIP)
        state.write(_PRE_FILTER_KEY, required_node_affinity(pod_info))
        terms = (required or {}).get("nodeSelectorTerms") or []
        if not terms:
            return None, None
        node_names = None
        for t in terms:
            term_names = None
            for r in t.get("matchFields") or ():
                if r.get("key") == "metadata.name" and r.get("operator") == "In":
                    s = set(r.get("values") or ())
                    term_names = s if term_names is None else term_names & s
            if term_names is None:
                return None, None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(node_names), None
        return None, None

    def filter(self, state, pod_info, node_info):
        added = self.added_node_selector
        if added is not None and not added.matches(node_info.labels, node_info.name):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        req = state.read(_PRE_FILTER_KEY) or required_node_affinity(pod_info)
        if not req.matches(node_info):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def filter_all(self, state, pod_info, nodes):
        if self.added_node_selector is not None:
            out = [self.filter(state, pod_info, ni) for ni in nodes]
            return out if any(st is not None for st in out) else None
        req = state.read(_PRE_FILTER_KEY) or required_node_affinity(pod_info)
        # The rejection says nothing node-specific: one Status for all.
        rejected = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        keys = req.label_keys()
        labels = [ni.labels for ni in nodes] if keys is not None and len(keys) <= 2 else None
        if labels is None or not set(map(type, labels)) <= {dict}:
            out = [None if req.matches(ni) else rejected for ni in nodes]
        else:
            # Nodes with the same values of those keys (absent included)
            # share the verdict: it is worked out once per combination.
            out = verdict_per_combination(nodes, labels, keys, lambda ni: None if req.matches(ni) else rejected,
                                          _ABSENT)
        return out if rejected in out else None

    def pre_score(self, state, pod_info, nodes):
        terms = preferred_terms(pod_info)
        if terms is None and self.added_preferred is None:
            return Status(Code.SKIP)
        if terms is None:
            terms = []
        # NewPreferredSchedulingTerms fails on any invalid term (weight 0 and
        # empty terms are dropped first), and PreScore returns that error.
        errors = [f"[{i}]: {t.error}" for i, (_, t) in enumerate(terms) if t.error is not None]
        if errors:
            return Status.as_error(", ".join(errors))
        state.write(_PRE_SCORE_KEY, terms)
        return None

    def score(self, state, pod_info, node_info) -> int:
        terms = state.read(_PRE_SCORE_KEY)
        if terms is None:
            terms = preferred_terms(pod_info) or []
        count = self._added_score(node_info) if self.added_preferred else 0
        for weight, term in terms:
            if term.matches(node_info.labels, node_info.name):
                count += weight
        return count

    def score_all(self, state, pod_info, nodes) -> list[int]:
        terms = state.read(_PRE_SCORE_KEY)
        if terms is None:
            terms = preferred_terms(pod_info) or []
        added = self._added_score if self.added_preferred else None
        out = []
        for ni in nodes:
            count = added(ni) if added is not None else 0
            for weight, term in terms:
                if term.matches(ni.labels, ni.name):
                    count += weight
            out.append(count)
        return out

    def _added_score(self, node_info) -> int:
        """The added preferred terms' score of a node: the same for every pod,
        so it is worked out once per node (and again if its labels change)."""
        cache = self._added_cache
        labels = node_info.labels
        hit = cache.get(node_info.name)
        if hit is not None and hit[0] is labels:
            return hit[1]
        count = 0
        for weight, term in self.added_preferred:
            if term.matches(labels, node_info.name):
                count += weight
        cache[node_info.name] = (labels, count)
        return count

    def score_details(self, state, pod_info, node_info):
        """Only with addedAffinity: how much of the raw score the scheduler's
        own terms gave and how much the pod's."""
        if not self.added_preferred:
            return None
        added = self._added_score(node_info)
        terms = state.read(_PRE_SCORE_KEY)
        if terms is None:
            terms = preferred_terms(pod_info) or []
        own = sum(w for w, t in terms if t.matches(node_info.labels, node_info.name))
        return {"addedAffinityWeight": added, "podAffinityWeight": own}

    def normalize_score(self, state, pod_info, scores):
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_all(self, state, pod_info, nodes, scores: list[int]) -> list[int]:
        return default_normalize_values(MAX_NODE_SCORE, False, scores)


DECLARATION = Declaration(
    name=names.NodeAffinity,
    factory=NodeAffinity,
    points=frozenset({"preFilter", "filter", "preScore", "score"}),
    events=(Register(NODE, A.Add | A.UpdateNodeLabel),),
    details="node-affinity",
    node_local=True,
)
