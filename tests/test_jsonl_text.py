"""-o jsonl writes each line as json.dumps(line, ensure_ascii=False,
separators=(",", ":")) does, character for character, though a pod's
`nodes` are written from the runner's records (result/node_text.py) and the
text of identical pods (one shared list) is encoded once and reused."""

from __future__ import annotations

import io
import json

import pytest

from kschedx.commands.explain import explain_into
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate_into
from kschedx.render.machine import CompactNodes, JsonlSink, compact_line, encode_compact_node_records
from kschedx.result.sink import DocumentSink, ResultSink
from golden_compare import GOLDEN, case_names


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Both(ResultSink):
    """A JsonlSink and what json.dumps says of each of its lines."""

    def __init__(self):
        self.out = io.StringIO()
        self.sink = JsonlSink(self.out)
        self.expected: list[str] = []
        self.head = {}

    def begin(self, head):
        self.head = head
        self.sink.begin(head)

    def pod(self, pod):
        self.expected.append(dumps(dict(self.head, pods=[pod])))
        self.sink.pod(pod)

    def end(self, tail):
        self.sink.end(tail)


@pytest.mark.parametrize("name", case_names()[::3])
def test_every_line_is_json_dumps_of_it(name):
    both = Both()
    explain_into(both, load_workload([str(GOLDEN / "cases" / f"{name}.yaml")]), tie_break="name")
    lines = both.out.getvalue().splitlines()
    assert lines[:-1] == both.expected
    assert json.loads(lines[-1])["pods"] == []


def _pod(name: str, nodes: list) -> dict:
    return {"pod": f"default/{name}", "status": "Scheduled", "selectedNode": "nœud-1", "score": 1.5,
            "flags": [True, False, None], "nodes": nodes}


def test_a_shared_nodes_list_is_encoded_once_and_written_as_json_dumps_writes_it():
    nodes = [{"name": "nœud-1", "feasible": True, "total": 12, "ratio": 0.25, "reasons": ["a \"q\" \\ \n", "é"]},
             {"name": "n2", "feasible": False, "firstFailure": None, "scores": []}]
    calls = []

    def text(ns):
        calls.append(ns)
        return dumps(ns)

    out = io.StringIO()
    sink = JsonlSink(out)
    sink.begin({"apiVersion": "v", "kind": "SchedulingResult", "ñ": {"x": 1}})
    a, b = _pod("a", nodes), _pod("b", nodes)  # identical pods: one list, as commands/reuse.py shares it
    c = _pod("c", [dict(nodes[0])])  # an equal list, not the same one
    for p in (a, b, c):
        sink.pod(p)
    lines = out.getvalue().splitlines()
    assert lines == [dumps(dict(sink.head, pods=[p])) for p in (a, b, c)]
    assert len(sink.texts) == 1 and next(iter(sink.texts.values()))[0] is c["nodes"]
    # The line encoder asks for the nodes text once per pod; the sink keeps it per list.
    assert compact_line(dict(sink.head, pods=[a, b]), text) == dumps(dict(sink.head, pods=[a, b]))
    assert calls == [nodes, nodes]


@pytest.mark.parametrize("obj", [
    {"pods": []},
    {"pods": [{"nodes": "not a list"}]},
    {"pods": [{1: "a non-str key", "nodes": []}]},
    {"kind": "WatchEvent", "type": "PodGone"},
    {"pods": [{"nodes": [], "x": (1, 2)}], 2: "b"},
])
def test_what_is_not_a_pod_line_is_json_dumps(obj):
    assert compact_line(obj, lambda ns: "BAD") == dumps(obj)


def test_the_kept_text_is_let_go_when_told_and_at_the_end():
    out = io.StringIO()
    sink = JsonlSink(out)
    sink.begin({"kind": "SchedulingResult"})
    nodes = [{"name": "n1"}]
    sink.pod(_pod("a", nodes))
    assert len(sink.texts) == 1
    sink.forget_texts()  # explain --watch: a batch ended
    assert not sink.texts
    sink.pod(_pod("b", nodes))
    sink.end({})
    assert not sink.texts
    assert out.getvalue().splitlines()[:2] == [dumps(dict(sink.head, pods=[_pod(n, nodes)])) for n in "ab"]


@pytest.mark.parametrize("mode", ["explain", "simulate"])
@pytest.mark.parametrize("name", case_names())
def test_the_sink_alone_writes_the_golden_lines_from_the_records(name, mode):
    # Alone, the sink's own encoder is in use: each pod's nodes come from
    # its records, and the line is json.dumps of the document's pod.
    run = explain_into if mode == "explain" else simulate_into
    docs = DocumentSink()
    run(docs, load_workload([str(GOLDEN / "cases" / f"{name}.yaml")]), tie_break="name")
    out = io.StringIO()
    run(JsonlSink(out), load_workload([str(GOLDEN / "cases" / f"{name}.yaml")]), tie_break="name")
    lines = out.getvalue().splitlines()
    pods = docs.doc["pods"]
    assert len(lines) == len(pods) + 1
    for line, pod in zip(lines, pods):
        got = json.loads(line)
        assert got["pods"] == [pod]
        assert line == dumps(dict({k: got[k] for k in got if k != "pods"}, pods=[pod]))


def test_compact_nodes_are_written_as_they_are_and_only_by_the_jsonl_sink():
    out = io.StringIO()
    sink = JsonlSink(out)
    sink.begin({"kind": "SchedulingResult"})
    text = dumps([{"name": "n1", "feasible": True}])
    sink.pod(_pod("a", CompactNodes(text)))
    assert out.getvalue().splitlines()[0] == dumps(dict(sink.head, pods=[_pod("a", json.loads(text))]))
    assert encode_compact_node_records([]).text == "[]"


def test_a_batch_of_the_watch_encodes_identical_pods_nodes_once():
    from test_watch_rescore import watch as rescore_watch

    _, run, _, _ = rescore_watch(pending=3)
    encoded = []

    class Sink(JsonlSink):
        @staticmethod
        def node_records_encoder(records):
            encoded.append(len(records))
            return encode_compact_node_records(records)

    out = io.StringIO()
    sink = Sink(out)
    run.sink = sink
    run.sink.begin({"kind": "SchedulingResult"})
    run.explain_all_now()
    run._flush(run.clock() + 10.0)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    pods = [p for line in lines for p in line.get("pods") or ()]
    assert len(pods) == 3 and len(encoded) == 1  # three replicas, one cycle, one text
    assert pods[0]["nodes"] == pods[1]["nodes"] == pods[2]["nodes"] and len(pods[0]["nodes"]) == encoded[0]
    assert not sink.texts


def test_a_pods_nodes_text_is_written_as_a_piece_of_its_own():
    from kschedx.render.machine import compact_pieces

    big = dumps([{"name": f"n{i}", "feasible": True} for i in range(50)])
    obj = {"kind": "SchedulingResult", "pods": [_pod("a", CompactNodes(big)), _pod("b", CompactNodes(big))],
           "warnings": []}
    pieces = compact_pieces(obj, lambda ns: ns.text)
    assert sum(1 for p in pieces if p is big) == 2  # never copied into a line
    expected = {**obj, "pods": [_pod("a", json.loads(big)), _pod("b", json.loads(big))]}
    assert "".join(pieces) == dumps(expected)
