"""Cluster-level objects around pods: namespaces, PodDisruptionBudgets."""

from __future__ import annotations

from .core import api_object, metadata
from .pods import PAST

__all__ = ["namespace", "pdb"]


def namespace(name, labels=None) -> dict:
    return api_object("v1", "Namespace", metadata(name, labels=dict(labels or {})))


def pdb(name, match_labels, allowed=0, disrupted=(), ns="default") -> dict:
    """A PodDisruptionBudget as the disruption controller leaves it: `allowed`
    disruptions left, the `disrupted` pods' evictions in progress."""
    return api_object("policy/v1", "PodDisruptionBudget", metadata(name, ns),
                      spec={"selector": {"matchLabels": dict(match_labels)}},
                      status={"disruptionsAllowed": allowed, "disruptedPods": {p: PAST for p in disrupted}})
