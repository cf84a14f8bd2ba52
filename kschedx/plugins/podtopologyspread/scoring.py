"""PodTopologySpread PreScore/Score/NormalizeScore (podtopologyspread/scoring.go).

ScheduleAnyway constraints (the pod's, or the system defaults): a node scores
the sum over constraints of `matching pods in its domain * log(domains + 2) +
maxSkew - 1` (float64, rounded half away from zero), and NormalizeScore turns
fewer matching pods into a higher score with integer arithmetic.
"""

from __future__ import annotations

import math
from itertools import compress, repeat
from operator import add, not_

from ...framework.interface import MAX_NODE_SCORE
from ...state.podaffinity import HOSTNAME_KEY
from ..helper.normalize_score import go_div
from ..nodeaffinity import required_node_affinity
from .common import _BY_NODE, count_pods_match_selector, has_all_keys, node_has_all_keys

PRE_SCORE_STATE_KEY = "PreScorePodTopologySpread"
INVALID_SCORE = -1


class PreScoreState:
    __slots__ = ("constraints", "ignored_nodes", "topology_value_to_pod_counts", "topology_normalizing_weight",
                 "memos", "namespace", "host_counts")

    def __init__(self):
        self.constraints = []
        self.ignored_nodes: set[str] = set()
        self.topology_value_to_pod_counts: list[dict[str, int]] = []
        self.topology_normalizing_weight: list[float] = []
        self.memos: list[dict] = []
        self.namespace = ""
        # (constraint index, node name) -> matching pods, for hostname keys.
        self.host_counts: dict = {}

    def clone(self):
        # Read-only after PreScore, as upstream's.
        return self


def topology_normalizing_weight(size: int) -> float:
    return math.log(float(size + 2))


def score_for_count(cnt: int, max_skew: int, tp_weight: float) -> float:
    return float(cnt) * tp_weight + float(max_skew - 1)


def go_round(x: float) -> int:
    """math.Round: half away from zero (x - floor(x) is exact in float64)."""
    if x < 0:
        return -go_round(-x)
    f = math.floor(x)
    return int(f) + (1 if x - f >= 0.5 else 0)


def init_pre_score_state(s: PreScoreState, filtered_nodes, require_all_topologies: bool) -> None:
    labels = [ni.labels for ni in filtered_nodes]
    if set(map(type, labels)) <= {dict}:
        _init_by_columns(s, filtered_nodes, labels, require_all_topologies)
    else:
        init_node_by_node(s, filtered_nodes, require_all_topologies)


def init_node_by_node(s: PreScoreState, filtered_nodes, require_all_topologies: bool) -> None:
    """init_pre_score_state one node after another (the reference the
    columns are compared with in tests)."""
    n = len(s.constraints)
    s.topology_value_to_pod_counts = [{} for _ in range(n)]
    topo_size = [0] * n
    for ni in filtered_nodes:
        labels = ni.labels
        if require_all_topologies and not node_has_all_keys(labels, s.constraints):
            # Nodes missing a topology key are not scored.
            s.ignored_nodes.add(ni.name)
            continue
        for i, c in enumerate(s.constraints):
            # Per-node counts are computed at Score.
            if c.topology_key == HOSTNAME_KEY:
                continue
            # A node without the key counts in the "" domain, like Go's
            # zero value for a missing map entry.
            value = labels.get(c.topology_key, "")
            counts = s.topology_value_to_pod_counts[i]
            if value not in counts:
                counts[value] = 0
                topo_size[i] += 1
    s.topology_normalizing_weight = []
    for i, c in enumerate(s.constraints):
        size = topo_size[i]
        if c.topology_key == HOSTNAME_KEY:
            size = len(filtered_nodes) - len(s.ignored_nodes)
        s.topology_normalizing_weight.append(topology_normalizing_weight(size))


def _init_by_columns(s: PreScoreState, filtered_nodes, labels: list[dict], require_all_topologies: bool) -> None:
    """init_pre_score_state by columns of label values, C loops over the
    nodes: the same ignored nodes, and the same domains in the same order
    (each first met in node order)."""
    constraints = s.constraints
    if require_all_topologies and constraints:
        has_all = has_all_keys(labels, constraints)
        if not all(has_all):
            s.ignored_nodes.update(compress([ni.name for ni in filtered_nodes], map(not_, has_all)))
            labels = list(compress(labels, has_all))
    s.topology_value_to_pod_counts = [
        {} if c.topology_key == HOSTNAME_KEY else dict.fromkeys(map(dict.get, labels, repeat(c.topology_key), repeat("")), 0)
        for c in constraints
    ]
    s.topology_normalizing_weight = [
        topology_normalizing_weight(
            len(filtered_nodes) - len(s.ignored_nodes) if c.topology_key == HOSTNAME_KEY else len(counts))
        for c, counts in zip(constraints, s.topology_value_to_pod_counts)
    ]


def count_all_nodes(s: PreScoreState, pod_info, all_nodes, require_all_topologies: bool, index=None,
                    by_name=None) -> None:
    """Matching pods per domain of each (non-hostname) constraint, over every
    node. With the snapshot's pod index (`index`, and `by_name` its nodes
    by name), only nodes holding matching pods are visited: the others add 0."""
    if index is not None and by_name is not None and len(by_name) == len(all_nodes):
        _count_indexed_nodes(s, pod_info, require_all_topologies, index, by_name)
        return
    required = required_node_affinity(pod_info)
    namespace = pod_info.namespace
    constraints = s.constraints
    counts_by_constraint = s.topology_value_to_pod_counts
    memos = s.memos
    for ni in all_nodes:
        labels = ni.labels
        if require_all_topologies and not node_has_all_keys(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.match_node_inclusion_policies(pod_info, ni, required):
                continue
            counts = counts_by_constraint[i]
            value = labels.get(c.topology_key, "")
            # Only domains of candidate nodes are counted; hostname domains
            # are counted per node at Score.
            if value not in counts:
                continue
            counts[value] += count_pods_match_selector(ni, c.selector, namespace, memos[i])


def _count_indexed_nodes(s: PreScoreState, pod_info, require_all_topologies: bool, index, by_name) -> None:
    required = None
    namespace = pod_info.namespace
    constraints = s.constraints
    for i, c in enumerate(constraints):
        counts = s.topology_value_to_pod_counts[i]
        if not counts or c.selector.is_empty():
            continue  # hostname constraints (counted at Score), or nothing to count
        for name, n in index.count_by_node(namespace, c.selector, s.memos[i]).items():
            ni = by_name[name]
            labels = ni.labels
            if require_all_topologies and not node_has_all_keys(labels, constraints):
                continue
            if required is None:
                required = required_node_affinity(pod_info)
            if not c.match_node_inclusion_policies(pod_info, ni, required):
                continue
            value = labels.get(c.topology_key, "")
            if value in counts:
                counts[value] += n


def _constraint_count(s: PreScoreState, i: int, c, node_info, tp_val: str) -> int:
    if c.topology_key == HOSTNAME_KEY:
        key = (i, node_info.name)
        n = s.host_counts.get(key)
        if n is None:
            n = s.host_counts[key] = count_pods_match_selector(node_info, c.selector, s.namespace, s.memos[i])
        return n
    return s.topology_value_to_pod_counts[i][tp_val]


def score_node(s: PreScoreState, node_info) -> int:
    if node_info.name in s.ignored_nodes:
        return 0
    labels = node_info.labels
    score = 0.0
    for i, c in enumerate(s.constraints):
        tp_val = labels.get(c.topology_key)
        if tp_val is not None:
            cnt = _constraint_count(s, i, c, node_info, tp_val)
            score += score_for_count(cnt, c.max_skew, s.topology_normalizing_weight[i])
    return go_round(score)


def score_nodes(s: PreScoreState, nodes) -> list[int]:
    """score_node on every node, with the same float arithmetic in the same
    order (the per-constraint terms are added one by one)."""
    if nodes and None not in [ni.pod_index for ni in nodes]:
        try:
            return _score_indexed_nodes(s, nodes)
        except _NotHere:
            pass
    ignored = s.ignored_nodes
    per_constraint = []
    for i, c in enumerate(s.constraints):
        by_host = c.topology_key == HOSTNAME_KEY
        # Hostname domains: the pod index's count per node (for the
        # snapshot's own nodes), the same count _constraint_count takes.
        host_counts = None
        if by_host and nodes and nodes[0].pod_index is not None:
            host_counts = {} if c.selector.is_empty() else _by_node_counts(nodes[0].pod_index, c, s, i)
        per_constraint.append((i, c, c.topology_key, by_host, float(c.max_skew - 1),
                               s.topology_normalizing_weight[i], s.topology_value_to_pod_counts[i], host_counts))
    out = []
    for ni in nodes:
        if ni.name in ignored:
            out.append(0)
            continue
        labels = ni.labels
        score = 0.0
        for i, c, key, by_host, skew_term, weight, domain_counts, host_counts in per_constraint:
            tp_val = labels.get(key)
            if tp_val is not None:
                if not by_host:
                    cnt = domain_counts[tp_val]
                elif host_counts is not None and ni.pod_index is not None:
                    cnt = host_counts.get(ni.name, 0)
                else:
                    cnt = _constraint_count(s, i, c, ni, tp_val)
                score += float(cnt) * weight + skew_term
        out.append(go_round(score))
    return out


class _NotHere(Exception):
    """The columns path cannot take these nodes: the per-node loop does."""


def _score_indexed_nodes(s: PreScoreState, nodes) -> list[int]:
    """score_nodes for the snapshot's own nodes (all in the pod index), by
    columns: each constraint's term per node (0.0 when the node lacks the
    key: adding it changes no sum but -0.0, which rounds to 0 as well),
    added constraint by constraint as score_node adds them, then rounded
    once per distinct sum."""
    ignored = s.ignored_nodes
    kept = nodes
    if ignored:
        kept = [ni for ni in nodes if ni.name not in ignored]
    if not kept or not s.constraints:
        raise _NotHere
    labels = [ni.labels for ni in kept]
    names = None
    sums = None
    for i, c in enumerate(s.constraints):
        try:
            values = list(map(dict.get, labels, repeat(c.topology_key)))
        except TypeError:  # labels that are not a dict
            raise _NotHere from None
        if c.topology_key == HOSTNAME_KEY:
            host = {} if c.selector.is_empty() else _by_node_counts(kept[0].pod_index, c, s, i)
            if names is None:
                names = [ni.name for ni in kept]
            counts = list(map(host.get, names, repeat(0)))
            if None in values:
                counts = [None if v is None else n for v, n in zip(values, counts)]
        else:
            domains = s.topology_value_to_pod_counts[i]
            if None in values:
                counts = [None if v is None else domains[v] for v in values]
            else:
                counts = list(map(domains.__getitem__, values))
        skew_term = float(c.max_skew - 1)
        weight = s.topology_normalizing_weight[i]
        term_of = {cnt: 0.0 if cnt is None else float(cnt) * weight + skew_term for cnt in set(counts)}
        terms = map(term_of.__getitem__, counts)
        sums = list(terms) if sums is None else list(map(add, sums, terms))
    round_of = {x: go_round(x) for x in set(sums)}
    scores = list(map(round_of.__getitem__, sums))
    if not ignored:
        return scores
    it = iter(scores)
    return [0 if ni.name in ignored else next(it) for ni in nodes]


def _by_node_counts(index, c, s: PreScoreState, i: int) -> dict[str, int]:
    memo = s.memos[i]
    by_node = memo.get(_BY_NODE)
    if by_node is None:
        by_node = memo[_BY_NODE] = index.count_by_node(s.namespace, c.selector, memo)
    return by_node


def normalize(s: PreScoreState, scores) -> None:
    min_score = 2**63 - 1
    max_score = 0
    for ns in scores:
        if ns.name in s.ignored_nodes:
            ns.score = INVALID_SCORE
            continue
        if ns.score < min_score:
            min_score = ns.score
        if ns.score > max_score:
            max_score = ns.score
    for ns in scores:
        if ns.score == INVALID_SCORE:
            ns.score = 0
            continue
        if max_score == 0:
            ns.score = MAX_NODE_SCORE
            continue
        ns.score = go_div(MAX_NODE_SCORE * (max_score + min_score - ns.score), max_score)


def normalize_all(s: PreScoreState, nodes, scores: list[int]) -> list[int]:
    """normalize over plain scores, as a new list."""
    ignored = s.ignored_nodes
    if ignored:
        valid = [sc for ni, sc in zip(nodes, scores) if ni.name not in ignored]
        marked = [INVALID_SCORE if ni.name in ignored else sc for ni, sc in zip(nodes, scores)]
    else:
        valid = marked = scores
    # normalize's running minimum and maximum start at MaxInt64 and 0.
    min_score = min(min(valid, default=2**63 - 1), 2**63 - 1)
    max_score = max(max(valid, default=0), 0)
    if max_score == 0:
        return [0 if sc == INVALID_SCORE else MAX_NODE_SCORE for sc in marked]
    top = MAX_NODE_SCORE * (max_score + min_score)
    out = []
    for sc in marked:
        if sc == INVALID_SCORE:
            out.append(0)
            continue
        n = top - MAX_NODE_SCORE * sc
        out.append(n // max_score if n >= 0 else go_div(n, max_score))
    return out


def score_details(s: PreScoreState, node_info) -> dict:
    return _details(s, node_info, [c.describe() for c in s.constraints], None)


def score_details_all(s: PreScoreState, nodes) -> list[dict]:
    """score_details of each node: the constraints described once; one
    explanation (read-only) shared by the nodes without a topology key, and
    a constraint's part shared by the nodes of one domain with one count
    (its domainCounts by all), so that writers meet them as one object."""
    described = [c.describe() for c in s.constraints]
    weights = [round(w, 6) for w in s.topology_normalizing_weight]
    shared: list[dict] = [{} for _ in s.constraints]  # per constraint: (domain, count) -> its part
    counts: list = [None] * len(s.constraints)
    ignored = None
    out = []
    for ni in nodes:
        if ni.name in s.ignored_nodes:
            if ignored is None:
                ignored = _details(s, ni, described, weights)
            out.append(ignored)
            continue
        labels = ni.labels
        parts = []
        for i, c in enumerate(s.constraints):
            tp_val = labels.get(c.topology_key)
            if tp_val is None:
                parts.append(_constraint_details(s, i, c, ni, None, described, weights, counts))
                continue
            cnt = _constraint_count(s, i, c, ni, tp_val)
            if c.topology_key == HOSTNAME_KEY:  # a domain of one node: nothing to share
                parts.append(_constraint_details(s, i, c, ni, tp_val, described, weights, counts, cnt))
                continue
            key = (tp_val, cnt)
            part = shared[i].get(key)
            if part is None:
                part = shared[i][key] = _constraint_details(s, i, c, ni, tp_val, described, weights, counts, cnt)
            parts.append(part)
        out.append({"constraints": parts})
    return out


def _details(s: PreScoreState, node_info, described: list[dict], weights: list[float] | None) -> dict:
    if node_info.name in s.ignored_nodes:
        return {"ignored": True, "note": "the node lacks a topology key of the constraints: scored 0"}
    labels = node_info.labels
    counts: list = [None] * len(s.constraints)
    return {"constraints": [_constraint_details(s, i, c, node_info, labels.get(c.topology_key), described, weights,
                                                counts)
                            for i, c in enumerate(s.constraints)]}


def _constraint_details(s: PreScoreState, i: int, c, node_info, tp_val, described: list[dict],
                        weights: list[float] | None, counts: list, cnt: int | None = None) -> dict:
    """One constraint's part of a node's explanation. `counts`: each
    constraint's domainCounts, made once and shared (read-only)."""
    d = dict(described[i])
    d["domain"] = tp_val
    if tp_val is None:
        d["missingTopologyKey"] = True
        return d
    if cnt is None:
        cnt = _constraint_count(s, i, c, node_info, tp_val)
    weight = s.topology_normalizing_weight[i]
    d["matchingPods"] = cnt
    d["topologyWeight"] = round(weight, 6) if weights is None else weights[i]
    d["score"] = round(score_for_count(cnt, c.max_skew, weight), 6)
    if c.topology_key != HOSTNAME_KEY:
        domains = s.topology_value_to_pod_counts[i]
        if len(domains) <= 20:
            if counts[i] is None:
                counts[i] = {k: domains[k] for k in sorted(domains)}
            d["domainCounts"] = counts[i]
    return d
