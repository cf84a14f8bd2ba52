"""explain --watch says how far behind the cluster it is, and stays close:
a pod is due `settle` after the event reached the watch (time queued
counts), the oldest due pods are explained first, the lag goes to the
observer (--metrics-addr) and the summary. A fake clock drives WatchRun."""

from __future__ import annotations

import random
from dataclasses import replace

from builders import api_node, api_pod
from kschedx.commands.load import Workload
from kschedx.commands.watch import WatchObserver, WatchRun
from kschedx.state.types import PodInfo
from test_live_state import Model, start
from test_watch_soundness import FakeWatcher
from watching import Recorder


class Lags(WatchObserver):
    def __init__(self):
        self.seen = []
        self.stale = []
        self.gauges = []

    def pending(self, by_status, by_reason):
        self.gauges.append(dict(by_status))

    def lag(self, events_queued, oldest_event_seconds, pods_due, oldest_due_seconds):
        self.seen.append((events_queued, oldest_event_seconds, pods_due, oldest_due_seconds))

    def staleness(self, seconds):
        self.stale.append(seconds)


def watch(pending: int = 6):
    model = Model(random.Random(1))
    model.put(api_node("n1", cpu="4"))
    model.put(api_node("n2", cpu="4"))
    for i in range(pending):
        model.put(api_pod(f"p{i}", cpu="100m"))
    live = start(model)
    now = [100.0]
    observer = Lags()
    sink = Recorder()
    run = WatchRun(sink, FakeWatcher(), live, Workload(live.cluster, [PodInfo(p) for p in live.pending.values()]),
                   selected=lambda pod: True, named=None, tie_break="name", seed=None, settle=2.0,
                   clock=lambda: now[0], wall=lambda: 1_700_000_000.0, observer=observer)
    for pi in run.workload.pods:
        run._due(run._track(pi.pod, now[0]), now[0], "pending", settle=0.0)
    run._flush(now[0], run._schedulers())
    return model, run, now, observer, sink


def test_a_pod_is_due_settle_after_the_event_reached_the_watch():
    model, run, now, observer, sink = watch()
    # A pod of the cluster leaves n1 (every pod predicted there may move):
    # the event reached the watch 1.5 s before it was applied.
    ev = model.put(api_pod("big", node_name="n1", cpu="3"))
    run._event(replace(ev, received=now[0] - 1.5))
    due = [t for t in run.tracked.values() if t.due is not None]
    assert due and all(t.due == now[0] + 0.5 and t.due_since == now[0] - 1.5 for t in due)
    now[0] += 0.6
    run._lag(now[0])
    assert observer.seen[-1][2] == len(due) and abs(observer.seen[-1][3] - 2.1) < 1e-9
    run._flush(now[0])
    assert all(t.due is None for t in run.tracked.values())
    assert max(observer.stale) == run.summary.max_staleness and abs(run.summary.max_staleness - 2.1) < 1e-9
    assert run.summary_dict()["lag"]["maxStalenessSeconds"] == 2.1


def test_the_oldest_due_pods_go_first_when_a_batch_cannot_take_them_all():
    model, run, now, observer, sink = watch(pending=6)
    run._explain_cost = 1.0  # a batch (2 s) takes two pods
    keys = sorted(run.tracked)
    for i, key in enumerate(reversed(keys)):  # the last key is due the longest
        t = run.tracked[key]
        t.due, t.due_since, t.reason = now[0], now[0] - 10 + i, "test"
    seen = len(sink.items)
    run._flush(now[0])
    explained = [item["pod"] for kind, item in sink.items[seen:] if kind == "pod"]
    assert explained == keys[:-3:-1]  # the two oldest, the longest due first (not queue order)


def test_with_a_seed_a_batch_runs_in_queue_order():
    # --tie-break random --seed N: the batch draws as a one-shot run of its pods.
    model, run, now, observer, sink = watch(pending=6)
    run.tie_break, run.seed = "random", 7
    keys = sorted(run.tracked)
    for i, key in enumerate(reversed(keys)):
        t = run.tracked[key]
        t.due, t.due_since, t.reason = now[0], now[0] - 10 + i, "test"
    seen = len(sink.items)
    run._flush(now[0])
    assert [item["pod"] for kind, item in sink.items[seen:] if kind == "pod"] == keys


def test_a_batch_serves_every_pod_it_chose_though_they_cost_more_than_guessed():
    model, run, now, observer, sink = watch(pending=6)
    run._explain_cost = 0.5  # guessed: a batch (2 s) takes four pods
    keys = sorted(run.tracked)
    for i, key in enumerate(reversed(keys)):  # the last key in queue order is due the longest
        t = run.tracked[key]
        t.due, t.due_since, t.reason = now[0], now[0] - 10 + i, "test"
    write = sink.pod
    step = [0.8]

    def slow(doc):  # each pod takes 0.8 s: the four take 3.2 s, over the budget
        now[0] += step[0]
        write(doc)

    sink.pod = slow
    seen = len(sink.items)
    run._flush(now[0])
    explained = [item["pod"] for kind, item in sink.items[seen:] if kind == "pod"]
    assert explained == keys[:-5:-1]  # the longest due first
    assert run._explain_cost > 0.5  # the next batch takes fewer
    # Within twice the budget: a batch that would run longer stops there.
    for key in keys:
        t = run.tracked[key]
        t.due, t.due_since, t.reason = now[0], now[0] - 1, "test"
    run._explain_cost = 0.1
    step[0] = 1.1
    seen = len(sink.items)
    run._flush(now[0])
    assert len([1 for kind, _ in sink.items[seen:] if kind == "pod"]) == 4  # 4.4 s: no fifth
    assert sum(1 for t in run.tracked.values() if t.due is not None) == 2  # the next batch's


def test_the_queue_is_measured():
    model, run, now, observer, sink = watch()
    ev = model.put(api_node("n3", cpu="4"))
    run.watcher.events.put(replace(ev, received=0.0))
    run._lag(now[0])
    queued, oldest, _, _ = observer.seen[-1]
    assert queued == 1 and oldest > 0
    assert run.summary.max_events_queued == 1


def test_caught_up_waits_for_nodes_to_be_scored_again():
    # A Reach flagged is scored again at its settle and may make pods due:
    # until then the watch has not caught up (bench_watch_load's lag).
    model, run, now, observer, sink = watch()
    run._sync_target = 0
    run._flagged = {object(): now[0]}
    run._check_synced()
    assert not run._synced.is_set()
    run._flagged = {}
    run._check_synced()
    assert run._synced.is_set()


def test_the_cyclic_collector_waits_for_the_end_of_a_batch():
    # Let go between pods, it walked what the batch keeps after every pod
    # (and promoted it): it runs once the batch is done.
    import gc

    model, run, now, observer, sink = watch(pending=6)
    keys = sorted(run.tracked)
    for key in keys:
        t = run.tracked[key]
        t.due, t.due_since, t.reason = now[0], now[0] - 1, "test"
    collections = []
    written = []

    def counted(phase, info):
        if phase == "start" and written:
            collections.append(len(written))

    write = sink.pod

    def pod(doc):
        written.append(gc.isenabled())
        write(doc)

    sink.pod = pod
    gc.callbacks.append(counted)
    try:
        run._flush(now[0])
    finally:
        gc.callbacks.remove(counted)
    assert len(written) == 6 and not any(written)
    assert [n for n in collections if n < len(written)] == []  # none between the first pod and the last


def test_the_pending_gauges_are_set_once_per_drain_of_events():
    model, run, now, observer, sink = watch(pending=6)
    assert observer.gauges[-1] == {"Scheduled": 6}
    set_before = len(observer.gauges)
    watcher = run.watcher
    for name in ("p0", "p1", "p2"):  # bound, by another scheduler: gone from the pending pods
        ev = model.put(api_pod(name, node_name="n1", cpu="100m"))
        watcher.events.put(ev)
    run._drain(watcher.events.get_nowait())
    assert len([e for kind, e in sink.items if kind == "event" and e.get("type") == "PodGone"]) == 3
    assert observer.gauges[set_before:] == [{"Scheduled": 3}]  # once, with all three gone
    run._drain(None)
    assert len(observer.gauges) == set_before + 1  # nothing gone: not set again
