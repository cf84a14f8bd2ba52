"""Defaulting of a decoded v1 KubeSchedulerConfiguration as the chosen
version does it with its feature gates (apis/config/v1 defaults.go and
default_plugins.go).

Works on the v1 shapes as plain dicts: a plugin is {"name", "weight"} with
weight None when unset, a plugin set {"enabled": [...], "disabled": [...]}.
"""

from __future__ import annotations

import copy

from ..features import Features, default_features
from . import names
from .schema import PLUGINS_WITH_ARGS, extension_points

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0  # config.DefaultPercentageOfNodesToScore: adaptive

# getDefaultPlugins before applyFeatureGates (v1.35, v1.36; v1.37 puts
# NodeName before NodeUnschedulable).
BASE_MULTI_POINT = (
    (names.SchedulingGates, None),
    (names.PrioritySort, None),
    (names.NodeUnschedulable, None),
    (names.NodeName, None),
    (names.TaintToleration, 3),
    (names.NodeAffinity, 2),
    (names.NodePorts, None),
    (names.NodeResourcesFit, 1),
    (names.VolumeRestrictions, None),
    (names.NodeVolumeLimits, None),
    (names.VolumeBinding, None),
    (names.VolumeZone, None),
    (names.PodTopologySpread, 2),
    (names.InterPodAffinity, 2),
    (names.DefaultPreemption, None),
    (names.NodeResourcesBalancedAllocation, 1),
    (names.ImageLocality, 1),
    (names.DefaultBinder, None),
)



def default_multi_point(features: Features | None = None) -> tuple[tuple[str, int | None], ...]:
    """getDefaultPlugins with applyFeatureGates: NodeDeclaredFeatures appended
    when its gate is on (1.36 default, 1.37 locked), DynamicResources (weight
    2) before DefaultPreemption when DynamicResourceAllocation is on (locked
    on in all), GangScheduling appended when its gate is on (from 1.37 when
    GenericWorkload is), TopologyPlacementGenerator and PodGroupPodsCount
    (weight 1) when TopologyAwareWorkloadScheduling is on."""
    features = features or default_features()
    out = list(BASE_MULTI_POINT)
    if features.node_name_before_node_unschedulable:
        out[2], out[3] = out[3], out[2]
    if features.enable_node_declared_features:
        out.append((names.NodeDeclaredFeatures, None))
    if features.enable_dynamic_resource_allocation:
        at = [n for n, _ in out].index(names.DefaultPreemption)
        out.insert(at, (names.DynamicResources, 2))
    gang = features.enable_generic_workload if features.gang_scheduling_by_generic_workload \
        else features.enable_gang_scheduling
    if gang:
        out.append((names.GangScheduling, None))
    if features.enable_topology_aware_workload_scheduling:
        out += [(names.TopologyPlacementGenerator, None), (names.PodGroupPodsCount, 1)]
    return tuple(out)


def all_points(features: Features | None = None) -> tuple[str, ...]:
    """The v1 Plugins fields of the version, MultiPoint first."""
    return ("multiPoint", *extension_points(features or default_features()))


def plugin(name: str, weight: int | None = None) -> dict:
    return {"name": name, "weight": weight}


def default_plugins(features: Features | None = None) -> dict:
    plugins = {p: {"enabled": [], "disabled": []} for p in all_points(features)}
    plugins["multiPoint"]["enabled"] = [plugin(n, w) for n, w in default_multi_point(features)]
    return plugins


def _plugin_list(items) -> list[dict]:
    return [plugin(p.get("name", ""), p.get("weight")) for p in (items or []) if isinstance(p, dict)]


def merge_plugin_set(default_set: dict, custom_set: dict | None) -> dict:
    """mergePluginSet: custom disables drop defaults (all of them with "*"), a
    custom enable of a default plugin replaces it in place, the other custom
    enables follow in their order; disables are kept for MultiPoint expansion."""
    custom_set = custom_set or {}
    custom_enabled = _plugin_list(custom_set.get("enabled"))
    disabled = [plugin(p["name"]) for p in _plugin_list(custom_set.get("disabled"))]
    disabled += [plugin(p["name"]) for p in default_set.get("disabled", [])]
    disabled_names = {p["name"] for p in disabled}
    custom_index = {p["name"]: i for i, p in enumerate(custom_enabled)}  # the last one wins, as a Go map
    replaced: set[int] = set()
    enabled = []
    if "*" not in disabled_names:
        for p in default_set.get("enabled", []):
            if p["name"] in disabled_names:
                continue
            i = custom_index.get(p["name"])
            if i is not None:
                p = custom_enabled[i]
                replaced.add(i)
            enabled.append(dict(p))
    enabled += [p for i, p in enumerate(custom_enabled) if i not in replaced]
    return {"enabled": enabled, "disabled": disabled}


def merge_plugins(default: dict, custom: dict | None) -> dict:
    """mergePlugins over the points the defaults have (the version's)."""
    if custom is None:
        return default
    return {p: merge_plugin_set(default[p], custom.get(p)) for p in default}


def plugins_names(plugins: dict) -> list[str]:
    return sorted({p["name"] for point in plugins for p in plugins[point]["enabled"]})


def _plugin_args_functions():
    """pluginargs: plugin args defaulting and validation (both take the
    Features as their last argument)."""
    from . import pluginargs

    return pluginargs.default_plugin_args, pluginargs.validate_plugin_args


def default_profile(profile: dict, features: Features | None = None) -> dict:
    """setDefaults_KubeSchedulerProfile: plugins merged into the defaults,
    given args defaulted, default args appended for every enabled in-tree
    plugin that has an args type and no pluginConfig entry."""
    features = features or default_features()
    default_args, _ = _plugin_args_functions()
    out = dict(profile)
    out["plugins"] = merge_plugins(default_plugins(features), profile.get("plugins"))
    configs = []
    existing = set()
    for pc in profile.get("pluginConfig") or []:
        name = pc.get("name", "")
        existing.add(name)
        args = pc.get("args")
        if name in PLUGINS_WITH_ARGS:
            args = default_args(name, args if isinstance(args, dict) else None, features)
        configs.append({"name": name, "args": args})
    for name in plugins_names(out["plugins"]):
        if name in existing or name not in PLUGINS_WITH_ARGS:
            continue
        configs.append({"name": name, "args": default_args(name, None, features)})
    out["pluginConfig"] = configs
    return out


def default_configuration(cfg: dict, features: Features | None = None) -> dict:
    """SetDefaults_KubeSchedulerConfiguration at the features' version and
    gates (the newest version's defaults when None), for the fields kschedx
    reads (the others are ignored offline and keep their given values)."""
    features = features or default_features()
    out = dict(cfg)
    if out.get("parallelism") is None:
        out["parallelism"] = 16
    profiles = [dict(p) for p in out.get("profiles") or [] if isinstance(p, dict)]
    if not profiles:
        profiles = [{}]
    if len(profiles) == 1 and profiles[0].get("schedulerName") is None:
        profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    out["profiles"] = [default_profile(p, features) for p in profiles]
    if out.get("percentageOfNodesToScore") is None:
        out["percentageOfNodesToScore"] = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE
    if out.get("podInitialBackoffSeconds") is None:
        out["podInitialBackoffSeconds"] = 1
    if out.get("podMaxBackoffSeconds") is None:
        out["podMaxBackoffSeconds"] = 10
    le = dict(out.get("leaderElection") or {})
    le.setdefault("leaderElect", True)
    for key, value in (("leaseDuration", "15s"), ("renewDeadline", "10s"), ("retryPeriod", "2s"),
                       ("resourceLock", "leases"), ("resourceNamespace", "kube-system"),
                       ("resourceName", "kube-scheduler")):
        if not le.get(key):
            le[key] = value
    out["leaderElection"] = le
    cc = dict(out.get("clientConnection") or {})
    if not cc.get("contentType"):
        cc["contentType"] = "application/vnd.kubernetes.protobuf"
    if not cc.get("qps"):
        cc["qps"] = 50.0
    if not cc.get("burst"):
        cc["burst"] = 100
    out["clientConnection"] = cc
    if out.get("enableProfiling") is None:
        out["enableProfiling"] = True
    if out["enableProfiling"] and out.get("enableContentionProfiling") is None:
        out["enableContentionProfiling"] = True
    out["extenders"] = [default_extender(e) for e in out.get("extenders") or []]
    return out


EXTENDER_FIELDS = {
    "urlPrefix": "", "filterVerb": "", "preemptVerb": "", "prioritizeVerb": "", "weight": 0, "bindVerb": "",
    "enableHTTPS": False, "tlsConfig": None, "httpTimeout": "0s", "nodeCacheCapable": False,
    "managedResources": [], "ignorable": False,
}


def default_extender(ext: dict) -> dict:
    """An extender with every v1 field present (Go's zero values where unset;
    upstream has no defaulting for extenders: a zero httpTimeout means 5s
    when the extender client is made)."""
    out = copy.deepcopy(EXTENDER_FIELDS)
    out.update({k: copy.deepcopy(v) for k, v in (ext or {}).items() if v is not None})
    out["managedResources"] = [{"name": m.get("name", ""), "ignoredByScheduler": bool(m.get("ignoredByScheduler"))}
                               for m in out["managedResources"] or []]
    return out
