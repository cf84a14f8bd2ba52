"""Streamed results: explain and simulate hand each pod to the output as soon
as it is final and keep nothing, and every format writes the same document
the whole-document path gives."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kschedx.commands.explain import explain_into
from kschedx.commands.load import Workload, load_workload
from kschedx.commands.simulate import simulate_into
from kschedx.state.cluster import ClusterState
from kschedx.state.types import PodInfo
from kschedx.cli.main import main
from kschedx.framework.runtime import Framework
from kschedx.render.machine import JsonlSink, JsonSink, YamlSink, to_json, to_yaml
from kschedx.result.document import exit_code
from kschedx.result.sink import DocumentSink, ResultSink
from kschedx.sources.fixtures import Origin
from builders import HIGH, LOW, ONE_POD, make_node, make_pod
from builders import preemption_node, preemption_pod
from golden_compare import GOLDEN, case_names

ROOT = Path(__file__).resolve().parent.parent
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


class Tee(ResultSink):
    def __init__(self, *sinks):
        self.sinks = sinks

    def begin(self, head):
        for s in self.sinks:
            s.begin(head)

    def pod(self, pod):
        for s in self.sinks:
            s.pod(pod)

    def end(self, tail):
        for s in self.sinks:
            s.end(tail)


def _all_formats(run, *, with_yaml=True) -> tuple[dict, str, str | None, str]:
    """One run into the document and every machine format at once."""
    outs = [io.StringIO() for _ in range(3)]
    doc_sink = DocumentSink()
    sinks = [doc_sink, JsonSink(outs[0]), JsonlSink(outs[2])] + ([YamlSink(outs[1])] if with_yaml else [])
    code = run(Tee(*sinks))
    assert code == exit_code(doc_sink.doc)
    return doc_sink.doc, outs[0].getvalue(), outs[1].getvalue() if with_yaml else None, outs[2].getvalue()


def _check_formats(doc, json_text, yaml_text, jsonl_text, *, load_yaml=True):
    assert json_text == to_json(doc)  # byte for byte, key order included
    if yaml_text is not None:
        assert yaml_text == to_yaml(doc)
    if yaml_text is not None and load_yaml:  # one document, without aliases: the same values
        loaded = yaml.load(yaml_text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        assert loaded == doc
        assert list(loaded) == list(doc)
    lines = [json.loads(line) for line in jsonl_text.splitlines()]
    head = {k: v for k, v in doc.items() if k in lines[-1] and k not in ("pods", "stream")}
    assert len(lines) == len(doc["pods"]) + 1
    for line, pod in zip(lines, doc["pods"]):
        assert line["kind"] == "SchedulingResult" and line["pods"] == [pod] and "stream" not in line
        assert {k: line[k] for k in head if k in line} == {k: head[k] for k in head if k in line}
    closing = lines[-1]
    assert closing["pods"] == []
    assert {k: v for k, v in closing.items() if k not in ("pods", "stream")} == {k: v for k, v in doc.items()
                                                                                if k != "pods"}
    stream = closing["stream"]
    assert stream["pods"] == len(doc["pods"]) and stream["exitCode"] == exit_code(doc)
    assert sum(stream["statuses"].values()) == len(doc["pods"])


@pytest.mark.parametrize("mode", ["explain", "simulate"])
@pytest.mark.parametrize("index,name", list(enumerate(case_names())))
def test_every_format_streams_the_golden_document(index, name, mode):
    workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    run = explain_into if mode == "explain" else simulate_into
    # YAML (PyYAML's Python representer) is slow: every third case shows it.
    texts = _all_formats(lambda sink: run(sink, workload, tie_break="name"), with_yaml=index % 3 == 0)
    _check_formats(*texts, load_yaml=False)


def test_an_empty_run_is_still_a_document():
    doc, json_text, yaml_text, jsonl_text = _all_formats(
        lambda sink: explain_into(sink, Workload(ClusterState(), [])))
    assert doc["pods"] == []
    _check_formats(doc, json_text, yaml_text, jsonl_text)
    assert '"pods": [],' in json_text or '"pods": []\n' in json_text
    assert "pods: []" in yaml_text


# -- a small generated cluster: plain, inter-pod (anti-)affinity, spreading -----------
def _cluster(pending: int, nodes: int = 12) -> Workload:
    objs = []
    for i in range(nodes):
        name = f"node-{i:02d}"
        objs.append(make_node(name, cpu="8", memory="32Gi", pods="110",
                              labels={HOST: name, ZONE: f"zone-{i % 3}"}))
        objs.append(make_pod(f"run-{i}", node=name, labels={"app": f"g{i % 4}"},
                             containers=[{"name": "c", "image": "x",
                                          "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]))
    for k in range(pending):
        group = f"g{k % 4}"
        kind = k % 3
        affinity = spread = None
        if kind == 1:
            affinity = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": group}},
                                                   "topologyKey": HOST}}]}}
        elif kind == 2:
            spread = [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                       "labelSelector": {"matchLabels": {"app": group}}}]
        extra = {"topologySpreadConstraints": spread} if spread else {}
        objs.append(make_pod(f"pending-{k}", labels={"app": group}, affinity=affinity,
                             containers=[{"name": "c", "image": "x",
                                          "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
                             **extra))
    origin = Origin("generated")
    return load_workload((), cluster_objects=[(o, origin) for o in objs])


class _Discard:
    def write(self, text):
        return len(text)

    def flush(self):
        pass


def _peak_bytes(pending: int, make_sink) -> int:
    """Peak traced memory of one explain run, the workload already loaded."""
    workload = _cluster(pending)
    assert len(workload.pods) == pending
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        explain_into(make_sink(), workload, tie_break="name")
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_streamed_explain_memory_does_not_grow_with_pods():
    # The pods' keys repeat every 12 pods: from 13 on, results are kept for
    # identical pods (at most reuse.KEPT), as in any run with replicas.
    few, many = 16, 80
    _peak_bytes(few, lambda: JsonSink(_Discard()))  # first use: imports, caches
    streamed_few = _peak_bytes(few, lambda: JsonSink(_Discard()))
    # tracemalloc counts every thread's allocations, and another thread of
    # the process (pytest-xdist's channel to its controller, receiving
    # tests) may allocate meanwhile: once in a full run, 920 KB against
    # 556 KB. Growth with the pods shows in every run; the least of three is
    # this run's own.
    streamed_many = min(_peak_bytes(many, lambda: JsonSink(_Discard())) for _ in range(3))
    # Five times the pods, and the peak stays that of a few pods (the snapshot
    # and one pod's result), with a margin for allocator noise.
    assert streamed_many < streamed_few * 1.3, (streamed_few, streamed_many)
    # The measure is sensitive: keeping every result (the whole document)
    # does grow with the pods.
    kept_many = _peak_bytes(many, DocumentSink)
    assert kept_many > streamed_many * 2, (streamed_many, kept_many)


def test_each_pod_is_written_before_the_next_is_scheduled(monkeypatch):
    calls = []
    schedule = Framework.schedule

    def counted(self, pi):
        calls.append(pi.key)
        return schedule(self, pi)

    monkeypatch.setattr(Framework, "schedule", counted)
    seen = []

    class Watch(ResultSink):
        def pod(self, pod):
            seen.append((pod["pod"], len(calls)))

    workload = _cluster(5)
    explain_into(Watch(), workload, tie_break="name")
    assert seen == [(pi.key, i + 1) for i, pi in enumerate(workload.pods)]


def test_generated_cluster_streams_in_every_format():
    workload = _cluster(6)
    for run in (explain_into, simulate_into):
        doc, *texts = _all_formats(lambda sink: run(sink, workload, tie_break="name"))
        assert len(doc["pods"]) == 6
        _check_formats(doc, *texts)


def test_simulate_holds_a_pod_back_only_while_a_later_pod_can_preempt_it(tmp_path):
    # low comes first in this queue and is placed; urgent then preempts it, so
    # low's document (with preemptedBy) is written only after urgent's cycle.
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all([preemption_node("n1", ONE_POD), preemption_pod("low", priority=LOW)]))
    w = load_workload([str(path)])
    w.pods.append(PodInfo(preemption_pod("urgent", priority=HIGH)))
    w.pods.append(PodInfo(preemption_pod("last", priority=LOW)))
    arrived = []

    class Watch(DocumentSink):
        def pod(self, pod):
            arrived.append(pod["pod"])
            super().pod(pod)

    sink = Watch()
    simulate_into(sink, w, tie_break="name")
    assert arrived == ["default/low", "default/urgent", "default/last"]
    low = sink.doc["pods"][0]
    assert low["placedNode"] == "n1" and low["preemptedBy"] == "default/urgent"
    assert sink.doc["summary"]["pods"] == 3 and sink.doc["summary"]["preemptions"] == 1


# -- the command line ---------------------------------------------------------------
def _run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_jsonl_is_one_line_per_pod_then_a_summary(tmp_path):
    path = tmp_path / "c.json"
    workload_objs = [make_node("n1", cpu="1", memory="1Gi", pods="110"),
                     make_pod("fits", containers=[{"name": "c", "image": "x",
                                                   "resources": {"requests": {"cpu": "500m"}}}]),
                     make_pod("too-big", containers=[{"name": "c", "image": "x",
                                                      "resources": {"requests": {"cpu": "2"}}}])]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": workload_objs}))
    for command in ("explain", "simulate"):
        r = _run(command, "--snapshot", str(path), "-o", "jsonl", "--tie-break", "name")
        assert r.exit_code == 1
        lines = [json.loads(line) for line in r.stdout.splitlines()]
        assert [line["pods"][0]["pod"] for line in lines[:-1]] == ["default/fits", "default/too-big"]
        assert all(line["mode"] == command for line in lines)
        assert lines[-1]["stream"] == {"pods": 2, "statuses": {"Scheduled": 1, "Unschedulable": 1}, "exitCode": 1}


def test_interrupted_stream_is_one_line_and_exit_130(monkeypatch):
    from kschedx.render import machine

    def interrupted(self, pod):
        raise KeyboardInterrupt

    monkeypatch.setattr(machine.JsonSink, "pod", interrupted)
    r = _run("explain", str(ROOT / "fixtures/pods/web.yaml"), "--snapshot", str(ROOT / "fixtures/cluster"), "-o", "json")
    assert r.exit_code == 130
    assert r.stderr.strip() == "kschedx: interrupted"
