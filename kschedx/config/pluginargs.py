"""Plugin args of the in-tree plugins: v1 defaulting and validation.

`default_plugin_args` is apis/config/v1 defaults.go (SetDefaults_*Args);
`validate_plugin_args` gives the texts of
apis/config/validation/validation_pluginargs.go, one string per field error,
each starting with its field path. Both take and return the v1 (camelCase)
args as decoded from YAML; neither changes its input. Both follow the
Features given (the version and its gates; the newest version's defaults
when None):

- StorageCapacityScoring (off in 1.35 and 1.36): VolumeBinding's default
  `shape`, and whether a `shape` is accepted;
- DRASchedulerFilterTimeout (on): DynamicResources' `filterTimeout`;
- DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (both on from
  1.36): DynamicResources' `bindingTimeout` (600s), else forbidden;
- from 1.36 (fit_args_strict_requested_to_capacity_ratio): NodeResourcesFit's
  `requestedToCapacityRatio` required with type RequestedToCapacityRatio,
  forbidden with another type, its shape checked under its own path.
"""

from __future__ import annotations

import copy
import json
import re

from ..features import Features, default_features
from . import names
from .schema import PLUGINS_WITH_ARGS

__all__ = [
    "MAX_CUSTOM_PRIORITY_SCORE",
    "PLUGINS_WITH_ARGS",
    "checked_plugin_args",
    "default_plugin_args",
    "format_duration",
    "parse_duration",
    "validate_plugin_args",
]

# config.MaxCustomPriorityScore: the top of a `shape` score (scaled x10 to MaxNodeScore).
MAX_CUSTOM_PRIORITY_SCORE = 10


_DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})
_DRA_FILTER_TIMEOUT_DEFAULT = "10s"
_DRA_BINDING_TIMEOUT_DEFAULT = "10m0s"  # configv1.DynamicResourcesBindingTimeoutDefault (600s)


# -- defaulting ------------------------------------------------------------------------------
def checked_plugin_args(name: str, args: dict | None, features: Features | None = None) -> dict:
    """What a plugin's constructor uses: the defaulted args, or ValueError
    with upstream's text when they are invalid (as the plugin's New fails).
    A config is validated before plugins are built; this guards direct use."""
    out = default_plugin_args(name, args, features)
    errs = validate_plugin_args(name, out, "", features)
    if errs:
        if len(errs) == 1 and errs[0].startswith("initializing plugin "):
            raise ValueError(errs[0])
        raise ValueError(f'initializing plugin "{name}": {_aggregate(errs)}')
    return out


def default_plugin_args(name: str, args: dict | None, features: Features | None = None) -> dict:
    """The args after v1 defaulting (a new dict; args of other plugins are
    returned as given)."""
    out = copy.deepcopy(args) if args else {}
    fn = _DEFAULTERS.get(name)
    if fn is not None:
        fn(out, features or default_features())
    return out


def _default_preemption(a: dict, features: Features) -> None:
    if a.get("minCandidateNodesPercentage") is None:
        a["minCandidateNodesPercentage"] = 10
    if a.get("minCandidateNodesAbsolute") is None:
        a["minCandidateNodesAbsolute"] = 100


def _default_inter_pod_affinity(a: dict, features: Features) -> None:
    if a.get("hardPodAffinityWeight") is None:
        a["hardPodAffinityWeight"] = 1
    # A plain bool in v1 (no pointer): it always decodes, false when absent.
    if a.get("ignorePreferredTermsOfExistingPods") is None:
        a["ignorePreferredTermsOfExistingPods"] = False


def _default_volume_binding(a: dict, features: Features) -> None:
    if a.get("bindTimeoutSeconds") is None:
        a["bindTimeoutSeconds"] = 600
    if not a.get("shape") and features.enable_storage_capacity_scoring:
        a["shape"] = [{"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE}, {"utilization": 100, "score": 0}]


def _default_balanced_allocation(a: dict, features: Features) -> None:
    if not a.get("resources"):
        a["resources"] = [dict(r) for r in _DEFAULT_RESOURCES]
        return
    for r in a["resources"]:
        if not r.get("weight"):
            r["weight"] = 1


def _default_pod_topology_spread(a: dict, features: Features) -> None:
    if not a.get("defaultingType"):
        a["defaultingType"] = "System"


def _default_fit(a: dict, features: Features) -> None:
    if a.get("scoringStrategy") is None:
        a["scoringStrategy"] = {"type": "LeastAllocated", "resources": [dict(r) for r in _DEFAULT_RESOURCES]}
    s = a["scoringStrategy"]
    if not s.get("resources"):
        s["resources"] = [dict(r) for r in _DEFAULT_RESOURCES]
    for r in s["resources"]:
        if not r.get("weight"):
            r["weight"] = 1


def _default_dynamic_resources(a: dict, features: Features) -> None:
    if a.get("filterTimeout") is None and features.enable_dra_scheduler_filter_timeout:
        a["filterTimeout"] = _DRA_FILTER_TIMEOUT_DEFAULT
    if (a.get("bindingTimeout") is None and features.enable_dra_device_binding_conditions
            and features.enable_dra_resource_claim_device_status):
        a["bindingTimeout"] = _DRA_BINDING_TIMEOUT_DEFAULT


_DEFAULTERS = {
    names.DefaultPreemption: _default_preemption,
    names.DynamicResources: _default_dynamic_resources,
    names.InterPodAffinity: _default_inter_pod_affinity,
    names.NodeResourcesBalancedAllocation: _default_balanced_allocation,
    names.NodeResourcesFit: _default_fit,
    names.PodTopologySpread: _default_pod_topology_spread,
    names.VolumeBinding: _default_volume_binding,
}


# -- field errors (apimachinery field.Error texts) ---------------------------------------------
def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def _go_quote(s: str) -> str:
    """strconv.Quote / %q for the strings configs hold."""
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _go_json(v) -> str:
    """encoding/json as field.Error prints values that are neither numbers nor
    plain strings (named string types, slices, structs)."""
    text = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class _Value:
    """A bad value and how Go renders it in a field.Error."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _num(v) -> _Value:
    return _Value(str(v))


def _str(v: str) -> _Value:
    return _Value(_go_quote(v))


def _json(v) -> _Value:
    return _Value(_go_json(v))


def _invalid(path: str, value: _Value, detail: str) -> str:
    s = f"{path}: Invalid value: {value.text}"
    return f"{s}: {detail}" if detail else s


def _required(path: str, detail: str) -> str:
    return f"{path}: Required value: {detail}" if detail else f"{path}: Required value"


def _forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def _duplicate(path: str, value: _Value) -> str:
    return f"{path}: Duplicate value: {value.text}"


def _not_supported(path: str, value: _Value, supported) -> str:
    s = f"{path}: Unsupported value: {value.text}"
    if supported:
        s += ": supported values: " + ", ".join(_go_quote(v) for v in supported)
    return s


# -- names (apimachinery validate/content) ----------------------------------------------------
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_RE = re.compile("^" + _LABEL_KEY_FMT + r"\Z")
_LABEL_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_RE = re.compile("^" + _DNS1123_SUBDOMAIN_FMT + r"\Z")
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character")
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_RE = re.compile("^" + _LABEL_VALUE_FMT + r"\Z")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    # Go's RegexError: "'a', " joined by " or " (two spaces after commas).
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def _max_len_error(n: int) -> str:
    return f"must be no more than {n} bytes"


def _go_len(s: str) -> int:
    return len(s.encode("utf-8"))


def _dns1123_subdomain_errors(value: str) -> list[str]:
    errs = []
    if _go_len(value) > 253:
        errs.append(_max_len_error(253))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def label_key_errors(value: str) -> list[str]:
    """content.IsLabelKey (= IsQualifiedName)."""
    errs = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain_errors(prefix))
    else:
        return ["a valid label key " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif _go_len(name) > 63:
        errs.append("name part " + _max_len_error(63))
    if not _LABEL_KEY_RE.match(name):
        errs.append("name part " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """content.IsLabelValue."""
    errs = []
    if _go_len(value) > 63:
        errs.append(_max_len_error(63))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _label_name(value: str, path: str) -> list[str]:
    """metav1validation.ValidateLabelName: one error per message."""
    return [_invalid(path, _str(value), m) for m in label_key_errors(value)]


# -- durations (metav1.Duration) -----------------------------------------------------------------
_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
          "m": 60_000_000_000, "h": 3_600_000_000_000}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """time.ParseDuration, in nanoseconds; ValueError when Go rejects it."""
    s = text
    neg = False
    if s[:1] in ("-", "+"):
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError(f'time: invalid duration "{text}"')
    total = 0
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if not m or m.group(1) in ("", "."):
            raise ValueError(f'time: invalid duration "{text}"')
        whole, _, frac = m.group(1).partition(".")
        unit = _UNITS[m.group(2)]
        total += int(whole or 0) * unit
        if frac:
            total += int(frac) * unit // 10 ** len(frac)
        pos = m.end()
    return -total if neg else total


def format_duration(ns: int) -> str:
    """time.Duration.String."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < 1_000_000_000:
        for unit, size in (("ns", 1), ("µs", 1_000), ("ms", 1_000_000)):
            if u < size * 1000:
                text = _frac(u, size) + unit
                break
    else:
        h, rem = divmod(u, 3_600_000_000_000)
        m, rem = divmod(rem, 60_000_000_000)
        text = _frac(rem, 1_000_000_000) + "s"
        if h or m:
            text = f"{m}m" + text
        if h:
            text = f"{h}h" + text
    return "-" + text if neg else text


def _frac(v: int, size: int) -> str:
    whole, rest = divmod(v, size)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(size)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


# -- validation ----------------------------------------------------------------------------------
def validate_plugin_args(name: str, args: dict | None, path: str = "", features: Features | None = None) -> list[str]:
    """Upstream's validation errors for a plugin's args (defaulted first, as
    kube-scheduler defaults before it validates); [] when valid or when the
    plugin has no args validation.

    NodeResourcesFit: kube-scheduler's config validation registers its
    validator under the name "NodeResourcesFitArgs", so a config never
    fails validation for it; the plugin validates its args when it is built
    (with no field path) and the scheduler does not start. That error is
    returned as one string, worded as kube-scheduler reports it.
    """
    features = features or default_features()
    a = default_plugin_args(name, args, features)
    fn = _VALIDATORS.get(name)
    if fn is None:
        return []
    return fn(a, path, features)


def _validate_default_preemption(a: dict, path: str, features: Features) -> list[str]:
    errs = []
    pct_path = _child(path, "minCandidateNodesPercentage")
    abs_path = _child(path, "minCandidateNodesAbsolute")
    pct = a["minCandidateNodesPercentage"]
    absolute = a["minCandidateNodesAbsolute"]
    if pct < 0 or pct > 100:
        errs.append(_invalid(pct_path, _num(pct), "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(_invalid(abs_path, _num(absolute), "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(_invalid(pct_path, _num(pct), "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(_invalid(abs_path, _num(absolute), "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


def _validate_inter_pod_affinity(a: dict, path: str, features: Features) -> list[str]:
    w = a["hardPodAffinityWeight"]
    if w < 0 or w > 100:
        return [_invalid(_child(path, "hardPodAffinityWeight"), _num(w), "not in valid range [0, 100]")]
    return []


def _validate_pod_topology_spread(a: dict, path: str, features: Features) -> list[str]:
    errs = []
    defaulting = a.get("defaultingType")
    constraints = a.get("defaultConstraints") or []
    dpath = _child(path, "defaultingType")
    if defaulting not in ("System", "List"):
        errs.append(_not_supported(dpath, _json(defaulting), ["System", "List"]))
    elif defaulting == "System" and constraints:
        errs.append(_invalid(dpath, _json(defaulting), "when .defaultConstraints are not empty"))
    cpath = _child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = _index(cpath, i)
        max_skew = c.get("maxSkew") or 0
        if max_skew <= 0:
            errs.append(_invalid(_child(p, "maxSkew"), _num(max_skew), "not in valid range (0, inf)"))
        key = c.get("topologyKey") or ""
        if not key:
            errs.append(_required(_child(p, "topologyKey"), "can not be empty"))
        else:
            errs.extend(_label_name(key, _child(p, "topologyKey")))
        when = c.get("whenUnsatisfiable") or ""
        if not when:
            errs.append(_required(_child(p, "whenUnsatisfiable"), "can not be empty"))
        elif when not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(_not_supported(_child(p, "whenUnsatisfiable"), _json(when), ["DoNotSchedule", "ScheduleAnyway"]))
        if c.get("labelSelector") is not None:
            errs.append(_forbidden(_child(p, "labelSelector"),
                                   "constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if (other.get("topologyKey") or "") == key and (other.get("whenUnsatisfiable") or "") == when:
                errs.append(_duplicate(p, _str(f"{{{key}, {when}}}")))
                break
    return errs


def _shape_errors(shape, path: str) -> list[str]:
    """validateFunctionShape."""
    if not shape:
        return [_required(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(_invalid(_child(_index(path, i), "utilization"), _num(shape[i].get("utilization", 0)),
                                 "values must be sorted in increasing order"))
            break
    for i, point in enumerate(shape):
        u = point.get("utilization", 0)
        s = point.get("score", 0)
        if u < 0 or u > 100:
            errs.append(_invalid(_child(_index(path, i), "utilization"), _num(u), "not in valid range [0, 100]"))
        if s < 0 or s > MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(_invalid(_child(_index(path, i), "score"), _num(s),
                                 f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs


def _validate_balanced_allocation(a: dict, path: str, features: Features) -> list[str]:
    errs = []
    seen = set()
    rpath = _child(path, "resources")
    for i, r in enumerate(a.get("resources") or ()):
        name = r.get("name", "")
        if name in seen:
            errs.append(_duplicate(_child(_index(rpath, i), "name"), _str(name)))
        else:
            seen.add(name)
        if r.get("weight") != 1:
            errs.append(_invalid(_child(_index(rpath, i), "weight"), _num(r.get("weight", 0)), "must be 1"))
    return errs


def _node_selector_requirements(exprs, path: str, fields: bool) -> list[str]:
    errs = []
    for i, expr in enumerate(exprs):
        p = _index(path, i)
        op = expr.get("operator", "")
        values = list(expr.get("values") or [])
        if fields:
            if op in ("In", "NotIn"):
                if len(values) != 1:
                    errs.append(_invalid(_child(p, "values"), _json(values), "must have one element"))
            else:
                errs.append(_not_supported(_child(p, "operator"), _json(op), ["In", "NotIn"]))
            continue
        if op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
            errs.append(_not_supported(_child(p, "operator"), _json(op),
                                       ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]))
            continue
        errs.extend(_requirement(expr.get("key", ""), op, values, p))
    return errs


def _requirement(key: str, op: str, values: list, path: str) -> list[str]:
    """labels.NewRequirement's errors."""
    errs = []
    key_errs = label_key_errors(key)
    if key_errs:
        errs.append(_invalid(_child(path, "key"), _str(key), "; ".join(key_errs)))
    vpath = _child(path, "values")
    if op in ("In", "NotIn"):
        if not values:
            errs.append(_invalid(vpath, _json(values), "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(_invalid(vpath, _json(values), "values set must be empty for exists and does not exist"))
    else:
        if len(values) != 1:
            errs.append(_invalid(vpath, _json(values), "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(values):
            if not _is_go_int64(v):
                errs.append(_invalid(_index(vpath, i), _str(v), "for 'Gt', 'Lt' operators, the value must be an integer"))
    for i, v in enumerate(values):
        v_errs = label_value_errors(v)
        if v_errs:
            errs.append(_invalid(f"{_index(vpath, i)}[{key}]", _str(v), "; ".join(v_errs)))
    return errs


def _is_go_int64(v: str) -> bool:
    if not re.fullmatch(r"[+-]?[0-9]+", v):
        return False
    return -(2**63) <= int(v) <= 2**63 - 1


def _node_selector_term(term: dict, path: str) -> list[str]:
    errs = []
    if term.get("matchExpressions"):
        errs.extend(_node_selector_requirements(term["matchExpressions"], _child(path, "matchExpressions"), False))
    if term.get("matchFields"):
        errs.extend(_node_selector_requirements(term["matchFields"], _child(path, "matchFields"), True))
    return errs


def _is_empty_term(term: dict) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def _validate_node_affinity(a: dict, path: str, features: Features) -> list[str]:
    added = a.get("addedAffinity")
    if added is None:
        return []
    errs = []
    required = added.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        tpath = _child(_child(_child(path, "addedAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"),
                       "nodeSelectorTerms")
        for i, term in enumerate(required.get("nodeSelectorTerms") or ()):
            if not _is_empty_term(term):
                errs.extend(_node_selector_term(term, _index(tpath, i)))
    ppath = _child(_child(path, "addedAffinity"), "preferredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(added.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
        pref = term.get("preference") or {}
        if not term.get("weight") or _is_empty_term(pref):
            continue
        errs.extend(_node_selector_term(pref, _index(ppath, i)))
    return _dedup(errs)


def _dedup(errs: list[str]) -> list[str]:
    # errors.Flatten(NewAggregate(...)) keeps duplicates, but the aggregate's
    # text prints each message once; callers print the list.
    return list(dict.fromkeys(errs))


def _validate_volume_binding(a: dict, path: str, features: Features) -> list[str]:
    errs = []
    t = a["bindTimeoutSeconds"]
    if t < 0:
        errs.append(_invalid(_child(path, "bindTimeoutSeconds"), _num(t),
                             "invalid BindTimeoutSeconds, should not be a negative value"))
    shape = a.get("shape")
    if features.enable_storage_capacity_scoring:
        errs.extend(_shape_errors(shape, _child(path, "shape")))
    elif shape is not None:
        # StorageCapacityScoring is off. The bad value is the internal
        # type's slice, marshalled without json tags.
        internal = [{"Utilization": p.get("utilization", 0), "Score": p.get("score", 0)} for p in shape]
        errs.append(_invalid(_child(path, "shape"), _json(internal),
                             "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
    return errs


_STRATEGIES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


def fit_args_errors(a: dict, features: Features | None = None) -> list[str]:
    """ValidateNodeResourcesFitArgs with a nil path (as NewFit calls it)."""
    features = features or default_features()
    errs = []
    for i, res in enumerate(a.get("ignoredResources") or ()):
        errs.extend(_label_name(res, _index("ignoredResources", i)))
    for i, group in enumerate(a.get("ignoredResourceGroups") or ()):
        p = _index("ignoredResourceGroups", i)
        if "/" in group:
            errs.append(_invalid(p, _str(group), "resource group name can't contain '/'"))
        errs.extend(_label_name(group, p))
    s = a.get("scoringStrategy")
    if s is not None:
        t = s.get("type", "")
        if t not in _STRATEGIES:
            errs.append(_not_supported("scoringStrategy.type", _json(t), _STRATEGIES))
        for i, r in enumerate(s.get("resources") or ()):
            w = r.get("weight", 0)
            if w <= 0 or w > 100:
                errs.append(_invalid(f"scoringStrategy.resources[{i}].weight", _num(w),
                                     f"resource weight of {r.get('name', '')} not in valid range (0, 100]"))
        rtcr = s.get("requestedToCapacityRatio")
        if not features.fit_args_strict_requested_to_capacity_ratio:
            if rtcr is not None:
                errs.extend(_shape_errors(rtcr.get("shape"), "scoringStrategy.shape"))
        elif t == "RequestedToCapacityRatio":
            if rtcr is None:
                errs.append(_required("scoringStrategy.requestedToCapacityRatio",
                                      "must be specified when type is RequestedToCapacityRatio"))
            else:
                errs.extend(_shape_errors(rtcr.get("shape"), "scoringStrategy.requestedToCapacityRatio.shape"))
        elif rtcr is not None:
            errs.append(_forbidden("scoringStrategy.requestedToCapacityRatio",
                                   "must be nil when type is not RequestedToCapacityRatio"))
    else:
        errs.append(_required("scoringStrategy", "ScoringStrategy field is required"))
    return errs


def _aggregate(errs: list[str]) -> str:
    """utilerrors.Aggregate's text."""
    unique = list(dict.fromkeys(errs))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def fit_init_error(a: dict, features: Features | None = None) -> str | None:
    """The error NewFit returns for defaulted args, or None."""
    features = features or default_features()
    errs = fit_args_errors(a, features)
    if errs:
        return _aggregate(errs)
    s = a["scoringStrategy"]
    if s.get("type") == "RequestedToCapacityRatio" and s.get("requestedToCapacityRatio") is None:
        # 1.35 dereferences the missing parameter and crashes (1.36 validates it).
        return ("scoringStrategy.requestedToCapacityRatio: Required value: RequestedToCapacityRatio needs a "
                f"shape (kube-scheduler {features.reference} crashes on this config)")
    return None


def _validate_fit(a: dict, path: str, features: Features) -> list[str]:
    err = fit_init_error(a, features)
    return [] if err is None else [f'initializing plugin "NodeResourcesFit": {err}']


def _duration_ns(value):
    return parse_duration(value) if isinstance(value, str) else int(value)


def _validate_dynamic_resources(a: dict, path: str, features: Features) -> list[str]:
    errs = []
    ft = a.get("filterTimeout")
    if ft is not None and not features.enable_dra_scheduler_filter_timeout:
        errs.append(_forbidden(_child(path, "filterTimeout"), "DRASchedulingFilterTimeout feature gate is disabled"))
    elif ft is not None:
        try:
            ns = parse_duration(ft) if isinstance(ft, str) else int(ft)
        except (TypeError, ValueError) as exc:
            # A decoding error upstream (metav1.Duration); the config reader
            # reports those first, this keeps a direct caller from crashing.
            return [_invalid(_child(path, "filterTimeout"), _json(ft), str(exc))]
        if ns < 0:
            errs.append(_invalid(_child(path, "filterTimeout"), _json(format_duration(ns)), "must be zero or positive"))
    bt = a.get("bindingTimeout")
    if bt is None:
        return errs
    if not (features.enable_dra_device_binding_conditions and features.enable_dra_resource_claim_device_status):
        errs.append(_forbidden(_child(path, "bindingTimeout"),
                               "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"))
        return errs
    try:
        ns = _duration_ns(bt)
    except (TypeError, ValueError) as exc:
        return errs + [_invalid(_child(path, "bindingTimeout"), _json(bt), str(exc))]
    if ns < 1_000_000_000:
        errs.append(_invalid(_child(path, "bindingTimeout"), _json(format_duration(ns)), "must be at least 1 second"))
    return errs


_VALIDATORS = {
    names.DefaultPreemption: _validate_default_preemption,
    names.DynamicResources: _validate_dynamic_resources,
    names.InterPodAffinity: _validate_inter_pod_affinity,
    names.NodeAffinity: _validate_node_affinity,
    names.NodeResourcesBalancedAllocation: _validate_balanced_allocation,
    names.NodeResourcesFit: _validate_fit,
    names.PodTopologySpread: _validate_pod_topology_spread,
    names.VolumeBinding: _validate_volume_binding,
}
