"""The in-tree plugins' names, as upstream's plugins/names/names.go keeps
them: the one place each is spelled. Configurations, the default profile,
the registry, the plugins' declarations, `explain --fix` and the commands
refer to these constants, never to a string of their own.

(Some feature gates share a plugin's name, NodeDeclaredFeatures and
GangScheduling: features/ spells those as gate names.)
"""

from __future__ import annotations

PrioritySort = "PrioritySort"
DefaultBinder = "DefaultBinder"
DefaultPreemption = "DefaultPreemption"
DynamicResources = "DynamicResources"
GangScheduling = "GangScheduling"
ImageLocality = "ImageLocality"
InterPodAffinity = "InterPodAffinity"
NodeAffinity = "NodeAffinity"
NodeDeclaredFeatures = "NodeDeclaredFeatures"
NodeName = "NodeName"
NodePorts = "NodePorts"
NodeResourcesBalancedAllocation = "NodeResourcesBalancedAllocation"
NodeResourcesFit = "NodeResourcesFit"
NodeUnschedulable = "NodeUnschedulable"
NodeVolumeLimits = "NodeVolumeLimits"
PodGroupPodsCount = "PodGroupPodsCount"
PodTopologySpread = "PodTopologySpread"
SchedulingGates = "SchedulingGates"
TaintToleration = "TaintToleration"
TopologyPlacementGenerator = "TopologyPlacementGenerator"
VolumeBinding = "VolumeBinding"
VolumeRestrictions = "VolumeRestrictions"
VolumeZone = "VolumeZone"

ALL = (PrioritySort, DefaultBinder, DefaultPreemption, DynamicResources, GangScheduling, ImageLocality,
       InterPodAffinity, NodeAffinity, NodeDeclaredFeatures, NodeName, NodePorts, NodeResourcesBalancedAllocation,
       NodeResourcesFit, NodeUnschedulable, NodeVolumeLimits, PodGroupPodsCount, PodTopologySpread,
       SchedulingGates, TaintToleration, TopologyPlacementGenerator, VolumeBinding, VolumeRestrictions, VolumeZone)
