"""Defaulting of a KubeSchedulerConfiguration: the facts of upstream's
apis/config/v1 tests (TestMergePlugins, TestSchedulerDefaults, and
TestApplyFeatureGates at v1.35's default gates), then what v1.36's defaults
change. TestPluginArgsDefaults is in test_config_pluginargs.py."""

from __future__ import annotations

import pytest

from kschedx.config import defaults
from kschedx.config.defaults import merge_plugins
from kschedx.config.schema import EXTENSION_POINTS, PLACEMENT_POINTS
from kschedx.features import default_features

V135 = default_features("1.35")
V136 = default_features("1.36")


def default_configuration(cfg, features=V135):
    return defaults.default_configuration(cfg, features)

POINTS = ("multiPoint", *EXTENSION_POINTS)


def plugins(**sets) -> dict:
    """A v1 Plugins value: point -> (enabled, disabled); a plugin is a name
    or (name, weight)."""
    def plugin(p):
        return {"name": p, "weight": None} if isinstance(p, str) else {"name": p[0], "weight": p[1]}

    out = {p: {"enabled": [], "disabled": []} for p in POINTS}
    for point, (enabled, disabled) in sets.items():
        out[point] = {"enabled": [plugin(p) for p in enabled], "disabled": [plugin(p) for p in disabled]}
    return out


def custom(**sets) -> dict:
    """What a decoded configuration holds: only the sets it names."""
    return {point: {"enabled": [{"name": p} if isinstance(p, str) else {"name": p[0], "weight": p[1]}
                                for p in enabled],
                    "disabled": [{"name": p} for p in disabled]}
            for point, (enabled, disabled) in sets.items()}


D12 = (["DefaultPlugin1", "DefaultPlugin2"], [])
P123 = (["Plugin1", "Plugin2", "Plugin3"], [])

# TestMergePlugins: (name, default, custom, expected)
MERGE_CASES = [
    ("AppendCustomPlugin", dict(filter=D12), dict(filter=(["CustomPlugin"], [])),
     dict(filter=(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"], []))),
    ("InsertAfterDefaultPlugins2", dict(filter=D12), dict(filter=(["CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"])),
     dict(filter=(["DefaultPlugin1", "CustomPlugin", "DefaultPlugin2"], ["DefaultPlugin2"]))),
    ("InsertBeforeAllPlugins", dict(filter=D12),
     dict(filter=(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"])),
     dict(filter=(["CustomPlugin", "DefaultPlugin1", "DefaultPlugin2"], ["*"]))),
    ("ReorderDefaultPlugins", dict(filter=D12), dict(filter=(["DefaultPlugin2", "DefaultPlugin1"], ["*"])),
     dict(filter=(["DefaultPlugin2", "DefaultPlugin1"], ["*"]))),
    ("ApplyNilCustomPlugin", dict(filter=D12), None, dict(filter=D12)),
    ("CustomPluginOverrideDefaultPlugin", dict(filter=P123), dict(filter=([("Plugin1", 2), ("Plugin3", 3)], [])),
     dict(filter=([("Plugin1", 2), "Plugin2", ("Plugin3", 3)], []))),
    ("OrderPreserveAfterOverride", dict(filter=P123), dict(filter=([("Plugin2", 2), ("Plugin1", 1)], [])),
     dict(filter=([("Plugin1", 1), ("Plugin2", 2), "Plugin3"], []))),
    ("RepeatedCustomPlugin", dict(filter=P123),
     dict(filter=(["Plugin1", ("Plugin2", 2), "Plugin3", ("Plugin2", 4)], [])),
     dict(filter=(["Plugin1", ("Plugin2", 4), "Plugin3", ("Plugin2", 2)], []))),
    ("Append custom MultiPoint plugin", dict(multiPoint=D12), dict(multiPoint=(["CustomPlugin"], [])),
     dict(multiPoint=(["DefaultPlugin1", "DefaultPlugin2", "CustomPlugin"], []))),
    ("Append disabled Multipoint plugins", dict(multiPoint=D12),
     dict(multiPoint=(["CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]), score=([], ["CustomPlugin2"])),
     dict(multiPoint=(["DefaultPlugin1", "CustomPlugin", "CustomPlugin2"], ["DefaultPlugin2"]),
          score=([], ["CustomPlugin2"]))),
    ("override default MultiPoint plugins with custom value", dict(multiPoint=(["DefaultPlugin"], [])),
     dict(multiPoint=([("DefaultPlugin", 5)], [])), dict(multiPoint=([("DefaultPlugin", 5)], []))),
    ("disabled MultiPoint plugin in default set", dict(multiPoint=(["DefaultPlugin"], ["DefaultPlugin2"])),
     dict(multiPoint=(["CustomPlugin"], [])),
     dict(multiPoint=(["DefaultPlugin", "CustomPlugin"], ["DefaultPlugin2"]))),
    ("disabled MultiPoint plugin in default set for specific extension point",
     dict(multiPoint=(["DefaultPlugin"], []), score=([], ["DefaultPlugin2"])), dict(multiPoint=(["CustomPlugin"], [])),
     dict(multiPoint=(["DefaultPlugin", "CustomPlugin"], []), score=([], ["DefaultPlugin2"]))),
    ("multipoint with only disabled gets merged", dict(multiPoint=(["DefaultPlugin"], [])),
     dict(multiPoint=([], ["DefaultPlugin"])), dict(multiPoint=([], ["DefaultPlugin"]))),
]


@pytest.mark.parametrize("name, default, given, expected", MERGE_CASES, ids=[c[0] for c in MERGE_CASES])
def test_merge_plugins(name, default, given, expected):
    got = merge_plugins(plugins(**default), None if given is None else custom(**given))
    assert got == plugins(**expected)


# -- TestApplyFeatureGates / getDefaultPlugins at v1.35's default gates ------------------------
V135_DEFAULT_MULTI_POINT = [
    "SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName", ("TaintToleration", 3),
    ("NodeAffinity", 2), "NodePorts", ("NodeResourcesFit", 1), "VolumeRestrictions", "NodeVolumeLimits",
    "VolumeBinding", "VolumeZone", ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 2),
    "DefaultPreemption", ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1), "DefaultBinder",
]
DEFAULT_PLUGINS = plugins(multiPoint=(V135_DEFAULT_MULTI_POINT, []))

# The default pluginConfig: every enabled in-tree plugin with an args type,
# in name order (pluginsNames), with v1.35's default args.
DEFAULT_PLUGIN_CONFIG = [
    {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}},
    {"name": "DynamicResources", "args": {"filterTimeout": "10s"}},
    {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}},
    {"name": "NodeAffinity", "args": {}},
    {"name": "NodeResourcesBalancedAllocation",
     "args": {"resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}},
    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}},
    {"name": "PodTopologySpread", "args": {"defaultingType": "System"}},
    {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 600}},
]


def expected_config(**changes) -> dict:
    """TestSchedulerDefaults' expected document for an empty configuration,
    with `changes`."""
    out = {
        "parallelism": 16,
        "enableProfiling": True,
        "enableContentionProfiling": True,
        "leaderElection": {"leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s", "retryPeriod": "2s",
                           "resourceLock": "leases", "resourceNamespace": "kube-system",
                           "resourceName": "kube-scheduler"},
        "clientConnection": {"qps": 50, "burst": 100, "contentType": "application/vnd.kubernetes.protobuf"},
        "percentageOfNodesToScore": 0,
        "podInitialBackoffSeconds": 1,
        "podMaxBackoffSeconds": 10,
        "profiles": [default_profile("default-scheduler")],
        "extenders": [],
    }
    out.update(changes)
    return out


def default_profile(name: str | None, **changes) -> dict:
    out = {"plugins": DEFAULT_PLUGINS, "pluginConfig": DEFAULT_PLUGIN_CONFIG}
    if name is not None:
        out["schedulerName"] = name
    out.update(changes)
    return out


SCHEDULER_DEFAULTS = [
    ("empty config", {}, expected_config()),
    ("no scheduler name", {"profiles": [{}]}, expected_config()),
    ("two profiles",
     {"parallelism": 16, "profiles": [
         {"pluginConfig": [{"name": "FooPlugin"}]},
         {"schedulerName": "custom-scheduler",
          "plugins": {"bind": {"enabled": [{"name": "BarPlugin"}], "disabled": [{"name": "DefaultBinder"}]}}}]},
     expected_config(profiles=[
         # With two profiles the first gets no schedulerName (validation then requires one).
         default_profile(None, pluginConfig=[{"name": "FooPlugin", "args": None}, *DEFAULT_PLUGIN_CONFIG]),
         default_profile("custom-scheduler", plugins={
             **DEFAULT_PLUGINS,
             "bind": {"enabled": [{"name": "BarPlugin", "weight": None}],
                      "disabled": [{"name": "DefaultBinder", "weight": None}]}})])),
    ("Prallelism with no port", {"parallelism": 16}, expected_config()),
    ("set non default parallelism", {"parallelism": 8}, expected_config(parallelism=8)),
    ("set non default delayCacheUntilActive", {"delayCacheUntilActive": True},
     expected_config(delayCacheUntilActive=True)),
    ("set non default global percentageOfNodesToScore", {"percentageOfNodesToScore": 50},
     expected_config(percentageOfNodesToScore=50)),
    ("set non default profile percentageOfNodesToScore", {"profiles": [{"percentageOfNodesToScore": 50}]},
     expected_config(profiles=[default_profile("default-scheduler", percentageOfNodesToScore=50)])),
    ("set non default global and profile percentageOfNodesToScore",
     {"percentageOfNodesToScore": 10, "profiles": [{"percentageOfNodesToScore": 50}]},
     expected_config(percentageOfNodesToScore=10,
                     profiles=[default_profile("default-scheduler", percentageOfNodesToScore=50)])),
    # "default DynamicResources" (the gate on) is the empty config at v1.35: the gate is on by default.
    ("default DynamicResources", {}, expected_config()),
    # "unknown plugin config" (args a runtime.Unknown) only arises from Go
    # values, never from a decoded file: not portable.
]


@pytest.mark.parametrize("name, given, expected", SCHEDULER_DEFAULTS, ids=[c[0] for c in SCHEDULER_DEFAULTS])
def test_scheduler_defaults(name, given, expected):
    assert default_configuration(given) == expected


def test_scheduler_defaults_1_36():
    """v1.36: NodeDeclaredFeatures last in MultiPoint (its gate is on), the
    placement points in Plugins, DynamicResources' bindingTimeout (600s)."""
    got = default_configuration({}, V136)
    expected = expected_config()
    profile = expected["profiles"][0]
    profile["plugins"] = {**plugins(multiPoint=(V135_DEFAULT_MULTI_POINT + ["NodeDeclaredFeatures"], [])),
                          **{p: {"enabled": [], "disabled": []} for p in PLACEMENT_POINTS}}
    profile["pluginConfig"] = [
        {"name": "DynamicResources", "args": {"filterTimeout": "10s", "bindingTimeout": "10m0s"}}
        if pc["name"] == "DynamicResources" else pc for pc in DEFAULT_PLUGIN_CONFIG]
    assert got == expected


def test_defaulting_does_not_change_the_given_document():
    given = {"profiles": [{"schedulerName": "a", "plugins": {"score": {"enabled": [{"name": "ImageLocality"}]}}}]}
    before = repr(given)
    default_configuration(given)
    assert repr(given) == before
