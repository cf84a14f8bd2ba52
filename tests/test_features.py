"""Versions and feature gates (kschedx/features): each version's gate table
derived from the one history, --feature-gates read and checked as
kube-scheduler does (component-base featuregate: TestFeatureGateFlag,
TestFeatureGateSetFromMap, the dependency checks, the minimum compatibility
version), behaviour switches keyed by the minor they start at, the version
read from a flag or a server, and the default plugins each version and its
gates give (default_plugins_test.go TestApplyFeatureGates). The tables are
held to the real kube-scheduler's in tests/test_gate_history.py, the gates
kschedx refuses in tests/test_gate_policy.py."""

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
from kschedx.features import history
from kschedx.features.behaviour import SINCE
from kschedx.features.features import FIELDS
from kschedx.features.versions import REFERENCES, gate_table


def error(version: str, *flags: str) -> str:
    with pytest.raises(FeatureGateError) as e:
        Features.from_flags(version, flags)
    return str(e.value)


# ---- the tables ---------------------------------------------------------------------------------


def test_every_version_has_a_table():
    assert SUPPORTED_VERSIONS == ("1.35", "1.36", "1.37") and NEWEST == "1.37"
    assert REFERENCES == {"1.35": "v1.35.4", "1.36": "v1.36.3", "1.37": "v1.37.2"}
    counts = {}
    for version in SUPPORTED_VERSIONS:
        gates, dependencies = gate_table(version)
        for name, (stage, default, locked, since) in gates.items():
            assert stage in ("Alpha", "Beta", "GA", "Deprecated") and isinstance(default, bool)
            assert isinstance(locked, bool) and since.count(".") == 1
        for gate, deps in dependencies.items():
            assert gate in gates and all(d in gates for d in deps), gate
        counts[version] = (len(gates), sum(not spec[2] for spec in gates.values()))
    # kube-scheduler's --feature-gates registers so many, so many of them settable (their dumps).
    assert counts == {"1.35": (218, 156), "1.36": (241, 165), "1.37": (253, 186)}


def test_the_api_schemas_are_of_the_same_releases():
    """Fixtures are checked against the API of the releases kschedx
    reproduces: a version added to one list and not the other fails here."""
    from kschedx.sources.schema.model import RELEASES

    assert RELEASES == REFERENCES


def test_the_history_is_well_formed():
    """Rows oldest first, each (version, default, stage[, locked[, minCompat]]);
    membership and dependency rows name known gates and minors."""
    stages = {history.ALPHA, history.BETA, history.GA, history.DEPRECATED}
    key = lambda v: tuple(map(int, v.split(".")))  # noqa: E731
    for name, rows in {**history.HISTORY, **{k[0]: v for k, v in history.OVERRIDES.items()}}.items():
        assert rows and [key(r[0]) for r in rows] == sorted(key(r[0]) for r in rows), name
        for r in rows:
            assert 3 <= len(r) <= 5 and isinstance(r[1], bool) and r[2] in stages, (name, r)
    for table in (history.REGISTERED, history.REMOVED, history.DEPENDENCIES):
        assert set(table) <= set(history.HISTORY)
    assert all(v in SUPPORTED_VERSIONS for v in list(history.REGISTERED.values()) + list(history.REMOVED.values()))
    for gate, rows in history.DEPENDENCIES.items():
        assert all(d in history.HISTORY for r in rows for d in r[1:]), gate


def test_the_two_gate_names_upstream_spells_otherwise_than_its_identifiers():
    for version in SUPPORTED_VERSIONS:
        Features.from_flags(version, ["CustomCPUCFSQuotaPeriod=true", "RuntimeClassInImageCriApi=true"])
        assert error(version, "CPUCFSQuotaPeriod=true") == "unrecognized feature gate: CPUCFSQuotaPeriod"
        assert error(version, "RuntimeClassInImageCriAPI=true") == (
            "unrecognized feature gate: RuntimeClassInImageCriAPI")


def test_min_compatibility_version_holds_a_spec_back():
    """DRAFractionalCapacityRange's 1.37 rows: (1.37, false, Beta) and
    (1.37, true, Beta, minCompat 1.37); kube-scheduler 1.37 runs at minimum
    compatibility version 1.36, so the second row does not apply yet."""
    assert history.HISTORY["DRAFractionalCapacityRange"][-1] == ("1.37", True, history.BETA, False, "1.37")
    assert gate_table("1.37")[0]["DRAFractionalCapacityRange"] == ("Beta", False, False, "1.37")
    assert not default_features("1.37").enabled("DRAFractionalCapacityRange")


def test_an_older_release_keeps_its_own_rows():
    """TopologyManagerPolicyOptions' 1.32 row is locked in v1.36 and later
    tables, not in v1.35.4's."""
    assert gate_table("1.35")[0]["TopologyManagerPolicyOptions"] == ("GA", True, False, "1.32")
    assert gate_table("1.36")[0]["TopologyManagerPolicyOptions"] == ("GA", True, True, "1.32")


def test_membership_follows_the_releases():
    assert "KubeProxyIPVS" in gate_table("1.37")[0] and "KubeProxyIPVS" not in gate_table("1.36")[0]
    assert "GangScheduling" in gate_table("1.36")[0] and "GangScheduling" not in gate_table("1.37")[0]
    assert "CSIMigrationPortworx" in gate_table("1.35")[0] and "CSIMigrationPortworx" not in gate_table("1.36")[0]
    # Dependencies per minor: UserNamespacesHostNetworkSupport needs NodeDeclaredFeatures from 1.36.
    assert gate_table("1.35")[1]["UserNamespacesHostNetworkSupport"] == ("UserNamespacesSupport",)
    assert gate_table("1.36")[1]["UserNamespacesHostNetworkSupport"] == ("NodeDeclaredFeatures",
                                                                         "UserNamespacesSupport")
    assert "EventedPLEG" not in gate_table("1.36")[1] and gate_table("1.37")[1]["EventedPLEG"] == (
        "PLEGOnDemandRelist",)


def test_the_default_gates_of_each_version_are_accepted():
    for version in SUPPORTED_VERSIONS:
        f = Features(version)
        assert f.changed_gates == {} and f.settings == {} and f.warnings == ()
        assert f.reference == REFERENCES[version]


@pytest.mark.parametrize("gate, v135, v136, v137", [
    # kube-scheduler's gate table at each version (their --dump-gates).
    ("DynamicResourceAllocation", True, True, True),
    ("DRAAdminAccess", True, True, True),
    ("DRAPrioritizedList", True, True, True),
    ("DRAConsumableCapacity", False, True, True),
    ("DRAPartitionableDevices", False, True, True),
    ("DRADeviceTaints", False, True, True),
    ("DRADeviceTaintRules", False, False, True),
    ("DRADeviceBindingConditions", False, True, True),
    ("DRAResourceClaimDeviceStatus", True, True, True),
    ("DRAExtendedResource", False, True, True),
    ("NodeDeclaredFeatures", False, True, True),
    ("InPlacePodLevelResourcesVerticalScaling", False, True, True),
    ("PodLevelResources", True, True, True),
    ("GangScheduling", False, False, False),
    ("GenericWorkload", False, False, False),
    ("StorageCapacityScoring", False, False, True),
    ("VolumeLimitScaling", False, False, True),
    ("RestartAllContainersOnContainerExits", False, True, True),
])
def test_scheduler_gates_at_each_version(gate, v135, v136, v137):
    assert default_features("1.35").enabled(gate) is v135
    assert default_features("1.36").enabled(gate) is v136
    assert default_features("1.37").enabled(gate) is v137


def test_fields_mirror_the_gates():
    f = Features("1.36")
    for field, gate in FIELDS.items():
        assert getattr(f, field) is f.enabled(gate), field
    assert f.enable_dra_consumable_capacity and not default_features("1.35").enable_dra_consumable_capacity
    # A gate 1.35 does not register reads False there.
    assert not default_features("1.35").known("DRAListTypeAttributes")
    assert not default_features("1.35").enable_dra_list_type_attributes


def test_switches_are_keyed_by_the_minor_they_start_at():
    assert set(SWITCHES) == set(SINCE)
    for version in SUPPORTED_VERSIONS:
        f = default_features(version)
        for switch, since in SINCE.items():
            assert getattr(f, switch) is (tuple(map(int, version.split("."))) >= tuple(map(int, since.split(".")))), \
                (version, switch)
    old, new, newest = default_features("1.35"), default_features("1.36"), default_features("1.37")
    assert not old.balanced_allocation_scores_improvement and new.balanced_allocation_scores_improvement
    assert not old.portworx_always_migrated and new.portworx_always_migrated
    assert not new.preemption_reports_placement and newest.preemption_reports_placement
    # Gates never move a switch.
    assert Features.from_flags("1.36", ["DRAPrioritizedList=false"]).switches == new.switches


def test_no_switch_is_named_after_a_version():
    assert [s for s in SWITCHES if any(ch.isdigit() for ch in s)] == []


def test_allocator_features():
    assert default_features("1.35").allocator_features == {"AdminAccess", "PrioritizedList"}
    assert default_features("1.37").allocator_features == default_features("1.36").allocator_features == {
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
    # 1.37 locks DRAPrioritizedList and NodeDeclaredFeatures; DRADeviceTaintRules is GA, not locked.
    assert error("1.37", "DRAPrioritizedList=false") == (
        "cannot set feature gate DRAPrioritizedList to false, feature is locked to true")
    assert error("1.37", "NodeDeclaredFeatures=false") == (
        "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true")
    assert not Features.from_flags("1.37", ["DRADeviceTaintRules=false"]).enable_dra_device_taint_rules
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
    assert error("1.37", "DRAFractionalCapacityRange=true,DRAConsumableCapacity=false") == (
        "DRAFractionalCapacityRange is enabled, but depends on features that are disabled: [DRAConsumableCapacity]")
    assert error("1.36", "DRAResourceClaimDeviceStatus=false").startswith(
        "[DRADeviceBindingConditions is enabled, but depends on features that are disabled: "
        "[DRAResourceClaimDeviceStatus], ")
    # 1.35: NodeDeclaredFeatures' dependents are off.
    assert Features.from_flags("1.35", ["NodeDeclaredFeatures=true"]).changed_gates == {"NodeDeclaredFeatures": True}


def test_all_alpha_and_all_beta():
    f = Features("1.35", parse_flag_values(["AllAlpha=true,VolumeLimitScaling=false"]), reproduced_only=False)
    assert f.enable_gang_scheduling and f.enable_dra_consumable_capacity and f.enable_node_declared_features
    assert not f.enable_volume_limit_scaling  # an explicit value wins
    assert f.enable_dynamic_resource_allocation and f.enable_sidecar_containers  # GA gates are not touched
    g = Features.from_flags("1.35", ["AllBeta=false"])
    assert not g.enable_dra_prioritized_list and not g.enable_pod_level_resources
    assert "AllBeta" not in g.changed_gates


# ---- the version --------------------------------------------------------------------------------


@pytest.mark.parametrize("text, minor", [
    ("1.35", "1.35"), ("v1.36", "1.36"), ("1.36.2", "1.36"), ("v1.36.2", "1.36"), ("v1.35.0", "1.35"),
    ("v1.36.2-gke.1000000", "1.36"), ("v1.36.2+k3s1", "1.36"), ("1.37", "1.37"), ("v1.37.2", "1.37"),
])
def test_kube_version_as_typed(text, minor):
    assert parse_kube_version(text) == minor


@pytest.mark.parametrize("text, message", [
    ("1.38", "kube-scheduler 1.38 is not supported: kschedx reproduces 1.35 (v1.35.4), 1.36 (v1.36.3), "
             "1.37 (v1.37.2) (the scheduler source of 1.38 could not be read yet)"),
    ("v1.34.1", "kube-scheduler 1.34 is not supported: kschedx reproduces 1.35 (v1.35.4), 1.36 (v1.36.3), "
                "1.37 (v1.37.2)"),
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
    assert version_for_server("v1.37.1") == ("1.37", None)
    used, warning = version_for_server("v1.38.0")
    assert used == "1.37" and warning.startswith("the API server is Kubernetes v1.38.0, newer than the versions")
    assert "(1.35, 1.36, 1.37): reproducing kube-scheduler v1.37.2 instead" in warning
    used, warning = version_for_server("v1.33.4")
    assert used == "1.35" and "older than" in warning and "v1.35.4" in warning
    used, warning = version_for_server("weird")
    assert used == NEWEST and "cannot read" in warning


# ---- default plugins (default_plugins_test.go TestApplyFeatureGates) ----------------------------


def _names(features):
    return [n for n, _ in default_multi_point(features)]


def test_default_plugins_per_version():
    base = _names(default_features("1.35"))
    assert base[:4] == ["SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName"]
    assert base[-4:] == ["DefaultPreemption", "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder"]
    assert base.index("DynamicResources") == base.index("DefaultPreemption") - 1
    assert _names(default_features("1.36")) == base + ["NodeDeclaredFeatures"]
    # 1.37: NodeName before NodeUnschedulable (default_plugins.go).
    newest = _names(default_features("1.37"))
    assert newest[:4] == ["SchedulingGates", "PrioritySort", "NodeName", "NodeUnschedulable"]
    assert sorted(newest) == sorted(base + ["NodeDeclaredFeatures"])


def _unchecked(version, flags):
    """Features with gates kschedx does not reproduce (the defaults alone are tested)."""
    return Features(version, parse_flag_values(flags), reproduced_only=False)


def test_gates_change_the_default_plugins():
    """TestApplyFeatureGates: NodeDeclaredFeatures appended with its gate,
    GangScheduling with its own gate (1.35, 1.36) or GenericWorkload (1.37),
    the placement plugins with TopologyAwareWorkloadScheduling."""
    base = _names(default_features("1.35"))
    assert _names(Features.from_flags("1.35", ["NodeDeclaredFeatures=true"])) == base + ["NodeDeclaredFeatures"]
    assert _names(_unchecked("1.35", ["GenericWorkload=true,GangScheduling=true"])) == base + ["GangScheduling"]
    assert "GangScheduling" not in _names(_unchecked("1.35", ["GenericWorkload=true"]))
    topo = default_multi_point(_unchecked("1.36", ["GenericWorkload=true,TopologyAwareWorkloadScheduling=true"]))
    assert topo[-3:] == (("NodeDeclaredFeatures", None), ("TopologyPlacementGenerator", None),
                         ("PodGroupPodsCount", 1))
    newest = _names(default_features("1.37"))
    assert _names(_unchecked("1.37", ["GenericWorkload=true"])) == newest + ["GangScheduling"]
