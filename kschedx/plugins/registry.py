"""The in-tree plugins (upstream's plugins/registry.go NewInTreeRegistry):
every plugin's declaration, in the default profile's order, and what is
derived from them alone: which plugins read a kind, and every feature gate
the scheduler reads.

The framework's registry (framework/registry.py) loads this module by name:
the framework sits below the plugins, and is given them, as upstream's
framework is given a Registry.
"""

from __future__ import annotations

from ..framework.declaration import Declaration
from . import (defaultbinder, defaultpreemption, imagelocality, nodeaffinity, nodedeclaredfeatures, nodename,
               nodeports, nodeunschedulable, queuesort, schedulinggates, tainttoleration, volumerestrictions,
               volumezone)
from .dynamicresources import plugin as dynamicresources
from .interpodaffinity import plugin as interpodaffinity
from .noderesources import balanced_allocation, fit
from .nodevolumelimits import csi as nodevolumelimits
from .not_implemented import GANG_SCHEDULING, POD_GROUP_PODS_COUNT, TOPOLOGY_PLACEMENT_GENERATOR
from .podtopologyspread import plugin as podtopologyspread
from .volumebinding import volume_binding

IN_TREE: tuple[Declaration, ...] = (
    schedulinggates.DECLARATION,
    queuesort.DECLARATION,
    nodeunschedulable.DECLARATION,
    nodename.DECLARATION,
    tainttoleration.DECLARATION,
    nodeaffinity.DECLARATION,
    nodeports.DECLARATION,
    fit.DECLARATION,
    volumerestrictions.DECLARATION,
    nodevolumelimits.DECLARATION,
    volume_binding.DECLARATION,
    volumezone.DECLARATION,
    podtopologyspread.DECLARATION,
    interpodaffinity.DECLARATION,
    dynamicresources.DECLARATION,
    defaultpreemption.DECLARATION,
    balanced_allocation.DECLARATION,
    imagelocality.DECLARATION,
    defaultbinder.DECLARATION,
    nodedeclaredfeatures.DECLARATION,
    GANG_SCHEDULING,
    TOPOLOGY_PLACEMENT_GENERATOR,
    POD_GROUP_PODS_COUNT,
)
BY_NAME: dict[str, Declaration] = {d.name: d for d in IN_TREE}

# Gates read outside the plugins' modules: the default profile's plugins
# (config/defaults.py) and the cache's accounting of pods (state/snapshot.py,
# state/live.py). tests/test_declarations.py holds it to what those modules
# read.
SCHEDULER_GATES = frozenset({"DynamicResourceAllocation", "GangScheduling", "GenericWorkload",
                             "NodeDeclaredFeatures", "TopologyAwareWorkloadScheduling",
                             "InPlacePodLevelResourcesVerticalScaling", "PodLevelResources"})


def declarations(features) -> dict[str, Declaration]:
    """The declarations of the plugins the features' version registers, by name."""
    return {d.name: d for d in IN_TREE if d.registered(features)}


def readers_of(kind: str, features=None) -> tuple[str, ...]:
    """The in-tree plugins that read objects of `kind`, in the default
    profile's order (features None: the reads no gate holds)."""
    return tuple(d.name for d in IN_TREE if kind in d.kinds_read(features))


def gates_read() -> frozenset:
    """Every feature gate a plugin declares or the scheduler reads
    elsewhere: a gate settable with --feature-gates and outside this set
    changes nothing kschedx computes."""
    return frozenset().union(*(d.gates for d in IN_TREE)) | SCHEDULER_GATES
