"""Plugin args against kube-scheduler v1.35.4's own placements
(tests/golden-config, see its README): the configurations that change only
plugin args (NodeResourcesFit MostAllocated / RequestedToCapacityRatio,
NodeAffinity addedAffinity) run through Framework(plugin_args=...), with the
configured plugin set, and every pod must land where kube-scheduler put it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kschedx import app
from kschedx.framework.profile import DEFAULT_PLUGINS, Profile
from kschedx.framework.runner import Framework

GOLDEN_CONFIG = Path(__file__).parent / "golden-config"
CASES = sorted(p.stem for p in (GOLDEN_CONFIG / "cases").glob("*.json"))
# Configs that only set plugin args (and multiPoint disables): the others
# (score weights, per-extension-point lists) need the --config decoding.
CONFIGS = ["most-allocated-memory", "rtcr-spread-out", "added-affinity"]


def _profile_of(config: str):
    doc = yaml.safe_load((GOLDEN_CONFIG / "configs" / f"{config}.yaml").read_text())
    (profile,) = doc["profiles"]
    assert set(profile) <= {"schedulerName", "plugins", "pluginConfig"}
    plugins = profile.get("plugins") or {}
    assert set(plugins) <= {"multiPoint"} and not plugins.get("multiPoint", {}).get("enabled")
    disabled = {p["name"] for p in plugins.get("multiPoint", {}).get("disabled") or ()}
    args = {pc["name"]: pc["args"] for pc in profile.get("pluginConfig") or ()}
    return tuple(s for s in DEFAULT_PLUGINS if s.name not in disabled), args


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("config", CONFIGS)
def test_simulate_matches_upstream_with_plugin_args(config, case, monkeypatch):
    specs, plugin_args = _profile_of(config)

    class Configured(Framework):
        def __init__(self, snapshot, **kw):
            super().__init__(snapshot, plugin_args=plugin_args, **kw)
            if specs != DEFAULT_PLUGINS:
                self.profile = Profile(self, plugin_args, specs=specs)

    monkeypatch.setattr(app, "Framework", Configured)
    workload = app.load_workload([str(GOLDEN_CONFIG / "cases" / f"{case}.json")])
    actual = app.simulate(workload, tie_break="name", detail="placements")
    expected = json.loads((GOLDEN_CONFIG / "expected" / config / f"{case}.json").read_text())
    got = {p["pod"]: (p["status"], p.get("selectedNode")) for p in actual["pods"]}
    diffs = []
    for p in expected["pods"]:
        want = (p["status"], p.get("selectedNode"))
        if got.get(p["pod"]) != want:
            diffs.append(f"{p['pod']}: kschedx {got.get(p['pod'])} != kube-scheduler {want}")
    assert not diffs, f"{len(diffs)} of {len(expected['pods'])} pods differ:\n" + "\n".join(diffs[:20])


def test_the_configs_change_placements():
    # Agreeing with these cases means agreeing with the configured scoring: each
    # config moves pods away from where the default profile puts them.
    for config in CONFIGS:
        moved = 0
        for case in CASES:
            default = json.loads((GOLDEN_CONFIG / "expected" / "default" / f"{case}.json").read_text())["pods"]
            configured = json.loads((GOLDEN_CONFIG / "expected" / config / f"{case}.json").read_text())["pods"]
            moved += sum(a.get("selectedNode") != b.get("selectedNode") for a, b in zip(default, configured))
        assert moved > 0, config
