"""How pods and volumes constrain where they go: label and node selectors,
(anti-)affinity terms, topology spread constraints, tolerations and taints."""

from __future__ import annotations

from .core import put

__all__ = [
    "PREFERRED",
    "REQUIRED",
    "affinity_term",
    "exists",
    "label_selector",
    "match_labels",
    "node_selector_term",
    "requirement",
    "required_node_affinity",
    "spread_constraint",
    "taint",
    "toleration",
]

REQUIRED = "required"
PREFERRED = "preferred"


def requirement(key, operator, *values) -> dict:
    """A label or node selector requirement; `values` only when some are given."""
    return put({"key": key, "operator": operator}, values=list(values) if values else None)


def label_selector(*requirements) -> dict:
    return {"matchExpressions": list(requirements)}


def exists(*keys) -> dict:
    return label_selector(*(requirement(k, "Exists") for k in keys))


def match_labels(**kv) -> dict:
    return {"matchLabels": dict(kv)}


def node_selector_term(*requirements, fields=None) -> dict:
    return put({}, matchExpressions=list(requirements) if requirements else None, matchFields=fields)


def required_node_affinity(*terms) -> dict:
    """A nodeAffinity whose required part is these node selector terms."""
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def affinity_term(selector, topology_key="", **extra) -> dict:
    """A pod (anti-)affinity term; `extra` adds fields such as namespaces."""
    return {"labelSelector": selector, "topologyKey": topology_key, **extra}


def spread_constraint(max_skew, topology_key, when, selector, *, min_domains=None, node_affinity_policy=None,
                      node_taints_policy=None, match_label_keys=None) -> dict:
    return put(
        {"maxSkew": max_skew, "topologyKey": topology_key, "whenUnsatisfiable": when, "labelSelector": selector},
        minDomains=min_domains,
        nodeAffinityPolicy=node_affinity_policy,
        nodeTaintsPolicy=node_taints_policy,
        matchLabelKeys=list(match_label_keys) if match_label_keys is not None else None,
    )


def toleration(key=None, value=None, effect=None, operator=None) -> dict:
    return put({}, key=key, value=value, effect=effect, operator=operator)


def taint(key, value, effect) -> dict:
    return {"key": key, "value": value, "effect": effect}
