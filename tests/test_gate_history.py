"""kschedx's gate table of each version, derived from the one history
(kschedx/features/history.py), is the real kube-scheduler's: the oracle's
`--dump-gates` lists every gate that version's kube-scheduler registers (the
gates its --feature-gates knows), each with its spec at the binary's
version, its history of versioned specs, its value and its dependencies.
A new release shows here as the rows its history needs
(`python -m tests.oracle gates MINOR` prints them)."""

from __future__ import annotations

import pytest

from kschedx.features import SUPPORTED_VERSIONS, Features, parse_flag_values
from tests.oracle import binary_or_skip, gate_dump, gate_table_differences

_DUMPS: dict = {}


def dump(version: str, gates: str | None = None) -> dict:
    key = (version, gates)
    if key not in _DUMPS:
        binary_or_skip(version)
        _DUMPS[key] = gate_dump(version, gates)
    return _DUMPS[key]


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_the_table_is_kube_schedulers(version):
    d = dump(version)
    assert d["emulationVersion"] == version
    assert gate_table_differences(version, d) == []


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_a_gate_is_its_default_until_set(version):
    d = dump(version)
    features = Features(version)
    assert {name: g["enabled"] for name, g in d["gates"].items()} == features.gates


@pytest.mark.parametrize("version, flags", [
    ("1.35", "AllBeta=false"),
    ("1.36", "AllBeta=false"),
    ("1.37", "AllBeta=false,DRAConsumableCapacity=true"),
    ("1.37", "AllAlpha=true,GenericWorkload=true"),
    ("1.36", "NodeDeclaredFeatures=false,ExtendWebSocketsToKubelet=false,InPlacePodLevelResourcesVerticalScaling=false,"
             "InPlacePodVerticalScalingInitContainers=false,RestartAllContainersOnContainerExits=false"),
])
def test_gates_resolve_as_kube_scheduler_resolves_them(version, flags):
    """AllAlpha / AllBeta, explicit values winning, dependencies: every
    gate's value as the real flag parser leaves it."""
    d = dump(version, flags)
    features = Features(version, parse_flag_values([flags]), reproduced_only=False)
    assert {name: g["enabled"] for name, g in d["gates"].items()} == features.gates
