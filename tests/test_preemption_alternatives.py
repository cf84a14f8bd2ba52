"""The issue's example end to end (fixtures/preemption-search/ with
fixtures/config/few-preemption-candidates.yaml): nine full nodes, seven
where preemption can make room, minCandidateNodesPercentage 50 and
minCandidateNodesAbsolute 2, so kube-scheduler compares 3 candidates. The
victims each node needs: node-0 5, node-1 6, node-2 7, node-3 1, node-4 2,
node-5 4, node-6 3; node-7 and node-8 are tainted.

Counted by hand: a candidate is nominated when the other two candidates
found are worse, so its share of the C(7, 3) = 35 sets is C(worse, 2) / 35:
node-3 15/35, node-4 10/35, node-6 6/35, node-5 3/35, node-0 1/35; node-1 and
node-2 never (fewer than two candidates are worse). The walk from offset 0
finds node-0, node-1, node-2 and nominates node-0.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from kschedx.cli.main import main
from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.framework.configured import load_config

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = str(ROOT / "fixtures" / "preemption-search" / "cluster.yaml")
POD = str(ROOT / "fixtures" / "preemption-search" / "urgent.yaml")
CONFIG = str(ROOT / "fixtures" / "config" / "few-preemption-candidates.yaml")
VICTIMS = {"node-0": 5, "node-1": 6, "node-2": 7, "node-3": 1, "node-4": 2, "node-5": 4, "node-6": 3}
SHARES = {"node-3": 15, "node-4": 10, "node-6": 6, "node-5": 3, "node-0": 1}  # of 35


@lru_cache(maxsize=None)
def pod_result(tie_break: str = "name", seed: int | None = None, config: bool = True) -> dict:
    doc = explain(load_workload([CLUSTER], [POD]), tie_break=tie_break, seed=seed,
                  config=load_config(CONFIG) if config else None)
    [pod] = doc["pods"]
    return pod


def cli(*args) -> str:
    result = CliRunner().invoke(main, ["explain", POD, "--snapshot", CLUSTER, "--config", CONFIG, *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_walk_from_offset_zero_examines_three_and_nominates_node_0():
    pre = pod_result()["preemption"]
    assert pre["nominatedNode"] == "node-0" and len(pre["victims"]) == 5
    assert pre["sampling"] == {"potentialNodes": 7, "offset": 0, "numCandidates": 3, "evaluatedNodes": 3}
    assert [c["node"] for c in pre["candidates"]] == ["node-0", "node-1", "node-2"]


def test_search_and_alternatives_as_counted_by_hand():
    pre = pod_result()["preemption"]
    assert pre["search"] == {"potentialNodes": 7, "candidatesWanted": 3, "nodesWithVictims": 7, "couldDiffer": True,
                             "outcomes": 5}
    assert [(a["nominatedNode"], a["share"], a["chosen"]) for a in pre["alternatives"]] == [
        (n, round(k / 35, 6), n == "node-0") for n, k in SHARES.items()]
    for a in pre["alternatives"]:
        node = a["nominatedNode"]
        assert [v["pod"] for v in a["victims"]] == [f"batch/batch-{node[-1]}-{j}" for j in range(VICTIMS[node])]
        assert a["pdbViolations"] == 0


def test_each_candidate_nodes_record_says_whether_it_can_be_nominated():
    records = {n["name"]: n.get("preemption") for n in pod_result()["nodes"]}
    assert records["node-7"] is None and records["node-8"] is None  # tainted: not potential nodes
    for name, victims in VICTIMS.items():
        assert records[name] == {"numVictims": victims, "pdbViolations": 0, "couldBeNominated": name in SHARES,
                                 "share": round(SHARES.get(name, 0) / 35, 6)}


def test_default_args_compare_every_node_and_cannot_differ():
    pre = pod_result(config=False)["preemption"]
    assert pre["nominatedNode"] == "node-3"
    assert pre["sampling"]["evaluatedNodes"] == 7
    assert pre["search"] == {"potentialNodes": 7, "candidatesWanted": 7, "nodesWithVictims": 7, "couldDiffer": False,
                             "outcomes": 1}
    assert "alternatives" not in pre


@pytest.mark.parametrize("seed", range(25))
def test_random_offsets_nominate_the_best_of_the_three_found_always_a_listed_outcome(seed):
    pre = pod_result("random", seed)["preemption"]
    offset = pre["sampling"]["offset"]
    order = [f"node-{i}" for i in range(7)]  # node-tree order: one zone, the fixture's order
    found = [order[(offset + i) % 7] for i in range(3)]
    assert pre["nominatedNode"] == min(found, key=VICTIMS.get)
    chosen = [a["nominatedNode"] for a in pre["alternatives"] if a["chosen"]]
    assert chosen == [pre["nominatedNode"]]


def test_human_output_says_what_else_could_happen_under_the_verdict():
    lines = cli("--tie-break", "name").splitlines()
    i = next(i for i, line in enumerate(lines) if "preemption: nominated node node-0" in line)
    assert lines[i + 1].strip() == (
        "preemption examined 3 of 7 potential nodes from a random offset; 4 other outcomes are possible: "
        "node-3 (1 victim, 43%), node-4 (2 victims, 29%), node-6 (3 victims, 17%), … (+1); this one 3% "
        "· --node/-o json for all")
    wide = cli("--tie-break", "name", "-o", "wide")
    assert "node-6 (3 victims, 17%), node-5 (4 victims, 9%); this one 3%" in wide


@pytest.mark.parametrize("node,line", [
    ("node-0", "preemption nominates it, evicting 5 pods: 3% of kube-scheduler's examination orders do "
               "(4 other outcomes possible)"),
    ("node-5", "preemption could nominate it instead, evicting 4 pods, in 9% of kube-scheduler's examination "
               "orders"),
    ("node-1", "a preemption candidate, evicting 6 pods, but never nominated: whatever the order, the candidates "
               "kube-scheduler finds with it hold a better one"),
])
def test_node_says_whether_the_node_could_be_nominated_and_lists_the_outcomes(node, line):
    out = cli("--tie-break", "name", "--node", node)
    assert line in out
    assert "preemption outcomes (5 possible)" in out
    rows = [r.split() for r in out.splitlines() if r.startswith("  node-") and "batch/batch-" in r]
    assert [r[0] for r in rows] == list(SHARES)
    mark = next(r for r in rows if r[0] == node) if node in SHARES else None
    assert mark is None or "this" in mark


def test_a_tainted_node_says_nothing_of_preemption():
    out = cli("--tie-break", "name", "--node", "node-7")
    story = out[out.index("node node-7:"):out.index("preemption outcomes")]
    assert "preemption" not in story and "never nominated" not in story


def test_html_report_lists_the_outcomes(tmp_path):
    report = tmp_path / "r.html"
    cli("--tie-break", "name", "--report", str(report))
    html = report.read_text()
    assert "preemption examined 3 of 7 potential nodes from a random offset" in html
    table = html[html.index('<table class="alternatives">'):]
    table = table[:table.index("</table>")]
    assert [row.split("</th>")[0].split(">")[-1] for row in table.split('<tr><th scope="row">')[1:]] == list(SHARES)
    assert table.count("chosen by kschedx") == 1


def test_json_output_holds_the_fields():
    doc = json.loads(cli("--tie-break", "name", "-o", "json"))
    pre = doc["pods"][0]["preemption"]
    assert pre["search"]["couldDiffer"] and len(pre["alternatives"]) == 5
    assert "nodePreemption" not in pre


def test_simulate_counts_the_preemptions_that_could_have_gone_otherwise():
    doc = simulate(load_workload([CLUSTER], [POD]), tie_break="name", config=load_config(CONFIG))
    assert doc["summary"]["preemptions"] == 1 and doc["summary"]["preemptionsCouldDiffer"] == 1
    [p] = doc["pods"]
    assert p["placedNode"] == "node-0"  # the run follows kschedx's choice
    result = CliRunner().invoke(main, ["simulate", POD, "--snapshot", CLUSTER, "--config", CONFIG,
                                       "--tie-break", "name"])
    assert "1 placed (1 by preemption, 5 victim(s); 1 preemption(s) could have gone otherwise)" in result.output
    assert "preemption: 1 of 1 preemption(s) could have gone otherwise" in result.output
    # With the default args nothing could differ: no count, no line.
    doc = simulate(load_workload([CLUSTER], [POD]), tie_break="name")
    assert doc["summary"]["preemptionsCouldDiffer"] == 0 and doc["pods"][0]["placedNode"] == "node-3"
