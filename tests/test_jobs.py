"""explain --jobs N: pods spread over worker processes forked after loading
give, in order, exactly the document of --jobs 1 (every golden case, whole
document, both tie-breaks); a worker's error surfaces as without workers;
Ctrl-C and a closed pipe leave no traceback and no process behind."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from kschedx.commands.explain import explain_into
from kschedx.commands.load import load_workload
from kschedx.util import workers
from kschedx.cli.main import main
from kschedx.framework.runtime import Framework
from kschedx.render.human import HumanSink
from kschedx.render.layout import Report
from kschedx.render.machine import JsonSink, to_json
from kschedx.result.sink import DocumentSink
from golden_compare import GOLDEN, case_names
from test_reuse import groups_cluster, load, with_twins


def explain_text(workload, **kwargs) -> str:
    sink = DocumentSink()
    code = explain_into(sink, workload, **kwargs)
    return json.dumps([code, sink.doc], default=repr, ensure_ascii=False)


@pytest.fixture
def forks(monkeypatch):
    """How many worker processes were started."""
    started = []
    fork = workers._Worker.fork.__func__

    def counted(cls, task, others):
        started.append(1)
        return fork(cls, task, others)

    monkeypatch.setattr(workers._Worker, "fork", classmethod(counted))
    return started


@pytest.mark.parametrize("tie_break,seed", [("name", None), ("random", 11)])
@pytest.mark.parametrize("name", case_names())
def test_golden_documents_are_the_same_with_workers(name, tie_break, seed):
    path = [str(GOLDEN / "cases" / f"{name}.yaml")]
    one = explain_text(load_workload(path), tie_break=tie_break, seed=seed, jobs=1)
    assert explain_text(load_workload(path), tie_break=tie_break, seed=seed, jobs=2) == one
    assert explain_text(load_workload(path), tie_break=tie_break, seed=seed, jobs=2, reuse=False) == one
    # With twins: workers and the pods that share an earlier pod's result.
    twins = with_twins(name)
    one = explain_text(twins(), tie_break=tie_break, seed=seed, jobs=1, reuse=False)
    assert explain_text(twins(), tie_break=tie_break, seed=seed, jobs=2) == one
    # -o json: the workers encode each pod's nodes.
    texts = []
    for jobs in (1, 2):
        out = io.StringIO()
        explain_into(JsonSink(out), twins(), tie_break=tie_break, seed=seed, jobs=jobs)
        texts.append(out.getvalue())
    assert texts[0] == texts[1]
    assert texts[0] == to_json(json.loads(texts[0]))
    # Human output: the workers draw each pod's body.
    assert human_text(twins(), tie_break=tie_break, seed=seed, jobs=2) == \
        human_text(twins(), tie_break=tie_break, seed=seed, jobs=1, reuse=False)


def human_text(workload, **kwargs) -> str:
    out = io.StringIO()
    code = explain_into(HumanSink(out=out, color=False), workload, **kwargs)
    return f"{code}\n{out.getvalue()}"


def _nodes_received(monkeypatch) -> list[str]:
    """The type of `nodes` of each pod the human sink is handed, from now on."""
    received = []
    pod = HumanSink.pod

    def seen(self, p):
        received.append(type(p.get("nodes")).__name__)
        return pod(self, p)

    monkeypatch.setattr(HumanSink, "pod", seen)
    return received


def test_workers_draw_the_body_for_people_and_reused_pods_share_it(monkeypatch):
    # 70 nodes: enough for the body to be kept for the next pods of a group.
    objs = groups_cluster(groups=6, replicas=3, nodes=70, interleaved=False)
    bodies = []
    body = Report.body

    def counted(self, pod):
        bodies.append((os.getpid(), pod["pod"]))
        return body(self, pod)

    monkeypatch.setattr(Report, "body", counted)
    one = human_text(load(objs), tie_break="name", jobs=1, reuse=False)
    assert len(bodies) == 18
    bodies.clear()
    assert human_text(load(objs), tie_break="name", jobs=1) == one
    assert len(bodies) == 6  # once a group: the other replicas' bodies are that one's
    bodies.clear()
    received = _nodes_received(monkeypatch)
    assert human_text(load(objs), tie_break="name", jobs=2) == one
    assert "RenderedBody" in received
    # The bodies the workers drew are not drawn again here.
    here = [name for pid, name in bodies if pid == os.getpid()]
    assert here == [here[0]] and here[0].endswith("/grp0-0"), here  # the first pod only: computed here
    # With a random tie-break, a drawn node is drawn again here, its body too.
    assert human_text(load(objs), tie_break="random", seed=5, jobs=2) == \
        human_text(load(objs), tie_break="random", seed=5, jobs=1, reuse=False)


def test_workers_encode_the_nodes_for_json(monkeypatch):
    objs = groups_cluster(groups=6, replicas=2, interleaved=True)
    received = []
    pod = JsonSink.pod

    def seen(self, p):
        received.append(type(p["nodes"]).__name__)
        return pod(self, p)

    monkeypatch.setattr(JsonSink, "pod", seen)
    outs = []
    for jobs in (1, 2):
        out = io.StringIO()
        explain_into(JsonSink(out), load(objs), tie_break="random", seed=4, jobs=jobs)
        outs.append(out.getvalue())
    assert outs[0] == outs[1]
    # Written from the records where each pod is computed, by either run.
    assert received == ["EncodedNodes"] * 24
    # Without that, the workers encode the node dicts (as for --fix).
    monkeypatch.setattr(JsonSink, "node_records_encoder", None)
    received.clear()
    for jobs in (1, 2):
        out = io.StringIO()
        explain_into(JsonSink(out), load(objs), tie_break="random", seed=4, jobs=jobs)
        assert out.getvalue() == outs[0]
    assert received[:12] == ["list"] * 12 and "EncodedNodes" in received[12:]


def test_workers_do_run(forks):
    objs = groups_cluster(groups=6, replicas=2, interleaved=True)
    one = explain_text(load(objs), tie_break="random", seed=3, jobs=1)
    assert not forks
    assert explain_text(load(objs), tie_break="random", seed=3, jobs=3) == one
    assert len(forks) == 3


def test_a_worker_that_dies_leaves_its_pods_to_the_run(monkeypatch):
    objs = groups_cluster(groups=6, replicas=1)
    one = explain_text(load(objs), tie_break="random", seed=2, jobs=1)
    parent = os.getpid()
    schedule = Framework.schedule

    def dying(self, pi):
        if os.getpid() != parent and pi.name == "grp3-0":
            os._exit(9)  # killed mid-cycle (out of memory, say)
        return schedule(self, pi)

    monkeypatch.setattr(Framework, "schedule", dying)
    assert explain_text(load(objs), tie_break="random", seed=2, jobs=2) == one


def _cli(tmp_path, *args):
    path = tmp_path / "c.json"
    if not path.exists():
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": groups_cluster()}))
    return CliRunner().invoke(main, ["explain", "--snapshot", str(path), *args])


def test_the_cli_s_workers_draw_the_body_for_people(tmp_path, monkeypatch):
    # Through the CLI's sink (cli/output.py StdoutSink), as `kschedx explain
    # --jobs 2` runs: the workers draw each pod's body and send that, not
    # every node's record (nor fail to send a NodeView and leave the pod here).
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": groups_cluster(groups=6, replicas=1, nodes=70)}))
    received = _nodes_received(monkeypatch)
    outs = [CliRunner().invoke(main, ["explain", "--snapshot", str(path), "--tie-break", "name", "--jobs", j])
            for j in ("2", "1")]
    assert outs[0].exit_code == outs[1].exit_code and outs[0].stdout == outs[1].stdout
    assert received[:6] == ["NodeView"] + ["RenderedBody"] * 5  # the first pod is computed here
    assert received[6:] == ["NodeView"] * 6


def test_a_node_view_is_sent_as_its_dicts():
    import pickle

    from kschedx.result.node_view import NodeView
    from test_own_pod import hand_made_records

    records = hand_made_records()
    view = NodeView(records)
    assert pickle.loads(pickle.dumps(view)) == list(view)
    assert type(pickle.loads(pickle.dumps(view))) is list


def test_an_internal_error_in_a_worker_is_the_one_of_jobs_1(tmp_path, monkeypatch):
    schedule = Framework.schedule

    def broken(self, pi):
        if pi.name == "grp4-0":
            raise ZeroDivisionError("plugin bug")
        return schedule(self, pi)

    monkeypatch.setattr(Framework, "schedule", broken)
    one, two = (_cli(tmp_path, "-o", "json", "--seed", "1", "--jobs", j) for j in ("1", "2"))
    assert one.exit_code == two.exit_code == 70
    assert one.stderr == two.stderr
    assert "internal error: ZeroDivisionError: plugin bug" in two.stderr
    assert one.stdout == two.stdout  # the pods before it were written, alike


def test_cli_jobs_gives_the_same_output(tmp_path):
    outs = [_cli(tmp_path, "-o", out, "--seed", "9", "--jobs", j) for out in ("json", "human") for j in ("1", "2")]
    assert all(r.exit_code == 0 for r in outs), [r.stderr for r in outs]
    assert outs[0].stdout == outs[1].stdout and outs[2].stdout == outs[3].stdout


def test_interrupted_run_with_workers_is_one_line_and_exit_130(tmp_path, monkeypatch, forks):
    from kschedx.render import machine

    pod = machine.JsonSink.pod
    written = []

    def interrupted(self, p):
        if written:
            raise KeyboardInterrupt
        written.append(p["pod"])
        return pod(self, p)

    monkeypatch.setattr(machine.JsonSink, "pod", interrupted)
    r = _cli(tmp_path, "-o", "json", "--jobs", "2")
    assert r.exit_code == 130
    assert r.stderr.strip() == "kschedx: interrupted"
    assert forks  # and they are gone:
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_closed_pipe_with_workers_is_quiet(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": groups_cluster(groups=8)}))
    cmd = [sys.executable, "-m", "kschedx", "explain", "--snapshot", str(path), "-o", "json", "--jobs", "2"]
    full = subprocess.run(cmd, capture_output=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(100)
    proc.stdout.close()  # the reader leaves (`| head -c 100`)
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == full.returncode
    assert stderr == full.stderr == b""


def test_sigint_with_workers_leaves_no_traceback(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": groups_cluster(groups=12)}))
    cmd = [sys.executable, "-m", "kschedx", "explain", "--snapshot", str(path), "-o", "json", "--jobs", "2",
           "--no-reuse"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    proc.stdout.read(200)  # running: workers started
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C goes to the whole process group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode in (130, 0)  # 0: it had finished already
    assert b"Traceback" not in err
    if proc.returncode == 130:
        assert err.strip() == b"kschedx: interrupted"


def test_one_pods_work_runs_with_the_collector_paused(monkeypatch):
    # A result on 5,000 nodes is a million young objects: collecting while it
    # is alive only walks it. Paused from the pod's cycle until it is written.
    import gc

    seen = []
    schedule = Framework.schedule

    def watched(self, pi, **kwargs):
        seen.append(("cycle", gc.isenabled()))
        return schedule(self, pi, **kwargs)

    class Watching(DocumentSink):
        def pod(self, pod):
            seen.append(("write", gc.isenabled()))
            super().pod(pod)

    monkeypatch.setattr(Framework, "schedule", watched)
    assert gc.isenabled()
    explain_into(Watching(), load(groups_cluster(groups=2, replicas=2)), tie_break="name", jobs=1)
    assert gc.isenabled()
    assert seen and {what for what, _ in seen} == {"cycle", "write"}
    assert not any(enabled for _, enabled in seen)


def test_a_worker_runs_its_task_with_the_collector_paused():
    import gc
    import pickle

    task_r, task_w = os.pipe()
    result_r, result_w = os.pipe()
    os.write(task_w, workers._HEADER.pack(7) + workers._HEADER.pack(workers._STOP))
    handler = signal.getsignal(signal.SIGINT)
    try:
        workers._serve(lambda i: (i, gc.isenabled()), task_r, result_w)  # one task, then stop
    finally:
        signal.signal(signal.SIGINT, handler)  # _serve ignores Ctrl-C: undone
    with os.fdopen(result_r, "rb") as results:
        (size,) = workers._HEADER.unpack(results.read(workers._HEADER.size))
        assert pickle.loads(results.read(size)) == (7, False)
    os.close(task_w)
    assert gc.isenabled()
