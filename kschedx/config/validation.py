"""ValidateKubeSchedulerConfiguration (apis/config/validation/validation.go)
on a defaulted v1 configuration: one string per field error, upstream's text."""

from __future__ import annotations

import re

from . import names
from .defaults import _plugin_args_functions
from .fielderr import FIELD_PATH, duplicate, go_json, invalid, required
from .schema import PLUGINS_WITH_ARGS

# invalidPluginsByVersion for v1: removed in-tree volume limit plugins.
INVALID_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
# Upstream keys that list by core/v1's group version, whose group is empty:
# "v1", not the scheduler's apiVersion. The configuration's own version is
# read from the internal object, which decoding leaves without a TypeMeta.
_INVALID_PLUGIN_DETAIL = 'was invalid in version "v1" (KubeSchedulerConfiguration is version "")'
# validatePluginConfig walks a Go map of stages: the order is Go's random
# map order; kschedx reports them in extension-point order.
_STAGES = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
           "permit", "preBind", "bind", "postBind")
# The plugins whose args validatePluginConfig checks. "NodeResourcesFitArgs"
# is upstream's key, so NodeResourcesFit's args are not checked here: they
# are checked when the plugin is made (NewFit), as kschedx does too.
_VALIDATED_ARGS = tuple(n for n in PLUGINS_WITH_ARGS if n != names.NodeResourcesFit)

_DURATION_RE = re.compile(r"^([+-]?)((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$|^0$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 10 ** 9, "m": 60 * 10 ** 9, "h": 3600 * 10 ** 9}


def parse_duration(text: str) -> int | None:
    """time.ParseDuration in nanoseconds, or None when it is not a duration."""
    if not isinstance(text, str) or not _DURATION_RE.match(text):
        return None
    if text == "0":
        return 0
    sign = -1 if text.startswith("-") else 1
    total = 0
    for number, unit in _DURATION_PART.findall(text):
        total += int(float(number) * _UNIT_NS[unit])
    return sign * total


def _invalid_plugin_errors(path: str, plugin_set: dict) -> list[str]:
    out = []
    for i, p in enumerate(plugin_set.get("enabled", [])):
        if p["name"] in INVALID_PLUGINS:
            out.append(invalid(f"{path}.enabled[{i}]", p["name"], _INVALID_PLUGIN_DETAIL))
    return out


def validate_percentage(path: str, value) -> list[str]:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def validate_profile(path: str, profile: dict, features=None) -> list[str]:
    _, validate_args = _plugin_args_functions()
    errs = []
    if not profile.get("schedulerName"):
        errs.append(required(f"{path}.schedulerName"))
    errs += validate_percentage(f"{path}.percentageOfNodesToScore", profile.get("percentageOfNodesToScore"))
    plugins = profile.get("plugins")
    if plugins is not None:
        for stage in _STAGES:
            errs += _invalid_plugin_errors(f"{path}.plugins.{stage}", plugins.get(stage, {}))
    seen = set()
    for i, pc in enumerate(profile.get("pluginConfig") or []):
        pc_path = f"{path}.pluginConfig[{i}]"
        name = pc.get("name", "")
        if name in seen:
            errs.append(duplicate(pc_path, name))
        seen.add(name)
        if name in INVALID_PLUGINS:
            errs.append(invalid(pc_path, name, _INVALID_PLUGIN_DETAIL))
        elif name in _VALIDATED_ARGS:
            errs += validate_args(name, pc.get("args") or {}, f"{pc_path}.args", features)
    return errs


def _queue_sort(profile: dict) -> dict:
    return (profile.get("plugins") or {}).get("queueSort") or {"enabled": [], "disabled": []}


def _semantic(plugin_set: dict) -> tuple:
    """A PluginSet as Semantic.DeepEqual compares the internal type: an
    unset weight is 0 there, and a missing list equals an empty one."""
    return tuple(tuple((p.get("name") or "", p.get("weight") or 0) for p in plugin_set.get(key) or ())
                 for key in ("enabled", "disabled"))


def _internal_plugin_set(plugin_set: dict):
    """A defaulted PluginSet as json.Marshal prints the internal type: its
    Go field names in their order, an unset weight 0 (int32), and an empty
    list null, since the v1 merge builds both lists by appending to nil."""
    return go_json({key.capitalize(): [{"Name": p.get("name") or "", "Weight": p.get("weight") or 0}
                                       for p in plugin_set.get(key) or ()] or None
                    for key in ("enabled", "disabled")})


def validate_common_queue_sort(path: str, profiles: list[dict]) -> list[str]:
    errs = []
    canon = _queue_sort(profiles[0])
    name = canon["enabled"][0]["name"] if canon["enabled"] else ""
    if len(canon["enabled"]) > 1:
        errs.append(invalid(f"{path}[0].plugins.queueSort.Enabled", len(canon["enabled"]),
                            "only one queue sort plugin can be enabled"))
    args = None
    for pc in profiles[0].get("pluginConfig") or []:
        if name and pc.get("name") == name:
            args = pc.get("args")
    for i in range(1, len(profiles)):
        curr = _queue_sort(profiles[i])
        if _semantic(curr) != _semantic(canon):
            errs.append(invalid(f"{path}[{i}].plugins.queueSort", _internal_plugin_set(curr), "must be the same for all profiles"))
        for pc in profiles[i].get("pluginConfig") or []:
            if pc.get("name") == name and pc.get("args") != args:
                errs.append(invalid(f"{path}[{i}].pluginConfig.args", pc.get("args"),
                                    "queueSort must be the same for all profiles"))
    return errs


_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName's messages."""
    msgs = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            msgs.append("prefix part must be non-empty")
        else:
            if len(prefix) > 253:
                msgs.append("prefix part must be no more than 253 bytes")
            if not _DNS1123_SUBDOMAIN.match(prefix):
                msgs.append("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                            "characters, '-' or '.', and must start and end with an alphanumeric character "
                            "(e.g. 'example.com', regex used for validation is "
                            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    else:
        return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
                "and '/' (e.g. 'example.com/MyName')"]
    if not name:
        msgs.append("name part must be non-empty")
    elif len(name) > 63:
        msgs.append("name part must be no more than 63 bytes")
    if name and not _QUALIFIED_NAME.match(name):
        msgs.append("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
    return msgs


def _is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: outside kubernetes.io/, not requests.*,
    and valid as requests.<name>."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return False
    return not _qualified_name_errors("requests." + name)


def validate_extenders(path: str, extenders: list[dict]) -> list[str]:
    errs = []
    binders = 0
    managed = set()
    for i, ext in enumerate(extenders):
        p = f"{path}[{i}]"
        if ext.get("prioritizeVerb") and (ext.get("weight") or 0) <= 0:
            errs.append(invalid(f"{p}.weight", ext.get("weight") or 0, "must have a positive weight applied to it"))
        if ext.get("bindVerb"):
            binders += 1
        for j, res in enumerate(ext.get("managedResources") or []):
            rp = f"{p}.managedResources[{j}].name"
            name = res.get("name", "")
            msgs = _qualified_name_errors(name)
            if msgs:
                errs += [invalid(rp, name, m) for m in msgs]
            elif not _is_extended_resource_name(name):
                errs.append(invalid(rp, name, "is an invalid extended resource name"))
            if name in managed:
                errs.append(invalid(rp, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(invalid(path, f"found {binders} extenders implementing bind", "only one extender can implement bind"))
    return errs


def validate_leader_election(le: dict) -> list[str]:
    """componentbasevalidation.ValidateLeaderElectionConfiguration."""
    if not le.get("leaderElect"):
        return []
    errs = []
    lease = parse_duration(le.get("leaseDuration")) or 0
    renew = parse_duration(le.get("renewDeadline")) or 0
    retry = parse_duration(le.get("retryPeriod")) or 0
    if lease <= 0:
        errs.append(invalid("leaderElection.leaseDuration", le.get("leaseDuration"), "must be greater than zero"))
    if renew <= 0:
        errs.append(invalid("leaderElection.renewDeadline", le.get("renewDeadline"), "must be greater than zero"))
    if retry <= 0:
        errs.append(invalid("leaderElection.retryPeriod", le.get("retryPeriod"), "must be greater than zero"))
    if lease <= renew:
        errs.append(invalid("leaderElection.leaseDuration", le.get("renewDeadline"),
                            "must be greater than `RenewDeadline`"))
    for key in ("resourceLock", "resourceNamespace", "resourceName"):
        if not le.get(key):
            errs.append(required(f"leaderElection.{key}"))
    return errs


def validate_configuration(cfg: dict, features=None) -> list[str]:
    errs = []
    burst = (cfg.get("clientConnection") or {}).get("burst") or 0
    if burst < 0:
        errs.append(invalid("clientConnection.burst", burst, "must be non-negative"))
    le = cfg.get("leaderElection") or {}
    errs += validate_leader_election(le)
    if le.get("leaderElect") and le.get("resourceLock") != "leases":
        errs.append(invalid("leaderElection.resourceLock", le.get("resourceLock"), 'resourceLock value must be "leases"'))
    if (cfg.get("parallelism") or 0) <= 0:
        errs.append(invalid("parallelism", cfg.get("parallelism") or 0, "should be an integer value greater than zero"))
    profiles = cfg.get("profiles") or []
    if not profiles:
        errs.append(required("profiles"))
    else:
        seen: dict[str, int] = {}
        for i, prof in enumerate(profiles):
            errs += validate_profile(f"profiles[{i}]", prof, features)
            name = prof.get("schedulerName") or ""
            if name in seen:
                errs.append(duplicate(f"profiles[{i}].schedulerName", FIELD_PATH))
            seen[name] = i
        errs += validate_common_queue_sort("profiles", profiles)
    errs += validate_percentage("percentageOfNodesToScore", cfg.get("percentageOfNodesToScore"))
    initial = cfg.get("podInitialBackoffSeconds") or 0
    if initial <= 0:
        errs.append(invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if (cfg.get("podMaxBackoffSeconds") or 0) < initial:
        errs.append(invalid("podMaxBackoffSeconds", cfg.get("podMaxBackoffSeconds") or 0,
                            "must be greater than or equal to PodInitialBackoffSeconds"))
    errs += validate_extenders("extenders", cfg.get("extenders") or [])
    return errs
