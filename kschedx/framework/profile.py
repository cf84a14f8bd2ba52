"""The default kube-scheduler v1.35 profile: plugins, order and weights.

MultiPoint order from apis/config/v1/default_plugins.go with the default
feature gates applied (DynamicResources is GA and sits before
DefaultPreemption). A plugin whose module kschedx does not have yet is
reported as not evaluated, never assumed to pass.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

PROFILE_NAME = "default-scheduler"


@dataclass(frozen=True)
class PluginSpec:
    name: str
    module: str  # kschedx.plugins.<module>
    weight: int = 0  # score weight; 0 = upstream default of 1 for score plugins


DEFAULT_PLUGINS = (
    PluginSpec("SchedulingGates", "schedulinggates"),
    PluginSpec("PrioritySort", "queuesort"),
    PluginSpec("NodeUnschedulable", "nodeunschedulable"),
    PluginSpec("NodeName", "nodename"),
    PluginSpec("TaintToleration", "tainttoleration", 3),
    PluginSpec("NodeAffinity", "nodeaffinity", 2),
    PluginSpec("NodePorts", "nodeports"),
    PluginSpec("NodeResourcesFit", "noderesources.fit", 1),
    PluginSpec("VolumeRestrictions", "volumerestrictions"),
    PluginSpec("NodeVolumeLimits", "nodevolumelimits"),
    PluginSpec("VolumeBinding", "volumebinding"),
    PluginSpec("VolumeZone", "volumezone"),
    PluginSpec("PodTopologySpread", "podtopologyspread", 2),
    PluginSpec("InterPodAffinity", "interpodaffinity", 2),
    PluginSpec("DynamicResources", "dynamicresources", 2),
    PluginSpec("DefaultPreemption", "defaultpreemption"),
    PluginSpec("NodeResourcesBalancedAllocation", "noderesources.balanced_allocation", 1),
    PluginSpec("ImageLocality", "imagelocality", 1),
    PluginSpec("DefaultBinder", "defaultbinder"),
)


def load_plugin_class(spec: PluginSpec):
    """The plugin class, or None when kschedx does not implement it yet."""
    try:
        module = importlib.import_module(f"kschedx.plugins.{spec.module}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("kschedx.plugins"):
            return None
        raise
    return getattr(module, "PLUGIN", None)


class Profile:
    """Plugins instantiated for one run, grouped by extension point in order."""

    def __init__(self, handle, plugin_args: dict | None = None, specs=DEFAULT_PLUGINS):
        self.name = PROFILE_NAME
        self.plugins = []
        self.not_evaluated: list[str] = []
        self.weights: dict[str, int] = {}
        plugin_args = plugin_args or {}
        cluster = getattr(handle, "cluster", None)
        # Plugins that run without a kind the cluster would not let us read.
        missing_input = cluster.plugins_missing_input() if cluster is not None else set()
        for spec in specs:
            cls = load_plugin_class(spec)
            if cls is None:
                self.not_evaluated.append(spec.name)
                continue
            plugin = cls(handle, plugin_args.get(spec.name))
            if not getattr(plugin, "complete", True) or spec.name in missing_input:
                # Partly implemented (runs its fast paths only), or without a kind
                # it reads: it runs, but its verdicts may not be upstream's.
                self.not_evaluated.append(spec.name)
            self.plugins.append(plugin)
            self.weights[spec.name] = spec.weight or 1
        self.by_name = {p.name: p for p in self.plugins}

        def points(point):
            return [p for p in self.plugins if p.implements(point)]

        self.pre_enqueue = points("pre_enqueue")
        self.queue_sort = points("less")
        self.pre_filter = points("pre_filter")
        self.filter = points("filter")
        self.post_filter = points("post_filter")
        self.pre_score = points("pre_score")
        self.score = points("score")
        self.reserve = points("reserve")
        self.bind = points("bind")
