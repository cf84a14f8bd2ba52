"""`--config FILE|-`: a KubeSchedulerConfiguration read as kube-scheduler
v1.35.4 reads it: strict v1 decoding, defaulting and validation. Any error
is one InputError naming the file and the field path, with upstream's text.
framework/configured.py then plans the profiles kschedx runs."""

from __future__ import annotations

import sys

import yaml

from ..util.errors import InputError
from . import names
from .defaults import default_configuration
from .fielderr import aggregate
from ..features import Features, default_features
from .schema import API_VERSION, KIND, PLUGIN_ARGS, StrictDecoder, configuration_schema
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
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
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
    decode_strict(raw, fail, features)
    warnings = [f"{source}: {name} is ignored: {why}" for name, why in IGNORED_FIELDS.items() if name in raw]
    cfg = default_configuration(raw, features)
    errors = validate_configuration(cfg, features)
    if errors:
        fail(aggregate(errors))
    _extender_ignored_resources(cfg, fail)
    return cfg, warnings


def decode_strict(raw: dict, fail, features: Features | None = None) -> None:
    """Unknown fields and values of the wrong type, in the document and in
    the args of in-tree plugins, as the strict codec of the features'
    version reports them."""
    dec = StrictDecoder()
    dec.walk(raw, configuration_schema(features or default_features()), "")
    if dec.type_error:
        fail(dec.type_error)
    errors = [f'unknown field "{p}"' for p in dec.unknown]
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
            sub = StrictDecoder()
            sub.walk(args, schema, "")
            if sub.type_error:
                fail(f"{where}decoding args for plugin {pc['name']}: {sub.type_error}")
            if sub.unknown:
                errors.append(f"{where}strict decoding error: decoding args for plugin {pc['name']}: strict decoding "
                              "error: " + ", ".join(f'unknown field "{p}"' for p in sub.unknown))
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
