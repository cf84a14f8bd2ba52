"""core/v1, scheduling, node and policy kinds."""

from __future__ import annotations

from .checks import BOOL, INT, INT_OR_STR, LIST, MAP, STR, TIME, enum
from .common import (LABEL_SELECTOR, METADATA, POD_SPEC, POD_STATUS, TAINTS, TOLERATIONS, resource_list, string_list,
                     string_map, under)

POD = [*METADATA, *under("spec", POD_SPEC), *under("status", POD_STATUS)]

NODE = [
    *METADATA,
    ("spec", MAP),
    ("spec.unschedulable", BOOL),
    *under("spec.taints", TAINTS),
    ("status", MAP),
    *resource_list("status.allocatable"),
    *resource_list("status.capacity"),
    ("status.images", LIST),
    ("status.images[]", MAP),
    *string_list("status.images[].names"),
    ("status.images[].sizeBytes", INT),
    ("status.conditions", LIST),
    ("status.conditions[]", MAP),
    ("status.conditions[].type", STR),
    ("status.conditions[].status", STR),
]

NAMESPACE = [*METADATA, ("status", MAP), ("status.phase", STR)]

PRIORITY_CLASS = [*METADATA, ("value", INT), ("globalDefault", BOOL),
                  ("preemptionPolicy", enum("Never", "PreemptLowerPriority"))]

RUNTIME_CLASS = [
    *METADATA,
    ("handler", STR),
    ("overhead", MAP),
    *resource_list("overhead.podFixed"),
    ("scheduling", MAP),
    *string_map("scheduling.nodeSelector"),
    *under("scheduling.tolerations", TOLERATIONS),
]

SERVICE = [*METADATA, ("spec", MAP), *string_map("spec.selector")]

POD_DISRUPTION_BUDGET = [
    *METADATA,
    ("spec", MAP),
    *under("spec.selector", LABEL_SELECTOR),
    ("spec.minAvailable", INT_OR_STR),
    ("spec.maxUnavailable", INT_OR_STR),
    ("status", MAP),
    ("status.disruptionsAllowed", INT),
    ("status.currentHealthy", INT),
    ("status.desiredHealthy", INT),
    ("status.expectedPods", INT),
    ("status.disruptedPods", MAP),
    ("status.disruptedPods{}", TIME),
]
