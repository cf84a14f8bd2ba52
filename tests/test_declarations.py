"""The plugins' declarations (framework/declaration.py, next to each plugin,
gathered by plugins/registry.py) are the one place a plugin's knowledge is
written: its name in config/names.py only, its extension points checked
against its class when the registry is built, the gates it reads, the
kinds it reads, its events. What is derived from them is tested where it
is used (tests/test_triggers.py, tests/test_cluster_commands.py,
tests/test_render_details.py); here, that the declarations say the truth."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kschedx.config import names
from kschedx.features import default_features
from kschedx.features.features import FIELDS
from kschedx.features.versions import SUPPORTED_VERSIONS, gate_table
from kschedx.framework import registry
from kschedx.framework.declaration import Declaration, DeclarationError, reads
from kschedx.framework.events import ActionType, Register
from kschedx.framework.interface import Plugin
from kschedx.plugins import registry as in_tree
from kschedx.sources.kinds import KINDS

PACKAGE = Path(__file__).resolve().parent.parent / "kschedx"
VERSIONS = SUPPORTED_VERSIONS

# String literals equal to a plugin's name that name something else.
NOT_PLUGIN_NAMES = {
    ("config", "schema.py"): {"NodeAffinity"},  # core/v1's NodeAffinity type, in decoding errors
}


def _string_literals(path: Path):
    """The module's string literals, but those that name something else:
    `__all__`'s (Python names of the module's attributes: a class may be
    named as its plugin is) and feature gates' (a gate= or gates= argument,
    a ..._GATES constant: NodeDeclaredFeatures and GangScheduling are gates
    too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    other = set()
    for node in ast.walk(tree):
        values = []
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and (t.id == "__all__" or t.id.endswith("GATES"))
                                                for t in node.targets):
            values.append(node.value)
        if isinstance(node, ast.keyword) and node.arg in ("gate", "gates"):
            values.append(node.value)
        other |= {id(n) for v in values for n in ast.walk(v)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in other:
            yield node.lineno, node.value


def test_a_plugins_name_is_spelled_only_in_the_names_module():
    """Everything else refers to names.X (or the declaration). features/
    spells gates, some of which share a plugin's name."""
    plugin_names = set(names.ALL)
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "features" or rel == Path("config/names.py"):
            continue
        allowed = NOT_PLUGIN_NAMES.get(rel.parts[-2:] if len(rel.parts) > 1 else rel.parts, set())
        found += [f"{rel}:{line}: {value!r}" for line, value in _string_literals(path)
                  if value in plugin_names and value not in allowed]
    assert found == []


def test_the_names_module_names_every_declared_plugin():
    assert set(names.ALL) == {d.name for d in in_tree.IN_TREE}
    assert len(in_tree.IN_TREE) == len(in_tree.BY_NAME)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_registry_is_the_declarations(version):
    """NewInTreeRegistry of each version: the declared points at its minor,
    the class each declaration names."""
    features = default_features(version)
    reg = registry.in_tree(features)
    assert list(reg) == [d.name for d in in_tree.IN_TREE if d.registered(features)]
    for name, entry in reg.items():
        d = in_tree.BY_NAME[name]
        assert entry.points == d.points_for(features)
        assert entry.load() is d.factory
        if d.factory is not None:
            assert d.factory.name == name
    assert ("placementScore" in reg[names.NodeResourcesFit].points) == features.at_least("1.36")
    assert ("reserve" in reg[names.GangScheduling].points) == (version == "1.35")


class _Filtering(Plugin):
    name = "Filtering"

    def filter(self, state, pod_info, node_info):
        return None


def test_a_declared_point_not_implemented_fails_loudly():
    d = Declaration(name="Filtering", factory=_Filtering, points=frozenset({"filter", "score"}))
    with pytest.raises(DeclarationError, match=r"declares \['score'\] but does not implement them"):
        d.check(registry.POINT_METHODS, default_features())


def test_an_implemented_point_not_declared_fails_loudly():
    d = Declaration(name="Filtering", factory=_Filtering, points=frozenset({"preFilter"}))
    with pytest.raises(DeclarationError, match=r"implements \['filter'\] but does not declare them"):
        d.check(registry.POINT_METHODS, default_features())


def test_points_kschedx_does_not_run_need_no_method():
    """Permit, PreBind... are declared (configurations are checked against
    them) without a method; any other point kschedx does not run for a
    plugin is declared so, with the reason at the declaration."""
    Declaration(name="Filtering", factory=_Filtering, points=frozenset({"filter", "preBind"})).check(
        registry.POINT_METHODS, default_features())
    Declaration(name="Filtering", factory=_Filtering, points=frozenset({"filter", "preEnqueue"}),
                not_run=frozenset({"preEnqueue"})).check(registry.POINT_METHODS, default_features())


def test_the_registry_is_checked_when_built(monkeypatch):
    bad = Declaration(name="Filtering", factory=_Filtering, points=frozenset({"score"}))
    monkeypatch.setattr(in_tree, "IN_TREE", in_tree.IN_TREE + (bad,))
    registry.in_tree.cache_clear()
    try:
        with pytest.raises(DeclarationError, match="plugin Filtering"):
            registry.in_tree(default_features("1.35"))
    finally:
        registry.in_tree.cache_clear()


def test_a_declaration_says_its_class_and_its_gates():
    with pytest.raises(DeclarationError, match="is named 'Filtering'"):
        Declaration(name="Other", factory=_Filtering, points=frozenset({"filter"}))
    with pytest.raises(DeclarationError, match="gate DRAExtendedResource"):
        Declaration(name="Filtering", factory=_Filtering, points=frozenset({"filter"}),
                    events=(Register("DeviceClass", ActionType.Add, gate="DRAExtendedResource"),))
    with pytest.raises(DeclarationError, match="no pod trait"):
        Declaration(name="Filtering", factory=_Filtering, points=frozenset({"filter"}),
                    reads=(reads("Namespace", pods=("withLabels",)),))


# ---- gates ------------------------------------------------------------------------------------


def _gates_read(path: Path) -> set[str]:
    """The feature gates a module reads: Features fields (FIELDS maps each to
    its gate) and enabled("Gate")."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in FIELDS:
            out.add(FIELDS[node.attr])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "enabled" \
                and node.args and isinstance(node.args[0], ast.Constant):
            out.add(node.args[0].value)
    return out


def _declarations_of(path: Path) -> list[Declaration]:
    """The declarations a plugin module answers for: its own, or, for a
    module of a plugin package, every declaration of the package."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    own = [d for d in in_tree.IN_TREE if d.factory is not None and d.factory.__module__ == module]
    if own:
        return own
    package = module.rpartition(".")[0]
    return [d for d in in_tree.IN_TREE if d.factory is not None and d.factory.__module__.startswith(package + ".")]


def test_a_gate_a_plugin_reads_is_declared_by_it():
    missing = []
    for path in sorted((PACKAGE / "plugins").rglob("*.py")):
        gates = _gates_read(path)
        if not gates:
            continue
        declared = set().union(*(d.gates for d in _declarations_of(path)))
        assert _declarations_of(path), f"{path}: reads gates {sorted(gates)} but answers for no plugin"
        missing += [f"{path.relative_to(PACKAGE)}: {g}" for g in sorted(gates - declared)]
    assert missing == []


def test_a_gate_read_outside_the_plugins_is_the_schedulers_or_a_plugins():
    """config/pluginargs.py reads the gates of plugins' args (declared by
    those plugins); the default profile and the cache read the scheduler's."""
    everywhere = in_tree.gates_read()
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in ("plugins", "features"):
            continue
        missing += [f"{rel}: {g}" for g in sorted(_gates_read(path) - everywhere)]
    assert missing == []


def test_every_declared_gate_exists_in_some_version():
    known = set().union(*(gate_table(v)[0] for v in VERSIONS))
    assert sorted(in_tree.gates_read() - known) == []


def test_the_scheduler_gates_are_read_outside_the_plugins():
    """SCHEDULER_GATES lists no gate that nothing outside the plugins reads."""
    read = set()
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] not in ("plugins", "features"):
            read |= _gates_read(path)
    assert in_tree.SCHEDULER_GATES <= read


# ---- kinds and events -------------------------------------------------------------------------


def test_events_and_reads_name_kinds_kschedx_knows():
    """Every kind a declaration reads or registers events of is a kind a live
    read lists or a fixture may hold; the workload API's (GangScheduling,
    not implemented) excepted."""
    from kschedx.state.cluster import _INDEXED_KINDS

    known = {k.kind for k in KINDS} | set(_INDEXED_KINDS)
    for d in in_tree.IN_TREE:
        resources = {e.resource for e in d.events} | {k for r in d.reads for k in r.kinds}
        if d.factory is None:
            continue
        assert resources <= known, (d.name, sorted(resources - known))


def test_the_unreadable_warning_names_the_readers():
    from kschedx.commands.load import unreadable_warning

    assert unreadable_warning("StorageClass", "forbidden") == (
        "StorageClass objects could not be read (forbidden): NodeVolumeLimits, VolumeBinding, VolumeZone are listed "
        "in notEvaluated")
    assert unreadable_warning("PriorityClass", "forbidden") == (
        "PriorityClass objects could not be read (forbidden): results ignore them")


@pytest.mark.parametrize("version", VERSIONS)
def test_the_default_profile_and_plugin_args_name_declared_plugins(version):
    """config/ lists plugins by their names.X constants (upstream's
    default_plugins.go, the args types): each is a plugin the version
    registers."""
    from kschedx.config.defaults import default_multi_point
    from kschedx.config.schema import PLUGINS_WITH_ARGS

    features = default_features(version)
    registered = in_tree.declarations(features)
    assert {n for n, _ in default_multi_point(features)} <= set(registered)
    assert set(PLUGINS_WITH_ARGS) <= set(registered)
