"""Cluster-level objects around pods: namespaces, PodDisruptionBudgets,
PriorityClasses, RuntimeClasses."""

from __future__ import annotations

from .core import api_object, metadata, put, served
from .pods import PAST

__all__ = ["api_pdb", "namespace", "pdb", "priority_class", "runtime_class"]


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


def priority_class(name, value, global_default=False, policy=None) -> dict:
    return api_object("scheduling.k8s.io/v1", "PriorityClass", metadata(name), value=value,
                      globalDefault=True if global_default else None, preemptionPolicy=policy or None)


def runtime_class(name, overhead=None, node_selector=None, tolerations=None) -> dict:
    """A RuntimeClass (handler h) with pod overhead and scheduling constraints."""
    scheduling = put({}, nodeSelector=node_selector or None, tolerations=tolerations or None)
    return api_object("node.k8s.io/v1", "RuntimeClass", metadata(name), handler="h",
                      overhead={"podFixed": overhead} if overhead else None, scheduling=scheduling or None)
