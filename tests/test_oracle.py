"""The oracle (the real kube-scheduler, oracle/) builds and runs for every
supported version: the v1.35 oracle reproduces golden cases field by field
(their expected files were produced by the v1.35.4 framework), the v1.36
oracle the kept v1.36 placements of a golden-config cluster, and the v1.37
oracle v1.37's own preemption message. Without Go these tests are skipped,
unless KSCHEDX_REQUIRE_ORACLE=1 (CI), where they fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.oracle import (GOLDEN, binary_or_skip, golden_text, keep_reason_order, run, versions,
                          without_reason_order)
from tests.oracle.__main__ import PLACEMENTS, compare_placements

CONFIGS = Path(__file__).parent / "golden-config"

# A handful of golden cases that reach the driver's every path: preemption
# (with a PDB, a tie between candidates, retried at once in simulate), a
# gate, a PreFilterResult, a nominated pod, a PreFilter rejection, a Filter
# error, DRA, volumes.
CASES = [
    "hand-05-preemption", "hand-08-preemption-pdb", "hand-misc", "hand-dra", "hand-local-pv",
    "case-1-13", "case-1-49", "dra-2-3",
]


def test_every_supported_version_has_an_oracle():
    assert versions() == ("1.35", "1.36", "1.37")


@pytest.mark.parametrize("mode", ["explain", "simulate"])
@pytest.mark.parametrize("case", CASES)
def test_v135_oracle_reproduces_the_golden_corpus(case, mode):
    binary_or_skip("1.35")
    expected = json.loads((GOLDEN / "expected" / mode / f"{case}.json").read_text())
    actual = run("1.35", GOLDEN / "cases" / f"{case}.yaml", mode)
    assert without_reason_order(actual) == without_reason_order(expected)
    # What `python -m tests.oracle regenerate` writes: the committed bytes.
    assert golden_text(keep_reason_order(actual, expected)) == (GOLDEN / "expected" / mode / f"{case}.json").read_text()


def test_v136_oracle_places_a_golden_config_cluster_as_v136_did():
    binary_or_skip("1.36")
    config = CONFIGS / "configs" / "most-allocated-memory.yaml"
    doc = run("1.36", CONFIGS / "cases" / "basic-41.json", "simulate", config=config)
    assert doc["reference"] == {"kubernetes": "v1.36.3"}
    expected = json.loads((PLACEMENTS["1.36"] / "most-allocated-memory" / "basic-41.json").read_text())
    assert compare_placements(expected, doc) == []


def test_v137_oracle_runs_v137s_preemption():
    binary_or_skip("1.37")
    doc = run("1.37", GOLDEN / "cases" / "hand-05-preemption.yaml", "simulate")
    assert doc["reference"] == {"kubernetes": "v1.37.2"}
    urgent, polite = doc["pods"]
    # v1.37's PostFilter names the node it preempts on; DynamicResources no
    # longer adds "no new claims to deallocate" for a pod without claims.
    assert urgent["message"] == ("0/2 nodes are available: 2 Insufficient cpu. "
                                 "preemption: found a potential placement for pod on node n1, preempting 1 victims")
    assert (urgent["preemption"]["nominatedNode"], urgent["placedNode"]) == ("n1", "n1")
    assert urgent["preemption"]["victims"] == [{"pod": "default/low-2", "priority": 100}]
    assert polite["message"] == ("0/2 nodes are available: 2 Insufficient cpu. "
                                 "preemption: not eligible due to preemptionPolicy=Never.")


def test_the_oracle_takes_feature_gates_and_a_configuration(tmp_path):
    binary_or_skip("1.35")
    case = GOLDEN / "cases" / "hand-01-resources-taint.yaml"
    plain = run("1.35", case, "explain")
    assert "NodeDeclaredFeatures" not in [f["plugin"] for f in plain["pods"][0]["nodes"][0]["filters"]]
    # An alpha gate of v1.35 that adds a plugin to the default profile.
    gated = run("1.35", case, "explain", feature_gates={"NodeDeclaredFeatures": True})
    assert [f["plugin"] for f in gated["pods"][0]["nodes"][0]["filters"]][-1] == "NodeDeclaredFeatures"
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    multiPoint:\n"
                      "      disabled: [{name: TaintToleration}]\n")
    configured = run("1.35", case, "explain", config=config)
    assert "TaintToleration" not in [f["plugin"] for f in configured["pods"][0]["nodes"][0]["filters"]]


def test_regeneration_keeps_the_committed_order_of_reasons_only():
    old = {"reasons": ["Insufficient hugepages-2Mi", "Insufficient example.com/gpu"], "code": "Unschedulable"}
    new = {"reasons": ["Insufficient example.com/gpu", "Insufficient hugepages-2Mi"], "code": "Unschedulable"}
    assert keep_reason_order(new, old) == old
    changed = {"reasons": ["Insufficient cpu"], "code": "Unschedulable"}
    assert keep_reason_order(changed, old) == changed
    assert keep_reason_order({"topNodes": ["b", "a"]}, {"topNodes": ["a", "b"]}) == {"topNodes": ["b", "a"]}
