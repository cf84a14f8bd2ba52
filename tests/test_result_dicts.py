"""Node dicts built a plugin column at a time (result/node_dicts.py),
equal entries shared, are result.node_dict's dicts: equal, keys in the same
order, on every golden case and on records of every shape."""

from __future__ import annotations

import json

import pytest

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.framework.dispatch import new_schedulers
from kschedx.result.node_record import node_dict
from kschedx.result.node_dicts import node_dicts
from golden_compare import GOLDEN, case_names, golden_simulate_steps
from test_own_pod import hand_made_records


def check(records) -> list[dict]:
    built = node_dicts(records)
    reference = [node_dict(nr) for nr in records]
    assert built == reference
    assert json.dumps(built, default=repr, ensure_ascii=False) == \
        json.dumps(reference, default=repr, ensure_ascii=False)  # key order too
    return built


@pytest.mark.parametrize("settle", [True, False, "without score details"])
def test_golden_explain_node_dicts(settle):
    # "without score details": as for the human report, which reads none.
    for name in case_names():
        w = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
        scheds = new_schedulers(w.cluster, tie_break="name", seed=None)
        for pi in scheds.queue_order(w.pods):
            scheds.sampling.next_start_node_index = 0
            r = scheds.schedule(pi)
            if settle is True:
                r.settle()
            elif settle:
                r.settle(score_details=False)
            check(r.nodes)


def test_golden_simulate_node_dicts():
    for _, r in golden_simulate_steps():
        check(r.nodes)


@pytest.mark.parametrize("settle", [False, True])
def test_records_of_every_shape(settle):
    records = hand_made_records()
    if settle:
        records[-1].settle()
    check(records)


def _built_for_one_pod_of_30_nodes() -> list[dict]:
    from test_reuse import groups_cluster, load

    w = load(groups_cluster(groups=1, replicas=1, nodes=30))
    scheds = new_schedulers(w.cluster, tie_break="name", seed=None)
    r = scheds.schedule(w.pods[0])
    r.settle()
    return check(r.nodes)


def test_equal_entries_are_one_dict():
    built = _built_for_one_pod_of_30_nodes()
    entries = [f for n in built for f in n["filters"]] + [s for n in built for s in n["scores"]]
    assert len({id(e) for e in entries}) < len(entries) // 5


def test_nodes_with_the_same_verdicts_share_their_filters_list():
    built = _built_for_one_pod_of_30_nodes()
    assert len({id(n["filters"]) for n in built}) == 1


@pytest.mark.parametrize("name", case_names()[::7] + ["generated"])
def test_the_report_of_shared_dicts_is_the_report_of_a_copy(name):
    # The human report reads shared verdicts once (layout._distinct_verdicts):
    # drawn from the document or from a copy sharing nothing, it is the same.
    import copy

    from kschedx.render.blocks import ASCII
    from kschedx.render.layout import build
    from test_reuse import groups_cluster, load

    if name == "generated":
        w = load(groups_cluster(groups=4, replicas=2, nodes=40))
    else:
        w = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    doc = explain(w, tie_break="name")
    apart = json.loads(json.dumps(doc, default=repr))
    assert apart == doc
    for wide in (False, True):
        assert repr(build(doc, wide=wide, sym=ASCII)) == repr(build(apart, wide=wide, sym=ASCII))
    assert repr(build(doc)) == repr(build(copy.deepcopy(doc)))
