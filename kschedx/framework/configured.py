"""A scheduler configuration file read and checked, and its profiles planned
as NewFramework plans them (config/load.py decodes, defaults and validates
the document; profile.py plans each profile)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config import names
from ..config.defaults import _plugin_args_functions
from ..config.schema import PLUGINS_WITH_ARGS
from ..config.fielderr import aggregate
from ..config.load import decode_config, read_config_text
from ..features import Features, default_features
from ..util.errors import InputError
from .profile import ProfileError, plan_profile
from .registry import EntryPointError


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
    features: Features | None = None  # the version and gates it was decoded, defaulted and planned for

    def profile_for(self, scheduler_name: str | None):
        for plan in self.profiles:
            if plan.name == scheduler_name:
                return plan
        return None

    @property
    def scheduler_names(self) -> list[str]:
        return [p.name for p in self.profiles]


def load_config(path: str, *, allow_unknown_plugins: bool = False,
                features: Features | None = None) -> SchedulerConfig:
    """The configuration file read as the features' version reads it (the
    newest version's defaults when None)."""
    text, source = read_config_text(path)
    return parse_config(text, source, allow_unknown_plugins=allow_unknown_plugins, features=features)


def parse_config(text: str, source: str = "<config>", *, allow_unknown_plugins: bool = False,
                 features: Features | None = None) -> SchedulerConfig:
    features = features or default_features()

    def fail(message: str):
        raise InputError(message, source=source)

    cfg, warnings = decode_config(text, source, features)
    plans = []
    for prof in cfg["profiles"]:
        try:
            plan = plan_profile(prof, allow_unknown=allow_unknown_plugins, features=features)
        except EntryPointError as e:
            fail(str(e))
        except ProfileError as e:
            hint = ""
            if "does not exist" in str(e):
                hint = (f" (not a kube-scheduler v{features.version} in-tree plugin, and no installed package registers it "
                        "under the kschedx.plugins entry-point group; --allow-unknown-plugins skips it)")
            fail(f"{e}{hint}")
        plan.source = source
        _check_plugin_args(plan, fail, features)
        if plan.unknown:
            warnings.append(f"{source}: profile {plan.name}: plugins kschedx does not have are not evaluated: "
                            + ", ".join(plan.unknown))
        for stand_in in plan.stand_ins:
            kind = {names.PrioritySort: "queue sort", names.DefaultBinder: "bind"}[stand_in]
            warnings.append(f"{source}: profile {plan.name}: no {kind} plugin is left once those are left out: "
                            f"{stand_in} stands in")
        plans.append(plan)
    return SchedulerConfig(source, plans, cfg["percentageOfNodesToScore"], cfg["extenders"], cfg, warnings,
                           features=features)




def _check_plugin_args(plan, fail, features: Features) -> None:
    """Errors a plugin's New gives for its args (NodeResourcesFit validates
    its own: validatePluginConfig does not)."""
    _, validate_args = _plugin_args_functions()
    name = names.NodeResourcesFit
    if name in plan.plugin_names() and name in PLUGINS_WITH_ARGS:
        errs = validate_args(name, plan.args.get(name) or {}, "", features)
        if errs:
            text = errs[0] if len(errs) == 1 and errs[0].startswith("initializing plugin ") else (
                f'initializing plugin "{name}": ' + aggregate([e.lstrip(".") for e in errs]))
            fail(f"creating profile for scheduler name {plan.name}: {text}")
