"""Versions and feature gates (kschedx/features): each version's gate table,
--feature-gates read and checked as kube-scheduler does (component-base
featuregate: TestFeatureGateFlag, TestFeatureGateSetFromMap, the dependency
checks), the version read from a flag or a server, and the default plugins
each version and its gates give (default_plugins_test.go TestApplyFeatureGates)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedx.config.defaults import default_multi_point
from kschedx.features import (
    NEWEST,
    SUPPORTED_VERSIONS,
    SWITCHES,
    FeatureGateError,
    Features,
    VersionError,
    default_features,
    parse_flag_values,
    parse_kube_version,
    server_minor,
    version_for_server,
)
from kschedx.features import v1_35, v1_36
from kschedx.features.features import FIELDS

MODULES = {"1.35": v1_35, "1.36": v1_36}


def error(version: str, *flags: str) -> str:
    with pytest.raises(FeatureGateError) as e:
        Features.from_flags(version, flags)
    return str(e.value)


# ---- the tables ---------------------------------------------------------------------------------


def test_every_version_has_a_table_and_every_switch():
    assert SUPPORTED_VERSIONS == ("1.35", "1.36") and NEWEST == "1.36"
    for version, module in MODULES.items():
        assert module.VERSION == version
        assert set(module.SWITCHES) == set(SWITCHES)
        for name, (stage, default, locked, since) in module.GATES.items():
            assert stage in ("Alpha", "Beta", "GA", "Deprecated") and isinstance(default, bool)
            assert isinstance(locked, bool) and since.count(".") == 1
        for gate, deps in module.DEPENDENCIES.items():
            assert gate in module.GATES and all(d in module.GATES for d in deps), gate


def test_the_default_gates_of_each_version_are_accepted():
    for version in SUPPORTED_VERSIONS:
        f = Features(version)
        assert f.changed_gates == {} and f.settings == {} and f.warnings == ()
        assert f.reference == MODULES[version].REFERENCE


@pytest.mark.parametrize("gate, v135, v136", [
    # kube-scheduler's gate table at each version (issue22 spec §1.2).
    ("DynamicResourceAllocation", True, True),
    ("DRAAdminAccess", True, True),
    ("DRAPrioritizedList", True, True),
    ("DRAConsumableCapacity", False, True),
    ("DRAPartitionableDevices", False, True),
    ("DRADeviceTaints", False, True),
    ("DRADeviceTaintRules", False, False),
    ("DRADeviceBindingConditions", False, True),
    ("DRAResourceClaimDeviceStatus", True, True),
    ("DRAExtendedResource", False, True),
    ("NodeDeclaredFeatures", False, True),
    ("InPlacePodLevelResourcesVerticalScaling", False, True),
    ("PodLevelResources", True, True),
    ("GangScheduling", False, False),
    ("StorageCapacityScoring", False, False),
    ("RestartAllContainersOnContainerExits", False, True),
])
def test_scheduler_gates_at_each_version(gate, v135, v136):
    assert default_features("1.35").enabled(gate) is v135
    assert default_features("1.36").enabled(gate) is v136


def test_fields_mirror_the_gates():
    f = Features("1.36")
    for field, gate in FIELDS.items():
        assert getattr(f, field) is f.enabled(gate), field
    assert f.enable_dra_consumable_capacity and not default_features("1.35").enable_dra_consumable_capacity
    # A gate 1.35 does not register reads False there.
    assert not default_features("1.35").known("DRAListTypeAttributes")
    assert not default_features("1.35").enable_dra_list_type_attributes


def test_switches_come_from_the_version_alone():
    old, new = default_features("1.35"), default_features("1.36")
    assert not old.balanced_allocation_scores_improvement and new.balanced_allocation_scores_improvement
    assert old.portworx_migration_needs_annotation and not new.portworx_migration_needs_annotation
    # Gates never move a switch.
    assert Features.from_flags("1.36", ["DRAPrioritizedList=false"]).switches == new.switches


def test_allocator_features():
    assert default_features("1.35").allocator_features == {"AdminAccess", "PrioritizedList"}
    assert default_features("1.36").allocator_features == {
        "AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints", "DeviceBindingAndStatus",
        "ConsumableCapacity"}


def test_features_are_values():
    a = Features.from_flags("1.35", ["NodeDeclaredFeatures=true"])
    b = Features("1.35", {"NodeDeclaredFeatures": True})
    assert a == b and hash(a) == hash(b) and a != Features("1.35")
    with pytest.raises(AttributeError):
        a.version = "1.36"


# ---- --feature-gates: syntax --------------------------------------------------------------------


@pytest.mark.parametrize("flags, want", [
    (["A=true,B=false"], {"A": True, "B": False}),
    (["A=true", "B=false"], {"A": True, "B": False}),  # repeated flags accumulate
    (["A=true,A=false"], {"A": False}),  # a later value wins
    ([" A = true ,, B=1"], {"A": True, "B": True}),  # spaces trimmed, empty pieces skipped
    (["kube:A=t,kube:B=F"], {"A": True, "B": False}),  # the component prefix
    (["A=True,B=FALSE,C=0,D=T"], {"A": True, "B": False, "C": False, "D": True}),  # strconv.ParseBool
    ([""], {}),
])
def test_flag_syntax(flags, want):
    assert parse_flag_values(flags) == want


@pytest.mark.parametrize("flags, message", [
    (["A"], "missing bool value for A"),
    (["A=yes"], 'invalid value of A=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'),
    (["A=true,kube:B=true"],
     "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use"),
    (["sample:A=true"], "component not registered: sample"),
])
def test_flag_syntax_errors(flags, message):
    with pytest.raises(FeatureGateError) as e:
        parse_flag_values(flags)
    assert str(e.value) == message


_NAME = st.from_regex(r"[A-Z][A-Za-z]{0,12}", fullmatch=True)


@given(st.dictionaries(_NAME, st.booleans(), max_size=6), st.integers(1, 3))
def test_flag_syntax_round_trip(settings, pieces):
    """However the pairs are split over flags, they read back as written."""
    pairs = [f"{k}={'true' if v else 'false'}" for k, v in settings.items()]
    flags = [",".join(pairs[i::pieces]) for i in range(pieces)]
    assert parse_flag_values(flags) == settings


# ---- --feature-gates: the version's table -------------------------------------------------------


def test_unknown_gate():
    assert error("1.36", "NoSuchGate=true") == "unrecognized feature gate: NoSuchGate"
    # Known to one version only.
    assert error("1.36", "CSIMigrationPortworx=true") == "unrecognized feature gate: CSIMigrationPortworx"
    assert error("1.35", "TopologyAwareWorkloadScheduling=true") == (
        "unrecognized feature gate: TopologyAwareWorkloadScheduling")
    Features.from_flags("1.35", ["CSIMigrationPortworx=true"])  # its locked default: accepted


def test_unknown_gate_stops_at_once_with_the_errors_so_far():
    assert error("1.36", "DynamicResourceAllocation=false,Nope=true,ImageVolume=false") == (
        "[cannot set feature gate DynamicResourceAllocation to false, feature is locked to true, "
        "unrecognized feature gate: Nope]")


def test_locked_gate():
    assert error("1.36", "DynamicResourceAllocation=false") == (
        "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true")
    # Locked from 1.36 only; GA in 1.36 but not locked: accepted with a warning.
    assert error("1.36", "DRAAdminAccess=false") == (
        "cannot set feature gate DRAAdminAccess to false, feature is locked to true")
    assert not Features.from_flags("1.35", ["DRAAdminAccess=false"]).enable_dra_admin_access
    f = Features.from_flags("1.36", ["DRAPrioritizedList=false"])
    assert not f.enable_dra_prioritized_list and "GA feature gate" in f.warnings[0]
    # Several locks: every one reported.
    assert error("1.36", "DynamicResourceAllocation=false,ImageVolume=false") == (
        "[cannot set feature gate DynamicResourceAllocation to false, feature is locked to true, "
        "cannot set feature gate ImageVolume to false, feature is locked to true]")


def test_dependencies():
    # 1.36: four default-on gates depend on NodeDeclaredFeatures.
    assert error("1.36", "NodeDeclaredFeatures=false") == (
        "[ExtendWebSocketsToKubelet is enabled, but depends on features that are disabled: [NodeDeclaredFeatures], "
        "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are disabled: "
        "[NodeDeclaredFeatures], InPlacePodVerticalScalingInitContainers is enabled, but depends on features that "
        "are disabled: [NodeDeclaredFeatures], RestartAllContainersOnContainerExits is enabled, but depends on "
        "features that are disabled: [NodeDeclaredFeatures]]")
    off = Features.from_flags("1.36", ["NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,"
                                       "InPlacePodLevelResourcesVerticalScaling=false,"
                                       "InPlacePodVerticalScalingInitContainers=false,"
                                       "RestartAllContainersOnContainerExits=false"])
    assert not off.enable_node_declared_features
    assert error("1.35", "GangScheduling=true") == (
        "GangScheduling is enabled, but depends on features that are disabled: [GenericWorkload]")
    assert error("1.36", "TopologyAwareWorkloadScheduling=true") == (
        "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]")
    assert error("1.36", "DRAResourceClaimDeviceStatus=false").startswith(
        "[DRADeviceBindingConditions is enabled, but depends on features that are disabled: "
        "[DRAResourceClaimDeviceStatus], ")
    # 1.35: NodeDeclaredFeatures' dependents are off.
    assert Features.from_flags("1.35", ["NodeDeclaredFeatures=true"]).changed_gates == {"NodeDeclaredFeatures": True}


def test_all_alpha_and_all_beta():
    f = Features.from_flags("1.35", ["AllAlpha=true,VolumeLimitScaling=false"])
    assert f.enable_gang_scheduling and f.enable_dra_consumable_capacity and f.enable_node_declared_features
    assert not f.enable_volume_limit_scaling  # an explicit value wins
    assert f.enable_dynamic_resource_allocation and f.enable_sidecar_containers  # GA gates are not touched
    g = Features.from_flags("1.35", ["AllBeta=false"])
    assert not g.enable_dra_prioritized_list and not g.enable_pod_level_resources
    assert "AllBeta" not in g.changed_gates


# ---- the version --------------------------------------------------------------------------------


@pytest.mark.parametrize("text, minor", [
    ("1.35", "1.35"), ("v1.36", "1.36"), ("1.36.2", "1.36"), ("v1.36.2", "1.36"), ("v1.35.0", "1.35"),
    ("v1.36.2-gke.1000000", "1.36"), ("v1.36.2+k3s1", "1.36"),
])
def test_kube_version_as_typed(text, minor):
    assert parse_kube_version(text) == minor


@pytest.mark.parametrize("text, message", [
    ("1.37", "kube-scheduler 1.37 is not supported: kschedx reproduces 1.35 (v1.35.4), 1.36 (v1.36.2) "
             "(the scheduler source of 1.37 could not be read yet)"),
    ("v1.34.1", "kube-scheduler 1.34 is not supported: kschedx reproduces 1.35 (v1.35.4), 1.36 (v1.36.2)"),
    ("latest", "'latest' is not a Kubernetes version"),
    ("1", "'1' is not a Kubernetes version"),
])
def test_kube_version_refused(text, message):
    with pytest.raises(VersionError) as e:
        parse_kube_version(text)
    assert str(e.value).startswith(message)


@pytest.mark.parametrize("git_version, major, minor, want", [
    ("v1.36.2", None, None, "1.36"),
    ("v1.36.2-eks-4096722", None, None, "1.36"),
    ("v1.36.2+rke2r1", None, None, "1.36"),
    ("v1.37.0-rc.1", None, None, "1.37"),
    ("v0.0.0-master+$Format:%H$", "1", "35+", "1.35"),  # a build without version: major and minor
    (None, "1", "36+", "1.36"),
    ("garbage", None, None, None),
])
def test_server_minor(git_version, major, minor, want):
    assert server_minor(git_version, major, minor) == want


def test_server_versions_outside_the_range_are_named():
    assert version_for_server("v1.36.2") == ("1.36", None)
    used, warning = version_for_server("v1.37.1")
    assert used == "1.36" and warning.startswith("the API server is Kubernetes v1.37.1, newer than the versions")
    assert "reproducing kube-scheduler v1.36.2 instead" in warning
    used, warning = version_for_server("v1.33.4")
    assert used == "1.35" and "older than" in warning and "v1.35.4" in warning
    used, warning = version_for_server("weird")
    assert used == NEWEST and "cannot read" in warning


# ---- default plugins (default_plugins_test.go TestApplyFeatureGates) ----------------------------


def _names(features):
    return [n for n, _ in default_multi_point(features)]


def test_default_plugins_per_version():
    base = _names(default_features("1.35"))
    assert base[-4:] == ["DefaultPreemption", "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder"]
    assert base.index("DynamicResources") == base.index("DefaultPreemption") - 1
    assert _names(default_features("1.36")) == base + ["NodeDeclaredFeatures"]


def test_gates_change_the_default_plugins():
    base = _names(default_features("1.35"))
    assert _names(Features.from_flags("1.35", ["NodeDeclaredFeatures=true"])) == base + ["NodeDeclaredFeatures"]
    assert _names(Features.from_flags("1.35", ["GenericWorkload=true,GangScheduling=true"])) == (
        base + ["GangScheduling"])
    topo = default_multi_point(Features.from_flags("1.36", ["GenericWorkload=true,"
                                                            "TopologyAwareWorkloadScheduling=true"]))
    assert topo[-3:] == (("NodeDeclaredFeatures", None), ("TopologyPlacementGenerator", None),
                         ("PodGroupPodsCount", 1))
