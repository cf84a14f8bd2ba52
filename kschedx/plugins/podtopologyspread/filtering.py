"""PodTopologySpread PreFilter/Filter (podtopologyspread/filtering.go).

PreFilter counts, per DoNotSchedule constraint, the matching pods of every
eligible domain and keeps the two smallest counts ("critical paths"); Filter
checks `matching in the node's domain + self match - global minimum <=
maxSkew` in O(constraints) per node.
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import and_

from ...framework.status import Code, Status
from ..nodeaffinity import required_node_affinity
from .common import count_pods_match_selector, has_all_keys, inclusion_mask, node_has_all_keys
from ..helper.combinations import verdict_per_combination

PRE_FILTER_STATE_KEY = "PreFilterPodTopologySpread"

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

MAX_INT32 = 2**31 - 1

# Domain counts are listed in an explanation when there are at most this
# many domains (zones, racks); hostname-like keys give the size only.
MAX_DOMAINS_SHOWN = 20


class CriticalPaths:
    """Two (topology value, match number) entries; [0] holds the minimum."""

    __slots__ = ("paths",)

    def __init__(self, paths=None):
        self.paths = paths if paths is not None else [["", MAX_INT32], ["", MAX_INT32]]

    def update(self, tp_val: str, num: int) -> None:
        p = self.paths
        i = -1
        if tp_val == p[0][0]:
            i = 0
        elif tp_val == p[1][0]:
            i = 1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        else:
            if num < p[0][1]:
                p[1] = p[0]
                p[0] = [tp_val, num]
            elif num < p[1][1]:
                p[1] = [tp_val, num]

    def clone(self) -> "CriticalPaths":
        return CriticalPaths([list(self.paths[0]), list(self.paths[1])])

    def __repr__(self):
        return f"CriticalPaths({self.paths})"


class PreFilterState:
    __slots__ = ("constraints", "critical_paths", "tp_value_to_match_num")

    def __init__(self, constraints, critical_paths=None, tp_value_to_match_num=None):
        self.constraints = constraints
        self.critical_paths: list[CriticalPaths] = critical_paths or []
        self.tp_value_to_match_num: list[dict[str, int]] = tp_value_to_match_num or []

    def min_match_num(self, i: int, min_domains: int) -> int:
        """The global minimum, 0 while fewer domains than minDomains exist."""
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].paths[0][1]

    def clone(self) -> "PreFilterState":
        # Constraints never change: shared.
        return PreFilterState(
            self.constraints,
            [p.clone() for p in self.critical_paths],
            [dict(m) for m in self.tp_value_to_match_num],
        )


def compute_pre_filter_state(constraints, pod_info, nodes, index=None, by_name=None) -> PreFilterState:
    """calPreFilterState over all nodes. With the snapshot's pod index (and
    `by_name`, its nodes by name: `nodes` are the snapshot's own), by
    columns: see _pre_filter_by_columns."""
    if index is not None and by_name is not None:
        labels = [ni.labels for ni in nodes]
        if set(map(type, labels)) <= {dict}:
            return _pre_filter_by_columns(constraints, pod_info, nodes, labels, index, by_name)
    return compute_node_by_node(constraints, pod_info, nodes)


def _pre_filter_by_columns(constraints, pod_info, nodes, labels: list[dict], index, by_name) -> PreFilterState:
    """compute_node_by_node with C loops over the nodes: the eligible
    domains (each first met in node order, as there) from columns of label
    values, then the matching pods the index finds, node by node, for the
    few nodes holding any (every other node adds 0)."""
    s = PreFilterState(constraints)
    required = required_node_affinity(pod_info)
    namespace = pod_info.namespace
    has_all = has_all_keys(labels, constraints)
    for c in constraints:
        mask = inclusion_mask(c, pod_info, nodes, required)
        included = has_all if mask is None else list(map(and_, has_all, mask))
        m = dict.fromkeys(map(dict.__getitem__, compress(labels, included), repeat(c.topology_key)), 0)
        if not c.selector.is_empty():
            for name, n in index.count_by_node(namespace, c.selector, {}).items():
                ni = by_name.get(name)
                if ni is None or not node_has_all_keys(ni.labels, constraints) \
                        or not c.match_node_inclusion_policies(pod_info, ni, required):
                    continue
                m[ni.labels[c.topology_key]] += n
        s.tp_value_to_match_num.append(m)
    _critical_paths(s)
    return s


def compute_node_by_node(constraints, pod_info, nodes) -> PreFilterState:
    """calPreFilterState one node after another (the reference the columns
    are compared with in tests)."""
    s = PreFilterState(constraints)
    s.tp_value_to_match_num = [{} for _ in constraints]
    required = required_node_affinity(pod_info)
    namespace = pod_info.namespace
    memos = [{} for _ in constraints]
    for ni in nodes:
        labels = ni.labels
        if not node_has_all_keys(labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.match_node_inclusion_policies(pod_info, ni, required):
                continue
            value = labels[c.topology_key]
            count = count_pods_match_selector(ni, c.selector, namespace, memos[i])
            m = s.tp_value_to_match_num[i]
            m[value] = m.get(value, 0) + count
    _critical_paths(s)
    return s


def _critical_paths(s: PreFilterState) -> None:
    # Upstream fills the critical paths in map order; only paths[0] (the
    # minimum) is ever read, and it does not depend on the order.
    for m in s.tp_value_to_match_num:
        paths = CriticalPaths()
        for value, num in m.items():
            paths.update(value, num)
        s.critical_paths.append(paths)


def update_with_pod(s: PreFilterState, updated_pi, preemptor_pi, node_info, delta: int) -> None:
    """AddPod / RemovePod."""
    if s is None or updated_pi.namespace != preemptor_pi.namespace or node_info.node is None:
        return
    labels = node_info.labels
    if not node_has_all_keys(labels, s.constraints):
        return
    required = required_node_affinity(preemptor_pi)
    for i, c in enumerate(s.constraints):
        if not c.selector.matches(updated_pi.labels):
            continue
        if not c.match_node_inclusion_policies(preemptor_pi, node_info, required):
            continue
        v = labels[c.topology_key]
        m = s.tp_value_to_match_num[i]
        m[v] = m.get(v, 0) + delta
        s.critical_paths[i].update(v, m[v])


def filter_node(s: PreFilterState, pod_info, node_info) -> Status | None:
    if not s.constraints:
        return None
    labels = node_info.labels
    pod_labels = pod_info.labels
    evaluated = []
    for i, c in enumerate(s.constraints):
        tp_val = labels.get(c.topology_key)
        if tp_val is None:
            evaluated.append(_constraint_details(s, i, c, None, None, None, None))
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH,
                          details={"constraints": evaluated})
        min_match = s.min_match_num(i, c.min_domains)
        self_match = 1 if c.selector.matches(pod_labels) else 0
        match_num = s.tp_value_to_match_num[i].get(tp_val, 0)
        skew = match_num + self_match - min_match
        evaluated.append(_constraint_details(s, i, c, tp_val, match_num, self_match, min_match))
        if skew > c.max_skew:
            return Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH, details={"constraints": evaluated})
    return Status(Code.SUCCESS, details={"constraints": evaluated})


def filter_nodes(s: PreFilterState, pod_info, nodes) -> list | None:
    """filter_node on every node. A node's verdict depends only on its values
    of the constraints' topology keys, so nodes sharing them (a zone's nodes)
    share one verdict, computed once."""
    if not s.constraints:
        return None
    keys = [c.topology_key for c in s.constraints]
    labels = [ni.labels for ni in nodes]
    if not set(map(type, labels)) <= {dict}:
        seen: dict[tuple, Status | None] = {}
        out = []
        for ni in nodes:
            key = tuple(ni.labels.get(k) for k in keys)
            try:
                st = seen[key]
            except KeyError:
                st = seen[key] = filter_node(s, pod_info, ni)
            out.append(st)
        return out
    return verdict_per_combination(nodes, labels, keys, lambda ni: filter_node(s, pod_info, ni))


def _constraint_details(s, i, c, tp_val, match_num, self_match, min_match) -> dict:
    d = c.describe()
    domains = s.tp_value_to_match_num[i]
    d["domain"] = tp_val
    if tp_val is None:
        d["missingTopologyKey"] = True
        return d
    in_domain = tp_val in domains
    d["matchingPods"] = match_num
    d["selfMatch"] = bool(self_match)
    d["globalMinimum"] = min_match
    d["eligibleDomains"] = len(domains)
    if len(domains) < c.min_domains:
        d["belowMinDomains"] = True
    d["skew"] = match_num + self_match - min_match
    d["satisfied"] = d["skew"] <= c.max_skew
    if not in_domain:
        # The node is not an eligible domain itself (e.g. excluded by
        # nodeAffinityPolicy / nodeTaintsPolicy): counted as 0 matching pods.
        d["domainEligible"] = False
    if len(domains) <= MAX_DOMAINS_SHOWN:
        d["domainCounts"] = {k: domains[k] for k in sorted(domains)}
    return d
