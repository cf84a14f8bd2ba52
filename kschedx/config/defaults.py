"""v1.35 defaulting of a decoded v1 KubeSchedulerConfiguration
(apis/config/v1 defaults.go and default_plugins.go, default feature gates).

Works on the v1 shapes as plain dicts: a plugin is {"name", "weight"} with
weight None when unset, a plugin set {"enabled": [...], "disabled": [...]}.
"""

from __future__ import annotations

import copy

from .schema import EXTENSION_POINTS

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0  # config.DefaultPercentageOfNodesToScore: adaptive

# getDefaultPlugins with applyFeatureGates at the v1.35 defaults:
# DynamicResourceAllocation is GA (DynamicResources before DefaultPreemption);
# NodeDeclaredFeatures and GangScheduling are alpha, off.
DEFAULT_MULTI_POINT = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)

# pluginsNames walks the sets in this order (it only collects a sorted set).
_ALL_POINTS = ("multiPoint", *EXTENSION_POINTS)


def plugin(name: str, weight: int | None = None) -> dict:
    return {"name": name, "weight": weight}


def default_plugins() -> dict:
    plugins = {p: {"enabled": [], "disabled": []} for p in _ALL_POINTS}
    plugins["multiPoint"]["enabled"] = [plugin(n, w) for n, w in DEFAULT_MULTI_POINT]
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
    if custom is None:
        return default
    return {p: merge_plugin_set(default[p], custom.get(p)) for p in _ALL_POINTS}


def plugins_names(plugins: dict) -> list[str]:
    return sorted({p["name"] for point in _ALL_POINTS for p in plugins[point]["enabled"]})


def _plugin_args_functions():
    """pluginargs (plugin args defaulting and validation) when present; a
    pass-through otherwise."""
    try:
        from . import pluginargs
    except ImportError:  # pragma: no cover - until the args module lands
        return (lambda name, args: copy.deepcopy(args) if args else {}), (lambda name, args, path: [])
    return pluginargs.default_plugin_args, pluginargs.validate_plugin_args


# The in-tree plugins that have a v1 args type (scheme.New(<Name>Args) succeeds).
PLUGINS_WITH_ARGS = ("DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity",
                     "NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread", "VolumeBinding")


def default_profile(profile: dict) -> dict:
    """setDefaults_KubeSchedulerProfile: plugins merged into the defaults,
    given args defaulted, default args appended for every enabled in-tree
    plugin that has an args type and no pluginConfig entry."""
    default_args, _ = _plugin_args_functions()
    out = dict(profile)
    out["plugins"] = merge_plugins(default_plugins(), profile.get("plugins"))
    configs = []
    existing = set()
    for pc in profile.get("pluginConfig") or []:
        name = pc.get("name", "")
        existing.add(name)
        args = pc.get("args")
        if name in PLUGINS_WITH_ARGS:
            args = default_args(name, args if isinstance(args, dict) else None)
        configs.append({"name": name, "args": args})
    for name in plugins_names(out["plugins"]):
        if name in existing or name not in PLUGINS_WITH_ARGS:
            continue
        configs.append({"name": name, "args": default_args(name, None)})
    out["pluginConfig"] = configs
    return out


def default_configuration(cfg: dict) -> dict:
    """SetDefaults_KubeSchedulerConfiguration, for the fields kschedx reads
    (the others are ignored offline and keep their given values)."""
    out = dict(cfg)
    if out.get("parallelism") is None:
        out["parallelism"] = 16
    profiles = [dict(p) for p in out.get("profiles") or [] if isinstance(p, dict)]
    if not profiles:
        profiles = [{}]
    if len(profiles) == 1 and profiles[0].get("schedulerName") is None:
        profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    out["profiles"] = [default_profile(p) for p in profiles]
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
