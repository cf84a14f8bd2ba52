"""The features value: what one version of kube-scheduler, with its feature
gates, does. Upstream builds feature.Features from the gates once and hands
it to every plugin's constructor; kschedx builds one Features per run and
the framework hands it to every plugin as `handle.features`.

Three things are read from it:

- `enabled(name)`: any gate of the version's table (a gate the version
  does not register reads False);
- named fields mirroring upstream's feature.Features (EnableX -> enable_x),
  and the gates the scheduler reads directly rather than through it;
- behaviour switches: changes between versions that no gate controls
  (NodeResourcesBalancedAllocation scoring the improvement in balance from
  1.36...), each keyed by the minor it starts at (behaviour.py). They are
  read-only, come from the version alone and are never shown as gates.

The rule: the version decides the gates and the switches, and plugins read
only those, never the version.
"""

from __future__ import annotations

from .behaviour import SINCE
from .gates import FeatureGateError, parse_flag_values, resolve
from .policy import not_reproduced
from .versions import NEWEST, at_least, check_supported, gate_table, reference

# Field -> gate: upstream's feature.Features (pkg/scheduler/framework/plugins/
# feature/feature.go, both versions), then the gates the scheduler reads
# directly (framework/types.go, dra_manager.go, the config's defaulting).
FIELDS = {
    "enable_dra_extended_resource": "DRAExtendedResource",
    "enable_dra_prioritized_list": "DRAPrioritizedList",
    "enable_dra_admin_access": "DRAAdminAccess",
    "enable_dra_consumable_capacity": "DRAConsumableCapacity",
    "enable_dra_device_taints": "DRADeviceTaints",
    "enable_dra_device_taint_rules": "DRADeviceTaintRules",
    "enable_dra_device_binding_conditions": "DRADeviceBindingConditions",
    "enable_dra_list_type_attributes": "DRAListTypeAttributes",
    "enable_dra_node_allocatable_resources": "DRANodeAllocatableResources",
    "enable_dra_partitionable_devices": "DRAPartitionableDevices",
    "enable_dra_resource_claim_device_status": "DRAResourceClaimDeviceStatus",
    "enable_dra_scheduler_filter_timeout": "DRASchedulerFilterTimeout",
    "enable_dra_workload_resource_claims": "DRAWorkloadResourceClaims",
    "enable_dynamic_resource_allocation": "DynamicResourceAllocation",
    "enable_volume_attributes_class": "VolumeAttributesClass",
    "enable_csi_migration_portworx": "CSIMigrationPortworx",
    "enable_volume_limit_scaling": "VolumeLimitScaling",
    "enable_node_inclusion_policy_in_pod_topology_spread": "NodeInclusionPolicyInPodTopologySpread",
    "enable_match_label_keys_in_pod_topology_spread": "MatchLabelKeysInPodTopologySpread",
    "enable_in_place_pod_vertical_scaling": "InPlacePodVerticalScaling",
    "enable_sidecar_containers": "SidecarContainers",
    "enable_scheduling_queue_hint": "SchedulerQueueingHints",
    "enable_async_preemption": "SchedulerAsyncPreemption",
    "enable_pod_level_resources": "PodLevelResources",
    "enable_storage_capacity_scoring": "StorageCapacityScoring",
    "enable_node_declared_features": "NodeDeclaredFeatures",
    "enable_gang_scheduling": "GangScheduling",
    "enable_generic_workload": "GenericWorkload",
    "enable_taint_toleration_comparison_operators": "TaintTolerationComparisonOperators",
    "enable_in_place_pod_level_resources_vertical_scaling": "InPlacePodLevelResourcesVerticalScaling",
    "enable_topology_aware_workload_scheduling": "TopologyAwareWorkloadScheduling",
    "enable_workload_aware_preemption": "WorkloadAwarePreemption",
    # Read directly, not through feature.Features.
    "enable_opportunistic_batching": "OpportunisticBatching",
    "enable_image_volume": "ImageVolume",
    "enable_restart_all_containers_on_container_exits": "RestartAllContainersOnContainerExits",
}

# The behaviour switches (behaviour.py: each true from the minor it starts at).
SWITCHES = tuple(SINCE)


class Features:
    """One version's behaviour with its feature gates: built from the version
    ("1.35" to "1.37"; default the newest) and gate settings ({name: bool}, as
    --feature-gates gives them). FeatureGateError (upstream's text) when the
    version refuses the settings, and (policy.py) when they give a gate kschedx
    does not reproduce a value other than its default, unless
    `reproduced_only` is False (tests of upstream's tables that name such
    gates); VersionError for a version kschedx does not know. Immutable and
    hashable: equal values are interchangeable."""

    __slots__ = ("version", "reference", "settings", "warnings", "_values", "_defaults", "_switches",
                 "_key", *FIELDS, *SWITCHES)

    def __init__(self, version: str = NEWEST, settings: dict[str, bool] | None = None, *,
                 reproduced_only: bool = True):
        check_supported(version)
        gates, dependencies = gate_table(version)
        settings = dict(settings or {})
        values, warnings = resolve(gates, dependencies, settings, version)
        if reproduced_only:
            refused = not_reproduced(values, gates, settings)
            if refused:
                raise FeatureGateError("; ".join(refused))
        switches = {name: at_least(version, since) for name, since in SINCE.items()}
        set_ = object.__setattr__
        set_(self, "version", version)
        set_(self, "reference", reference(version))
        set_(self, "settings", settings)
        set_(self, "warnings", tuple(warnings))
        set_(self, "_values", values)
        set_(self, "_defaults", {name: spec[1] for name, spec in gates.items()})
        set_(self, "_switches", switches)
        set_(self, "_key", (version, tuple(sorted(settings.items()))))
        for field, gate in FIELDS.items():
            set_(self, field, values.get(gate, False))
        for switch, on in switches.items():
            set_(self, switch, on)

    @classmethod
    def from_flags(cls, version: str = NEWEST, flag_values=()) -> "Features":
        """From `--feature-gates` values as typed (the flag repeatable)."""
        return cls(version, parse_flag_values(flag_values))

    def __setattr__(self, name, value):
        raise AttributeError("Features is read-only")

    def __eq__(self, other):
        return isinstance(other, Features) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        gates = ",".join(f"{k}={'true' if v else 'false'}" for k, v in self.settings.items())
        return f"Features({self.version!r}{', ' + repr(gates) if gates else ''})"

    def enabled(self, name: str) -> bool:
        """A gate's value; False for a gate this version does not register."""
        return self._values.get(name, False)

    def known(self, name: str) -> bool:
        """Whether this version's kube-scheduler registers the gate."""
        return name in self._values

    def default(self, name: str) -> bool:
        return self._defaults.get(name, False)

    @property
    def gates(self) -> dict[str, bool]:
        """Every gate of the version and its value."""
        return dict(self._values)

    @property
    def changed_gates(self) -> dict[str, bool]:
        """The gates whose value differs from the version's default, by name
        (the result's `featureGates`)."""
        return {name: value for name, value in sorted(self._values.items())
                if value != self._defaults[name] and name not in ("AllAlpha", "AllBeta")}

    @property
    def switches(self) -> dict[str, bool]:
        return dict(self._switches)

    @property
    def allocator_features(self) -> frozenset:
        """dynamicresources.AllocatorFeatures: the structured allocator's features."""
        out = set()
        if self.enable_dra_admin_access:
            out.add("AdminAccess")
        if self.enable_dra_prioritized_list:
            out.add("PrioritizedList")
        if self.enable_dra_partitionable_devices:
            out.add("PartitionableDevices")
        if self.enable_dra_device_taints:
            out.add("DeviceTaints")
        if self.enable_dra_device_binding_conditions and self.enable_dra_resource_claim_device_status:
            out.add("DeviceBindingAndStatus")
        if self.enable_dra_consumable_capacity:
            out.add("ConsumableCapacity")
        return frozenset(out)

    def at_least(self, version: str) -> bool:
        """Whether this version is `version` or later: for what is keyed by
        the minor it starts at (declarations' extension points), never for
        behaviour (a switch names that)."""
        return at_least(self.version, version)

    def with_version(self, version: str) -> "Features":
        return Features(version, self.settings)


_DEFAULTS: dict[str, Features] = {}


def default_features(version: str = NEWEST) -> Features:
    """The version's default gates (one shared value per version)."""
    found = _DEFAULTS.get(version)
    if found is None:
        found = _DEFAULTS[version] = Features(version)
    return found


__all__ = ["FIELDS", "SWITCHES", "FeatureGateError", "Features", "default_features"]
