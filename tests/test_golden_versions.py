"""kube-scheduler v1.36.2's own placements (golden-versions/, see its README):
`kschedx simulate --kube-version 1.36 --tie-break name`, run as the command
line runs it, places every pod of the golden-config clusters where v1.36.2
placed it, with and without each configuration; and with --kube-version 1.35
where v1.35.4 did (golden-config/), the same clusters telling the versions
apart (NodeResourcesBalancedAllocation scores the change in balance from 1.36).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kschedx.cli.main import main

HERE = Path(__file__).parent
GOLDEN_CONFIG = HERE / "golden-config"
GOLDEN_VERSIONS = HERE / "golden-versions" / "expected"
CASES = sorted(p.stem for p in (GOLDEN_CONFIG / "cases").glob("*.json"))
CONFIGS = ["default"] + sorted(p.stem for p in (GOLDEN_CONFIG / "configs").glob("*.yaml"))
EXPECTED = {"1.36": GOLDEN_VERSIONS / "v1.36", "1.35": GOLDEN_CONFIG / "expected"}


def simulate(version: str, config: str, case: str) -> dict:
    args = ["simulate", "--snapshot", str(GOLDEN_CONFIG / "cases" / f"{case}.json"), "--kube-version", version,
            "--tie-break", "name", "-o", "json", "--detail", "placements"]
    if config != "default":
        args += ["--config", str(GOLDEN_CONFIG / "configs" / f"{config}.yaml")]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def placements(doc: dict) -> dict:
    return {p["pod"]: (p["status"], p["placedNode"]) for p in doc["pods"]}


@pytest.mark.parametrize("version", ["1.36", "1.35"])
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("case", CASES)
def test_simulate_places_every_pod_where_that_version_did(version, config, case):
    doc = simulate(version, config, case)
    assert doc["kubeVersion"] == version and doc["featureGates"] == {}
    expected = json.loads((EXPECTED[version] / config / f"{case}.json").read_text())["pods"]
    got = placements(doc)
    assert len(got) == len(expected) == 60
    wrong = [f"{e['pod']}: expected {e['status']} {e.get('selectedNode')}, got {got[e['pod']]}"
             for e in expected if got[e["pod"]] != (e["status"], e.get("selectedNode"))]
    assert not wrong, "\n".join(wrong[:20])


def test_the_two_versions_disagree_on_these_clusters():
    """The data can tell the versions apart: a run pinned to the wrong one would fail."""
    differ = 0
    for config in CONFIGS:
        for case in CASES:
            new = json.loads((EXPECTED["1.36"] / config / f"{case}.json").read_text())["pods"]
            old = json.loads((EXPECTED["1.35"] / config / f"{case}.json").read_text())["pods"]
            differ += sum(a != b for a, b in zip(new, old))
    assert differ == 259
