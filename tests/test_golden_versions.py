"""Each version's real kube-scheduler is the truth (golden-versions/, see its
README):

- `kschedx simulate --kube-version V --tie-break name`, run as the command
  line runs it, places every pod of the golden-config clusters where
  kube-scheduler V placed it, with and without each configuration (v1.37.2
  and v1.36.2 from golden-versions, v1.35.4 from golden-config);
- `explain` at every version gives, field by field, the real scheduler's
  document for each cluster of golden-versions/differences (clusters made to
  tell the versions, or gate settings, apart), and those documents do tell
  them apart.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from golden_compare import compare
from kschedx.cli.main import main
from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.features import SUPPORTED_VERSIONS, Features, parse_flag_values
from tests.oracle import difference_runs

HERE = Path(__file__).parent
GOLDEN_CONFIG = HERE / "golden-config"
GOLDEN_VERSIONS = HERE / "golden-versions" / "expected"
CASES = sorted(p.stem for p in (GOLDEN_CONFIG / "cases").glob("*.json"))
CONFIGS = ["default"] + sorted(p.stem for p in (GOLDEN_CONFIG / "configs").glob("*.yaml"))
EXPECTED = {"1.37": GOLDEN_VERSIONS / "v1.37", "1.36": GOLDEN_VERSIONS / "v1.36", "1.35": GOLDEN_CONFIG / "expected"}
RUNS = difference_runs()


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


def test_every_supported_version_has_its_placements():
    assert set(EXPECTED) == set(SUPPORTED_VERSIONS)


@pytest.mark.parametrize("version", ["1.37", "1.36", "1.35"])
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


def _placement_differences(a: str, b: str) -> int:
    differ = 0
    for config in CONFIGS:
        for case in CASES:
            new = json.loads((EXPECTED[a] / config / f"{case}.json").read_text())["pods"]
            old = json.loads((EXPECTED[b] / config / f"{case}.json").read_text())["pods"]
            differ += sum(x != y for x, y in zip(new, old))
    return differ


def test_what_the_placements_tell_apart():
    """1.36 and 1.35 place 259 of these pods differently (a run pinned to the
    wrong one of them fails); 1.37 places every one as 1.36 did, which the
    differences below tell apart instead."""
    assert _placement_differences("1.36", "1.35") == 259
    assert _placement_differences("1.37", "1.36") == 0


# ---- golden-versions/differences: whole documents ------------------------------------------------


def _features(version: str, gates: str | None) -> Features:
    return Features(version, parse_flag_values([gates] if gates else []))


@pytest.mark.parametrize("run, version", [(r, v) for r in RUNS for v in r["versions"]],
                         ids=[f"{r['run']}-{v}" for r in RUNS for v in r["versions"]])
def test_explain_gives_the_real_schedulers_document(run, version):
    expected = json.loads(run["expected"][version].read_text())
    workload = load_workload([str(run["case"])])
    actual = explain(workload, tie_break="name", features=_features(version, run["gates"].get(version)))
    diffs = compare(expected, actual)
    assert not diffs, f"{run['run']} at {version} ({run['shows']}):\n" + "\n".join(diffs[:30])


def _outcome(doc: dict) -> list:
    """What a reader sees of each pod: outcome, message, scores, failures."""
    return [(p["status"], p["selectedNode"], p["message"],
             [(n["name"], n.get("firstFailure"), n.get("totalScore")) for n in p["nodes"]]) for p in doc["pods"]]


def test_each_case_tells_versions_or_gates_apart():
    """A case whose documents were all alike would hold kschedx to nothing
    version-specific."""
    by_case: dict = {}
    for r in RUNS:
        for v in r["versions"]:
            by_case.setdefault(r["case"].stem, set()).add(repr(_outcome(json.loads(r["expected"][v].read_text()))))
    alike = sorted(case for case, outcomes in by_case.items() if len(outcomes) < 2)
    assert alike == []


def test_the_differences_have_every_version_and_nothing_else():
    cases = {p.stem for p in (HERE / "golden-versions" / "differences").glob("*.yaml")} - {"index"}
    assert cases == {r["case"].stem for r in RUNS}
    for r in RUNS:
        assert set(r["gates"]) <= set(r["versions"]) <= set(SUPPORTED_VERSIONS), r["run"]
        for v in r["versions"]:
            assert r["expected"][v].exists(), f"{r['expected'][v]}: python -m tests.oracle differences"
