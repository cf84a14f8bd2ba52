"""Cluster-level objects around pods: namespaces, PodDisruptionBudgets."""

from __future__ import annotations

from .core import api_object, metadata, served
from .pods import PAST

__all__ = ["api_pdb", "namespace", "pdb"]


def namespace(name, labels=None) -> dict:
    return api_object("v1", "Namespace", metadata(name, labels=dict(labels or {})))


def pdb(name, match_labels, allowed=0, disrupted=(), ns="default") -> dict:
    """A PodDisruptionBudget as the disruption controller leaves it: `allowed`
    disruptions left, the `disrupted` pods' evictions in progress."""
    return api_object("policy/v1", "PodDisruptionBudget", metadata(name, ns),
                      spec={"selector": {"matchLabels": dict(match_labels)}},
                      status={"disruptionsAllowed": allowed, "disruptedPods": {p: PAST for p in disrupted}})


def api_pdb(name, *, namespace="default", match_labels, disruptions_allowed=0, desired_healthy=1, current_healthy=1,
            generation=1, observed_generation=1) -> dict:
    """A PodDisruptionBudget as the test API server serves it (minAvailable =
    desired healthy); a generation not yet observed means "still processing"."""
    status = {"observedGeneration": observed_generation, "disruptionsAllowed": disruptions_allowed,
              "currentHealthy": current_healthy, "desiredHealthy": desired_healthy, "expectedPods": current_healthy}
    return served("policy/v1", "PodDisruptionBudget", metadata(name, namespace, generation=generation),
                  spec={"minAvailable": desired_healthy, "selector": {"matchLabels": match_labels}}, status=status)
