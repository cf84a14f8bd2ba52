"""Scheduler configurations against upstream.

- golden-config/ (kube-scheduler v1.35.4's own placements, see its README):
  `simulate --config CONFIG --tie-break name`, pinned to 1.35, places every
  pod where kube-scheduler placed it, for each configuration and cluster
  (v1.36.2's placements: test_golden_versions.py).
- Every default-profile golden case (explain and simulate) agrees with
  --config pointing at the default profile written out in full, and written
  differently (per extension point; `*` disables and re-enables):
  config/default-*.yaml.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.framework.configured import load_config
from golden_compare import GOLDEN, V135, case_names, compare, load_expected

HERE = Path(__file__).parent
GOLDEN_CONFIG = HERE / "golden-config"
CASES = sorted(p.stem for p in (GOLDEN_CONFIG / "cases").glob("*.json"))
CONFIGS = ["default"] + sorted(p.stem for p in (GOLDEN_CONFIG / "configs").glob("*.yaml"))


def placements(doc: dict) -> dict:
    out = {}
    for p in doc["pods"]:
        node = p.get("placedNode") or (p["selectedNode"] if p["status"] == "Scheduled" else None)
        out[p["pod"]] = (p["status"], node)
    return out


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("case", CASES)
def test_simulate_places_every_pod_where_kube_scheduler_did(config, case):
    cfg = None if config == "default" else load_config(str(GOLDEN_CONFIG / "configs" / f"{config}.yaml"),
                                                       features=V135)
    doc = simulate(load_workload([str(GOLDEN_CONFIG / "cases" / f"{case}.json")]), tie_break="name",
                   config=cfg, detail="placements", features=V135)
    expected = json.loads((GOLDEN_CONFIG / "expected" / config / f"{case}.json").read_text())["pods"]
    got = placements(doc)
    assert len(got) == len(expected)
    wrong = [f"{e['pod']}: expected {e['status']} {e.get('selectedNode')}, got {got[e['pod']]}"
             for e in expected if got[e["pod"]] != (e["status"], e.get("selectedNode"))]
    assert not wrong, "\n".join(wrong[:20])


DEFAULT_VARIANTS = ("default-full", "default-per-point", "default-star")


@pytest.fixture(scope="module", params=DEFAULT_VARIANTS)
def default_variant(request):
    return load_config(str(HERE / "config" / f"{request.param}.yaml"), features=V135)


@pytest.mark.parametrize("name", case_names())
def test_default_profile_written_out_agrees_on_every_golden_case(default_variant, name):
    workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    actual = explain(workload, tie_break="name", config=default_variant)
    diffs = compare(load_expected("explain", name), actual)
    assert not diffs, "\n".join(diffs[:40])


@pytest.mark.parametrize("name", case_names())
def test_default_profile_written_out_agrees_on_every_golden_simulation(default_variant, name):
    workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    actual = simulate(workload, tie_break="name", config=default_variant)
    diffs = compare(load_expected("simulate", name), actual, simulate=True)
    assert not diffs, "\n".join(diffs[:40])
