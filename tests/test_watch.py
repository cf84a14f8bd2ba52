"""explain --watch (commands/watch.py) against the local test API server,
through the official client as kschedx uses it; nothing of kschedx mocked.

The first test is the issue's: pause the writes, snapshot the server, and
every explanation of the watch's last batch is what a one-shot `explain` of
that state prints."""

from __future__ import annotations

import json
import time

import pytest

from builders import api_node, api_pod, metadata, served, taint
from cluster_scenarios import no_ambient_config, run, small_cluster  # noqa: F401 (fixture)
from kschedx.api.selection import PodSelection
from kschedx.sources.cluster import connect
from watching import Watching


@pytest.fixture
def api(kube_api):
    kube_api.bookmark_interval = 0.05
    small_cluster(kube_api)
    return kube_api


def bind(api, ns, name, node):
    conn = connect(str(api.kubeconfig))
    pod = api.get("Pod", ns, name)
    pod["kind"] = "Pod"
    conn.bind_pod(pod, node)


def set_spec(api, ns, name, **fields):
    api.store.update("Pod", ns, name, lambda p: {**p, "spec": {**p["spec"], **fields}})


def node_change(api, name, fn):
    def change(n):
        fn(n)
        return n
    api.store.update("Node", None, name, change)


def replicas(api, n, prefix="rep", cpu="200m", namespace="default"):
    for i in range(n):
        pod = api_pod(f"{prefix}-{i:02d}", cpu=cpu, labels={"app": prefix}, namespace=namespace)
        api.add(pod)


def one_shot_lines(*args) -> list[dict]:
    r = run("explain", *args, "-o", "jsonl")
    assert r.exit_code in (0, 1), r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()][:-1]


def without(line: dict, *keys) -> dict:
    out = {k: v for k, v in line.items() if k not in keys}
    out["pods"] = [{k: v for k, v in p.items() if k != "source"} for p in line["pods"]]
    return out


def churn(api):
    """Writes of every sort the triggers and the live state handle."""
    api.add(api_node("n4", cpu="8", labels={"zone": "c"}))
    bind(api, "default", "web", "n3")
    api.delete("Pod", "team", "busy-2")
    replicas(api, 5)
    node_change(api, "n1", lambda n: n["spec"].update(taints=[taint("maint", "x", "NoSchedule")]))
    gated = api_pod("gated", cpu="100m")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    api.add(gated)
    api.add(served("v1", "PersistentVolumeClaim", metadata("data", "default"),
                   spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}))
    with_claim = api_pod("uses-claim", cpu="100m")
    with_claim["spec"]["volumes"] = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    api.add(with_claim)
    api.store.update("Pod", "default", "gated", lambda p: {**p, "spec": {**p["spec"], "schedulingGates": []}})
    api.add(api_pod("late", cpu="3", namespace="team"))


@pytest.mark.parametrize("flags", [
    {"tie_break": "name", "args": ("--tie-break", "name")},
    {"tie_break": "random", "seed": 7, "args": ("--tie-break", "random", "--seed", "7")},
    {"tie_break": "name", "nodes": "top=3", "args": ("--tie-break", "name", "--nodes", "top=3")},
])
def test_every_explanation_is_what_a_one_shot_explain_of_the_same_state_prints(api, tmp_path, flags):
    from kschedx.result.node_choice import parse_node_choice

    nodes = parse_node_choice(flags["nodes"]) if flags.get("nodes") else None
    w = Watching(api, sink="jsonl", tie_break=flags["tie_break"], seed=flags.get("seed"), nodes=nodes)
    try:
        w.sync()
        first = [line for line in w.lines() if line.get("kind") == "SchedulingResult"]
        # The first batch is the one-shot explain of the first state.
        want = one_shot_lines("-A", "--kubeconfig", api.kubeconfig, *flags["args"])
        assert [without(line, "watch") for line in first] == [without(line) for line in want]

        churn(api)
        w.sync()  # writes paused: the watch has applied and explained everything
        w.run.explain_all_now()  # and a full pass, to compare every pod
        w.sync()
        lines = w.lines()
        batch = [line for line in lines if line.get("kind") == "SchedulingResult"
                 and line["watch"]["reason"] == "test"]
        pods = [line["pods"][0]["pod"] for line in batch]
        assert sorted(pods) == sorted(["default/big", "default/gated", "default/uses-claim", "team/late",
                                       "team/tolerant"] + [f"default/rep-{i:02d}" for i in range(5)])
        snapshot = tmp_path / "s.json"
        r = run("snapshot", "-o", snapshot, "--kubeconfig", api.kubeconfig)
        assert r.exit_code == 0, r.stderr
        offline = one_shot_lines("--snapshot", snapshot, *pods, *flags["args"], *(
            ("--nodes", flags["nodes"]) if False else ()))
        if nodes is not None:
            offline = one_shot_lines("--snapshot", snapshot, *pods, "--tie-break", "name", "--nodes", flags["nodes"])
        live_one_shot = one_shot_lines("--kubeconfig", api.kubeconfig, *pods, *flags["args"])
        assert [without(line, "watch") for line in batch] == [without(line) for line in offline]
        assert [without(line, "watch") for line in batch] == [without(line) for line in live_one_shot]
        # The changes each explanation followed came with it.
        reasons = {line["watch"]["reason"] for line in lines if line.get("kind") == "SchedulingResult"}
        assert {"pending", "new", "test"} <= reasons
        assert any(r.startswith("node n4 added") for r in reasons)
    finally:
        w.finish()
    last = w.lines()[-1]
    assert last["kind"] == "SchedulingResult" and last["pods"] == [] and last["watch"]["stopReason"] == "stopped"
    assert last["stream"]["exitCode"] == 0


def _human_watch_then_one_shot(api, between=lambda: None) -> tuple[str, list[str], str]:
    """The human watch's text once caught up; then (after `between`) the
    blocks of a one-shot explain of the same cluster, and its whole text."""
    w = Watching(api, sink="human")
    try:
        w.sync()
    finally:
        w.finish()
    between()
    r = run("explain", "-A", "--kubeconfig", api.kubeconfig, "--tie-break", "name")
    return w.out.getvalue(), r.stdout.rstrip("\n").split("\n\n")[:-1], r.stdout  # blocks: not the closing count


def test_human_blocks_are_the_one_shot_report_of_the_pods(api, tmp_path):
    text, one_shot, _ = _human_watch_then_one_shot(api)
    for block in one_shot:
        assert block in text
    assert text.count("── ") == 3 and "· pending ──" in text
    assert "watched " in text.splitlines()[-1] and "3 pods explained 3 times" in text


def test_human_blocks_on_many_nodes_are_the_report_drawn_from_every_node_dict(kube_api, monkeypatch):
    # Past VIEW_MIN_NODES the watch's report reads the records through a
    # NodeView (result/node_view.py): its blocks are the one-shot report
    # drawn from every node's dicts.
    from kschedx.render import human
    from kschedx.result.node_dicts import node_dicts
    from kschedx.result.node_view import VIEW_MIN_NODES, NodeView

    kube_api.bookmark_interval = 0.05
    nodes = VIEW_MIN_NODES + 16
    for i in range(nodes):
        spec = {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]} if i % 5 == 0 else {}
        kube_api.add(api_node(f"n{i:03d}", cpu="1" if i % 7 == 0 else "4", labels={"zone": f"z{i % 3}"}, spec=spec))
    kube_api.add(*[api_pod(f"busy-{i}", node_name=f"n{i:03d}", cpu="500m") for i in range(0, nodes, 4)])
    kube_api.add(api_pod("web-1", cpu="1500m"), api_pod("web-2", cpu="1500m"), api_pod("big", cpu="8"))
    kube_api.add(served("v1", "Namespace", metadata("default")))
    views = []
    made = human.node_view

    def counted(records):
        v = made(records)
        views.append(type(v))
        return v

    monkeypatch.setattr(human, "node_view", counted)
    text, one_shot, whole = _human_watch_then_one_shot(
        kube_api, between=lambda: monkeypatch.setattr(human, "node_view", node_dicts))
    assert views and set(views) == {NodeView}
    assert "grouped by the failure kube-scheduler reports" in whole
    for block in one_shot:
        assert block in text
    assert text.count("── ") == 3


def test_a_new_pod_is_explained_once_after_settle(api):
    w = Watching(api, settle=0.4)
    try:
        w.sync()
        api.add(api_pod("fresh", cpu="100m"))
        added = time.monotonic()
        w.sync()
        pairs = [(e, d) for e, d in w.sink.explained() if d["pod"] == "default/fresh"]
        assert len(pairs) == 1 and pairs[0][0]["reason"] == "new"
        assert time.monotonic() - added >= 0.4
    finally:
        w.finish()


def test_a_burst_of_replicas_is_one_batch_and_one_cycle(api):
    w = Watching(api, settle=0.5)
    try:
        w.sync()
        batches = w.run.batches
        replicas(api, 20)
        w.sync()
        assert w.run.batches == batches + 1
        docs = [d for e, d in w.sink.explained() if d["pod"].startswith("default/rep-")]
        assert len(docs) == 20
        # Identical replicas share one cycle: one `nodes` list for all of them.
        assert len({id(d["nodes"]) for d in docs}) == 1
    finally:
        w.finish()


def statuses(w, pod):
    return [(e["reason"], d["status"]) for e, d in w.sink.explained() if d["pod"] == pod]


def test_a_node_added_makes_an_unschedulable_pod_schedulable(api):
    w = Watching(api)
    try:
        w.sync()
        assert statuses(w, "default/big") == [("pending", "Unschedulable")]
        api.add(api_node("n4", cpu="8"))
        w.sync()
        assert statuses(w, "default/big")[-1] == ("node n4 added", "Scheduled")
    finally:
        w.finish()


def test_a_taint_makes_a_scheduled_pod_unschedulable(api):
    set_spec(api, "default", "web", nodeSelector={"zone": "a"})  # only n1 fits
    w = Watching(api)
    try:
        w.sync()
        assert statuses(w, "default/web")[-1][1] == "Scheduled"
        node_change(api, "n1", lambda n: n["spec"].update(taints=[taint("maint", "x", "NoSchedule")]))
        w.sync()
        reason, status = statuses(w, "default/web")[-1]
        assert status == "Unschedulable" and reason.startswith("node n1 changed")
    finally:
        w.finish()


def test_a_pod_leaving_the_only_node_with_room_re_explains(api):
    api.add(api_pod("wide", cpu="1500m"))
    set_spec(api, "default", "wide", nodeSelector={"zone": "a"})  # n1: 2 CPUs, busy-1 holds 1
    w = Watching(api)
    try:
        w.sync()
        assert statuses(w, "default/wide")[-1][1] == "Unschedulable"
        api.delete("Pod", "default", "busy-1")
        w.sync()
        reason, status = statuses(w, "default/wide")[-1]
        assert status == "Scheduled" and "left node n1" in reason
    finally:
        w.finish()


def test_scheduling_gates_removed_explains_the_pod(api):
    gated = api_pod("gated", cpu="100m")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    api.add(gated)
    w = Watching(api)
    try:
        w.sync()
        assert statuses(w, "default/gated") == [("pending", "Gated")]
        api.add(api_node("n4"))  # a Gated pod waits for its gates only
        w.sync()
        assert statuses(w, "default/gated") == [("pending", "Gated")]
        set_spec(api, "default", "gated", schedulingGates=[])
        w.sync()
        assert statuses(w, "default/gated")[-1] == ("changed: scheduling gates", "Scheduled")
    finally:
        w.finish()


def test_updates_that_change_nothing_scheduling_reads_explain_nothing(api):
    w = Watching(api)
    try:
        w.sync()
        count = len(w.sink.explained())
        node_change(api, "n1", lambda n: n["status"].update(
            conditions=[{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-01T00:00:09Z"}]))
        api.store.update("Pod", "default", "busy-1", lambda p: {**p, "status": {
            **p["status"], "conditions": [{"type": "Ready", "status": "False"}]}})
        w.sync()
        assert len(w.sink.explained()) == count
    finally:
        w.finish()


def test_a_claim_change_re_explains_only_pods_with_claims(api):
    with_claim = api_pod("uses-claim", cpu="100m")
    with_claim["spec"]["volumes"] = [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]
    api.add(with_claim)
    w = Watching(api)
    try:
        w.sync()
        before = {d["pod"] for e, d in w.sink.explained()}
        api.add(served("v1", "PersistentVolumeClaim", metadata("data", "default"),
                       spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}))
        w.sync()
        after = [d["pod"] for e, d in w.sink.explained()][len(before):]
        assert after == ["default/uses-claim"]
    finally:
        w.finish()


def test_gone_pods_say_what_kschedx_had_predicted(api):
    w = Watching(api)
    try:
        w.sync()
        predicted = {d["pod"]: d["selectedNode"] for e, d in w.sink.explained()}
        bind(api, "default", "web", predicted["default/web"])  # as predicted
        other = next(n for n in ("n1", "n2", "n3") if n != predicted["team/tolerant"])
        bind(api, "team", "tolerant", other)  # elsewhere
        api.delete("Pod", "default", "big")
        w.sync()
        gone = {e["pod"]: e for e in w.sink.events("PodGone")}
        assert gone["default/web"]["outcome"] == "Bound" and gone["default/web"]["predictionHit"] is True
        assert gone["default/web"]["node"] == predicted["default/web"]
        assert gone["team/tolerant"]["predictionHit"] is False
        assert gone["default/big"]["outcome"] == "Deleted" and gone["default/big"]["predictionHit"] is None
        assert gone["default/big"]["prediction"]["status"] == "Unschedulable"
        assert gone["default/web"]["scheduler"] == "default-scheduler"
        assert gone["default/web"]["pendingSeconds"] >= 0
    finally:
        w.finish()
    summary = w.sink.items[-1][1]["watch"]
    assert summary["gone"] == {"Bound": 2, "Deleted": 1, "Finished": 0}
    assert summary["predictions"] == {"hit": 1, "miss": 1, "unpredicted": 0}
    from kschedx.render.watch import gone_text

    text = gone_text(next(e for e in w.sink.events("PodGone") if e["pod"] == "default/web"))
    assert text.startswith(f"bound to {predicted['default/web']} by default-scheduler after ")
    assert text.endswith(f"kschedx had predicted {predicted['default/web']}")


def test_a_stale_prediction_says_so(api):
    w = Watching(api, settle=30)
    try:
        w.sync(timeout=5) if False else None
        time.sleep(0.5)
        api.add(api_node("n4", cpu="8"))  # big is due again in 30 s: its prediction is stale
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and w.run.tracked["default/big"].due is None:
            time.sleep(0.05)
        api.delete("Pod", "default", "big")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not w.sink.events("PodGone"):
            time.sleep(0.05)
        [gone] = w.sink.events("PodGone")
        assert gone["prediction"]["stale"] is True and gone["prediction"]["staleBecause"] == "node n4 added"
        from kschedx.render.watch import gone_text

        assert "the cluster changed since: node n4 added" in gone_text(gone)
    finally:
        w.finish()


def test_a_pod_bound_before_settle_is_counted_not_reported(api):
    w = Watching(api, settle=30)
    try:
        time.sleep(0.3)
        api.add(api_pod("quick", cpu="100m"))
        time.sleep(0.3)
        bind(api, "default", "quick", "n3")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and w.run.summary.gone_unexplained == 0:
            time.sleep(0.05)
        assert w.run.summary.gone_unexplained == 1
        assert not [e for e in w.sink.events("PodGone") if e["pod"] == "default/quick"]
    finally:
        w.finish()


def test_named_pods_end_the_watch_when_they_are_gone(api):
    w = Watching(api, refs=("default/web",), all_pending=False,
                 selection=PodSelection(None, False, None, None))
    w.sync()
    assert [d["pod"] for e, d in w.sink.explained()] == ["default/web"]
    api.add(api_pod("other", cpu="100m"))  # not named: state only
    bind(api, "default", "web", "n3")
    w.thread.join(15)
    assert not w.thread.is_alive() and w.code == 0
    assert w.sink.items[-1][1]["watch"]["stopReason"] == "named pods gone"
    assert "default/other" not in [d["pod"] for e, d in w.sink.explained()]


def test_the_selection_takes_new_pods_the_way_it_took_the_first(api):
    w = Watching(api, selection=PodSelection("team", False, "tier=front", None), all_pending=True)
    try:
        w.sync()
        assert w.sink.explained() == []  # no pending pod in team has tier=front
        api.add(api_pod("f1", namespace="team", labels={"tier": "front"}))
        api.add(api_pod("f2", namespace="default", labels={"tier": "front"}))
        api.add(api_pod("f3", namespace="team", labels={"tier": "back"}))
        w.sync()
        assert [d["pod"] for e, d in w.sink.explained()] == ["team/f1"]
        api.store.update("Pod", "team", "f1", lambda p: {**p, "metadata": {**p["metadata"], "labels": {}}})
        w.sync()
        assert [e["pod"] for e in w.sink.events("Unselected")] == ["team/f1"]
    finally:
        w.finish()


def test_an_outage_is_said_once_and_the_state_is_right_after(api):
    w = Watching(api)
    try:
        w.sync()
        api.pause_serving()
        time.sleep(1.5)
        api.add(api_node("n4", cpu="8"))  # made while away: the resumed watch brings it
        api.resume_serving()
        w.sync()
        assert [n for n in w.notices if "lost cluster" in n] and len([n for n in w.notices if "lost" in n]) == 1
        assert len([n for n in w.notices if "reconnected" in n]) == 1
        assert statuses(w, "default/big")[-1] == ("node n4 added", "Scheduled")
        assert [e["type"] for e in w.sink.events() if e["type"] in ("Disconnected", "Reconnected")] == [
            "Disconnected", "Reconnected"]
    finally:
        w.finish()
    assert w.sink.items[-1][1]["watch"]["disconnections"] == 1
