"""`--config FILE|-`: read a KubeSchedulerConfiguration as kube-scheduler
v1.35.4 does (strict v1 decoding, defaulting, validation, NewFramework's
checks), into the profiles kschedx runs. Any error is one InputError naming
the file and the field path, with upstream's text."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import yaml

from ..errors import InputError
from .defaults import PLUGINS_WITH_ARGS, _plugin_args_functions, default_configuration
from .fielderr import aggregate
from .schema import API_VERSION, CONFIGURATION, KIND, PLUGIN_ARGS, StrictDecoder
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


@dataclass
class SchedulerConfig:
    """A decoded, defaulted, validated KubeSchedulerConfiguration."""

    source: str
    profiles: list  # ProfilePlan, in configuration order
    # Global percentageOfNodesToScore after defaulting (0: upstream's adaptive
    # default); each profile's own value is ProfilePlan.percentage_of_nodes_to_score.
    percentage_of_nodes_to_score: int | None
    extenders: list  # defaulted v1 Extender dicts
    document: dict  # the defaulted v1 document
    warnings: list = field(default_factory=list)
    skip_extenders: bool = False  # --skip-extenders: listed in notEvaluated, never called

    def profile_for(self, scheduler_name: str | None):
        for plan in self.profiles:
            if plan.name == scheduler_name:
                return plan
        return None

    @property
    def scheduler_names(self) -> list[str]:
        return [p.name for p in self.profiles]


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


def load_config(path: str, *, allow_unknown_plugins: bool = False) -> SchedulerConfig:
    text, source = read_config_text(path)
    return parse_config(text, source, allow_unknown_plugins=allow_unknown_plugins)


def parse_config(text: str, source: str = "<config>", *, allow_unknown_plugins: bool = False) -> SchedulerConfig:
    from ..framework.profile import ProfileError, plan_profile
    from ..framework.registry import EntryPointError

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
        fail(f'no kind "{kind}" is registered for version "{api_version}": kube-scheduler v1.35 reads '
             f"apiVersion {API_VERSION}, kind {KIND}")
    decode_strict(raw, fail)
    warnings = [f"{source}: {name} is ignored: {why}" for name, why in IGNORED_FIELDS.items() if name in raw]
    cfg = default_configuration(raw)
    errors = validate_configuration(cfg)
    if errors:
        fail(aggregate(errors))
    _extender_ignored_resources(cfg, fail)
    plans = []
    for prof in cfg["profiles"]:
        try:
            plan = plan_profile(prof, allow_unknown=allow_unknown_plugins)
        except EntryPointError as e:
            fail(str(e))
        except ProfileError as e:
            hint = ""
            if "does not exist" in str(e):
                hint = (" (not a kube-scheduler v1.35 in-tree plugin, and no installed package registers it "
                        "under the kschedx.plugins entry-point group; --allow-unknown-plugins skips it)")
            fail(f"{e}{hint}")
        plan.source = source
        _check_plugin_args(plan, fail)
        if plan.unknown:
            warnings.append(f"{source}: profile {plan.name}: plugins kschedx does not have are not evaluated: "
                            + ", ".join(plan.unknown))
        for stand_in in plan.stand_ins:
            kind = {"PrioritySort": "queue sort", "DefaultBinder": "bind"}[stand_in]
            warnings.append(f"{source}: profile {plan.name}: no {kind} plugin is left once those are left out: "
                            f"{stand_in} stands in")
        plans.append(plan)
    return SchedulerConfig(source, plans, cfg["percentageOfNodesToScore"], cfg["extenders"], cfg, warnings)


def decode_strict(raw: dict, fail) -> None:
    """Unknown fields and values of the wrong type, in the document and in
    the args of in-tree plugins, as the strict codec reports them."""
    dec = StrictDecoder()
    dec.walk(raw, CONFIGURATION, "")
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
        pc = next((pc for pc in prof.get("pluginConfig") or () if pc.get("name") == "NodeResourcesFit"), None)
        if pc is None:
            fail("couldn't create scheduler: can't find NodeResourcesFitArgs in plugin config")
        pc["args"] = dict(pc.get("args") or {}, ignoredResources=list(ignored))


def _check_plugin_args(plan, fail) -> None:
    """Errors a plugin's New gives for its args (NodeResourcesFit validates
    its own: validatePluginConfig does not)."""
    _, validate_args = _plugin_args_functions()
    name = "NodeResourcesFit"
    if name in plan.plugin_names() and name in PLUGINS_WITH_ARGS:
        errs = validate_args(name, plan.args.get(name) or {}, "")
        if errs:
            text = errs[0] if len(errs) == 1 and errs[0].startswith("initializing plugin ") else (
                f'initializing plugin "{name}": ' + aggregate([e.lstrip(".") for e in errs]))
            fail(f"creating profile for scheduler name {plan.name}: {text}")
