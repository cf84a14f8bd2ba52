"""The group (pool) a node belongs to, for charts and summaries of many nodes."""

from __future__ import annotations

import re

# Labels that name a node's group (pool) in the common managed clusters, the
# first one present wins; instance type last, as a group of like nodes.
NODE_GROUP_LABELS = (
    "karpenter.sh/nodepool",
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "node.kubernetes.io/instance-type",
)


_NAME_STEM = re.compile(r"^(.*?[a-z])[-.]?[0-9]+$")


def node_group(name: str, labels: dict) -> str:
    """The group a node belongs to, for charts of many nodes: `label=value` of
    the first NODE_GROUP_LABELS label it has, else its name without the
    trailing number (`worker-a12` -> `worker-a*`), else its name."""
    for key in NODE_GROUP_LABELS:
        value = labels.get(key)
        if value:
            return f"{key}={value}"
    m = _NAME_STEM.match(name)
    return f"{m.group(1)}*" if m else name
