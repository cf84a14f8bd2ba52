"""--nodes all|failing|top=N|NAME,...: which node records a pod's document
keeps. Every other pod field, filterSummary and nodeCounts among them, is the
same whatever the choice, and filterSummary / nodeCounts are what the full
`nodes` list says."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.cli.main import main
from kschedx.result.node_choice import NodeChoice, NodeChoiceError, parse_node_choice
from golden_compare import GOLDEN, case_names

CLUSTER = "fixtures/cluster/"
PODS = ["fixtures/pods/web.yaml", "fixtures/pods/too-big.yaml", "fixtures/pods/gpu-training.yaml"]


def left_out_by_pre_filter(node: dict, pfr: dict | None) -> bool:
    """A node the PreFilterResult left out, by its record: not one of the
    nodeNames, and carrying the status kube-scheduler gives such nodes (a
    nominated node filtered on its own keeps its own)."""
    if pfr is None or node["name"] in pfr["nodeNames"]:
        return False
    st = node.get("status") or {}
    return (st.get("code") == "UnschedulableAndUnresolvable" and not st.get("plugin")
            and st.get("reasons") == [f"node(s) didn't satisfy plugin(s) [{' '.join(pfr['plugins'])}]"])


def summary_from_nodes(nodes: list[dict], pfr: dict | None = None) -> dict:
    """filterSummary as the full node list spells it: every reason of every
    verdict other than Success and Skip counts its node once; nodes the
    PreFilterResult `pfr` left out failed no Filter plugin, uncounted."""
    counts: dict = {}
    for n in nodes:
        if left_out_by_pre_filter(n, pfr):
            continue
        for f in n.get("filters") or ():
            if f["code"] in ("Success", "Skip"):
                continue
            tally = counts.setdefault(f["plugin"], {})
            for reason in f["reasons"] or [f["code"]]:
                tally[reason] = tally.get(reason, 0) + 1
    return counts


def expected_names(choice: str, pod: dict) -> list[str]:
    """The nodes a choice keeps, worked out from the full list."""
    nodes = pod["nodes"]
    selected = pod["selectedNode"]
    if choice == "all":
        return [n["name"] for n in nodes]
    if choice == "failing":
        return [n["name"] for n in nodes if not n["feasible"] or n["name"] == selected]
    if choice.startswith("top="):
        k = int(choice[4:])
        ranked = sorted((n for n in nodes if n["feasible"]),
                        key=lambda n: (n.get("totalScore") is None, -(n.get("totalScore") or 0), n["name"]))
        best = [n["name"] for n in ranked[:k]]
        if selected and selected not in best:
            best = best[:k - 1] + [selected]
        return [n["name"] for n in nodes if n["name"] in best]
    wanted = set(choice.split(","))
    return [n["name"] for n in nodes if n["name"] in wanted]


def _choices(doc: dict) -> list[str]:
    names = sorted({n["name"] for p in doc["pods"] for n in p["nodes"]})
    picks = ["failing", "top=1", "top=2"]
    if names:
        picks.append(",".join(names[::2]))
    return picks


def _check_choices(doc: dict, run):
    for pod in doc["pods"]:
        assert pod["filterSummary"] == summary_from_nodes(pod["nodes"], pod.get("preFilterResult")), pod["pod"]
        # Plugins in profile order (as in every node's filters), reasons most first.
        order = [f["plugin"] for f in (pod["nodes"][0]["filters"] if pod["nodes"] else ())]
        assert list(pod["filterSummary"]) == [p for p in order if p in pod["filterSummary"]]
        for tally in pod["filterSummary"].values():
            assert list(tally.values()) == sorted(tally.values(), reverse=True)
        assert pod["nodeCounts"] == {"nodes": len(pod["nodes"]),
                                     "feasible": sum(1 for n in pod["nodes"] if n["feasible"])}
    for choice in _choices(doc):
        chosen = run(parse_node_choice(choice))
        assert chosen["nodeDetail"] == choice
        assert {k: v for k, v in chosen.items() if k not in ("pods", "nodeDetail")} == \
            {k: v for k, v in doc.items() if k != "pods"}
        assert len(chosen["pods"]) == len(doc["pods"])
        for full, part in zip(doc["pods"], chosen["pods"]):
            assert {k: v for k, v in part.items() if k != "nodes"} == {k: v for k, v in full.items() if k != "nodes"}
            by_name = {n["name"]: n for n in full["nodes"]}
            assert [n["name"] for n in part["nodes"]] == expected_names(choice, full), (choice, full["pod"])
            # The records kept are the full list's, unchanged.
            assert all(n == by_name[n["name"]] for n in part["nodes"])


@pytest.mark.parametrize("name", case_names())
def test_every_choice_keeps_the_pod_fields_of_every_golden_case(name):
    workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    doc = explain(workload, tie_break="name")
    assert "nodeDetail" not in doc
    _check_choices(doc, lambda choice: explain(workload, tie_break="name", nodes=choice))


@pytest.mark.parametrize("name", case_names()[::3])
def test_every_choice_in_simulate(name):
    def run(choice=None):
        workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
        return simulate(workload, tie_break="name", nodes=choice)

    _check_choices(run(), run)


def test_placements_detail_keeps_the_summary():
    workload = load_workload([CLUSTER] + PODS[1:2])
    full = simulate(workload, tie_break="name")
    workload = load_workload([CLUSTER] + PODS[1:2])
    placements = simulate(workload, tie_break="name", detail="placements")
    pod, lean = full["pods"][0], placements["pods"][0]
    assert lean["nodes"] == [] and lean["filterSummary"] == pod["filterSummary"] != {}
    assert lean["nodeCounts"] == pod["nodeCounts"] == {"nodes": 5, "feasible": 0}


def test_parse():
    assert parse_node_choice("all").is_all
    assert parse_node_choice("failing") == NodeChoice("failing")
    assert parse_node_choice("top=3") == NodeChoice("top", top=3)
    assert parse_node_choice("a,b,a") == NodeChoice("names", names=("a", "b"))
    assert parse_node_choice("worker-a1") == NodeChoice("names", names=("worker-a1",))
    # A node named like a keyword: a trailing comma makes it a list.
    assert parse_node_choice("failing,") == NodeChoice("names", names=("failing",))
    assert NodeChoice("names", names=("failing",)).text == "failing,"
    for bad in ("top=0", "top=x", "top=", ",", ""):
        with pytest.raises(NodeChoiceError):
            parse_node_choice(bad)


def _cli(*args):
    return CliRunner().invoke(main, list(args))


def test_cli_failing_json():
    r = _cli("explain", *PODS, "--snapshot", CLUSTER, "-o", "json", "--nodes", "failing", "--tie-break", "name")
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert doc["nodeDetail"] == "failing"
    for pod in doc["pods"]:
        assert all(not n["feasible"] or n["name"] == pod["selectedNode"] for n in pod["nodes"])
        assert len(pod["nodes"]) <= pod["nodeCounts"]["nodes"]


def test_cli_unknown_node_names_are_a_usage_error():
    r = _cli("explain", PODS[0], "--snapshot", CLUSTER, "--nodes", "worker-a1,worker-z9")
    assert r.exit_code == 2
    assert "no node named 'worker-z9'" in r.stderr and "did you mean" in r.stderr and "--nodes" in r.stderr
    r = _cli("simulate", PODS[0], "--snapshot", CLUSTER, "--nodes", "top=0")
    assert r.exit_code == 2 and "top=N" in r.stderr


def test_cli_node_story_survives_a_narrow_choice():
    # --node NAME is kept whatever --nodes leaves out.
    r = _cli("explain", PODS[0], "--snapshot", CLUSTER, "--nodes", "top=1", "--node", "worker-b2")
    assert r.exit_code == 0, r.output
    assert "worker-b2" in r.stdout and "NodeUnschedulable" in r.stdout


def test_fixes_read_every_node_whatever_is_written():
    args = ["explain", PODS[1], "--snapshot", CLUSTER, "--fix", "-o", "json", "--tie-break", "name"]
    full = json.loads(_cli(*args).stdout)["pods"][0]
    lean = json.loads(_cli(*args, "--nodes", "top=1").stdout)["pods"][0]
    assert full["fixes"] and lean["fixes"] == full["fixes"]
    assert lean["nodes"] == [] and len(full["nodes"]) == 5


ALL_PODS = [f"fixtures/pods/{n}" for n in ("web.yaml", "too-big.yaml", "gpu-training.yaml", "canary.yaml",
                                           "ingress.yaml", "orders-db.yaml")]


@pytest.mark.parametrize("choice", ["failing", "top=1", "worker-a1,gpu-b1"])
@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_every_output_format_works_with_part_of_the_nodes(command, choice, tmp_path):
    """Human, wide, the machine and CI formats and the HTML report: each
    writes a document of some nodes, with the exit code of all of them."""
    base = [command, *ALL_PODS, "--snapshot", CLUSTER, "--tie-break", "name"]
    for output in ("human", "wide", "json", "yaml", "jsonl", "junit", "github", "tap"):
        every = _cli(*base, "-o", output)
        part = _cli(*base, "-o", output, "--nodes", choice, "--report", str(tmp_path / f"{output}.html"))
        assert part.exit_code == every.exit_code == 1, (output, part.output)
        assert "Traceback" not in part.output and "internal error" not in part.stderr
        assert (tmp_path / f"{output}.html").read_text().rstrip().endswith("</html>")
        if output in ("junit", "github", "tap"):
            # They never show node records: the same report.
            assert part.stdout == every.stdout
    html = (tmp_path / "human.html").read_text()
    if command == "explain":
        assert f"shown below (--nodes {choice})" in html and "Filter failures on every node" in html


def test_human_output_counts_every_node_and_shows_the_summary():
    out = _cli("explain", PODS[0], PODS[1], "--snapshot", CLUSTER, "--tie-break", "name",
               "--nodes", "top=1").stdout
    assert "5 nodes · feasible: 0 · shown below: 0 (--nodes top=1)" in out
    assert "5 nodes · feasible: 3 · shown below: 1 (--nodes top=1)" in out
    # too-big fits nowhere: every node's failures, counted.
    assert "5  NodeResourcesFit   ✗ Insufficient cpu" in out
    assert "scores shown for 1 node (--nodes top=1)" in out and "nodes scored" not in out
    # With every node the report is what it always was: no summary block.
    every = _cli("explain", PODS[0], "--snapshot", CLUSTER, "--tie-break", "name").stdout
    assert "shown below" not in every and "nodes scored: 3 of 5" in every


# -- nodes PreFilter left out (a PreFilterResult) ------------------------------------
PINNED = """apiVersion: v1
kind: Pod
metadata: {name: pinned, namespace: monitoring}
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchFields: [{key: metadata.name, operator: In, values: [worker-a1]}]
  containers: [{name: c, image: i, resources: {requests: {cpu: "3"}}}]
"""


def _pinned(tmp_path, nominated: str | None = None) -> str:
    text = PINNED + (f"status: {{nominatedNodeName: {nominated}}}\n" if nominated else "")
    path = tmp_path / "pinned.yaml"
    path.write_text(text)
    return str(path)


def test_nodes_prefilter_left_out_are_not_in_the_summary(tmp_path):
    # Only worker-a1 is a candidate; the 4 others fail no Filter plugin.
    r = _cli("explain", _pinned(tmp_path), "--snapshot", CLUSTER, "-o", "json", "--tie-break", "name")
    pod = json.loads(r.stdout)["pods"][0]
    assert pod["preFilterResult"] == {"nodeNames": ["worker-a1"], "plugins": ["NodeAffinity"]}
    assert "1 Insufficient cpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity]" in pod["message"]
    assert pod["filterSummary"] == {"NodeResourcesFit": {"Insufficient cpu": 1}}
    # A DaemonSet-like pod whose one candidate fits: nothing failed.
    r = _cli("explain", "fixtures/pods/log-agent.yaml", "--snapshot", CLUSTER, "-o", "json")
    pod = json.loads(r.stdout)["pods"][0]
    assert pod["preFilterResult"]["nodeNames"] == ["worker-b2"] and pod["filterSummary"] == {}


def test_a_nominated_node_left_out_is_filtered_and_counted(tmp_path):
    # kube-scheduler filters the nominated node before the candidates
    # narrow: its NodeAffinity failure is in the message, and so counted.
    r = _cli("explain", _pinned(tmp_path, "worker-b1"), "--snapshot", CLUSTER, "-o", "json", "--tie-break", "name")
    pod = json.loads(r.stdout)["pods"][0]
    assert "1 node(s) didn't match Pod's node affinity/selector, 3 node(s) didn't satisfy" in pod["message"]
    assert pod["filterSummary"] == {"NodeAffinity": {"node(s) didn't match Pod's node affinity/selector": 1},
                                    "NodeResourcesFit": {"Insufficient cpu": 1}}
    assert pod["filterSummary"] == summary_from_nodes(pod["nodes"], pod["preFilterResult"])


def test_the_summary_of_built_records_leaves_the_same_nodes_out(tmp_path):
    """Counted from the runner's tables or from node records already built
    (once anything read them), the summary is the same."""
    from kschedx.framework.dispatch import new_schedulers

    def cycle(w):
        scheds = new_schedulers(w.cluster, tie_break="name", seed=None)
        return scheds.schedule(next(pi for pi in w.pods if pi.key == "monitoring/pinned"))

    for nominated in (None, "worker-b1"):
        w = load_workload([CLUSTER, _pinned(tmp_path, nominated)])
        from_tables = cycle(w).filter_summary()
        r = cycle(load_workload([CLUSTER, _pinned(tmp_path, nominated)]))
        assert len(r.nodes) == 5  # built first
        assert r.filter_summary() == from_tables
        assert ("NodeAffinity" in from_tables) == bool(nominated) and "NodeResourcesFit" in from_tables


def test_human_summary_says_it_counts_the_candidates(tmp_path):
    out = _cli("explain", _pinned(tmp_path), "--snapshot", CLUSTER, "--tie-break", "name", "--nodes", "top=1").stdout
    assert "5 nodes · feasible: 0 · shown below: 0 (--nodes top=1)" in out
    assert "1  NodeResourcesFit  ✗ Insufficient cpu" in out
    assert "TaintToleration" not in out and "NodeUnschedulable" not in out
    assert "every Filter failure on the candidate nodes PreFilter left" in out
