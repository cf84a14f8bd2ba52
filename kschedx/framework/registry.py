"""The plugin registry: kschedx's in-tree plugins (upstream's NewInTreeRegistry,
made from the plugins' declarations, plugins/registry.py) and plugins of
other packages, registered through the `kschedx.plugins` entry-point group.

A registry entry knows which upstream extension points a plugin implements,
so that a configuration is checked as NewFramework checks it (a plugin named
at a point it does not extend is an error) even at points kschedx does not
run offline (Permit, PreBind, PostBind).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache

from .declaration import Declaration

ENTRY_POINT_GROUP = "kschedx.plugins"

# Upstream extension point -> kschedx method that implements it.
POINT_METHODS = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "less",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    "placementGenerate": "placement_generate",
    "placementScore": "placement_score",
    "podGroupPostFilter": "pod_group_post_filter",
}
# The Go interface named in NewFramework's errors.
POINT_TYPES = {
    "preEnqueue": "PreEnqueuePlugin", "queueSort": "QueueSortPlugin", "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin", "postFilter": "PostFilterPlugin", "preScore": "PreScorePlugin",
    "score": "ScorePlugin", "reserve": "ReservePlugin", "permit": "PermitPlugin", "preBind": "PreBindPlugin",
    "bind": "BindPlugin", "postBind": "PostBindPlugin", "placementGenerate": "PlacementGeneratePlugin",
    "placementScore": "PlacementScorePlugin", "podGroupPostFilter": "PodGroupPostFilterPlugin",
}


@dataclass(frozen=True)
class Entry:
    name: str
    module: str  # the plugin class's module (out-of-tree: the entry point's value)
    points: frozenset  # upstream extension points the plugin implements
    loader: object = None  # an entry point (out-of-tree plugins)
    declaration: Declaration | None = None  # in-tree plugins

    def load(self):
        """The plugin class, or None when kschedx does not implement it."""
        if self.loader is not None:
            return self.loader.load()
        return self.declaration.factory

    def kinds_read(self, features) -> frozenset:
        """The kinds of objects the plugin reads besides pods and nodes
        (out-of-tree plugins do not say)."""
        return self.declaration.kinds_read(features) if self.declaration is not None else frozenset()


# The module holding the in-tree plugins' declarations, loaded by name: the
# framework sits below the plugins (as entry points are loaded by name).
IN_TREE_MODULE = "kschedx.plugins.registry"


def in_tree_declarations() -> tuple[Declaration, ...]:
    return importlib.import_module(IN_TREE_MODULE).IN_TREE


def all_in_tree_names() -> frozenset:
    """Every in-tree plugin's name, whatever the version."""
    return frozenset(d.name for d in in_tree_declarations())


@lru_cache(maxsize=None)
def in_tree(features) -> dict[str, Entry]:
    """NewInTreeRegistry of the features' version, from the plugins'
    declarations, each checked against its class (DeclarationError when a
    declared extension point is not implemented or an implemented one not
    declared). A plugin kschedx does not implement is registered all the
    same, and reported as not evaluated when it runs."""
    reg = {}
    for d in in_tree_declarations():
        if not d.registered(features):
            continue
        d.check(POINT_METHODS, features)
        module = d.factory.__module__ if d.factory is not None else ""
        reg[d.name] = Entry(d.name, module, d.points_for(features), declaration=d)
    return reg


class EntryPointError(Exception):
    """A plugin registered under `kschedx.plugins` cannot be used."""


def entry_point_entries(names=None, in_tree_names=None) -> dict[str, Entry]:
    """Plugins other distributions register under `kschedx.plugins` (entry
    point name = plugin name, value = module:Class); only those in `names`
    are imported (all when None). In-tree plugins are not replaced, and of
    two distributions registering one name the first found wins."""
    from importlib.metadata import entry_points

    in_tree_names = in_tree_names if in_tree_names is not None else all_in_tree_names()
    out = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in in_tree_names or ep.name in out or (names is not None and ep.name not in names):
            continue
        cls = _load_plugin_class(ep)
        points = frozenset(p for p, m in POINT_METHODS.items() if callable(getattr(cls, m, None)))
        out[ep.name] = Entry(ep.name, ep.value, points, _Loaded(cls))
    return out


def _load_plugin_class(ep):
    """The class an entry point names, checked against the plugin interface."""
    from .interface import Plugin

    dist = getattr(ep, "dist", None)
    origin = f"{ENTRY_POINT_GROUP} entry point {ep.name} = {ep.value}" + (
        f" of {dist.metadata['Name']} {dist.version}" if dist is not None else "")
    try:
        cls = ep.load()
    except Exception as exc:  # a broken third-party package: say which, never a traceback
        raise EntryPointError(f"plugin {ep.name!r} cannot be loaded ({origin}): {type(exc).__name__}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Plugin)):
        raise EntryPointError(f"plugin {ep.name!r} ({origin}) is not a subclass of "
                              "kschedx.framework.interface.Plugin")
    if cls.name != ep.name:
        raise EntryPointError(f"plugin {ep.name!r} ({origin}) is named {cls.name!r}: its class's `name` must be "
                              "its entry-point name")
    return cls


class _Loaded:
    """An entry point's class, already loaded and checked."""

    def __init__(self, cls):
        self.cls = cls

    def load(self):
        return self.cls


def registry_for(names, features) -> dict[str, Entry]:
    """The registry a configuration naming `names` needs: the in-tree plugins
    of the features' version, and entry points only when some name is not
    in-tree (scanning installed distributions costs time a default run
    should not pay)."""
    reg = dict(in_tree(features))
    if any(n not in reg for n in names):
        reg.update(entry_point_entries({n for n in names if n not in reg}, frozenset(reg)))
    return reg
