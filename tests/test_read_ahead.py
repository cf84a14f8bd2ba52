"""The read-ahead (sources/read_ahead.py): a second process reads a big JSON
snapshot and answers part of admission while the first parses it. Its
answers are a shortcut only: every golden case, written as one JSON List
with twins of its pods, loads and explains the same with and without it;
answers are used only for the pod they were computed for; a document the
scan reads otherwise than the parser (two "items", a kind that is not a
List) or a scan that dies leaves the result as it would be alone."""

from __future__ import annotations

import copy
import json
import os
import tempfile

import pytest
from hypothesis import given, settings, strategies as st

from kschedx.commands.explain import explain_into
from kschedx.commands.load import load_workload
from kschedx.util.errors import InputError
from kschedx.result.sink import DocumentSink
from kschedx.state.snapshot import build_snapshot
from kschedx.sources import read_ahead
from kschedx.sources.fixtures import read_objects
from kschedx.sources.shape import pod_shape_but_spec_valid
from kschedx.sources.spec_share import status_facts_key
from builders import make_pod, preemption_node
from golden_compare import GOLDEN, case_names


@pytest.fixture
def always(monkeypatch):
    """A read-ahead for any JSON file, however small; the answers used are
    counted."""
    monkeypatch.setattr(read_ahead, "MIN_BYTES", 0)
    monkeypatch.setattr(read_ahead, "cpus", lambda: 2)
    used = []
    answers = read_ahead.ReadAhead.answers

    def counting(self, n):
        frame = answers(self, n)
        if frame is not None:
            used.append(n)
        return frame

    monkeypatch.setattr(read_ahead.ReadAhead, "answers", counting)
    return used


def _write_list(tmp_path, objects, name="c.json", **dump) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"apiVersion": "v1", "items": objects, "kind": "List",
                                "metadata": {"resourceVersion": ""}}, **dump))
    return str(path)


def _twins(obj: dict, i: int) -> list:
    """The pod, a copy of another name and uid (a workload's replica), and
    one whose kubelet reports other requests (an in-place resize: the same
    spec, other PodInfo facts)."""
    out = [obj]
    for suffix in ("r", "resized"):
        twin = copy.deepcopy(obj)
        meta = twin.setdefault("metadata", {})
        meta["name"] = f"{meta.get('name')}-{suffix}{i}"
        if meta.get("uid"):
            meta["uid"] = f"{meta['uid']}-{suffix}{i}"
        spec = twin.get("spec")
        if suffix == "resized" and isinstance(spec, dict) and spec.get("nodeName"):
            containers = spec.get("containers")
            if isinstance(containers, list) and all(isinstance(c, dict) for c in containers):
                status = twin.setdefault("status", {})
                if isinstance(status, dict):
                    status["containerStatuses"] = [{"name": c.get("name"), "resources": {
                        "requests": {"cpu": "3", "memory": "3Gi"}}} for c in containers]
        out.append(twin)
    return out


def _outcome(paths, pod_paths=(), read_ahead_on=True) -> str:
    try:
        workload = load_workload(paths, pod_paths, read_ahead=read_ahead_on)
    except InputError as exc:
        return f"error: {exc}"
    pods = json.dumps(workload.cluster.pods, default=repr)
    snap = build_snapshot(workload.cluster)
    facts = json.dumps([(pi.key, pi.uid, pi.resource.as_dict(), pi.non0_cpu, pi.non0_mem, pi.host_ports,
                         pi.has_affinity, pi.priority) for pi in snap.pod_infos.values()], default=repr)
    sink = DocumentSink()
    explain_into(sink, workload, tie_break="name", seed=None)
    return f"{pods}\n{facts}\n{json.dumps(sink.doc, default=repr)}"


@pytest.mark.parametrize("name", case_names())
def test_golden_cases_as_one_json_list_are_the_same_with_and_without_read_ahead(name, tmp_path, always):
    objects = []
    for i, (obj, _) in enumerate(read_objects([str(GOLDEN / "cases" / f"{name}.yaml")])):
        objects.extend(_twins(obj, i) if obj.get("kind") == "Pod" else [obj])
    path = _write_list(tmp_path, objects, indent=4)
    alone = _outcome([path], read_ahead_on=False)
    assert not always
    assert _outcome([path]) == alone
    pods = sum(o.get("kind") == "Pod" and (o.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
               for o in objects)
    if pods and not alone.startswith("error:"):
        assert always  # the answers were used


def _cluster(n: int, **spec) -> list:
    objs = [preemption_node("n1"), preemption_node("n2")]
    for i in range(n):
        objs.append(make_pod(f"p{i}", "ns", uid=None, node=f"n{1 + i % 2}" if i % 3 else None, **spec))
    return objs


def test_pods_without_uid_get_the_same_stable_uid(tmp_path, always):
    path = _write_list(tmp_path, _cluster(12))
    with_ahead = load_workload([path]).cluster.pods
    assert always
    alone = load_workload([path], read_ahead=False).cluster.pods
    assert [p["metadata"]["uid"] for p in with_ahead] == [p["metadata"]["uid"] for p in alone]
    assert all(p["metadata"]["uid"] for p in alone)


def test_a_twin_with_a_wrong_field_outside_its_spec_is_reported_as_alone(tmp_path, always):
    objs = _cluster(6)
    objs[5]["status"] = {"phase": "Running", "startTime": 7}
    # as `kschedx snapshot` writes it (the read-ahead's file): not checked by
    # strict input, so admission and the read-ahead meet the wrong field
    from kschedx.sources.snapshot_info import snapshot_info
    from kschedx.sources.writer import write_snapshot

    path = str(tmp_path / "snapshot.json")
    write_snapshot(path, objs, snapshot_info(server="https://x", context=None, unreadable={}, fields="full"))
    with pytest.raises(InputError) as alone:
        load_workload([path], read_ahead=False)
    with pytest.raises(InputError) as ahead:
        load_workload([path])
    assert str(ahead.value) == str(alone.value)
    assert "status.startTime" in str(alone.value)
    assert always


def test_two_items_keys_are_read_as_the_parser_reads_them(tmp_path, always):
    # The parser keeps the last "items"; the scan answers for the first
    # before it sees the second: the load is done again without it.
    first = _cluster(8)
    last = _cluster(8, containers=[{"name": "c", "image": "i", "resources": {"requests": {"cpu": "3"}}}])
    text = json.dumps({"apiVersion": "v1", "items": first, "kind": "List"})
    text = text[:-1] + ', "items": ' + json.dumps(last) + "}"
    path = tmp_path / "c.json"
    path.write_text(text)
    alone = _outcome([str(path)], read_ahead_on=False)
    assert '"3"' in alone
    assert _outcome([str(path)]) == alone
    assert always


def test_a_document_that_is_not_a_list_is_read_as_the_parser_reads_it(tmp_path, always):
    # kind comes after items, as kubectl writes it: not a List, so the
    # document is one object (here refused), whatever its items.
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "items": _cluster(3), "kind": "Pod",
                                "metadata": {"name": "x"}}))
    assert _outcome([str(path)]) == _outcome([str(path)], read_ahead_on=False)


def test_items_without_kind_end_the_answers_there(tmp_path, always):
    objs = _cluster(9)
    del objs[6]["kind"]  # a PodList's item may leave it out
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"apiVersion": "v1", "items": objs, "kind": "PodList"}))
    assert _outcome([str(path)]) == _outcome([str(path)], read_ahead_on=False)
    assert always and max(always) < 4  # pods p0..p3 come before the item without kind


def test_a_scan_that_dies_leaves_the_result_as_it_would_be_alone(tmp_path, always, monkeypatch):
    monkeypatch.setattr(read_ahead, "_FRAME_PODS", 2)
    flush = read_ahead._Scan._flush

    def dying(self):
        flush(self)
        if self.n >= 4:
            os._exit(3)

    monkeypatch.setattr(read_ahead._Scan, "_flush", dying)
    path = _write_list(tmp_path, _cluster(10))
    assert _outcome([path]) == _outcome([path], read_ahead_on=False)
    assert always


def test_explain_jobs_1_and_stdin_read_in_one_process(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from kschedx.cli.main import main

    monkeypatch.setattr(read_ahead, "MIN_BYTES", 0)
    monkeypatch.setattr(read_ahead, "cpus", lambda: 2)
    started = []
    start = read_ahead.start
    monkeypatch.setattr(read_ahead, "start", lambda data: started.append(1) or start(data))
    path = _write_list(tmp_path, _cluster(4))
    runner = CliRunner()
    one = runner.invoke(main, ["explain", "--snapshot", path, "-o", "json", "--jobs", "1", "--tie-break", "name"])
    assert one.exit_code == 0 and not started
    piped = runner.invoke(main, ["explain", "--snapshot", "-", "-o", "json", "--jobs", "2", "--tie-break", "name"],
                          input=open(path).read())
    assert piped.exit_code == 0 and not started
    two = runner.invoke(main, ["explain", "--snapshot", path, "-o", "json", "--jobs", "2", "--tie-break", "name"])
    assert two.exit_code == 0 and started
    assert two.output == one.output


# -- the scan itself, in this process --------------------------------------------
def _scan(data: bytes):
    """(answers, verdict) of a scan of `data`: (key, rep, shape ok, uid, facts
    rep) per pod."""
    out = tempfile.TemporaryFile()
    note_r, note_w = os.pipe()
    read_ahead._Scan(data, out.fileno(), note_w).run()
    os.close(note_w)
    reader = read_ahead.ReadAhead(None, out, note_r)
    answers, n = [], 0
    while (frame := reader.answers(n)) is not None:
        i = n - frame[0]
        answers.append((frame[1][i], frame[2][i], bool(frame[3][i]), frame[4][i], frame[5][i]))
        n += 1
    valid = reader.valid()
    reader.close()
    return answers, valid


def _without_own(spec: dict) -> str:
    spec = {k: v for k, v in spec.items() if k != "nodeName"}
    return json.dumps(spec, sort_keys=False)


_NAMES = st.text(alphabet="abcé-0", min_size=1, max_size=6)
_SPECS = st.sampled_from([
    {"containers": [{"name": "c", "image": "i"}]},
    {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]},
    {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": 1}}}]},
    {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": 1.0}}}]},
    {"containers": [{"name": "c", "image": "i"}], "priority": True},
    {"containers": [{"name": "c", "image": "i"}], "priority": 1},
])


@st.composite
def _documents(draw):
    objects = []
    for i in range(draw(st.integers(0, 12))):
        if draw(st.integers(0, 5)) == 0:
            objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"}})
            continue
        meta = {"name": f"{draw(_NAMES)}{i}", "namespace": draw(st.sampled_from(["a", "b"]))}
        if draw(st.booleans()):
            meta["uid"] = f"u{i}"
        spec = copy.deepcopy(draw(_SPECS))
        if draw(st.booleans()):
            spec["nodeName"] = draw(st.sampled_from(["n1", "n2"]))
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
        if draw(st.integers(0, 4)) == 0:
            pod["status"] = {"phase": draw(st.sampled_from(["Running", 3]))}
            if draw(st.booleans()):
                pod["status"]["containerStatuses"] = [
                    {"name": "c", "resources": {"requests": {"cpu": draw(st.sampled_from(["1", "2"]))}}}]
        objects.append(pod)
    return objects


@settings(max_examples=150, deadline=None)
@given(objects=_documents(), indent=st.sampled_from([None, 1, 4]), ascii_only=st.booleans(),
       window=st.integers(1, 64), bom=st.booleans())
def test_the_scan_answers_for_each_pod_what_admission_would_compute(objects, indent, ascii_only, window, bom):
    read_ahead._WINDOW = window
    try:
        text = json.dumps({"apiVersion": "v1", "items": objects, "kind": "List"}, indent=indent,
                          ensure_ascii=ascii_only)
        answers, valid = _scan((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    finally:
        read_ahead._WINDOW = 4 << 20
    assert valid
    pods = [o for o in json.loads(text)["items"] if o["kind"] == "Pod"]
    assert len(answers) == len(pods)
    for n, ((key, rep, ok, uid, facts), pod) in enumerate(zip(answers, pods)):
        meta = pod["metadata"]
        assert key == f"{meta['namespace']}/{meta['name']}"
        assert ok == pod_shape_but_spec_valid(pod)
        assert uid == (None if meta.get("uid") else read_ahead.uid_of(key))
        # "Same spec as pod rep": an earlier (or this) pod, equal as written
        # but for nodeName, and types told apart (1, 1.0 and True are not).
        assert 0 <= rep <= n and answers[rep][1] == rep
        assert _without_own(pods[rep]["spec"]) == _without_own(pod["spec"])
        # "Same PodInfo facts as pod facts": the same spec, and the same
        # requests in the status (in-place resizes).
        assert 0 <= facts <= n and answers[facts][4] == facts and answers[facts][1] == rep
        assert status_facts_key(pods[facts].get("status")) == status_facts_key(pod.get("status"))


@pytest.mark.parametrize("text, answered, valid", [
    ('{"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "a", "namespace": "n"}, "spec": {}}]}', 1, True),
    ('{"items": [], "kind": "List"}', 0, True),
    ('{"items": [{"kind": "Pod", "metadata": {"name": "a", "namespace": "n"}, "spec": {}}], "kind": "Pod"}', 1, False),
    ('{"items": [], "items": [], "kind": "List"}', 0, False),
    ('{"items": [{"metadata": {"name": "a", "namespace": "n"}, "spec": {}}], "kind": "PodList"}', 0, True),
    ('{"items": [{"kind": "List", "items": []}], "kind": "List"}', 0, True),
    ('{"items": [{"kind": "Pod", "metadata": {"name": "a"}, "spec": {}}], "kind": "List"}', 1, True),
    ('{"items": [{"kind": "Pod", "metadata": {"name": "a", "namespace": 5}, "spec": {}}], "kind": "List"}', 0, True),
    ('{"items": [{"kind": "Pod", "metadata": {"namespace": "n"}, "spec": {}}], "kind": "List"}', 0, True),
    ('{"items": [1, {"kind": "Pod"}], "kind": "List"}', 0, True),
    ('{"items": [{"kind": "Pod", "metadata": {"name": "a", "namespace": "n"}, "spec": {}}', 1, False),
    ('{"items": {}, "kind": "List"}', 0, False),
    ('[]', 0, False),
    ('{}', 0, False),
])
def test_what_the_scan_does_not_follow_ends_its_answers(text, answered, valid):
    answers, verdict = _scan(text.encode())
    assert (len(answers), verdict) == (answered, valid)


def test_utf16_is_not_scanned():
    text = json.dumps({"items": [], "kind": "List"}).encode("utf-16")
    assert _scan(text) == ([], False)


def test_the_pods_asked_about_are_the_pod_files_own(tmp_path):
    """The pods explained are those of the POD_FILEs, in their order (found
    at the end of the admitted pods, the snapshot's pods not looked at): not
    a snapshot pod that happens to carry the uid of one, nor a terminal one."""
    snapshot = [preemption_node("n1"), make_pod("held", "ns", uid="u-same"), make_pod("bound", "ns", node="n1")]
    asked = [make_pod("b", "ns", uid="u-same"), make_pod("done", "ns"), make_pod("a", "ns")]
    asked[1]["status"] = {"phase": "Succeeded"}
    snap = _write_list(tmp_path, snapshot)
    pods = tmp_path / "pods.json"
    pods.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": asked}))
    w = load_workload([snap], [str(pods)])
    assert sorted(pi.name for pi in w.pods) == ["a", "b"]
    assert {p["metadata"]["name"] for p in w.cluster.pending_pods()} == {"held", "a", "b"}
