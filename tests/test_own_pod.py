"""Whether a pod's result names the pod (reuse.names_own_pod): a result that
does is never handed to an identical pod. The search reads the node records
(reuse.records_text) instead of encoding thousands of node dicts; it must
give the answer a search of the document's JSON text gives.

records_text holds exactly the tokens (strings, numbers, literals) of
json.dumps of the node dicts: then a name that cannot straddle two tokens
(no quote, backslash, space, comma, colon or bracket: every Kubernetes name
and generated uid) is found in one text exactly when it is in the other.
This is checked on every golden case (explain, simulate, the configuration
corpus), on cases built to name their own pod, and on hand-made records
whose every field holds a value found nowhere else.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from kschedx.commands.load import Workload, load_workload
from kschedx.framework.dispatch import new_schedulers
from kschedx.framework.records import SKIPPED, FilterTable, FilterVerdict, NodeResult, PluginScore, ScoreTable
from kschedx.framework.interface import Plugin
from kschedx.framework.status import Code, Status
from kschedx.result.document import pod_dict
from kschedx.result.node_record import node_dict
from kschedx.commands.reuse import names_own_pod, records_text
from kschedx.state.types import PodInfo
from kschedx.sources.fixtures import Origin
from builders import HIGH, LOW, ONE_POD, make_node, make_pod, preemption_node, preemption_pod, taint
from golden_compare import GOLDEN, case_names, golden_simulate_steps

GOLDEN_CONFIG = Path(__file__).parent / "golden-config"
_SEPARATORS = re.compile(r'["\\ ,:\[\]{}]+')  # reuse._BOUNDARY


def tokens(text: str) -> set[str]:
    return set(_SEPARATORS.split(text)) - {""}


def old_nodes_text(doc: dict) -> str:
    return json.dumps(doc["nodes"], default=repr, ensure_ascii=False)


def check_result(r, pi: PodInfo, mode: str = "explain") -> tuple[bool, bool]:
    """The node records' text has the tokens of the nodes' JSON text, and
    both searches answer alike for the pod: (whether the document names
    it, whether only its node records do)."""
    doc = pod_dict(r, mode)
    records = r.nodes
    new = records_text(records)
    old = old_nodes_text(doc)
    assert tokens(new) == tokens(old), (pi.key, tokens(old) ^ tokens(new))
    named = names_own_pod(doc, pi, records)
    assert named == names_own_pod(doc, pi)
    rest = json.dumps({k: v for k, v in doc.items() if k not in ("pod", "uid", "nodes")}, default=repr,
                      ensure_ascii=False)
    return named, named and pi.name not in rest and pi.uid not in rest


def explain_results(workload, settle: bool, config=None):
    scheds = new_schedulers(workload.cluster, tie_break="name", seed=None, config=config)
    for pi in scheds.queue_order(workload.pods):
        scheds.sampling.next_start_node_index = 0
        r = scheds.schedule(pi)
        if settle:
            r.settle()
        yield pi, r


@pytest.mark.parametrize("settle", [True, False])
def test_golden_explain_records_have_the_tokens_of_the_nodes_text(settle):
    answers = []
    for name in case_names():
        w = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
        for pi, r in explain_results(w, settle):
            answers.append(check_result(r, pi))
    assert len(answers) > 150
    # Not vacuous: many pods are named, most of them only in node records.
    named = sum(a for a, _ in answers)
    assert 50 < named < len(answers) - 50
    assert sum(b for _, b in answers) > 50


def test_golden_simulate_records_have_the_tokens_of_the_nodes_text():
    for pi, r in golden_simulate_steps():
        check_result(r, pi, "simulate")


@pytest.mark.parametrize("case,config", [(c.name, None) for c in sorted((GOLDEN_CONFIG / "cases").glob("*.json"))]
                         + [("mixed-44.json", "reweighted.yaml"), ("mixed-44.json", "added-affinity.yaml")])
def test_golden_config_records_have_the_tokens_of_the_nodes_text(case, config):
    from kschedx.framework.configured import load_config

    cfg = load_config(str(GOLDEN_CONFIG / "configs" / config)) if config else None
    w = load_workload([str(GOLDEN_CONFIG / "cases" / case)])
    for pi, r in explain_results(w, True, cfg):
        check_result(r, pi)


# -- cases built to name their own pod ----------------------------------------------------
HOST = "kubernetes.io/hostname"


def load(objs) -> Workload:
    origin = Origin("generated")
    return load_workload((), cluster_objects=[(copy.deepcopy(o), origin) for o in objs])


def decisions(objs) -> dict[str, tuple[bool, bool, bool]]:
    """Per pending pod: (new search, old search, whether the part of the
    document other than `nodes` names it)."""
    out = {}
    for pi, r in explain_results(load(objs), True):
        doc = pod_dict(r, "explain")
        records = r.nodes
        assert tokens(records_text(records)) == tokens(old_nodes_text(doc))
        rest = json.dumps({k: v for k, v in doc.items() if k not in ("pod", "uid", "nodes")}, default=repr)
        out[pi.name] = (names_own_pod(doc, pi, records), names_own_pod(doc, pi), pi.name in rest)
    return out


def web(name, node=None, **extra) -> dict:
    return make_pod(name, node=node, labels={"app": "web"},
                    containers=[{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}], **extra)


def test_a_node_whose_name_holds_the_pods():
    # The pod's name is only in an infeasible node's record.
    objs = [make_node("bigger", cpu="4", memory="8Gi", pods="110", taints=[taint("k", "v", "NoSchedule")]),
            make_node("n-small", cpu="4", memory="8Gi", pods="110"),
            web("big"), web("huge")]
    assert decisions(objs) == {"big": (True, True, False), "huge": (False, False, False)}


def test_anti_affinity_against_itself_names_the_other_pod():
    # Required anti-affinity to its own label: web-10 (a name holding the
    # pending pod's) rejects node n1.
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}]}}
    objs = [make_node("n1", cpu="4", memory="8Gi", pods="110", labels={HOST: "n1"}),
            make_node("n2", cpu="4", memory="8Gi", pods="110", labels={HOST: "n2"}),
            web("web-10", node="n1"), web("web-1", affinity=anti), web("db-1", affinity=anti)]
    got = decisions(objs)
    assert got["web-1"][0] == got["web-1"][1]
    assert got["db-1"] == (False, False, False)


def test_score_explanations_naming_another_pod():
    # Preferred affinity: InterPodAffinity's score explanation lists the
    # matching pods, web-10 among them; nothing else names it.
    pref = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": HOST}}]}}
    objs = [make_node("n1", cpu="4", memory="8Gi", pods="110", labels={HOST: "n1"}),
            make_node("n2", cpu="4", memory="8Gi", pods="110", labels={HOST: "n2"}),
            web("web-10", node="n1"), web("web-1", affinity=pref), web("other", affinity=pref)]
    got = decisions(objs)
    assert got["web-1"] == (True, True, False)
    assert got["other"] == (False, False, False)


def test_preemption_victims_and_messages():
    objs = [preemption_node("n1", ONE_POD), preemption_node("n2", ONE_POD),
            preemption_pod("urgent-low", priority=LOW, node="n1"), preemption_pod("low2", priority=LOW, node="n2"),
            preemption_pod("urgent", priority=HIGH)]
    got = decisions(objs)
    assert got["urgent"][0] == got["urgent"][1]


# -- every field of a node record -----------------------------------------------------------
class _Explaining(Plugin):
    name = "m-score-plugin"

    def score_details(self, state, pod_info, node_info):
        return {"m-score-key": [f"m-score-{node_info.name}", 0.5, None, True]}


class _Node:
    """What a ScoreTable reads of a node."""

    def __init__(self, name):
        self.name = name
        self.generation = 0


def hand_made_records() -> list[NodeResult]:
    """Node records in every shape the runner makes, each field holding a
    value no other field holds."""
    listed = NodeResult(
        "m-node-listed",
        filters=[FilterVerdict("m-fp1", Status(Code.UNSCHEDULABLE, "m-reason-1", plugin="m-fp1",
                                                details={"m-fd-key": "m-fd-value"})),
                 FilterVerdict("m-fp2", None, {"m-sd-key": ["m-sd-value", 7001]}),
                 FilterVerdict("m-fp3", None)],
        status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "m-node-reason", plugin="m-node-plugin"),
        first_failure="m-first", feasible=False,
        scores=[PluginScore("m-sp1", 7002, 7003, 7004, False, {"m-sc-key": "m-sc-value"}),
                PluginScore("m-sp2", 0, 0, 7005, True)],
        total=7006)
    extended = NodeResult("m-node-extender", feasible=True, scores=[], total=7007)
    extended.extender_filters = [("m-ext-1", Status(Code.UNSCHEDULABLE, "m-ext-reason"), {"m-ext-key": 1}),
                                 ("m-ext-2", None, None)]
    extended.extender_scores = [("m-ext-3", 7008, 7009, 7010)]
    table = FilterTable(["m-tp1", "m-tp2", "m-tp3"], [
        None, SKIPPED,
        [Status(Code.UNSCHEDULABLE, "m-table-reason", plugin="m-tp3", details=["m-table-detail"]),
         None, Status(Code.SUCCESS, details={"m-pass-key": "m-pass-value"})]])
    from kschedx.state.types import generation_mark

    nodes = [_Node("m-node-t0"), _Node("m-node-t1"), _Node("m-node-t2")]
    scores = ScoreTable(None, None, nodes[1:])
    scores.generation = generation_mark()
    scores.add(_Explaining(None), 7011, [7012, 7013], [7014, 7015])
    scores.add(type("S", (Plugin,), {"name": "m-skipped-plugin"})(None), 7016, None, None)
    out = [listed, extended]
    for i, n in enumerate(nodes):
        nr = NodeResult.from_table(n.name, table, i)
        if i == 0:
            nr.status, nr.first_failure = table.columns[2][0], "m-tp3"
        else:
            nr.feasible = True
            nr.set_score_row(scores, i - 1, 7020 + i)
        out.append(nr)
    return out


@pytest.mark.parametrize("settle", [False, True])
def test_every_field_of_a_node_record_is_searched(settle):
    records = hand_made_records()
    if settle:
        records[-1].settle()
    old = json.dumps([node_dict(nr) for nr in records], default=repr, ensure_ascii=False)
    new = records_text(records)
    assert tokens(new) == tokens(old)
    markers = {t for t in tokens(old) if t.startswith("m-") or t.startswith("70")}
    assert len(markers) > 40  # each field's own value
    for marker in markers:
        assert marker in new
    # Each marker is a pod name the search finds, and only where it is.
    doc = {"pod": "default/x", "uid": "u", "status": "Scheduled", "nodes": [node_dict(nr) for nr in records]}
    for name in sorted(markers) + ["m-nowhere", "7999"]:
        pi = type("P", (), {"name": name, "uid": "uid-" + name})()
        assert names_own_pod(doc, pi, records) == names_own_pod(doc, pi) == (name in old)


def test_names_that_could_straddle_tokens_are_searched_in_the_whole_text():
    # A quote, space or comma could join two tokens: such a name (never a
    # Kubernetes name) is searched in the nodes' JSON text itself.
    records = hand_made_records()
    doc = {"pod": "default/x", "uid": "u", "nodes": [node_dict(nr) for nr in records]}
    for name in ('m-fp1", "code', "m-reason-1\"], ", "7002, "):
        pi = type("P", (), {"name": name, "uid": "some-uid"})()
        assert names_own_pod(doc, pi, records) is True
        assert names_own_pod(doc, pi, records) == names_own_pod(doc, pi)
