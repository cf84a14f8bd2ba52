"""Controllers: their selectors feed PodTopologySpread's default constraints,
and simulate expands them into the pods they would create."""

from __future__ import annotations

from .checks import BOOL, INT, LIST, MAP, STR
from .common import LABEL_SELECTOR, METADATA, POD_TEMPLATE, string_map, under
from .storage import PERSISTENT_VOLUME_CLAIM

_REPLICATED = [("spec", MAP), ("spec.replicas", INT), *under("spec.selector", LABEL_SELECTOR),
               *under("spec.template", POD_TEMPLATE)]

_JOB_SPEC = [
    ("", MAP),
    (".parallelism", INT),
    (".completions", INT),
    (".completionMode", STR),
    (".suspend", BOOL),
    (".manualSelector", BOOL),
    *under(".selector", LABEL_SELECTOR),
    *under(".template", POD_TEMPLATE),
]

DEPLOYMENT = [*METADATA, *_REPLICATED, ("spec.paused", BOOL)]
REPLICA_SET = [*METADATA, *_REPLICATED]
DAEMON_SET = [*METADATA, ("spec", MAP), *under("spec.selector", LABEL_SELECTOR), *under("spec.template", POD_TEMPLATE)]
STATEFUL_SET = [
    *METADATA,
    *_REPLICATED,
    ("spec.serviceName", STR),
    ("spec.podManagementPolicy", STR),
    ("spec.ordinals", MAP),
    ("spec.ordinals.start", INT),
    ("spec.volumeClaimTemplates", LIST),
    *under("spec.volumeClaimTemplates[]", [("", MAP), *[("." + p, c) for p, c in PERSISTENT_VOLUME_CLAIM]]),
    ("status", MAP),
    ("status.collisionCount", INT),
]
REPLICATION_CONTROLLER = [*METADATA, ("spec", MAP), ("spec.replicas", INT), *string_map("spec.selector"),
                          *under("spec.template", POD_TEMPLATE)]
JOB = [*METADATA, *under("spec", _JOB_SPEC)]
CRON_JOB = [
    *METADATA,
    ("spec", MAP),
    ("spec.schedule", STR),
    ("spec.suspend", BOOL),
    ("spec.jobTemplate", MAP),
    *under("spec.jobTemplate.metadata", [(p[len("metadata"):], c) for p, c in METADATA]),
    *under("spec.jobTemplate.spec", _JOB_SPEC),
]
