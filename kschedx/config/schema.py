"""The v1 KubeSchedulerConfiguration schema, decoded strictly as
kube-scheduler's codec does (serializer.EnableStrict): an unknown field or a
value of the wrong JSON type is an error, with sigs.k8s.io/json's texts."""

from __future__ import annotations

from dataclasses import dataclass
from . import names

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"

# Leaf types: the Go type a value decodes into.
INT32, INT64, BOOL, STRING, FLOAT64, DURATION, BYTES, RAW = (
    "int32", "int64", "bool", "string", "float64", "Duration", "[]uint8", "raw")


@dataclass(frozen=True)
class Obj:
    """A Go struct: its type name (for type errors) and its JSON fields."""

    name: str
    fields: dict


@dataclass(frozen=True)
class ListOf:
    item: object


@dataclass(frozen=True)
class MapOf:
    """A Go map[string]T."""

    value: object


# The Go zero values of a list item's non-pointer fields: JSON that leaves
# them out (or gives the item as null) still decodes to a struct that has
# them, and defaulting and validation then see "" or 0, not a missing key.
_ZERO = {
    "Plugin": {"name": ""},
    "PluginConfig": {"name": ""},
    "ResourceSpec": {"name": "", "weight": 0},
    "UtilizationShapePoint": {"utilization": 0, "score": 0},
    "ExtenderManagedResource": {"name": "", "ignoredByScheduler": False},
    "Extender": {"urlPrefix": "", "filterVerb": "", "preemptVerb": "", "prioritizeVerb": "", "weight": 0,
                 "bindVerb": "", "enableHTTPS": False, "nodeCacheCapable": False, "ignorable": False},
    "NodeSelectorRequirement": {"key": "", "operator": ""},
    "PreferredSchedulingTerm": {"weight": 0, "preference": {}},
    "LabelSelectorRequirement": {"key": "", "operator": ""},
    "TopologySpreadConstraint": {"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": ""},
}


PLUGIN = Obj("Plugin", {"name": STRING, "weight": INT32})
PLUGIN_SET = Obj("PluginSet", {"enabled": ListOf(PLUGIN), "disabled": ListOf(PLUGIN)})
# v1 Plugins field names, in the order of the Go struct.
EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                    "reserve", "permit", "preBind", "bind", "postBind")
# Added by v1.36 (after multiPoint in the Go struct).
PLACEMENT_POINTS = ("placementGenerate", "placementScore")
# Added by v1.37 (after the placement points).
POD_GROUP_POINTS = ("podGroupPostFilter",)


def extension_points(features) -> tuple[str, ...]:
    """The v1 Plugins fields of the features' version, but multiPoint."""
    out = EXTENSION_POINTS
    if features.placement_extension_points:
        out += PLACEMENT_POINTS
    if features.pod_group_post_filter_point:
        out += POD_GROUP_POINTS
    return out


PLUGINS = Obj("Plugins", {**{p: PLUGIN_SET for p in EXTENSION_POINTS}, "multiPoint": PLUGIN_SET})
PLUGINS_PLACEMENT = Obj("Plugins", {**{p: PLUGIN_SET for p in EXTENSION_POINTS}, "multiPoint": PLUGIN_SET,
                                    **{p: PLUGIN_SET for p in PLACEMENT_POINTS}})
PLUGINS_POD_GROUP = Obj("Plugins", {**{p: PLUGIN_SET for p in EXTENSION_POINTS}, "multiPoint": PLUGIN_SET,
                                    **{p: PLUGIN_SET for p in PLACEMENT_POINTS + POD_GROUP_POINTS}})
PLUGIN_CONFIG = Obj("PluginConfig", {"name": STRING, "args": RAW})


def _profile(plugins) -> Obj:
    return Obj("KubeSchedulerProfile", {
        "schedulerName": STRING,
        "percentageOfNodesToScore": INT32,
        "plugins": plugins,
        "pluginConfig": ListOf(PLUGIN_CONFIG),
    })


PROFILE = _profile(PLUGINS)
LEADER_ELECTION = Obj("LeaderElectionConfiguration", {
    "leaderElect": BOOL, "leaseDuration": DURATION, "renewDeadline": DURATION, "retryPeriod": DURATION,
    "resourceLock": STRING, "resourceName": STRING, "resourceNamespace": STRING,
})
CLIENT_CONNECTION = Obj("ClientConnectionConfiguration", {
    "kubeconfig": STRING, "acceptContentTypes": STRING, "contentType": STRING, "qps": FLOAT64, "burst": INT32,
})
EXTENDER_TLS = Obj("ExtenderTLSConfig", {
    "insecure": BOOL, "serverName": STRING, "certFile": STRING, "keyFile": STRING, "caFile": STRING,
    "certData": BYTES, "keyData": BYTES, "caData": BYTES,
})
EXTENDER = Obj("Extender", {
    "urlPrefix": STRING, "filterVerb": STRING, "preemptVerb": STRING, "prioritizeVerb": STRING,
    "weight": INT64, "bindVerb": STRING, "enableHTTPS": BOOL, "tlsConfig": EXTENDER_TLS,
    "httpTimeout": DURATION, "nodeCacheCapable": BOOL,
    "managedResources": ListOf(Obj("ExtenderManagedResource", {"name": STRING, "ignoredByScheduler": BOOL})),
    "ignorable": BOOL,
})
def _configuration(profile) -> Obj:
    return Obj("KubeSchedulerConfiguration", {
        "apiVersion": STRING, "kind": STRING,
        "parallelism": INT32,
        "leaderElection": LEADER_ELECTION,
        "clientConnection": CLIENT_CONNECTION,
        "enableProfiling": BOOL, "enableContentionProfiling": BOOL,
        "percentageOfNodesToScore": INT32,
        "podInitialBackoffSeconds": INT64, "podMaxBackoffSeconds": INT64,
        "profiles": ListOf(profile),
        "extenders": ListOf(EXTENDER),
        "delayCacheUntilActive": BOOL,
    })


CONFIGURATION = _configuration(PROFILE)  # v1.35
CONFIGURATION_PLACEMENT = _configuration(_profile(PLUGINS_PLACEMENT))  # v1.36
CONFIGURATION_POD_GROUP = _configuration(_profile(PLUGINS_POD_GROUP))  # v1.37


def configuration_schema(features) -> Obj:
    """The v1 KubeSchedulerConfiguration type of the features' version."""
    if features.pod_group_post_filter_point:
        return CONFIGURATION_POD_GROUP
    return CONFIGURATION_PLACEMENT if features.placement_extension_points else CONFIGURATION

# The core/v1 types plugin args embed, decoded as strictly as the rest.
_REQUIREMENTS = ListOf(Obj("NodeSelectorRequirement", {
    "key": STRING, "operator": STRING, "values": ListOf(STRING)}))
_NODE_SELECTOR_TERM = Obj("NodeSelectorTerm", {"matchExpressions": _REQUIREMENTS, "matchFields": _REQUIREMENTS})
NODE_AFFINITY = Obj("NodeAffinity", {  # core/v1 NodeAffinity, the Go type (not the plugin)
    "requiredDuringSchedulingIgnoredDuringExecution": Obj("NodeSelector", {
        "nodeSelectorTerms": ListOf(_NODE_SELECTOR_TERM)}),
    "preferredDuringSchedulingIgnoredDuringExecution": ListOf(Obj("PreferredSchedulingTerm", {
        "weight": INT32, "preference": _NODE_SELECTOR_TERM})),
})
_LABEL_SELECTOR = Obj("LabelSelector", {
    "matchLabels": MapOf(STRING),
    "matchExpressions": ListOf(Obj("LabelSelectorRequirement", {
        "key": STRING, "operator": STRING, "values": ListOf(STRING)})),
})
TOPOLOGY_SPREAD_CONSTRAINT = Obj("TopologySpreadConstraint", {
    "maxSkew": INT32, "topologyKey": STRING, "whenUnsatisfiable": STRING, "labelSelector": _LABEL_SELECTOR,
    "minDomains": INT32, "nodeAffinityPolicy": STRING, "nodeTaintsPolicy": STRING,
    "matchLabelKeys": ListOf(STRING),
})

# The typed args of the in-tree plugins (kube-scheduler/config/v1
# types_pluginargs.go).
_RESOURCE_SPEC = Obj("ResourceSpec", {"name": STRING, "weight": INT64})
_SHAPE = ListOf(Obj("UtilizationShapePoint", {"utilization": INT32, "score": INT32}))
_TYPE_META = {"apiVersion": STRING, "kind": STRING}
PLUGIN_ARGS = {
    names.DefaultPreemption: Obj("DefaultPreemptionArgs", {
        **_TYPE_META, "minCandidateNodesPercentage": INT32, "minCandidateNodesAbsolute": INT32}),
    names.InterPodAffinity: Obj("InterPodAffinityArgs", {
        **_TYPE_META, "hardPodAffinityWeight": INT32, "ignorePreferredTermsOfExistingPods": BOOL}),
    names.NodeAffinity: Obj("NodeAffinityArgs", {**_TYPE_META, "addedAffinity": NODE_AFFINITY}),
    names.NodeResourcesBalancedAllocation: Obj("NodeResourcesBalancedAllocationArgs", {
        **_TYPE_META, "resources": ListOf(_RESOURCE_SPEC)}),
    names.NodeResourcesFit: Obj("NodeResourcesFitArgs", {
        **_TYPE_META,
        "ignoredResources": ListOf(STRING),
        "ignoredResourceGroups": ListOf(STRING),
        "scoringStrategy": Obj("ScoringStrategy", {
            "type": STRING,
            "resources": ListOf(_RESOURCE_SPEC),
            "requestedToCapacityRatio": Obj("RequestedToCapacityRatioParam", {"shape": _SHAPE}),
        }),
    }),
    names.PodTopologySpread: Obj("PodTopologySpreadArgs", {
        **_TYPE_META, "defaultConstraints": ListOf(TOPOLOGY_SPREAD_CONSTRAINT), "defaultingType": STRING}),
    names.VolumeBinding: Obj("VolumeBindingArgs", {**_TYPE_META, "bindTimeoutSeconds": INT64, "shape": _SHAPE}),
    names.DynamicResources: Obj("DynamicResourcesArgs", {
        **_TYPE_META, "filterTimeout": DURATION, "bindingTimeout": DURATION}),
}
# The in-tree plugins that have a v1 args type (scheme.New(<Name>Args) succeeds).
PLUGINS_WITH_ARGS = tuple(PLUGIN_ARGS)

_INT_RANGES = {INT32: (-(2 ** 31), 2 ** 31 - 1), INT64: (-(2 ** 63), 2 ** 63 - 1)}


def json_kind(value) -> str:
    """What Go's encoding/json calls a decoded value in its type errors."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class StrictDecoder:
    """Walks a decoded document against a schema, collecting unknown fields
    (all of them, by their full path) and the first type error."""

    def __init__(self, key_order: dict | None = None, base: str = ""):
        self.unknown: list[str] = []
        # Unknown and (JSON) duplicate fields as the strict codec lists them,
        # in document order.
        self.strict: list[str] = []
        self.type_error: str | None = None
        # A JSON document's keys per object path, repeats included (see
        # json_key_order); `base` is where the walked value sits in it.
        self.key_order = key_order or {}
        self.base = base

    def walk(self, value, schema, path: str, struct: str = "", go_path: str = "") -> None:
        if value is None or schema is RAW:
            return
        if isinstance(schema, Obj):
            if not isinstance(value, dict):
                self._mismatch(value, _go_name(schema), struct, go_path)
                return
            full = f"{self.base}.{path}" if self.base and path else self.base or path
            seen = set()
            for key in self.key_order.get(full) or list(value):
                sub = schema.fields.get(key) if isinstance(key, str) else None
                child = f"{path}.{key}" if path else str(key)
                if key in seen:
                    # encoding/json decodes a repeated field again, the last
                    # value winning; the strict codec names a known one once
                    # more as a duplicate and an unknown one only once.
                    if sub is not None:
                        self.strict.append(f'duplicate field "{child}"')
                    continue
                seen.add(key)
                if sub is None:
                    self.unknown.append(child)
                    self.strict.append(f'unknown field "{child}"')
                    continue
                self.walk(value[key], sub, child, schema.name, f"{go_path}.{key}" if go_path else key)
            return
        if isinstance(schema, ListOf):
            if not isinstance(value, list):
                self._mismatch(value, "[]" + _go_name(schema.item), struct, go_path)
                return
            item_schema = schema.item
            for i, item in enumerate(value):
                if isinstance(item_schema, Obj):
                    if item is None:
                        item = value[i] = {}
                    zero = _ZERO.get(item_schema.name)
                    if zero and isinstance(item, dict):
                        for key, z in zero.items():
                            if item.get(key) is None:
                                item[key] = dict(z) if isinstance(z, dict) else z
                self.walk(item, item_schema, f"{path}[{i}]", struct, go_path)
            return
        if isinstance(schema, MapOf):
            if not isinstance(value, dict):
                self._mismatch(value, _go_name(schema), struct, go_path)
                return
            for key, item in value.items():
                if item is None and isinstance(schema.value, str):
                    value[key] = "" if schema.value == STRING else item
                    continue
                self.walk(item, schema.value, f"{path}[{key}]", struct, go_path)
            return
        ok = {
            BOOL: lambda v: isinstance(v, bool),
            STRING: lambda v: isinstance(v, str),
            DURATION: lambda v: isinstance(v, str),
            BYTES: lambda v: isinstance(v, str),
            FLOAT64: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        }.get(schema)
        if ok is not None:
            if not ok(value):
                self._mismatch(value, schema, struct, go_path)
            return
        # Integers: a number that is not a whole number of the type's range.
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self._mismatch(value, schema, struct, go_path)
            return
        lo, hi = _INT_RANGES[schema]
        if isinstance(value, float) or not lo <= value <= hi:
            self._mismatch(value, schema, struct, go_path, number=True)

    def _mismatch(self, value, go_type: str, struct: str, go_path: str, number: bool = False) -> None:
        if self.type_error is not None:
            return
        what = f"number {value}" if number else json_kind(value)
        where = f"Go struct field {struct}.{go_path}" if struct else "Go value"
        self.type_error = f"json: cannot unmarshal {what} into {where} of type {go_type}"


def json_key_order(text: str) -> dict:
    """For a JSON document, each object's keys in order with repeats, by
    the path StrictDecoder gives the object ("" the document,
    "profiles[0]", "profiles[0].pluginConfig[1].args"): the strict JSON
    codec reports a repeated field where it repeats, between the unknown
    fields. {} when the text is not JSON."""
    import json

    class Pairs(list):
        pass

    try:
        doc = json.loads(text, object_pairs_hook=Pairs)
    except ValueError:
        return {}
    order: dict[str, list] = {}

    def visit(value, path: str) -> None:
        if isinstance(value, Pairs):
            order[path] = [k for k, _ in value]
            for k, v in value:
                visit(v, f"{path}.{k}" if path else k)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                visit(v, f"{path}[{i}]")

    visit(doc, "")
    return order


def _go_name(schema) -> str:
    if isinstance(schema, Obj):
        return "v1." + schema.name
    if isinstance(schema, ListOf):
        return "[]" + _go_name(schema.item)
    if isinstance(schema, MapOf):
        return "map[string]" + _go_name(schema.value)
    return "interface {}" if schema is RAW else schema
