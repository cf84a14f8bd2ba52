"""explain --watch scores a Reach again (its feasible nodes changed) only
while one of its pods waits on it: a Reach whose pods are gone or due
already is not scored, and every pod still ends up explained as a one-shot
explain of the state explains it (test_watch_soundness.py holds the
triggers to that over random events)."""

from __future__ import annotations

import random

from builders import api_node, api_pod, image
from kschedx.commands.load import Workload
from kschedx.commands.watch import WatchRun
from kschedx.state.types import PodInfo
from test_live_state import Model, start
from test_watch_soundness import FakeWatcher, one_shot, verdict
from watching import Recorder


def started(model):
    """A watch of the model's cluster (fake clock, settle 2 s) after its first batch."""
    live = start(model)
    now = [100.0]
    sink = Recorder()
    run = WatchRun(sink, FakeWatcher(), live, Workload(live.cluster, [PodInfo(p) for p in live.pending.values()]),
                   selected=lambda pod: True, named=None, tie_break="name", seed=None, settle=2.0,
                   clock=lambda: now[0], wall=lambda: 1_700_000_000.0)
    for pi in run.workload.pods:
        run._due(run._track(pi.pod, now[0]), now[0], "pending", settle=0.0)
    run._flush(now[0], run._schedulers())
    return model, run, now, sink


def watch(pending: int):
    model = Model(random.Random(1))
    model.put(api_node("n1", cpu="8"))  # the emptiest: the one top node
    model.put(api_node("n2", cpu="4"))
    for i in range(pending):
        model.put(api_pod(f"p{i}", cpu="1", labels={"app": "web"}))  # replicas: one scheduling key
    return started(model)


def _cordon(node):
    node.setdefault("spec", {})["unschedulable"] = True


def flagged_run():
    """Six identical pods (one Reach) predicted on n1; n2, feasible, is
    cordoned: the Reach is kept to be scored again."""
    model, run, now, sink = watch(pending=6)
    assert {t.last.top for t in run.tracked.values()} == {("n1",)}
    assert len({id(t.reach) for t in run.tracked.values()}) == 1
    run._event(model.change("Node", "n2", _cordon))
    assert len(run._flagged) == 1 and all(t.due is None for t in run.tracked.values())
    return model, run, now, sink


def explained_like_one_shot(run, sink):
    last = {doc["pod"]: doc for _, doc in sink.explained()}
    now_says = one_shot(run, list(run.tracked))
    for key in run.tracked:
        assert verdict(last[key]) == verdict(now_says[key])


def test_a_reach_whose_pods_wait_on_it_is_scored_again():
    model, run, now, sink = flagged_run()
    now[0] += 5.0
    run._flush(now[0])
    assert (run.summary.rescored, run.summary.rescore_skipped) == (1, 0)
    assert not run._flagged
    explained_like_one_shot(run, sink)


def test_a_reach_whose_pods_are_all_due_is_not_scored_and_they_are_explained():
    model, run, now, sink = flagged_run()
    before = run.summary.explanations
    for t in run.tracked.values():
        run._due(t, now[0], "test", settle=0.0)
    now[0] += 5.0
    run._flush(now[0])
    assert (run.summary.rescored, run.summary.rescore_skipped) == (0, 1)
    assert run.summary.explanations == before + 6 and all(t.due is None for t in run.tracked.values())
    explained_like_one_shot(run, sink)


def test_a_reach_one_of_whose_pods_is_not_due_is_scored():
    model, run, now, sink = flagged_run()
    for t in list(run.tracked.values())[1:]:
        run._due(t, now[0], "test", settle=0.0)
    now[0] += 5.0
    run._flush(now[0])
    assert (run.summary.rescored, run.summary.rescore_skipped) == (1, 0)
    explained_like_one_shot(run, sink)


def test_a_reach_whose_pods_are_gone_is_not_scored():
    model, run, now, sink = flagged_run()
    for key in list(run.tracked):
        run._event(model.delete("Pod", key))
    assert not run.tracked
    now[0] += 5.0
    run._flush(now[0])
    assert (run.summary.rescored, run.summary.rescore_skipped) == (0, 1)


# -- a node added or removed where ImageLocality counts the nodes (EventReach.node_count) ------------
IMAGE = "registry.example/app:1"


def image_run():
    """A pod whose image n1 alone holds: ImageLocality's score on n1 scales
    with 1 / the number of nodes, so each node added lowers it."""
    model = Model(random.Random(1))
    n1 = api_node("n1", cpu="4")
    n1["status"]["images"] = [image(600_000_000, IMAGE)]
    model.put(n1)
    model.put(api_node("n2", cpu="8"))
    pod = api_pod("app", cpu="1", labels={"app": "app"})
    pod["spec"]["containers"][0]["image"] = IMAGE
    model.put(pod)
    return started(model)


def test_nodes_added_and_removed_score_an_image_pod_again_and_it_is_explained_when_its_top_moves():
    model, run, now, sink = image_run()
    t = run.tracked["default/app"]
    assert t.reach is not None and t.last.top == ("n1",)
    tops = [t.last.top]
    events = [model.put(api_node(f"x{i}", cpu="2")) for i in range(6)]
    events += [model.delete("Node", f"x{i}") for i in range(6)]
    for ev in events:
        run._event(ev)
        assert t.due is None or t.reach is None, "narrowed to a scoring at the batch, not a new cycle at once"
        assert t.due is not None or t.reach in run._flagged
        now[0] += 5.0
        run._flush(now[0])
        explained_like_one_shot(run, sink)
        tops.append(t.last.top)
    assert ("n1",) in tops[1:] and ("n2",) in tops  # the top moved with the number of nodes, and back
    assert run.summary.rescored_moved >= 2 and run.summary.rescored > run.summary.rescored_moved


def test_a_reach_flagged_in_a_burst_is_scored_again_when_the_burst_is_explained():
    # An earlier trigger opened a window closing in 0.5 s: the Reach flagged
    # now is scored again then, with the pods that burst made due, not 2 s
    # (--settle) from now.
    model, run, now, sink = watch(pending=6)
    run._window = now[0] + 0.5
    run._event(model.change("Node", "n2", _cordon))
    assert len(run._flagged) == 1
    assert run._rescore_time() == now[0] + 0.5
    now[0] += 0.5
    run._flush(now[0])
    assert run.summary.rescored == 1 and not run._flagged
    explained_like_one_shot(run, sink)


def test_a_reach_flagged_alone_opens_a_window_of_settle():
    model, run, now, sink = flagged_run()
    assert run._rescore_time() == now[0] + 2.0 == run._window
    now[0] += 1.9
    run._flush(now[0])
    assert run.summary.rescored == 0 and run._flagged
    now[0] += 0.1
    run._flush(now[0])
    assert run.summary.rescored == 1
