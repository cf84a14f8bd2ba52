"""A scheduling profile: which plugins run at each extension point, in which
order, with which score weights and args.

`plan_profile` is NewFramework's construction (framework/runtime/framework.go)
on a defaulted v1 profile, as the chosen version does it: per-point lists
(updatePluginList), the MultiPoint expansion (expandMultiPointPlugins:
per-point overrides first, then MultiPoint plugins, then the rest of the
per-point list; a point with `*` disabled gets no MultiPoint plugin) and the
score weights (getScoreWeights: a per-point Score weight beats the MultiPoint
one, unset or 0 is 1). 1.36 adds the placement points (at most one
PlacementGenerate plugin, PlacementScore weights), which kschedx plans and
checks but never runs: they score pod groups' placements, not a pod. `Profile` instantiates the plan's plugins for one run. A plugin
whose module kschedx does not have yet is reported as not evaluated, never
assumed to pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ..config import names
from ..features import Features, default_features
from .interface import MAX_NODE_SCORE
from .registry import POINT_METHODS, POINT_TYPES, in_tree, registry_for

PROFILE_NAME = "default-scheduler"
MAX_TOTAL_SCORE = 2 ** 63 - 1  # framework.MaxTotalScore (math.MaxInt64)


@dataclass(frozen=True)
class PluginSpec:
    name: str
    module: str  # kschedx.plugins.<module>
    weight: int = 0  # score weight; 0 = upstream default of 1 for score plugins


def default_plugins(features: Features | None = None) -> tuple[PluginSpec, ...]:
    """The default profile's MultiPoint list at the features' version and
    gates (apis/config/v1/default_plugins.go: getDefaultPlugins with
    applyFeatureGates)."""
    from ..config.defaults import default_multi_point

    features = features or default_features()
    registry = in_tree(features)
    return tuple(PluginSpec(n, registry[n].module, w or 0) for n, w in default_multi_point(features))


# getExtensionPoints order: the order NewFramework fills (and checks) them.
FRAMEWORK_POINTS = ("preFilter", "filter", "postFilter", "reserve", "preScore", "score", "preBind", "bind",
                    "postBind", "permit", "preEnqueue", "queueSort", "placementGenerate", "placementScore",
                    "podGroupPostFilter")


def framework_points(features: Features) -> tuple[str, ...]:
    """The points NewFramework fills at the features' version (placement
    points from 1.36, the pod group PostFilter from 1.37)."""
    if features.pod_group_post_filter_point:
        return FRAMEWORK_POINTS
    return FRAMEWORK_POINTS[:-1] if features.placement_extension_points else FRAMEWORK_POINTS[:-3]


class ProfileError(Exception):
    """The profile cannot be built (NewFramework's error)."""


@dataclass
class ProfilePlan:
    """What NewFramework makes of one profile, before any plugin exists."""

    name: str
    points: dict  # upstream point -> [plugin name] in run order
    weights: dict  # score plugin -> weight
    args: dict  # plugin -> args (defaulted v1 dict) or None
    registry: dict
    percentage_of_nodes_to_score: int | None = None
    unknown: list = field(default_factory=list)  # plugins left out by --allow-unknown-plugins
    order: list = field(default_factory=list)  # configuration order: MultiPoint first
    source: str | None = None  # the configuration file, for errors raised when plugins are built
    stand_ins: list = field(default_factory=list)  # in-tree plugins standing in for left-out ones
    features: Features | None = None  # the version and gates the profile was planned for
    placement_weights: dict = field(default_factory=dict)  # PlacementScore plugin -> weight (1.36)

    def plugin_names(self) -> list[str]:
        """Every plugin that runs somewhere, once, in configuration order."""
        used = {n for names in self.points.values() for n in names}
        return [n for n in self.order if n in used]


def _enabled(plugins: dict, point: str) -> list[dict]:
    return (plugins.get(point) or {}).get("enabled") or []


def plan_profile(profile: dict, *, allow_unknown: bool = False, features: Features | None = None) -> ProfilePlan:
    """NewFramework on a defaulted v1 profile at the features' version (the
    newest by default); ProfileError with upstream's text."""
    features = features or default_features()
    name = profile.get("schedulerName") or PROFILE_NAME
    plugins = profile.get("plugins") or {}
    points_here = framework_points(features)
    needed = {p["name"] for point in ("multiPoint", *points_here) for p in _enabled(plugins, point)}
    registry = registry_for(needed, features)
    unknown = sorted(n for n in needed if n not in registry)
    if unknown and allow_unknown:
        plugins = {point: {"enabled": [p for p in (s.get("enabled") or []) if p["name"] in registry],
                           "disabled": s.get("disabled") or []}
                   for point, s in plugins.items()}
    try:
        points = _points(plugins, registry, points_here)
    except ProfileError as e:
        raise ProfileError(f"creating profile for scheduler name {name}: {e}") from None
    stand_ins = []
    if unknown and allow_unknown:
        # A left-out plugin was perhaps the profile's queue sort or binder
        # (Coscheduling replaces PrioritySort): the in-tree one stands in, so
        # that the rest of the profile can still be evaluated.
        for point, default in (("queueSort", names.PrioritySort), ("bind", names.DefaultBinder)):
            if not points[point]:
                points[point] = [default]
                stand_ins.append(default)
    if len(points["queueSort"]) != 1:
        raise ProfileError(f"creating profile for scheduler name {name}: only one queue sort plugin required for "
                           f'profile with scheduler name "{name}", but got {len(points["queueSort"])}')
    if not points["bind"]:
        raise ProfileError(f"creating profile for scheduler name {name}: at least one bind plugin is needed for "
                           f'profile with scheduler name "{name}"')
    placement = features.placement_extension_points
    if placement and len(points["placementGenerate"]) > 1:
        raise ProfileError(f"creating profile for scheduler name {name}: at most one placement generate plugin is "
                           f'allowed for profile with scheduler name "{name}"')
    try:
        weights = _score_weights(_enabled(plugins, "score") + _enabled(plugins, "multiPoint"), registry, "score")
    except ProfileError as e:
        # 1.36 names the kind of weights (NewFramework wraps getValidScoreWeights' error).
        raise ProfileError(f"creating profile for scheduler name {name}: "
                           + ("score plugins: " if placement else "") + str(e)) from None
    placement_weights = {}
    if placement:
        try:
            placement_weights = _score_weights(_enabled(plugins, "placementScore") + _enabled(plugins, "multiPoint"),
                                               registry, "placementScore")
        except ProfileError as e:
            raise ProfileError(f"creating profile for scheduler name {name}: placement score plugins: {e}") from None
    args = {pc["name"]: pc.get("args") for pc in profile.get("pluginConfig") or []}
    order = list(dict.fromkeys(p["name"] for point in ("multiPoint", *schema_points(features))
                               for p in _enabled(plugins, point)))
    order += [n for n in stand_ins if n not in order]
    return ProfilePlan(name, points, weights, args, registry, profile.get("percentageOfNodesToScore"),
                       unknown if allow_unknown else [], order, stand_ins=stand_ins, features=features,
                       placement_weights=placement_weights)


def _score_weights(enabled: list[dict], registry: dict, point: str) -> dict:
    """getValidScoreWeights: the weights of the plugins implementing the
    point, a per-point weight before the MultiPoint one, unset or 0 read as
    1; ProfileError when their total could overflow.

    The running total and the headroom left are int64 in kube-scheduler and
    validation puts no lower bound on a weight: once a negative weight lowers
    the total, MaxTotalScore minus it wraps to a negative number, so every
    later Score plugin "could overflow" while a negative weight on the last
    one is accepted. Python ints do not wrap, hence _int64."""
    weights = {}
    total = 0
    for p in enabled:
        if point not in registry[p["name"]].points or p["name"] in weights:
            continue
        weights[p["name"]] = p.get("weight") or 1
        product = _int64(weights[p["name"]] * MAX_NODE_SCORE)
        if product > _int64(MAX_TOTAL_SCORE - total):
            raise ProfileError("total score of Score plugins could overflow")
        total = _int64(total + product)
    return weights


def _int64(n: int) -> int:
    """n wrapped to a two's-complement int64, as Go's arithmetic does."""
    return (n + 2 ** 63) % 2 ** 64 - 2 ** 63


def schema_points(features: Features):
    from ..config.schema import extension_points

    return extension_points(features)


def _points(plugins: dict, registry: dict, framework_points: tuple[str, ...]) -> dict:
    points = {}
    for point in framework_points:
        kind = POINT_TYPES[point]
        names = []
        for p in _enabled(plugins, point):
            entry = registry.get(p["name"])
            if entry is None:
                raise ProfileError(f'{kind} "{p["name"]}" does not exist')
            if point not in entry.points:
                raise ProfileError(f'plugin "{p["name"]}" does not extend {kind} plugin')
            if p["name"] in names:
                raise ProfileError(f'plugin "{p["name"]}" already registered as "{kind}"')
            names.append(p["name"])
        points[point] = names
    multi = _enabled(plugins, "multiPoint")
    if not multi:
        return points
    for point in framework_points:
        kind = POINT_TYPES[point]
        enabled = points[point]
        disabled = {p["name"] for p in (plugins.get(point) or {}).get("disabled") or []}
        if "*" in disabled:
            continue
        from_multi: list[str] = []
        overrides: set[str] = set()
        for p in multi:
            entry = registry.get(p["name"])
            if entry is None:
                raise ProfileError(f'{kind} "{p["name"]}" does not exist')
            if point not in entry.points or p["name"] in disabled:
                continue
            if p["name"] in enabled:
                overrides.add(p["name"])
                continue
            if p["name"] in from_multi:
                raise ProfileError(f'plugin "{p["name"]}" already registered as "{kind}"')
            from_multi.append(p["name"])
        first = [n for n in enabled if n in overrides]
        rest = [n for n in enabled if n not in overrides]
        points[point] = first + from_multi + rest
    return points


@lru_cache(maxsize=8)
def default_plan(features: Features | None = None) -> ProfilePlan:
    """The plan of the default profile (no --config) at the features'
    version and gates (the newest version's defaults when None)."""
    from ..config.defaults import default_configuration

    features = features or default_features()
    return plan_profile(default_configuration({}, features)["profiles"][0], features=features)


def load_plugin_class(spec: PluginSpec, features: Features | None = None):
    """The plugin class, or None when kschedx does not implement it yet."""
    registry = in_tree(features or default_features())
    return registry[spec.name].load() if spec.name in registry else None


# Methods of an out-of-tree plugin whose exceptions become the plugin's error.
_GUARDED = ("pre_enqueue", "less", "pre_filter", "filter", "filter_all", "post_filter", "pre_score", "normalize_score",
            "normalize_all", "reserve", "unreserve", "bind")


def _new_out_of_tree(cls, handle, args, name: str, plan: ProfilePlan):
    """A plugin of another distribution, built as NewFramework builds one (an
    exception from its constructor is the factory's error: the configuration
    is rejected, exit 3) and guarded: an exception from one of its extension
    points is that plugin's Error for the pod, not a crash of kschedx."""
    from ..util.errors import InputError

    try:
        plugin = cls(handle, {} if args is None else args)
    except Exception as exc:
        raise InputError(f'creating profile for scheduler name {plan.name}: initializing plugin "{name}": {exc}',
                         source=plan.source) from None
    for method in _GUARDED:
        bound = getattr(plugin, method, None)
        if callable(bound):
            setattr(plugin, method, _guard(bound, name, method))
    details = plugin.score_details

    def guarded_details(*args):
        # An explanation only: one that fails is left out, the verdict stands.
        try:
            return details(*args)
        except Exception:
            return None

    plugin.score_details = guarded_details
    details_all = getattr(plugin, "score_details_all", None)
    if callable(details_all):
        def guarded_details_all(state, pod_info, nodes):
            try:
                out = list(details_all(state, pod_info, nodes))
            except Exception:
                out = None
            if out is None or len(out) != len(nodes):
                return [guarded_details(state, pod_info, ni) for ni in nodes]
            return out

        plugin.score_details_all = guarded_details_all
    extensions = plugin.pre_filter_extensions

    def guarded_extensions():
        ext = extensions()
        return None if ext is None else _GuardedExtensions(ext, name)

    plugin.pre_filter_extensions = _guard(guarded_extensions, name, "pre_filter_extensions")
    for method in ("score", "score_all"):
        bound = getattr(plugin, method, None)
        if callable(bound):
            setattr(plugin, method, _guard(bound, name, method, integers=method == "score_all", integer=method == "score"))
    return plugin


def _guard(bound, plugin: str, method: str, *, integer: bool = False, integers: bool = False):
    from .interface import PluginError

    def call(*args, **kwargs):
        try:
            out = bound(*args, **kwargs)
        except PluginError:
            raise
        except Exception as exc:
            raise PluginError(f"plugin {plugin} raised {type(exc).__name__} in {method}: {exc}") from None
        if (integer and not _is_int(out)) or (integers and out is not None and not all(map(_is_int, out))):
            raise PluginError(f"plugin {plugin}: {method} must give integer scores, got {out!r}")
        return out

    return call


class _GuardedExtensions:
    """An out-of-tree plugin's PreFilterExtensions, guarded like its methods."""

    def __init__(self, ext, plugin: str):
        self.add_pod = _guard(ext.add_pod, plugin, "add_pod")
        self.remove_pod = _guard(ext.remove_pod, plugin, "remove_pod")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


class Profile:
    """Plugins instantiated for one run, grouped by extension point in order."""

    def __init__(self, handle, plugin_args: dict | None = None, plan: ProfilePlan | None = None):
        plan = plan or default_plan(getattr(handle, "features", None))
        self.plan = plan
        self.name = plan.name
        self.plugins = []
        self.not_evaluated: list[str] = list(plan.unknown)
        self.weights: dict[str, int] = dict(plan.weights)
        plugin_args = plugin_args or {}
        cluster = getattr(handle, "cluster", None)
        # Kinds the cluster would not let us read: the plugins that read one
        # (their declarations say) run without it.
        unreadable = cluster.unreadable_kinds.keys() if cluster is not None else ()
        features = plan.features or getattr(handle, "features", None) or default_features()
        by_name = {}
        for name in plan.plugin_names():
            cls = plan.registry[name].load()
            if cls is None:
                self.not_evaluated.append(name)
                continue
            args = plugin_args[name] if name in plugin_args else plan.args.get(name)
            if plan.registry[name].loader is None:
                plugin = cls(handle, args)
            else:
                plugin = _new_out_of_tree(cls, handle, args, name, plan)
            missing_input = bool(unreadable) and bool(plan.registry[name].kinds_read(features) & unreadable)
            if not getattr(plugin, "complete", True) or missing_input:
                # Partly implemented (runs its fast paths only), or without a kind
                # it reads: it runs, but its verdicts may not be upstream's.
                self.not_evaluated.append(name)
            self.plugins.append(plugin)
            by_name[name] = plugin
        self.by_name = by_name

        def points(point):
            method = POINT_METHODS[point]
            return [by_name[n] for n in plan.points[point] if n in by_name and by_name[n].implements(method)]

        self.pre_enqueue = points("preEnqueue")
        self.queue_sort = points("queueSort")
        self.pre_filter = points("preFilter")
        self.filter = points("filter")
        self.post_filter = points("postFilter")
        self.pre_score = points("preScore")
        self.score = points("score")
        self.reserve = points("reserve")
        self.bind = points("bind")
