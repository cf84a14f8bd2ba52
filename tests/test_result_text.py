"""Node records written straight from the runner's records (result/node_text.py) are
byte for byte what writing result.node_dict's dicts gives."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedx.commands.explain import explain_into
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate_into
from kschedx.framework.records import FilterVerdict, NodeResult, PluginScore
from kschedx.framework.status import Code, Status
from kschedx.render.machine import MEMBER_NEWLINE, JsonSink, to_json
from kschedx.result.json_text import indented as _indented
from kschedx.result.node_record import node_dict
from kschedx.result.node_text import node_records_text
from kschedx.result.sink import DocumentSink, ResultSink
from golden_compare import GOLDEN, case_names

NEWLINES = (MEMBER_NEWLINE, "\n", "\n   ")


def reference(records, nl: str) -> str:
    return _indented([node_dict(n) for n in records], nl)


def json_reference(records, nl: str) -> str:
    text = json.dumps([node_dict(n) for n in records], indent=2, ensure_ascii=False)
    return text.replace("\n", nl)


def compact_reference(records) -> str:
    return json.dumps([node_dict(n) for n in records], ensure_ascii=False, separators=(",", ":"))


class CompareRecords(ResultSink):
    """Takes each pod's records where the run computes them, and checks both
    ways of writing them there (the snapshot may change after the pod)."""

    def __init__(self):
        self.pods = 0

    def node_records_encoder(self, records):
        for nl in NEWLINES:
            assert node_records_text(records, nl) == reference(records, nl)
        # -o jsonl's compact text
        assert node_records_text(records, None) == compact_reference(records)
        self.pods += 1
        return [node_dict(n) for n in records]


@pytest.mark.parametrize("mode", ["explain", "simulate"])
@pytest.mark.parametrize("name", case_names())
def test_the_golden_cases_records_are_written_as_their_dicts(name, mode):
    workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    sink = CompareRecords()
    if mode == "explain":
        explain_into(sink, workload, tie_break="name", reuse=False)  # every pod's own cycle
    else:
        simulate_into(sink, workload, tie_break="name")
    assert sink.pods == len(workload.pods)


@pytest.mark.parametrize("mode", ["explain", "simulate"])
@pytest.mark.parametrize("name", case_names())
def test_the_json_sink_alone_streams_the_golden_document(name, mode):
    # The sink's own encoder is in use only when nothing else reads the pods.
    run = explain_into if mode == "explain" else simulate_into
    docs = DocumentSink()
    run(docs, load_workload([str(GOLDEN / "cases" / f"{name}.yaml")]), tie_break="name")
    out = io.StringIO()
    run(JsonSink(out), load_workload([str(GOLDEN / "cases" / f"{name}.yaml")]), tie_break="name")
    assert out.getvalue() == to_json(docs.doc)


# -- records the golden cases do not have ------------------------------------------
def _unschedulable(plugin: str, *reasons: str, details=None) -> Status:
    return Status(Code.UNSCHEDULABLE, *reasons, plugin=plugin, details=details)


def test_odd_values_are_written_as_json_writes_them():
    shared = _unschedulable("NodePorts", "node(s) didn't have free ports")
    records = [
        NodeResult("a", filters=[FilterVerdict("NodeName", None), FilterVerdict("NodePorts", shared)],
                   status=shared, first_failure="NodePorts"),
        NodeResult("b", filters=[FilterVerdict("NodeName", None), FilterVerdict("NodePorts", shared)],
                   status=shared, first_failure="NodePorts"),
        # The same reasons in another Status object, and one with details.
        NodeResult("c", filters=[FilterVerdict("NodePorts", _unschedulable("NodePorts", "node(s) didn't have free ports")),
                                 FilterVerdict("X", _unschedulable("X", "é \"quoted\"\n", details={"n": 1.5}))],
                   status=shared),
        # Success with details; no filters at all; scores of every kind.
        NodeResult("d", filters=[FilterVerdict("PodTopologySpread", None, {"skew": 0, "ratio": 0.1})], feasible=True,
                   scores=[PluginScore("A", 1, 2, 3), PluginScore("A", 1, 2, 3),
                           PluginScore("B", 0, 0, 2, skipped=True),
                           PluginScore("C", 7, 70, 1, details={"score": 2.0, "w": float("inf"), "v": -0.0}),
                           PluginScore("C", 7, 70, 1, details={}),
                           PluginScore("A", 1.0, 2, 3), PluginScore("A", True, 2, 3)],
                   total=12),
        NodeResult("e", filters=[], feasible=True, scores=[], total=0),
        NodeResult("ünï", filters=[FilterVerdict("NodeName", None)], feasible=True,
                   scores=[PluginScore("A", 1, 2, 3), PluginScore("A", 1, 2.0, 3), PluginScore("C", 1, 2, 3,
                                                                                            details={"x": [1, None]})],
                   total=6),
    ]
    for nl in NEWLINES:
        text = node_records_text(records, nl)
        assert text == reference(records, nl) == json_reference(records, nl)
    assert node_records_text(records, None) == compact_reference(records)
    assert node_records_text([], MEMBER_NEWLINE) == "[]" == reference([], MEMBER_NEWLINE)


def test_extender_verdicts_are_written_too():
    nr = NodeResult("a", filters=[FilterVerdict("NodeName", None)], feasible=True,
                    scores=[PluginScore("A", 1, 2, 3)], total=6)
    nr.extender_filters = [("ext", None, {"why": "ok"}), ("ext2", _unschedulable("ext2", "no"), None)]
    nr.extender_scores = [("ext", 5, 5, 2)]
    assert node_records_text([nr], MEMBER_NEWLINE) == reference([nr], MEMBER_NEWLINE)
    assert node_records_text([nr], None) == compact_reference([nr])


floats = st.floats(allow_nan=True, allow_infinity=True)
leaves = st.none() | st.booleans() | st.integers() | floats | st.text(max_size=5)
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3),
                                                                                        inner, max_size=3),
                      max_leaves=10)


@settings(max_examples=200, deadline=None)
@given(details=values, raw=st.integers() | floats | st.booleans(), reasons=st.lists(st.text(max_size=4), max_size=2))
def test_any_details_are_written_as_json_writes_them(details, raw, reasons):
    records = [
        NodeResult("n", filters=[FilterVerdict("F", _unschedulable("F", *reasons)),
                                 FilterVerdict("G", None, details)], feasible=True,
                   scores=[PluginScore("S", raw, 1, 2, details=details), PluginScore("S", 1, 1, 2)], total=2),
        NodeResult("m", filters=[FilterVerdict("F", _unschedulable("F", *reasons, details=details))],
                   status=_unschedulable("F", *reasons), first_failure="F"),
    ]
    assert node_records_text(records, MEMBER_NEWLINE) == reference(records, MEMBER_NEWLINE) \
        == json_reference(records, MEMBER_NEWLINE)
    assert node_records_text(records, None) == compact_reference(records)


# -- records still in the runner's tables ---------------------------------------------
def _tables(raws, details):
    """Three nodes' verdicts and scores kept per plugin column, as the runner keeps them."""
    from types import SimpleNamespace

    from kschedx.framework.records import SKIPPED, FilterTable, ScoreTable

    fail = _unschedulable("F", "too small")
    with_details = Status(Code.SUCCESS, plugin="G", details={"ratio": 0.5})
    ftable = FilterTable(["N", "S", "F", "G", "H"],
                         [None, SKIPPED, [None, fail, _unschedulable("F", "too small")],
                          [with_details, None, Status(Code.SUCCESS, plugin="G")],
                          [_unschedulable("H", "x", details={"pods": ["a"]}), None, None]])
    nodes = [SimpleNamespace(name=f"n{k}", generation=0) for k in range(3)]
    stable = ScoreTable(None, None, nodes)
    stable.add(SimpleNamespace(name="A"), 2, raws, [10, 10, 10])
    stable.add(SimpleNamespace(name="B"), 1, None, None)
    stable.add(SimpleNamespace(name="C"), 3, [1, 1, 1], [0, 0, 100])
    stable.details = [details, None, None]  # settled
    records = []
    for k in range(3):
        nr = NodeResult.from_table(f"n{k}", ftable, k)
        nr.feasible = k != 1
        if k == 1:
            nr.status, nr.first_failure = fail, "F"
        else:
            nr.set_score_row(stable, k, 7)
        records.append(nr)
    return records


@pytest.mark.parametrize("raws,details", [
    ([1, 1, 2], None),
    ([1, 1.0, 1.0], None),
    ([True, 2, 1], None),
    ([1, 1, 1], [{"w": 1.5}, None, {}]),
    ([2.5, 1, 1], [{"w": float("nan")}, None, {"x": [1]}]),
])
def test_table_columns_are_written_as_their_dicts(raws, details):
    records = _tables(raws, details)
    for nl in NEWLINES:
        assert node_records_text(records, nl) == reference(records, nl) == json_reference(records, nl)
    assert node_records_text(records, None) == compact_reference(records)
    # Some read one by one (built lists), the others from the tables.
    records[0].filters, records[2].scores = records[0].filters, records[2].scores
    assert node_records_text(records, MEMBER_NEWLINE) == reference(records, MEMBER_NEWLINE)


def test_node_statuses_alike_in_all_but_one_field_are_written_each_its_own():
    # A node's `status` text is made once per (code, plugin, reasons).
    statuses = [_unschedulable("A", "r"), _unschedulable("A", "r"), _unschedulable("B", "r"),
                Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "r", plugin="A"), _unschedulable("A", "r", "s"),
                _unschedulable("A"), Status(Code.UNSCHEDULABLE, "r", plugin=None), _unschedulable("A", "r")]
    records = [NodeResult(f"n{k}", filters=[FilterVerdict(st.plugin or "A", st)], status=st, first_failure=st.plugin)
               for k, st in enumerate(statuses)]
    for nl in NEWLINES:
        assert node_records_text(records, nl) == reference(records, nl) == json_reference(records, nl)
    assert node_records_text(records, None) == compact_reference(records)


def test_one_explanation_shared_by_nodes_of_other_scores_is_written_with_each():
    # Plugin.score_details_all may give nodes one explanation object; each
    # node's entry still has its own raw and normalized score.
    shared = {"domains": [{"topologyKey": "zone", "score": 3}]}
    records = _tables([1, 1, 2], [shared, shared, shared])  # (node 1 is not scored)
    for nl in NEWLINES:
        assert node_records_text(records, nl) == reference(records, nl) == json_reference(records, nl)
    assert node_records_text(records, None) == compact_reference(records)


@pytest.mark.parametrize("apart", [1, 40])
def test_long_pieces_written_on_their_own_make_the_same_document(monkeypatch, apart):
    from kschedx.render import machine

    monkeypatch.setattr(machine, "WRITTEN_APART", apart)
    name = case_names()[0]
    docs = DocumentSink()
    simulate_into(docs, load_workload([str(GOLDEN / "cases" / f"{name}.yaml")]), tie_break="name")
    writes = []

    class Out(io.StringIO):
        def write(self, text):
            writes.append(text)
            return super().write(text)

    out = Out()
    simulate_into(JsonSink(out), load_workload([str(GOLDEN / "cases" / f"{name}.yaml")]), tie_break="name")
    assert out.getvalue() == to_json(docs.doc)
    assert any(w.startswith(('\n        {', '[\n        {')) for w in writes)  # a pod's nodes, on their own
    sink = JsonSink(io.StringIO())
    sink.pod({})
    assert sink.out.getvalue() == "\n    {}"


def test_compact_text_without_the_c_encoder_is_the_same(monkeypatch):
    # Pythons built without the json module's C speedups take json.dumps.
    from kschedx.result import node_text

    records = _tables([1, 1, 2], [{"w": 1.5, "ü": [1, None, True]}, None, {}])
    fast = node_records_text(records, None)
    with pytest.raises(TypeError):
        node_text._compact({"x": object()})
    monkeypatch.setattr(node_text, "_C_COMPACT", None)
    assert node_records_text(records, None) == fast == compact_reference(records)
    with pytest.raises(TypeError):
        node_text._compact({"x": object()})
