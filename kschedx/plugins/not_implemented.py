"""Plugins upstream registers that kschedx does not implement: declared all
the same, so that a configuration naming them is checked as NewFramework
checks it, and a run that enables them lists them in notEvaluated (never
assumed to pass). They schedule pod groups (the workload API), not pods.
"""

from __future__ import annotations

from ..config import names
from ..framework.declaration import Declaration
from ..framework.events import ActionType as A, POD, POD_GROUP, WORKLOAD, Register

GANG_SCHEDULING = Declaration(
    name=names.GangScheduling,
    factory=None,
    # Reserve in 1.35 only.
    points=frozenset({"preEnqueue", "permit"}),
    points_until=(("1.36", frozenset({"reserve"})),),
    # A pod may complete a gang; 1.35 waits for Workload objects, 1.36 for
    # PodGroups (kschedx reads neither kind, so no event of them comes).
    events=(Register(POD, A.Add), Register(WORKLOAD, A.Add), Register(POD_GROUP, A.Add)),
)

# 1.36's placement extension points.
TOPOLOGY_PLACEMENT_GENERATOR = Declaration(
    name=names.TopologyPlacementGenerator,
    factory=None,
    points=frozenset({"placementGenerate"}),
    registered_from="1.36",
)

POD_GROUP_PODS_COUNT = Declaration(
    name=names.PodGroupPodsCount,
    factory=None,
    points=frozenset({"placementScore"}),
    registered_from="1.36",
)
