"""Plugin args against kube-scheduler v1.35.4's own placements
(tests/golden-config, see its README): the configurations that change only
plugin args (NodeResourcesFit MostAllocated / RequestedToCapacityRatio,
NodeAffinity addedAffinity). Their placements are checked through --config
in test_golden_config.py; here, that they are worth checking."""

from __future__ import annotations

import json
from pathlib import Path

GOLDEN_CONFIG = Path(__file__).parent / "golden-config"
CASES = sorted(p.stem for p in (GOLDEN_CONFIG / "cases").glob("*.json"))
# Configs that only set plugin args (and multiPoint disables).
CONFIGS = ["most-allocated-memory", "rtcr-spread-out", "added-affinity"]


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
