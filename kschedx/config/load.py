"""`--config FILE|-`: a KubeSchedulerConfiguration read as kube-scheduler
v1.35.4 reads it: strict v1 decoding, defaulting and validation. Any error
is one InputError naming the file and the field path, with upstream's text.
framework/configured.py then plans the profiles kschedx runs."""

from __future__ import annotations

import json
import math
import re
import sys

import yaml

from ..util.errors import InputError
from . import names
from .defaults import default_configuration
from .fielderr import aggregate
from ..features import Features, default_features
from .schema import API_VERSION, KIND, PLUGIN_ARGS, StrictDecoder, configuration_schema, json_key_order
from .validation import validate_configuration

# Fields read and defaulted but meaningless offline: one warning each.
IGNORED_FIELDS = {
    "parallelism": "kschedx evaluates nodes in one process",
    "leaderElection": "kschedx runs no leader election",
    "clientConnection": "kschedx reads the cluster through --snapshot or --kubeconfig",
    "enableProfiling": "kschedx serves no debug endpoints",
    "enableContentionProfiling": "kschedx serves no debug endpoints",
    "podInitialBackoffSeconds": "kschedx has no retry queue: each pod is tried once",
    "podMaxBackoffSeconds": "kschedx has no retry queue: each pod is tried once",
    "delayCacheUntilActive": "kschedx runs no leader election",
}


class _GoYamlLoader(yaml.SafeLoader):
    """YAML numbers as kube-scheduler's codec sees them once go-yaml has
    read the document and it is re-encoded as JSON for decoding:

    - go-yaml takes `1e2` and `1.0e5` for floats where YAML 1.1 (PyYAML)
      wants a dot and a signed exponent;
    - encoding/json writes a float64 without a fraction below 1e21 as an
      integer, so `weight: 2.0` reaches the int32 field as 2 (a JSON
      document's `2.0` does not: it is decoded as written)."""

    def construct_yaml_float(self, node):
        value = super().construct_yaml_float(node)
        if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
            return int(value)
        return value


_GoYamlLoader.add_constructor("tag:yaml.org,2002:float", _GoYamlLoader.construct_yaml_float)
# Resolvers are tried in order: ints (and timestamps) keep their own.
_GoYamlLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9_]+)?$"),
    list("-+0123456789."))


def read_config_text(path: str) -> tuple[str, str]:
    """The file's text and its name for messages."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    except OSError as e:
        raise InputError(f"cannot read the scheduler configuration: {e.strerror or e}", source=path) from None
    except UnicodeDecodeError:
        raise InputError("is not UTF-8 text: a KubeSchedulerConfiguration is YAML or JSON", source=path) from None


def decode_config(text: str, source: str = "<config>",
                  features: Features | None = None) -> tuple[dict, list[str]]:
    """The document decoded strictly, defaulted and validated as the
    features' version does it (the newest by default), and the warnings for
    the fields kschedx ignores."""
    features = features or default_features()

    def fail(message: str):
        raise InputError(message, source=source)

    try:
        loader = yaml.SafeLoader if _is_json(text) else _GoYamlLoader
        docs = [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        fail(f"not valid YAML or JSON{where}: {getattr(e, 'problem', None) or e}")
    if not docs:
        fail("holds no KubeSchedulerConfiguration: the file is empty")
    if len(docs) > 1:
        fail(f"holds {len(docs)} YAML documents: a scheduler configuration is one KubeSchedulerConfiguration")
    raw = docs[0]
    if not isinstance(raw, dict):
        fail("is not a KubeSchedulerConfiguration: expected a mapping with apiVersion and kind")
    kind, api_version = raw.get("kind"), raw.get("apiVersion")
    if not kind:
        fail("Object 'Kind' is missing: expected kind: KubeSchedulerConfiguration")
    if api_version != API_VERSION or kind != KIND:
        fail(f'no kind "{kind}" is registered for version "{api_version}": kube-scheduler v{features.version} reads '
             f"apiVersion {API_VERSION}, kind {KIND}")
    if _is_json(text):
        decode_strict(raw, fail, features, key_order=json_key_order(text))
    else:
        decode_strict(raw, fail, features, yaml_errors=_yaml_repeated_keys(text))
    warnings = [f"{source}: {name} is ignored: {why}" for name, why in IGNORED_FIELDS.items() if name in raw]
    cfg = default_configuration(raw, features)
    errors = validate_configuration(cfg, features)
    if errors:
        fail(aggregate(errors))
    _extender_ignored_resources(cfg, fail)
    return cfg, warnings


def _is_json(text: str) -> bool:
    """The codec's test: JSON is a document whose first non-blank byte is
    `{`; anything else is read as YAML."""
    return text.lstrip(" \t\r\n").startswith("{")


def _yaml_repeated_keys(text: str) -> list[str]:
    """go-yaml's strict errors for a mapping key given twice, in the order
    it meets them: a key's value is decoded before the key is found taken,
    and the line is the value's (go-yaml counts the value of `key:` with
    nothing after it on the key's line, as PyYAML marks it)."""
    nodes = [n for n in yaml.compose_all(text, Loader=yaml.SafeLoader) if n.tag != "tag:yaml.org,2002:null"]
    if not nodes:
        return []
    constructor = yaml.SafeLoader("")
    errors: list[str] = []

    def key_of(node):
        # Map keys are Go interface values: 1 and 1.0 are different keys.
        value = constructor.construct_object(node, deep=True)
        return type(value), value

    def go_value(value) -> str:
        # %#v of the key.
        if isinstance(value, str):
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, bool):
            return "true" if value else "false"
        return "<nil>" if value is None else str(value)

    def visit(node, depth: int = 0) -> None:
        if depth > 200:  # aliases are decoded again each time; bound a cycle
            return
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for k, v in node.value:
                visit(v, depth + 1)
                if not isinstance(k, yaml.ScalarNode) or k.tag == "tag:yaml.org,2002:merge":
                    continue
                key = key_of(k)
                if key in seen:
                    errors.append(f"line {v.start_mark.line + 1}: key {go_value(key[1])} already set in map")
                seen.add(key)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                visit(item, depth + 1)

    visit(nodes[0])
    return ["yaml: unmarshal errors:\n  " + "\n  ".join(errors)] if errors else []


def decode_strict(raw: dict, fail, features: Features | None = None, key_order: dict | None = None,
                  yaml_errors: list[str] = ()) -> None:
    """Unknown fields, repeated fields and values of the wrong type, in the
    document and in the args of in-tree plugins, as the strict codec of the
    features' version reports them. `yaml_errors` (a YAML document's
    repeated keys) come first: the codec checks the YAML before decoding its
    JSON; `key_order` (a JSON document's keys with repeats) places JSON
    duplicates among the unknown fields."""
    dec = StrictDecoder(key_order)
    dec.walk(raw, configuration_schema(features or default_features()), "")
    if dec.type_error:
        fail(dec.type_error)
    errors = list(yaml_errors) + dec.strict
    for i, prof in enumerate(raw.get("profiles") or []):
        for j, pc in enumerate((prof or {}).get("pluginConfig") or []):
            schema = PLUGIN_ARGS.get((pc or {}).get("name"))
            args = (pc or {}).get("args")
            if schema is None or args is None:
                continue
            where = f"decoding .profiles[{i}].pluginConfig[{j}]: "
            if not isinstance(args, dict):
                fail(f"{where}decoding args for plugin {pc['name']}: json: cannot unmarshal "
                     f"{type(args).__name__ if not isinstance(args, list) else 'array'} into Go value of type "
                     f"v1.{schema.name}")
            kind = args.get("kind")
            if kind and kind != schema.name:
                fail(f"{where}args for plugin {pc['name']} were not of type {schema.name}.kubescheduler.config.k8s.io, "
                     f"got {kind}.kubescheduler.config.k8s.io")
            sub = StrictDecoder(key_order, f"profiles[{i}].pluginConfig[{j}].args")
            sub.walk(args, schema, "")
            if sub.type_error:
                fail(f"{where}decoding args for plugin {pc['name']}: {sub.type_error}")
            if sub.strict:
                errors.append(f"{where}strict decoding error: decoding args for plugin {pc['name']}: strict decoding "
                              "error: " + ", ".join(sub.strict))
    if errors:
        fail("strict decoding error: " + ", ".join(errors))


def _extender_ignored_resources(cfg: dict, fail) -> None:
    """buildExtenders: the managed resources an extender marks
    ignoredByScheduler replace NodeResourcesFit's ignoredResources in every
    profile (a profile without NodeResourcesFit args is an error), whether
    or not the extenders are then called."""
    ignored = [m["name"] for ext in cfg.get("extenders") or () for m in ext.get("managedResources") or ()
               if m.get("ignoredByScheduler")]
    if not ignored:
        return
    for prof in cfg["profiles"]:
        pc = next((pc for pc in prof.get("pluginConfig") or () if pc.get("name") == names.NodeResourcesFit), None)
        if pc is None:
            fail("couldn't create scheduler: can't find NodeResourcesFitArgs in plugin config")
        pc["args"] = dict(pc.get("args") or {}, ignoredResources=list(ignored))
