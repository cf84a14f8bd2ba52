"""Plugin args defaulting and validation: upstream's apis/config/v1
defaults_test.go (TestPluginArgsDefaults) and apis/config/validation
validation_pluginargs_test.go, ported as facts, with the full error texts of
v1.35.4 (field.Error and apimachinery's name validation messages); then what
v1.36.2 and feature gates change (NodeResourcesFitArgs' requestedToCapacityRatio,
DynamicResourcesArgs' bindingTimeout and filterTimeout, VolumeBindingArgs' shape)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedx.config import pluginargs
from kschedx.config.pluginargs import format_duration, label_key_errors, parse_duration
from kschedx.features import Features, default_features

V135 = default_features("1.35")
V136 = default_features("1.36")


def default_plugin_args(name, args, features=V135):
    return pluginargs.default_plugin_args(name, args, features)


def validate_plugin_args(name, args, path="", features=V135):
    return pluginargs.validate_plugin_args(name, args, path, features)

P = "profiles[0].pluginConfig[1].args"
LABEL_KEY_REGEX = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                   "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
                   "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


# --- defaulting (TestPluginArgsDefaults) ----------------------------------------------------

@pytest.mark.parametrize("name, given_args, want", [
    ("DefaultPreemption", {}, {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}),
    ("DefaultPreemption", {"minCandidateNodesPercentage": 50},
     {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 100}),
    ("InterPodAffinity", {}, {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}),
    ("InterPodAffinity", {"hardPodAffinityWeight": 0},
     {"hardPodAffinityWeight": 0, "ignorePreferredTermsOfExistingPods": False}),
    ("InterPodAffinity", {"hardPodAffinityWeight": 5},
     {"hardPodAffinityWeight": 5, "ignorePreferredTermsOfExistingPods": False}),
    ("NodeResourcesBalancedAllocation", {}, {"resources": DEFAULT_RESOURCES}),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]},
     {"resources": [{"name": "scalar.io/scalar1", "weight": 1}]}),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]},
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]}),
    ("NodeResourcesBalancedAllocation",
     {"resources": [{"name": "cpu"}, {"name": "scalar.io/scalar0"}, {"name": "scalar.io/scalar1", "weight": 1}]},
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar0", "weight": 1},
                    {"name": "scalar.io/scalar1", "weight": 1}]}),
    ("PodTopologySpread", {}, {"defaultingType": "System"}),
    ("PodTopologySpread",
     {"defaultConstraints": [{"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}]},
     {"defaultConstraints": [{"topologyKey": "planet", "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 2}],
      "defaultingType": "System"}),
    ("NodeResourcesFit", {}, {"scoringStrategy": {"type": "LeastAllocated", "resources": DEFAULT_RESOURCES}}),
    ("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated"}},
     {"scoringStrategy": {"type": "MostAllocated", "resources": DEFAULT_RESOURCES}}),
    ("NodeResourcesFit", {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}]}},
     {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}}),
    # StorageCapacityScoring is off in v1.35: no default shape.
    ("VolumeBinding", {}, {"bindTimeoutSeconds": 600}),
    ("VolumeBinding", {"bindTimeoutSeconds": 0}, {"bindTimeoutSeconds": 0}),
    # DRASchedulerFilterTimeout is on (beta); bindingTimeout needs an alpha gate.
    ("DynamicResources", {}, {"filterTimeout": "10s"}),
    ("DynamicResources", {"filterTimeout": "0s"}, {"filterTimeout": "0s"}),
    ("NodeAffinity", {}, {}),
    ("NotAPlugin", {"x": 1}, {"x": 1}),
])
def test_defaults(name, given_args, want):
    before = repr(given_args)
    assert default_plugin_args(name, given_args) == want
    assert repr(given_args) == before  # the input is left alone
    assert default_plugin_args(name, want) == want  # defaulting twice changes nothing


# --- DefaultPreemption ------------------------------------------------------------------------

@pytest.mark.parametrize("args, want", [
    ({"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}, []),
    ({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": 100},
     [f"{P}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"]),
    ({"minCandidateNodesPercentage": 900, "minCandidateNodesAbsolute": 100},
     [f"{P}.minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]"]),
    ({"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1},
     [f"{P}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"]),
    ({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
     [f"{P}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
      f"{P}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage"]),
    ({"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
     [f"{P}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
      f"{P}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"]),
], ids=["default", "negative percentage", "percentage over 100", "negative absolute", "all zero", "both negative"])
def test_default_preemption(args, want):
    assert validate_plugin_args("DefaultPreemption", args, P) == want


# --- InterPodAffinity -------------------------------------------------------------------------

@pytest.mark.parametrize("weight, want", [
    (10, []),
    (-1, ["hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"]),
    (101, ["hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"]),
])
def test_inter_pod_affinity(weight, want):
    assert validate_plugin_args("InterPodAffinity", {"hardPodAffinityWeight": weight}, "") == want


# --- PodTopologySpread ------------------------------------------------------------------------

def c(max_skew=1, key="node", when="DoNotSchedule", **extra):
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when, **extra}


@pytest.mark.parametrize("args, want", [
    ({"defaultConstraints": [c(), c(2, "zone", "ScheduleAnyway")], "defaultingType": "List"}, []),
    ({"defaultConstraints": [c(-1)], "defaultingType": "List"},
     ["defaultConstraints[0].maxSkew: Invalid value: -1: not in valid range (0, inf)"]),
    ({"defaultConstraints": [c(key="")], "defaultingType": "List"},
     ["defaultConstraints[0].topologyKey: Required value: can not be empty"]),
    ({"defaultConstraints": [c(when="")], "defaultingType": "List"},
     ["defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"]),
    ({"defaultConstraints": [c(when="unknown action")], "defaultingType": "List"},
     ['defaultConstraints[0].whenUnsatisfiable: Unsupported value: "unknown action": supported values: '
      '"DoNotSchedule", "ScheduleAnyway"']),
    ({"defaultConstraints": [c(), c(2)], "defaultingType": "List"},
     ['defaultConstraints[1]: Duplicate value: "{node, DoNotSchedule}"']),
    ({"defaultConstraints": [c(key="key", labelSelector={"matchLabels": {"a": "b"}})], "defaultingType": "List"},
     ["defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for "
      "each pod"]),
    ({"defaultingType": "List"}, []),
    ({"defaultingType": "System"}, []),
    ({"defaultingType": "unknown"}, ['defaultingType: Unsupported value: "unknown": supported values: "System", "List"']),
    ({"defaultConstraints": [c(key="key")], "defaultingType": "System"},
     ['defaultingType: Invalid value: "System": when .defaultConstraints are not empty']),
    # Not given: defaulted to System, so constraints without a type are invalid.
    ({"defaultConstraints": [c(key="key")]},
     ['defaultingType: Invalid value: "System": when .defaultConstraints are not empty']),
    ({"defaultConstraints": [c(key="a/b/c")], "defaultingType": "List"},
     [f'defaultConstraints[0].topologyKey: Invalid value: "a/b/c": a valid label key {LABEL_KEY_REGEX} with an '
      "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]),
], ids=["valid", "maxSkew", "empty key", "empty when", "unsupported when", "duplicate", "selector", "list empty",
        "system", "unknown type", "system with constraints", "defaulted system", "bad key"])
def test_pod_topology_spread(args, want):
    assert validate_plugin_args("PodTopologySpread", args, "") == want


# --- NodeResourcesBalancedAllocation ----------------------------------------------------------

@pytest.mark.parametrize("resources, want", [
    ([{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}], []),
    ([{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}],
     [f"{P}.resources[0].weight: Invalid value: 2: must be 1"]),
    ([{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}],
     [f'{P}.resources[1].name: Duplicate value: "cpu"']),
])
def test_balanced_allocation(resources, want):
    assert validate_plugin_args("NodeResourcesBalancedAllocation", {"resources": resources}, P) == want


# --- NodeAffinity -----------------------------------------------------------------------------

def req(key, op, *values):
    return {"key": key, "operator": op, "values": list(values)}


def test_node_affinity_valid():
    args = {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [req("label-1", "In", "label-1-val")]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchFields": [req("metadata.name", "In", "node-1")]}}]}}
    assert validate_plugin_args("NodeAffinity", args, P) == []
    assert validate_plugin_args("NodeAffinity", {}, P) == []


def test_node_affinity_invalid():
    args = {"addedAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [req("invalid/label/key", "In", "label-1-val")]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchFields": [req("metadata.name", "In", "node-1", "node-2")]}}]}}
    assert validate_plugin_args("NodeAffinity", args, P) == [
        f"{P}.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"
        f'.key: Invalid value: "invalid/label/key": a valid label key {LABEL_KEY_REGEX} with an optional DNS '
        "subdomain prefix and '/' (e.g. 'example.com/MyName')",
        f"{P}.addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: Invalid value: "
        '["node-1","node-2"]: must have one element',
    ]


def test_node_affinity_operators_and_values():
    args = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {},  # empty terms are skipped, but keep their index
        {"matchExpressions": [req("a", "Near", "x"), req("b", "In"), req("c", "Gt", "x"), req("d", "Exists", "y")],
         "matchFields": [req("metadata.name", "Exists")]}]}}}
    base = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1]"
    assert validate_plugin_args("NodeAffinity", args, "") == [
        f'{base}.matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", '
        '"Exists", "DoesNotExist", "Gt", "Lt"',
        f"{base}.matchExpressions[1].values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
        f"{base}.matchExpressions[2].values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an "
        "integer",
        f'{base}.matchExpressions[3].values: Invalid value: ["y"]: values set must be empty for exists and does not '
        "exist",
        f'{base}.matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"',
    ]


def test_node_affinity_skips_preferred_terms_without_weight():
    args = {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [req("a/b/c", "In", "x")]}}]}}
    assert validate_plugin_args("NodeAffinity", args, "") == []


# --- VolumeBinding ----------------------------------------------------------------------------

@pytest.mark.parametrize("args, want", [
    ({"bindTimeoutSeconds": 0}, []),
    ({"bindTimeoutSeconds": 10}, []),
    ({"bindTimeoutSeconds": -10},
     ["bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative value"]),
    # StorageCapacityScoring off (the v1.35 default): any shape is an error.
    ({"bindTimeoutSeconds": 10, "shape": [{"utilization": 1, "score": 1}, {"utilization": 3, "score": 3}]},
     ['shape: Invalid value: [{"Utilization":1,"Score":1},{"Utilization":3,"Score":3}]: unexpected field `shape`, '
      "remove it or turn on the feature gate StorageCapacityScoring"]),
])
def test_volume_binding(args, want):
    assert validate_plugin_args("VolumeBinding", args, "") == want


# --- NodeResourcesFit -------------------------------------------------------------------------

FIT = 'initializing plugin "NodeResourcesFit": '


@pytest.mark.parametrize("args, want", [
    ({"ignoredResources": ["longvalue" + "a" * 64]},
     'ignoredResources[0]: Invalid value: "longvalue' + "a" * 64 + '": name part must be no more than 63 bytes'),
    # An empty name part also fails the name regex (IsLabelKey checks both).
    ({"ignoredResources": ["example.com/"]},
     '[ignoredResources[0]: Invalid value: "example.com/": name part must be non-empty, '
     f'ignoredResources[0]: Invalid value: "example.com/": name part {LABEL_KEY_REGEX}]'),
    ({"ignoredResources": ["example.com/aaa/bbb"]},
     f'ignoredResources[0]: Invalid value: "example.com/aaa/bbb": a valid label key {LABEL_KEY_REGEX} with an '
     "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
    ({"ignoredResources": ["example.com"]}, None),
    ({"ignoredResourceGroups": ["example.com"]}, None),
    ({"ignoredResourceGroups": ["example.com/"]},
     '[ignoredResourceGroups[0]: Invalid value: "example.com/": resource group name can\'t contain \'/\', '
     'ignoredResourceGroups[0]: Invalid value: "example.com/": name part must be non-empty, '
     f'ignoredResourceGroups[0]: Invalid value: "example.com/": name part {LABEL_KEY_REGEX}]'),
    ({"ignoredResourceGroups": ["a" * 64]},
     'ignoredResourceGroups[0]: Invalid value: "' + "a" * 64 + '": name part must be no more than 63 bytes'),
    ({"ignoredResourceGroups": ["example.com/aa"]},
     'ignoredResourceGroups[0]: Invalid value: "example.com/aa": resource group name can\'t contain \'/\''),
    ({"scoringStrategy": {"type": "Invalid"}},
     'scoringStrategy.type: Unsupported value: "Invalid": supported values: "LeastAllocated", "MostAllocated", '
     '"RequestedToCapacityRatio"'),
], ids=["too long", "empty name", "too many slashes", "valid resource", "valid group", "group with slash only",
        "group too long", "group with slash", "unsupported type"])
def test_fit_args(args, want):
    assert validate_plugin_args("NodeResourcesFit", args, P) == ([] if want is None else [FIT + want])


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize("resources, want", [
    (None, None),
    ([{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 10}], None),
    ([{"name": "cpu", "weight": -1}],
     "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of cpu not in valid range (0, 100]"),
    ([{"name": "cpu", "weight": 101}],
     "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]"),
    ([{"name": "cpu", "weight": -1}, {"name": "memory", "weight": 101}],
     "[scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of cpu not in valid range (0, 100], "
     "scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of memory not in valid range (0, 100]]"),
], ids=["default", "valid", "less than min", "greater than max", "both"])
def test_fit_weights(strategy, resources, want):
    args = {"scoringStrategy": {"type": strategy, "resources": resources}}
    assert validate_plugin_args("NodeResourcesFit", args, P) == ([] if want is None else [FIT + want])


def rtcr(shape, resources=None):
    return {"scoringStrategy": {"type": "RequestedToCapacityRatio", "resources": resources,
                                "requestedToCapacityRatio": {"shape": shape}}}


@pytest.mark.parametrize("args, want", [
    (rtcr(None), "scoringStrategy.shape: Required value: at least one point must be specified"),
    (rtcr([{"utilization": 30, "score": 3}], [{"name": "cpu", "weight": 101}]),
     "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]"),
    (rtcr([{"utilization": 30, "score": 3}]), None),
    (rtcr([{"utilization": -1, "score": 3}]),
     "scoringStrategy.shape[0].utilization: Invalid value: -1: not in valid range [0, 100]"),
    (rtcr([{"utilization": 101, "score": 3}]),
     "scoringStrategy.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]"),
    (rtcr([{"utilization": 10, "score": 3}, {"utilization": 10, "score": 3}]),
     "scoringStrategy.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order"),
    (rtcr([{"utilization": 10, "score": 3}, {"utilization": 20, "score": 3}, {"utilization": 30, "score": 3}]), None),
    (rtcr([{"utilization": 10, "score": 3}, {"utilization": 20, "score": 3}, {"utilization": 15, "score": 3}]),
     "scoringStrategy.shape[2].utilization: Invalid value: 15: values must be sorted in increasing order"),
    (rtcr([{"utilization": 10, "score": -1}]),
     "scoringStrategy.shape[0].score: Invalid value: -1: not in valid range [0, 10]"),
    (rtcr([{"utilization": 10, "score": 11}]),
     "scoringStrategy.shape[0].score: Invalid value: 11: not in valid range [0, 10]"),
], ids=["no shape", "weight", "valid", "utilization < 0", "utilization > 100", "duplicated", "increasing",
        "non-increasing", "score < 0", "score > 10"])
def test_fit_requested_to_capacity_ratio(args, want):
    assert validate_plugin_args("NodeResourcesFit", args, P) == ([] if want is None else [FIT + want])


def test_fit_requested_to_capacity_ratio_without_parameters():
    # Upstream validation lets it through and NewFit then crashes on the nil
    # parameter: kschedx refuses it instead.
    errs = validate_plugin_args("NodeResourcesFit", {"scoringStrategy": {"type": "RequestedToCapacityRatio"}}, P)
    assert len(errs) == 1 and errs[0].startswith(FIT + "scoringStrategy.requestedToCapacityRatio: Required value")


# --- DynamicResources -------------------------------------------------------------------------

@pytest.mark.parametrize("args, want", [
    ({}, []),
    ({"filterTimeout": "0s"}, []),
    ({"filterTimeout": "1m30s"}, []),
    ({"filterTimeout": "-1s"}, ['filterTimeout: Invalid value: "-1s": must be zero or positive']),
    ({"bindingTimeout": "10m"},
     ["bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"]),
])
def test_dynamic_resources(args, want):
    assert validate_plugin_args("DynamicResources", args, "") == want


# --- what 1.36 and the gates change -------------------------------------------------------------

@pytest.mark.parametrize("features, given_args, want", [
    # DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are on in 1.36: bindingTimeout 600s.
    (V136, {}, {"filterTimeout": "10s", "bindingTimeout": "10m0s"}),
    (V136, {"bindingTimeout": "5s"}, {"filterTimeout": "10s", "bindingTimeout": "5s"}),
    (Features("1.36", {"DRADeviceBindingConditions": False}), {}, {"filterTimeout": "10s"}),
    (Features("1.35", {"DRADeviceBindingConditions": True}), {}, {"filterTimeout": "10s", "bindingTimeout": "10m0s"}),
    # DRASchedulerFilterTimeout off: no filterTimeout.
    (Features("1.35", {"DRASchedulerFilterTimeout": False}), {}, {}),
])
def test_dynamic_resources_defaults_follow_the_gates(features, given_args, want):
    assert default_plugin_args("DynamicResources", given_args, features) == want


@pytest.mark.parametrize("features, args, want", [
    (V136, {"bindingTimeout": "10m"}, []),
    (V136, {"bindingTimeout": "1s"}, []),
    (V136, {"bindingTimeout": "999ms"}, ['bindingTimeout: Invalid value: "999ms": must be at least 1 second']),
    (V136, {"bindingTimeout": "0s"}, ['bindingTimeout: Invalid value: "0s": must be at least 1 second']),
    (Features("1.36", {"DRADeviceBindingConditions": False}), {"bindingTimeout": "10m"},
     ["bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"]),
    (Features("1.35", {"DRASchedulerFilterTimeout": False}), {"filterTimeout": "5s"},
     ["filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled"]),
])
def test_dynamic_resources_validation_follows_the_gates(features, args, want):
    assert validate_plugin_args("DynamicResources", args, "", features) == want


def rtcr_typed(kind, shape=None):
    s = {"type": kind}
    if shape is not None:
        s["requestedToCapacityRatio"] = {"shape": shape}
    return {"scoringStrategy": s}


@pytest.mark.parametrize("args, want", [
    # v1.36 ValidateNodeResourcesFitArgs: required with its type, forbidden with another, shape under it.
    (rtcr_typed("RequestedToCapacityRatio"),
     "scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is "
     "RequestedToCapacityRatio"),
    (rtcr_typed("LeastAllocated", [{"utilization": 30, "score": 3}]),
     "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio"),
    (rtcr(None), "scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be "
                 "specified"),
    (rtcr([{"utilization": 10, "score": 3}, {"utilization": 10, "score": 3}]),
     "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: values must be sorted in "
     "increasing order"),
    (rtcr([{"utilization": 10, "score": 11}]),
     "scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]"),
    (rtcr([{"utilization": 30, "score": 3}]), None),
])
def test_fit_requested_to_capacity_ratio_1_36(args, want):
    assert validate_plugin_args("NodeResourcesFit", args, P, V136) == ([] if want is None else [FIT + want])


def test_fit_requested_to_capacity_ratio_with_another_type_is_accepted_by_1_35():
    assert validate_plugin_args("NodeResourcesFit", rtcr_typed("LeastAllocated", [{"utilization": 30, "score": 3}]),
                                P) == []


def test_volume_binding_shape_follows_storage_capacity_scoring():
    on = Features("1.36", {"StorageCapacityScoring": True})
    assert default_plugin_args("VolumeBinding", {}, on) == {
        "bindTimeoutSeconds": 600, "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}
    assert validate_plugin_args("VolumeBinding", {}, "", on) == []
    assert validate_plugin_args("VolumeBinding", {"shape": [{"utilization": 0, "score": 11}]}, "", on) == [
        "shape[0].score: Invalid value: 11: not in valid range [0, 10]"]
    assert default_plugin_args("VolumeBinding", {}, V136) == {"bindTimeoutSeconds": 600}


# --- names and durations ----------------------------------------------------------------------

@pytest.mark.parametrize("key, want", [
    ("app", []),
    ("example.com/app", []),
    ("/app", ["prefix part must be non-empty"]),
    ("Example.com/app", ["prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                         "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
                         "'example.com', regex used for validation is "
                         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]),
    ("-a", [f"name part {LABEL_KEY_REGEX}"]),
    ("a" * 64, ["name part must be no more than 63 bytes"]),
])
def test_label_key_errors(key, want):
    assert label_key_errors(key) == want


@pytest.mark.parametrize("text, ns, back", [
    ("10s", 10**10, "10s"), ("0", 0, "0s"), ("1m30s", 90 * 10**9, "1m30s"), ("1.5h", 5400 * 10**9, "1h30m0s"),
    ("-1s", -(10**9), "-1s"), ("250ms", 250 * 10**6, "250ms"), ("2us", 2000, "2µs"),
])
def test_durations(text, ns, back):
    assert parse_duration(text) == ns
    assert format_duration(ns) == back


@pytest.mark.parametrize("text", ["", "10", "s", "1x", "1.s.", "--1s"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@given(st.integers(min_value=-(2**62), max_value=2**62))
def test_duration_round_trip(ns):
    assert parse_duration(format_duration(ns)) == ns
