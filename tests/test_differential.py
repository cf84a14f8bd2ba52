"""kschedx against the real kube-scheduler (the oracle) on random clusters,
for every supported version, field by field (tests/differential/).

CI runs a fixed slice: KSCHEDX_DIFF_CASES cases per version (default below)
from seed KSCHEDX_DIFF_SEED (default 0). A case that differs fails with the
difference and a minimal fixture that shows it (shrunk, written under
KSCHEDX_DIFF_DIR, with the two commands that show the difference); at most
KSCHEDX_DIFF_SHRINK failures per test process are shrunk (the others are
written as generated). A version not yet held exact (differential.EXACT) is
run for information: its differences are expected failures (xfail) that
say what differs. The regression cases (tests/differential/cases/, each a
difference found and fixed) are compared with their kept oracle documents
without Go, and with the oracle itself where it is built. A case the oracle
answers twice differently (upstream leaves it to Go map order: v1.35's DRA
pools) is skipped, saying so.

The long run (docs/development.md): KSCHEDX_DIFF_CASES=5000 KSCHEDX_DIFF_SEED=1000
python -m pytest tests/test_differential.py -n 2
"""

from __future__ import annotations

import json
import os

import pytest
import yaml

from tests.differential import (EXACT, MAX_SERVERS, MODES, VERSIONS, check, close_servers, expected_path,
                                gates_for, generate, kschedx_version, oracle, with_dependents_off,
                                output_dir, regression_cases, regression_gates, regression_paths, run_kschedx,
                                run_oracle,
                                without_reason_order, write)
from tests.differential.compare import differences
from tests.differential.generate import COMPARISON_GATE
from tests.differential.shrink import shrink
from tests.oracle import binary_or_skip

SEED = int(os.environ.get("KSCHEDX_DIFF_SEED", "0"))
CASES = int(os.environ.get("KSCHEDX_DIFF_CASES", "300"))
SHRINK = int(os.environ.get("KSCHEDX_DIFF_SHRINK", "3"))
_shrunk = [0]


@pytest.fixture(scope="module", autouse=True)
def _oracle_servers():
    yield
    close_servers()


@pytest.mark.parametrize("seed", range(SEED, SEED + CASES))
@pytest.mark.parametrize("version", VERSIONS)
def test_kschedx_agrees_with_kube_scheduler(version, seed):
    binary_or_skip(version)
    outcome = check(generate(seed), version)
    if outcome.unstable:
        pytest.skip(f"the oracle gave two answers ({outcome.mode}): upstream leaves this case to chance "
                    f"(Go map order), nothing to compare")
    if not outcome.differs:
        return
    if EXACT[version] and _shrunk[0] < SHRINK:
        _shrunk[0] += 1
        outcome = shrink(outcome)
    report = write(outcome, output_dir() / f"v{version}-seed-{seed}")
    if not EXACT[version]:
        pytest.xfail(f"kschedx does not reproduce v{version} yet (kschedx --kube-version "
                     f"{kschedx_version(version)}): {outcome.diffs[0][:300]}")
    pytest.fail(report, pytrace=False)


def test_a_difference_fails_the_test_with_a_shrunk_fixture(monkeypatch, tmp_path):
    """A real difference (kschedx given another reason for a cordoned node
    than kube-scheduler's) fails the test above: the difference named, the
    generated case (12 objects) shrunk to the cordoned node and the pod it
    refuses, written with both documents and the two commands that show it."""
    binary_or_skip("1.35")
    from kschedx.plugins import nodeunschedulable

    seed = 59  # groups taints and unschedulable: one cordoned node
    assert len(generate(seed).objects) == 12
    monkeypatch.setattr(nodeunschedulable, "ERR_REASON_UNSCHEDULABLE", "node(s) were cordoned")
    monkeypatch.setenv("KSCHEDX_DIFF_DIR", str(tmp_path))
    monkeypatch.setattr(f"{__name__}._shrunk", [0])
    with pytest.raises(pytest.fail.Exception) as failed:
        test_kschedx_agrees_with_kube_scheduler("1.35", seed)
    report = str(failed.value)
    assert "kube-scheduler v1.35 and kschedx differ (explain)" in report
    assert "filter NodeUnschedulable" in report and "node(s) were cordoned" in report
    case = tmp_path / f"v1.35-seed-{seed}"
    assert f"kschedx explain --snapshot {case}/fixture.yaml --kube-version 1.35" in report
    assert f'"$(oracle/build 1.35)" --mode explain {case}/fixture.yaml' in report
    objects = [o for o in yaml.safe_load_all((case / "fixture.yaml").read_text()) if o]
    assert sorted(o["kind"] for o in objects) == ["Node", "Pod"]
    node = next(o for o in objects if o["kind"] == "Node")
    assert node["spec"]["unschedulable"] is True
    for name in ("oracle.json", "kschedx.json", "diff.txt"):
        assert (case / name).is_file()
    oracle_doc = json.loads((case / "oracle.json").read_text())
    kschedx_doc = json.loads((case / "kschedx.json").read_text())
    assert "node(s) were unschedulable" in json.dumps(oracle_doc)
    assert "node(s) were cordoned" in json.dumps(kschedx_doc)


def test_only_the_most_recently_used_oracle_servers_are_kept():
    """A server per version and gate set, the least recently used closed
    beyond MAX_SERVERS (a few dozen gate sets per version otherwise stay
    running to the end)."""
    import tests.differential as differential

    close_servers()
    sets = [{f"Gate{i}": True} for i in range(MAX_SERVERS + 2)]
    servers = [oracle("1.35", gates) for gates in sets]
    assert len(differential._servers) == MAX_SERVERS
    assert oracle("1.35", sets[-1]) is servers[-1]
    assert oracle("1.35", sets[2]) is servers[2]
    assert oracle("1.35", sets[0]) is not servers[0]  # closed, started anew
    assert oracle("1.35", sets[2]) is servers[2]
    close_servers()


def test_generated_cases_reach_every_group_and_are_reproducible():
    """The same seed gives the same case; a few hundred seeds draw every
    feature group and every kind of object the default plugins read."""
    assert generate(7).objects == generate(7).objects
    groups, kinds, gates, pod_level_off = set(), set(), set(), 0
    comparisons = {True: 0, None: 0}  # Lt/Gt tolerations with the gate on, and with it off
    for seed in range(300):
        case = generate(seed)
        groups.update(case.groups)
        kinds.update(o["kind"] for o in case.objects)
        gates.update(case.feature_gates)
        pod_level_off += case.feature_gates.get("PodLevelResources") is False and any(
            o["spec"].get("resources") for o in case.objects if o["kind"] == "Pod")
        if any(t.get("operator") in ("Lt", "Gt") for o in case.objects if o["kind"] == "Pod"
               for t in o["spec"].get("tolerations") or ()):
            comparisons[case.feature_gates.get(COMPARISON_GATE)] += 1
    from tests.differential.generate import GATES, GROUPS

    assert groups == set(GROUPS)
    assert gates == set(GATES) | {COMPARISON_GATE}  # each turned away from its default
    assert pod_level_off  # pods' own resources, ignored without the gate
    assert comparisons[True] >= 5 and comparisons[None] >= 2
    assert kinds >= {"Node", "Pod", "Namespace", "PriorityClass", "PodDisruptionBudget", "Service", "ReplicaSet",
                     "StatefulSet", "StorageClass", "PersistentVolume", "PersistentVolumeClaim", "CSINode",
                     "CSIDriver", "CSIStorageCapacity", "DeviceClass", "ResourceSlice", "ResourceClaim",
                     "ResourceClaimTemplate", "RuntimeClass"}


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_gates_are_ones_the_version_accepts(version):
    """Each case's gates as given to both programs at `version` are flags
    kube-scheduler takes: a gate turned off takes with it the default-on
    gates that need it. Refused, the case is "refused by both" and compares
    nothing (v1.36 and v1.37 refused PodLevelResources=false alone, every
    version MatchLabelKeysInPodTopologySpread=false alone)."""
    from kschedx.features.gates import resolve
    from kschedx.features.versions import gate_table

    table, needs = gate_table(kschedx_version(version))
    turned_off = set()
    for seed in range(300):
        gates = gates_for(generate(seed), version)
        values, _ = resolve(table, needs, gates, kschedx_version(version))  # FeatureGateError when refused
        assert all(values[g] == on for g, on in gates.items())
        turned_off.update(g for g, on in gates.items() if not on)
    assert {"PodLevelResources", "MatchLabelKeysInPodTopologySpread"} <= turned_off


def test_a_gate_turned_off_takes_its_dependents_with_it():
    table = {"A": ("Beta", True, False, "1.30"), "B": ("Beta", True, False, "1.31"),
             "C": ("Alpha", False, False, "1.31"), "D": ("GA", True, True, "1.31"), "E": ("Beta", True, False, "1.32")}
    needs = {"B": ("A",), "C": ("A",), "D": ("A",), "E": ("B",)}
    assert with_dependents_off({"A": False}, table, needs) == {"A": False, "B": False, "E": False}
    assert with_dependents_off({"A": True}, table, needs) == {"A": True}
    assert with_dependents_off({"A": False, "B": True}, table, needs) == {"A": False, "B": True}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("version", [v for v in VERSIONS if EXACT[v]])
@pytest.mark.parametrize("name", regression_cases())
def test_regression_case(name, version, mode):
    """A difference found and fixed: kschedx gives the oracle's document."""
    fixture, config = regression_paths(name)
    expected = json.loads(expected_path(name, version, mode).read_text())
    side = run_kschedx(version, fixture, mode, config, regression_gates(name, version))
    assert side.doc is not None, side.crash or side.refused
    diffs = differences(expected, side.doc, simulate=mode == "simulate")
    assert not diffs, "\n".join(diffs[:40])


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", regression_cases())
def test_regression_case_expected_files_are_the_oracles(name, version):
    """The kept documents are what the oracle of each version gives today
    (`python -m tests.differential regenerate` rewrites them)."""
    binary_or_skip(version)
    fixture, config = regression_paths(name)
    for mode in MODES:
        expected = json.loads(expected_path(name, version, mode).read_text())
        side = run_oracle(version, fixture, mode, config, regression_gates(name, version))
        assert side.doc is not None, side.crash or side.refused
        assert without_reason_order(side.doc) == without_reason_order(expected), f"{mode}: regenerate"
