"""The human report reads a pod's node records through a NodeView
(result/node_view.py): groups, codes, counts and its best rows taken from
the runner's records and tables. Each answer is the one the report takes
from node_dicts' dicts, on every golden case and on records of every
shape; the report drawn from a view is the report drawn from the dicts, and
the default report of many nodes builds no dict but its rows'."""

from __future__ import annotations

import io

import pytest

from kschedx.commands.explain import explain_into
from kschedx.commands.load import load_workload
from kschedx.framework.dispatch import new_schedulers
from kschedx.render.human import HumanSink
from kschedx.render.report_filters import _distinct_verdicts, _failure_groups
from kschedx.render.report_scores import _best, _columns, _view_columns
from kschedx.result.node_dicts import node_dicts
from kschedx.result.node_view import VIEW_MIN_NODES, NodeView, node_view
from golden_compare import GOLDEN, case_names, golden_simulate_steps
from test_own_pod import hand_made_records


def _codes_of(dicts) -> dict:
    codes: dict = {}
    for f in _distinct_verdicts(dicts):
        codes.setdefault(f["plugin"], set()).add(f["code"])
    return codes


def _unscored_of(dicts) -> dict:
    out: dict = {}
    for n in dicts:
        if n.get("scores") is None:
            out.setdefault(n.get("firstFailure") or ("feasible, not scored" if n.get("feasible") else "?"),
                           []).append(n["name"])
    return out


def agree(records) -> NodeView:
    """Every answer of a view of `records` against the dicts' own."""
    view = NodeView(records)
    dicts = node_dicts(records)
    assert len(view) == len(dicts)
    groups = view.failure_groups()
    if groups is not None:
        assert groups == _failure_groups(dicts)
    codes = view.filter_codes()
    if codes is not None:
        assert codes == _codes_of(dicts)
        assert list(codes) == list(_codes_of(dicts))
    scored = [n for n in dicts if n.get("scores") is not None]
    assert view.scored_count() == len(scored)
    assert view.unscored() == _unscored_of(dicts)
    for n in (1, 2, 10, len(records) + 1):
        assert view.best(n) == _best(scored, n)
    if scored:
        best = _best(scored, 1)[0]
        columns = _view_columns(view, best)
        if columns is not None:
            assert columns == _columns(dicts, best)
    assert list(view) == dicts  # the Sequence is the dicts
    return view


def _cycles(w, sampling="all"):
    scheds = new_schedulers(w.cluster, tie_break="name", seed=None, sampling=sampling)
    for pi in scheds.queue_order(w.pods):
        scheds.sampling.next_start_node_index = 0
        r = scheds.schedule(pi)
        r.settle(score_details=False)  # as the human report's runs settle
        yield r


def test_golden_explain_records():
    answered = 0
    for name in case_names():
        w = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
        for r in _cycles(w):
            view = agree(r.nodes)
            answered += view.filter_codes() is not None and view.score_columns() is not None
    assert answered  # the tables answered, not only the fallbacks


def test_golden_simulate_records():
    for _, r in golden_simulate_steps():
        agree(r.nodes)


def test_records_of_every_shape_fall_back_to_the_dicts():
    records = hand_made_records()
    view = agree(records)
    # Verdicts listed one by one and an extender's: the dicts answer.
    assert view.filter_codes() is None and view.score_columns() is None


def test_a_node_failing_without_a_first_failure():
    from kschedx.framework.records import NodeResult
    from kschedx.framework.status import Code, Status

    odd = NodeResult("odd", status=Status(Code.UNSCHEDULABLE, "odd-reason", plugin="odd-plugin"), feasible=False)
    assert agree(hand_made_records() + [odd]).unscored()["?"] == ["odd"]


def _cluster(nodes: int) -> list[dict]:
    """Nodes failing in several ways (taint, affinity, size), more feasible
    nodes than kube-scheduler scores (sampling leaves some unscored), and
    plugins that score 0 or skip."""
    from builders import make_node, make_pod

    objs = []
    for i in range(nodes):
        name = f"node-{i:03d}"
        taints = [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}] if i % 7 == 0 else []
        objs.append(make_node(name, cpu="1" if i % 11 == 0 else "8", memory="16Gi", pods="110",
                              labels={"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"z{i % 3}",
                                      "disk": "ssd" if i % 5 else "hdd"}, taints=taints))
        if i % 4 == 0:
            objs.append(make_pod(f"run-{i}", node=name, labels={"app": "web"},
                                 containers=[{"name": "c", "image": "x",
                                              "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]))
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}}
    objs.append(make_pod("web-new", labels={"app": "web"}, affinity=affinity,
                         containers=[{"name": "c", "image": "x",
                                      "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]))
    objs.append(make_pod("nowhere", containers=[{"name": "c", "image": "x",
                                                  "resources": {"requests": {"cpu": "64"}}}]))
    return objs


@pytest.fixture(scope="module")
def big():
    return _cluster(300)


@pytest.mark.parametrize("sampling", ["all", "upstream"])
def test_a_big_cluster_records(big, sampling):
    from test_reuse import load

    views = []
    for r in _cycles(load(big), sampling):
        views.append(agree(r.nodes))
        agree(list(reversed(r.nodes)))  # ties ranked by name, not by node order
    assert all(v.filter_codes() is not None and v.failure_groups() is not None for v in views)
    assert any(v.scored_count() == 0 for v in views)
    # Sampling leaves feasible nodes unscored.
    assert any(v.unscored().get("feasible, not scored") for v in views) == (sampling == "upstream")


def _report(objs, sink_view, sampling="all") -> tuple[str, list]:
    from test_reuse import load

    out = io.StringIO()
    sink = HumanSink(out=out, color=False)
    views = []
    if sink_view:
        def kept(records):
            v = node_view(records)
            views.append(v)
            return v

        sink.node_records_view = kept
    else:
        sink.node_records_view = None
    explain_into(sink, load(objs), tie_break="name", sampling=sampling)
    return out.getvalue(), views


@pytest.mark.parametrize("sampling", ["all", "upstream"])
def test_the_report_of_a_view_is_the_report_of_the_dicts(big, sampling):
    text, views = _report(big, True, sampling)
    assert text == _report(big, False, sampling)[0]
    assert views and all(isinstance(v, NodeView) for v in views)
    # Only its rows were built: the view's dicts never were.
    assert all(v._dicts is None for v in views)
    assert "grouped by the failure kube-scheduler reports" in text


def test_a_few_nodes_are_dicts():
    assert type(node_view(hand_made_records())) is list
    assert len(hand_made_records()) < VIEW_MIN_NODES


def test_wide_and_node_reports_read_the_dicts():
    assert HumanSink(out=io.StringIO()).node_records_view is node_view
    assert HumanSink(out=io.StringIO(), wide=True).node_records_view is None
    assert HumanSink(out=io.StringIO(), node="n").node_records_view is None


def test_scores_listed_one_by_one_are_read_from_the_dicts(big):
    from dataclasses import replace

    from test_reuse import load

    r = next(r for r in _cycles(load(big)) if any(nr.scored for nr in r.nodes))
    records = r.nodes
    view = NodeView(records)
    zero = view.score_columns()[2]
    assert zero  # a plugin scores 0 on every node...
    nr = next(nr for nr in records if nr.scored)
    # ...but on one node whose scores were listed: the dicts say so.
    nr.scores = [replace(s, normalized=1) if s.plugin == zero[0] else s for s in nr.scores]
    view = agree(records)
    assert view.score_columns() is None

