"""InterPodAffinity PreScore/Score/NormalizeScore.

PreScore sums, per (topologyKey, value), the weights of every preferred term
that an existing pod and the incoming pod satisfy towards each other (and the
hardPodAffinityWeight for existing pods' required affinity terms the incoming
pod matches). Score adds up the node's own pairs; NormalizeScore maps the
range min..max onto 0..100 with float64 arithmetic, like upstream.
"""

from __future__ import annotations

from operator import add

from ...framework.interface import MAX_NODE_SCORE
from ...state.podaffinity import SignaturePod, affinity_terms, node_signature_counts, pods_with_signature

PRE_SCORE_STATE_KEY = "PreScoreInterPodAffinity"

MAX_PODS_SHOWN = 10

INCOMING_PREFERRED_AFFINITY = "preferredAffinity"
INCOMING_PREFERRED_ANTI = "preferredAntiAffinity"
EXISTING_REQUIRED_AFFINITY = "existingPodRequiredAffinity"
EXISTING_PREFERRED_AFFINITY = "existingPodPreferredAffinity"
EXISTING_PREFERRED_ANTI = "existingPodPreferredAntiAffinity"


class PreScoreState:
    __slots__ = ("topology_score", "pod_info", "namespace_labels", "contributions", "details_cache")

    def __init__(self, pod_info, namespace_labels):
        self.pod_info = pod_info
        self.namespace_labels = namespace_labels
        # topologyKey -> {value: score}
        self.topology_score: dict[str, dict[str, int]] = {}
        # (topologyKey, value) -> [(PodInfo, node, source, signed weight)]
        self.contributions: dict = {}
        self.details_cache: dict = {}

    def clone(self):
        # Read-only after PreScore, as upstream's.
        return self


class _NodeScores:
    """One node's scoreMap before it is merged (upstream's per-node topoScore)."""

    __slots__ = ("scores", "contributions")

    def __init__(self):
        self.scores: dict[str, dict[str, int]] = {}
        self.contributions: list = []

    def add(self, key, value, amount, who, node_name, source, per_pod, pods=1) -> None:
        """`who` is a PodInfo, or (label signature, NodeInfo) for all the
        pods of that signature on the node."""
        by_value = self.scores.get(key)
        if by_value is None:
            by_value = self.scores[key] = {}
        by_value[value] = by_value.get(value, 0) + amount
        self.contributions.append(((key, value), who, node_name, source, per_pod, pods))


def compute_pre_score(plugin, state: PreScoreState, pod_info, preferred_affinity, preferred_anti,
                      nodes, has_constraints: bool, index=None) -> bool:
    """Fill state.topology_score; False when no node contributed (Skip).

    With the snapshot's PodIndex, the signatures and terms objects that can
    contribute are found first and only the nodes holding them are walked,
    in node order as before: a node whose pods contribute nothing is
    skipped either way."""
    hard_weight = plugin.hard_pod_affinity_weight
    ns_labels = state.namespace_labels
    incoming_memo: dict = {}  # label signature -> [(key, signed weight, source)]
    existing_memo: dict = {}  # id(term) -> incoming pod matches it
    by_terms: dict = {}  # id(PodAffinityTerms) -> [(topology key, signed weight, source)]

    def incoming(sig):
        matched = incoming_memo.get(sig)
        if matched is None:
            matched = incoming_memo[sig] = _incoming_matches(preferred_affinity, preferred_anti, SignaturePod(sig))
        return matched

    def existing(terms):
        matched = by_terms.get(id(terms))
        if matched is None:
            matched = by_terms[id(terms)] = _existing_matches(existing_memo, terms, pod_info, ns_labels, hard_weight)
        return matched

    sig_hot = terms_hot = None
    if index is not None:
        if has_constraints:
            sig_hot = index.nodes_with_signatures(lambda sig: bool(incoming(sig)))
        terms_hot = index.nodes_with_terms(lambda terms: bool(existing(terms)))
        # The index's nodes outside both sets are skipped below anyway, and
        # `nodes` (the snapshot's) are all in the index.
        hot = terms_hot if sig_hot is None else sig_hot | terms_hot
        if not hot:
            return False
        nodes = [ni for ni in nodes if ni.name in hot or ni.pod_index is not index]
    any_node = False
    for ni in nodes:
        labels = ni.labels
        if not labels:
            # processExistingPod does nothing for a node without labels.
            continue
        indexed = index is not None and ni.pod_index is index
        walk_sigs = has_constraints and (not indexed or ni.name in sig_hot)
        walk_terms = not indexed or ni.name in terms_hot
        if not walk_sigs and not walk_terms:
            continue
        node_scores = _NodeScores()
        if walk_sigs:
            # The incoming pod's terms against every pod, per label signature.
            for sig, n in node_signature_counts(ni).items():
                for key, amount, source in incoming(sig):
                    tv = labels.get(key)
                    if tv is not None:
                        node_scores.add(key, tv, amount * n, (sig, ni), ni.name, source, amount, n)
        if walk_terms:
            # The existing pods' own terms: only pods with affinity have any.
            # Replicas share their parsed terms, so what the incoming pod
            # satisfies is worked out once per terms object.
            for ep in ni.pods_with_affinity:
                for key, amount, source in existing(affinity_terms(ep)):
                    tv = labels.get(key)
                    if tv is not None:
                        node_scores.add(key, tv, amount, ep, ni.name, source, amount)
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


def _existing_matches(memo, terms, pod_info, ns_labels, hard_weight: int) -> list:
    """An existing pod's terms that the incoming pod satisfies, in the order
    upstream's processExistingPod adds them: required affinity (with the
    hardPodAffinityWeight), preferred affinity, preferred anti-affinity."""
    out = []
    if hard_weight > 0:
        for t in terms.required_affinity:
            if _existing_term_matches(memo, t, pod_info, ns_labels):
                out.append((t.topology_key, hard_weight, EXISTING_REQUIRED_AFFINITY))
    for wt in terms.preferred_affinity:
        if _existing_term_matches(memo, wt.term, pod_info, ns_labels):
            out.append((wt.term.topology_key, wt.weight, EXISTING_PREFERRED_AFFINITY))
    for wt in terms.preferred_anti_affinity:
        if _existing_term_matches(memo, wt.term, pod_info, ns_labels):
            out.append((wt.term.topology_key, -wt.weight, EXISTING_PREFERRED_ANTI))
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
    for pair, who, node_name, source, amount, pods in node_scores.contributions:
        lst = contributions.get(pair)
        if lst is None:
            contributions[pair] = [(who, node_name, source, amount, pods)]
        else:
            lst.append((who, node_name, source, amount, pods))


def score_node(state: PreScoreState, node_info) -> int:
    labels = node_info.labels
    score = 0
    for key, values in state.topology_score.items():
        v = labels.get(key)
        if v is not None:
            score += values.get(v, 0)
    return score


def score_nodes(state: PreScoreState, nodes) -> list[int]:
    """score_node on every node, one topology key at a time."""
    out = None
    for key, values in state.topology_score.items():
        get = values.get
        # A node without the key looks up None: no domain has that value.
        col = [get(ni.labels.get(key), 0) for ni in nodes]
        out = col if out is None else list(map(add, out, col))
    return out if out is not None else [0] * len(nodes)


def normalize_all(state: PreScoreState, scores: list[int]) -> list[int]:
    """normalize over plain scores, as a new list."""
    if not state.topology_score or not scores:
        return list(scores)
    min_count = min(scores)
    diff = max(scores) - min_count
    if diff <= 0:
        return [0] * len(scores)
    max_score = float(MAX_NODE_SCORE)
    fdiff = float(diff)
    return [int(max_score * (float(s - min_count) / fdiff)) for s in scores]


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
        d = _domain_details(state, (key, v))
        if d is not None:
            domains.append(d)
    if not domains:
        return None
    return {"domains": domains}


def score_details_all(state: PreScoreState, nodes) -> list[dict | None]:
    """score_details of each node, one explanation (read-only) shared by
    the nodes in the same domains: with zone-wide terms, 5,000 nodes have a
    handful, and writers encode each once."""
    keys = sorted(state.topology_score)
    shared: dict = {}  # the node's (topologyKey, value) pairs -> its explanation
    out = []
    for ni in nodes:
        labels = ni.labels
        pairs = tuple([(k, v) for k in keys if (v := labels.get(k)) is not None])
        found = shared.get(pairs, False)
        if found is False:
            domains = [d for d in (_domain_details(state, pair) for pair in pairs) if d is not None]
            found = shared[pairs] = {"domains": domains} if domains else None
        out.append(found)
    return out


def _domain_details(state: PreScoreState, pair) -> dict | None:
    """The pods behind one (topologyKey, value): built once per domain."""
    cache = state.details_cache
    if pair in cache:
        return cache[pair]
    contributions = state.contributions.get(pair, ())
    out = None
    if contributions:
        pods = []
        total = 0
        for who, node_name, source, amount, n in contributions:
            total += n
            if len(pods) >= MAX_PODS_SHOWN:
                continue
            matched = pods_with_signature(who[1], who[0]) if isinstance(who, tuple) else [who]
            for pi in matched[: MAX_PODS_SHOWN - len(pods)]:
                pods.append({"pod": pi.key, "node": node_name, "term": source, "weight": amount})
        out = {
            "topologyKey": pair[0],
            "topologyValue": pair[1],
            "score": state.topology_score[pair[0]].get(pair[1], 0),
            "pods": pods,
            "podTerms": total,
        }
    cache[pair] = out
    return out
