"""InterPodAffinity PreScore/Score/NormalizeScore.

PreScore sums, per (topologyKey, value), the weights of every preferred term
that an existing pod and the incoming pod satisfy towards each other (and the
hardPodAffinityWeight for existing pods' required affinity terms the incoming
pod matches). Score adds up the node's own pairs; NormalizeScore maps the
range min..max onto 0..100 with float64 arithmetic, like upstream.
"""

from __future__ import annotations

from ...framework.interface import MAX_NODE_SCORE
from ...podaffinity import affinity_terms, label_signature

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"

MAX_PODS_SHOWN = 10

INCOMING_PREFERRED_AFFINITY = "preferredAffinity"
INCOMING_PREFERRED_ANTI = "preferredAntiAffinity"
EXISTING_REQUIRED_AFFINITY = "existingPodRequiredAffinity"
EXISTING_PREFERRED_AFFINITY = "existingPodPreferredAffinity"
EXISTING_PREFERRED_ANTI = "existingPodPreferredAntiAffinity"


class PreScoreState:
    __slots__ = ("topology_score", "pod_info", "namespace_labels", "contributions")

    def __init__(self, pod_info, namespace_labels):
        self.pod_info = pod_info
        self.namespace_labels = namespace_labels
        # topologyKey -> {value: score}
        self.topology_score: dict[str, dict[str, int]] = {}
        # (topologyKey, value) -> [(PodInfo, node, source, signed weight)]
        self.contributions: dict = {}

    def clone(self):
        # Read-only after PreScore, as upstream's.
        return self


class _NodeScores:
    """One node's scoreMap before it is merged (upstream's per-node topoScore)."""

    __slots__ = ("scores", "contributions")

    def __init__(self):
        self.scores: dict[str, dict[str, int]] = {}
        self.contributions: list = []

    def add(self, key, value, amount, pi, node_name, source) -> None:
        by_value = self.scores.get(key)
        if by_value is None:
            by_value = self.scores[key] = {}
        by_value[value] = by_value.get(value, 0) + amount
        self.contributions.append(((key, value), pi, node_name, source, amount))


def compute_pre_score(plugin, state: PreScoreState, pod_info, preferred_affinity, preferred_anti,
                      nodes, has_constraints: bool) -> bool:
    """Fill state.topology_score; False when no node contributed (Skip)."""
    hard_weight = plugin.hard_pod_affinity_weight
    ns_labels = state.namespace_labels
    incoming_memo: dict = {}  # label signature -> [(key, signed weight, source)]
    existing_memo: dict = {}  # id(term) -> incoming pod matches it
    any_node = False
    for ni in nodes:
        labels = ni.labels
        pods = ni.pods if has_constraints else ni.pods_with_affinity
        if not pods or not labels:
            # processExistingPod does nothing for a node without labels.
            continue
        node_scores = _NodeScores()
        for ep in pods:
            if has_constraints:
                sig = label_signature(ep)
                matched = incoming_memo.get(sig)
                if matched is None:
                    matched = incoming_memo[sig] = _incoming_matches(preferred_affinity, preferred_anti, ep)
                for key, amount, source in matched:
                    tv = labels.get(key)
                    if tv is not None:
                        node_scores.add(key, tv, amount, ep, ni.name, source)
            if not ep.has_affinity:
                continue
            terms = affinity_terms(ep)
            if hard_weight > 0:
                for t in terms.required_affinity:
                    if _existing_term_matches(existing_memo, t, pod_info, ns_labels):
                        tv = labels.get(t.topology_key)
                        if tv is not None:
                            node_scores.add(t.topology_key, tv, hard_weight, ep, ni.name, EXISTING_REQUIRED_AFFINITY)
            for wt in terms.preferred_affinity:
                if _existing_term_matches(existing_memo, wt.term, pod_info, ns_labels):
                    tv = labels.get(wt.term.topology_key)
                    if tv is not None:
                        node_scores.add(wt.term.topology_key, tv, wt.weight, ep, ni.name, EXISTING_PREFERRED_AFFINITY)
            for wt in terms.preferred_anti_affinity:
                if _existing_term_matches(existing_memo, wt.term, pod_info, ns_labels):
                    tv = labels.get(wt.term.topology_key)
                    if tv is not None:
                        node_scores.add(wt.term.topology_key, tv, -wt.weight, ep, ni.name, EXISTING_PREFERRED_ANTI)
        if node_scores.scores:
            any_node = True
            _merge(state, node_scores)
    return any_node


def _incoming_matches(preferred_affinity, preferred_anti, ep) -> list:
    out = []
    # The incoming pod's namespace selectors were merged into names: existing
    # pods' namespace labels are not looked up (nil, as upstream passes).
    for wt in preferred_affinity:
        if wt.term.matches(ep, None):
            out.append((wt.term.topology_key, wt.weight, INCOMING_PREFERRED_AFFINITY))
    for wt in preferred_anti:
        if wt.term.matches(ep, None):
            out.append((wt.term.topology_key, -wt.weight, INCOMING_PREFERRED_ANTI))
    return out


def _existing_term_matches(memo, term, pod_info, ns_labels) -> bool:
    m = memo.get(id(term))
    if m is None:
        m = memo[id(term)] = term.matches(pod_info, ns_labels)
    return m


def _merge(state: PreScoreState, node_scores: _NodeScores) -> None:
    total = state.topology_score
    for key, values in node_scores.scores.items():
        into = total.get(key)
        if into is None:
            total[key] = dict(values)
            continue
        for v, s in values.items():
            into[v] = into.get(v, 0) + s
    contributions = state.contributions
    for pair, pi, node_name, source, amount in node_scores.contributions:
        lst = contributions.get(pair)
        if lst is None:
            contributions[pair] = [(pi, node_name, source, amount)]
        else:
            lst.append((pi, node_name, source, amount))


def score_node(state: PreScoreState, node_info) -> int:
    labels = node_info.labels
    score = 0
    for key, values in state.topology_score.items():
        v = labels.get(key)
        if v is not None:
            score += values.get(v, 0)
    return score


def normalize(state: PreScoreState, scores) -> None:
    if not state.topology_score:
        return
    min_count = None
    max_count = None
    for s in scores:
        if max_count is None or s.score > max_count:
            max_count = s.score
        if min_count is None or s.score < min_count:
            min_count = s.score
    if min_count is None:
        return
    diff = max_count - min_count
    for s in scores:
        f = 0.0
        if diff > 0:
            f = float(MAX_NODE_SCORE) * (float(s.score - min_count) / float(diff))
        s.score = int(f)


def score_details(state: PreScoreState, node_info) -> dict | None:
    labels = node_info.labels
    domains = []
    for key in sorted(state.topology_score):
        v = labels.get(key)
        if v is None:
            continue
        contributions = state.contributions.get((key, v), ())
        if not contributions:
            continue
        pods = []
        for pi, node_name, source, amount in contributions[:MAX_PODS_SHOWN]:
            pods.append({"pod": pi.key, "node": node_name, "term": source, "weight": amount})
        domains.append({
            "topologyKey": key,
            "topologyValue": v,
            "score": state.topology_score[key].get(v, 0),
            "pods": pods,
            "podTerms": len(contributions),
        })
    if not domains:
        return None
    return {"domains": domains}
