"""Spread constraints as PodTopologySpread reads them (podtopologyspread/common.go).

A pod's constraints, or, when it has none, the system defaults (hostname
maxSkew 3, zone maxSkew 5, ScheduleAnyway) with a selector made of the
Services, ReplicationControllers, ReplicaSets and StatefulSets that select
or own it.
"""

from __future__ import annotations

from itertools import repeat
from operator import and_

from ...api.labels import NOTHING, Requirement, Selector, SelectorError, label_selector
from ...state.podaffinity import HOSTNAME_KEY, SIGNATURE_INFO, ZONE_KEY, node_signature_counts, selector_string
from ...api.taints import DO_NOT_SCHEDULE, find_matching_untolerated_taint

DO_NOT_SCHEDULE_ACTION = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

# Upstream's systemDefaultConstraints, in its order.
SYSTEM_DEFAULT_CONSTRAINTS = (
    {"topologyKey": HOSTNAME_KEY, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": ZONE_KEY, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)


class SpreadError(Exception):
    """A constraint whose selector does not parse (an Error status upstream)."""


class Constraint:
    """topologySpreadConstraint: the parsed form of one constraint."""

    __slots__ = ("max_skew", "topology_key", "selector", "min_domains", "node_affinity_policy",
                 "node_taints_policy", "when_unsatisfiable", "system_default", "comparison_operators")

    def __init__(self, max_skew, topology_key, selector, min_domains=1, node_affinity_policy=HONOR,
                 node_taints_policy=IGNORE, when_unsatisfiable=DO_NOT_SCHEDULE_ACTION, system_default=False,
                 comparison_operators=False):
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.node_affinity_policy = node_affinity_policy
        self.node_taints_policy = node_taints_policy
        self.when_unsatisfiable = when_unsatisfiable
        self.system_default = system_default
        # TaintTolerationComparisonOperators, for nodeTaintsPolicy: Honor.
        self.comparison_operators = comparison_operators

    def match_node_inclusion_policies(self, pod_info, node_info, required_node_affinity) -> bool:
        if self.node_affinity_policy == HONOR:
            if not required_node_affinity.matches(node_info):
                return False
        if self.node_taints_policy == HONOR:
            if find_matching_untolerated_taint(node_info.taints, pod_info.spec.get("tolerations"),
                                               DO_NOT_SCHEDULE, self.comparison_operators) is not None:
                return False
        return True

    def describe(self) -> dict:
        d = {
            "topologyKey": self.topology_key,
            "maxSkew": self.max_skew,
            "whenUnsatisfiable": self.when_unsatisfiable,
            "labelSelector": selector_string(self.selector),
        }
        if self.min_domains != 1:
            d["minDomains"] = self.min_domains
        if self.node_affinity_policy != HONOR:
            d["nodeAffinityPolicy"] = self.node_affinity_policy
        if self.node_taints_policy != IGNORE:
            d["nodeTaintsPolicy"] = self.node_taints_policy
        if self.system_default:
            d["systemDefault"] = True
        return d

    def __repr__(self):
        return f"Constraint({self.describe()})"


def _merge_label_set(match_labels: dict, selector: Selector) -> Selector:
    """mergeLabelSetWithSelector: the pod's values for matchLabelKeys AND the
    selector's requirements; a Nothing selector stays Nothing. Requirements
    the API server already merged are not repeated (same meaning)."""
    if selector.nothing:
        return selector
    reqs = [Requirement(k, "In", [v]) for k, v in sorted(match_labels.items())]
    seen = {(r.key, r.op, r.values) for r in reqs}
    for r in selector.requirements:
        if (r.key, r.op, r.values) not in seen:
            reqs.append(r)
            seen.add((r.key, r.op, r.values))
    return Selector(reqs)


def filter_constraints(constraints, pod_labels: dict, action: str, *, match_label_keys: bool = True,
                       comparison_operators: bool = False) -> list[Constraint]:
    """filterTopologySpreadConstraints for one whenUnsatisfiable action, with
    the MatchLabelKeysInPodTopologySpread and TaintTolerationComparisonOperators
    gates (without the first, matchLabelKeys are ignored)."""
    out = []
    for c in constraints or ():
        if (c.get("whenUnsatisfiable") or "") != action:
            continue
        try:
            selector = label_selector(c.get("labelSelector"))
        except SelectorError as exc:
            raise SpreadError(str(exc)) from None
        keys = c.get("matchLabelKeys") or ()
        if keys and match_label_keys:
            match_labels = {k: pod_labels[k] for k in keys if k in pod_labels}
            if match_labels:
                selector = _merge_label_set(match_labels, selector)
        min_domains = c.get("minDomains")
        out.append(Constraint(
            c.get("maxSkew") or 0,
            c.get("topologyKey") or "",
            selector,
            1 if min_domains is None else min_domains,
            c.get("nodeAffinityPolicy") or HONOR,
            c.get("nodeTaintsPolicy") or IGNORE,
            action,
            comparison_operators=comparison_operators,
        ))
    return out


def _controller_ref(pod: dict):
    for ref in pod["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


def default_selector(pod_info, cluster) -> Selector:
    """helper.DefaultSelector: labels of the Services selecting the pod, plus
    the selector of the ReplicationController / ReplicaSet / StatefulSet that
    controls it."""
    label_set: dict = {}
    ns = pod_info.namespace
    labels = pod_info.labels
    for key, svc in cluster.services.items():
        if svc["metadata"].get("namespace", "default") != ns:
            continue
        sel = (svc.get("spec") or {}).get("selector")
        if sel is None:
            # A Service without a selector selects nothing, not everything.
            continue
        if all(labels.get(k) == v for k, v in sel.items()):
            label_set.update(sel)
    reqs = _set_requirements(label_set)
    owner = _controller_ref(pod_info.pod)
    if owner is None:
        return Selector(reqs)
    api_version = owner.get("apiVersion") or ""
    kind = owner.get("kind")
    name = owner.get("name")
    if api_version == "v1" and kind == "ReplicationController":
        rc = cluster.replication_controllers.get(f"{ns}/{name}")
        if rc is not None:
            label_set.update((rc.get("spec") or {}).get("selector") or {})
            reqs = _set_requirements(label_set)
    elif api_version == "apps/v1" and kind in ("ReplicaSet", "StatefulSet"):
        objs = cluster.replica_sets if kind == "ReplicaSet" else cluster.stateful_sets
        obj = objs.get(f"{ns}/{name}")
        if obj is not None:
            try:
                other = label_selector((obj.get("spec") or {}).get("selector"))
            except SelectorError:
                other = None
            if other is not None and not other.nothing:
                reqs = reqs + list(other.requirements)
    return Selector(reqs)


def _set_requirements(label_set: dict) -> list:
    try:
        return [Requirement(k, "In", [v]) for k, v in sorted(label_set.items())]
    except SelectorError:
        return []


def build_default_constraints(plugin, pod_info, action: str) -> list[Constraint]:
    constraints = filter_constraints(plugin.default_constraints, pod_info.labels, action,
                                     match_label_keys=plugin.match_label_keys,
                                     comparison_operators=plugin.comparison_operators)
    if not constraints:
        return []
    selector = pod_info.cached("DefaultSpreadSelector",
                               lambda pi: default_selector(pi, plugin.handle.snapshot.cluster))
    if selector.is_empty():
        return []
    for c in constraints:
        c.selector = selector
        c.system_default = plugin.system_defaulted
    return constraints


def get_constraints(plugin, pod_info, action: str) -> list[Constraint]:
    own = pod_info.spec.get("topologySpreadConstraints")
    if own:
        return filter_constraints(own, pod_info.labels, action, match_label_keys=plugin.match_label_keys,
                                  comparison_operators=plugin.comparison_operators)
    return build_default_constraints(plugin, pod_info, action)


def node_has_all_keys(labels: dict, constraints) -> bool:
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def inclusion_mask(c: Constraint, pod_info, nodes, required_node_affinity) -> list[bool] | None:
    """c.match_node_inclusion_policies for each node; None when the
    policies leave no node out without looking (nothing to honor)."""
    mask = None
    if c.node_affinity_policy == HONOR and not required_node_affinity.matches_every_node():
        mask = [required_node_affinity.matches(ni) for ni in nodes]
    if c.node_taints_policy == HONOR:
        tolerations = pod_info.spec.get("tolerations")
        untainted = [not taints or find_matching_untolerated_taint(taints, tolerations, DO_NOT_SCHEDULE,
                                                                   c.comparison_operators) is None
                     for taints in [ni.taints for ni in nodes]]
        mask = untainted if mask is None else list(map(and_, mask, untainted))
    return mask


def has_all_keys(labels: list[dict], constraints) -> list[bool]:
    """node_has_all_keys for each of a list of label dicts (C loops)."""
    out = None
    for c in constraints:
        has = list(map(dict.__contains__, labels, repeat(c.topology_key)))
        out = has if out is None else list(map(and_, out, has))
    return out if out is not None else [True] * len(labels)


_BY_NODE = "count by node"  # memo key next to the label signatures (ints)


def count_pods_match_selector(node_info, selector: Selector, namespace: str, memo: dict) -> int:
    """countPodsMatchSelector over a node's pods: pods of the namespace, not
    terminating, whose labels match; an empty selector counts nothing
    (upstream's shortcut). Evaluated once per label signature; on the
    snapshot's own nodes, once per cycle for all nodes (pod_index.py)."""
    if selector.is_empty():
        return 0
    index = node_info.pod_index
    if index is not None:
        by_node = memo.get(_BY_NODE)
        if by_node is None:
            by_node = memo[_BY_NODE] = index.count_by_node(namespace, selector, memo)
        return by_node.get(node_info.name, 0)
    count = 0
    for sig, n in node_signature_counts(node_info).items():
        m = memo.get(sig)
        if m is None:
            ns, labels, terminating = SIGNATURE_INFO[sig]
            m = memo[sig] = ns == namespace and not terminating and selector.matches(labels)
        if m:
            count += n
    return count


__all__ = [
    "Constraint",
    "SpreadError",
    "NOTHING",
    "get_constraints",
    "node_has_all_keys",
    "count_pods_match_selector",
    "HONOR",
    "IGNORE",
]
