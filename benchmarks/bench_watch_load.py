#!/usr/bin/env python3
"""explain --watch under a steady stream of pod and node events: how far
behind the cluster it gets.

    python benchmarks/bench_watch_load.py                        # 500 events/s for 20 s, 5,000 nodes, 200 pending
    python benchmarks/bench_watch_load.py --rate 100 --seconds 60 --node-share 0.2
    python benchmarks/bench_watch_load.py --nodes-written top=3  # the lines of deploy/watch.yaml
    python benchmarks/bench_watch_load.py --output human         # the watch's default output
    python benchmarks/bench_watch_load.py --profile benchmarks/out/watch-load.prof   # cProfile of the watch

Two processes besides this one, as in bench_watch.py (whose server and
pacing it reuses): the test API server (tests/kubeapi.py) holding the mixed
workload (5,000 nodes, 50,000 bound pods, 200 pending pods that are never
bound, as read from a cluster), and a watch client (`explain --watch -A -o
jsonl` to nowhere, settle 2 s, in-process so that it can be timed). Once the
watch has explained its first batch, the server makes `--rate` events a
second for `--seconds`:

- pod events (tests/kubeapi_churn.py: pods created pending, bound, deleted,
  status updates; the cluster keeps its size);
- node events, `--node-share` of them (NodeChurn below): heartbeats that
  change nothing scheduling reads, image list changes, label changes, a
  taint or a cordon put on and taken off, nodes added and removed; the mix
  is `--node-mix`.

The server notes when it made each event (its resourceVersion and the
time; both processes read the same monotonic clock). The watch client notes
when each event left its queue, when each pod was first made due, and when
each explanation was written. It prints:

- lag: how long after the last event the watch had applied every event and
  explained every pod due (what bench_watch.py calls catching up);
- events: how long events waited between the server and the watch's
  triggers (median, p90, max), the most queued at once in the client;
- staleness per explanation written during and after the load: from the
  event that first made the pod due to its explanation written (median,
  p90, max), against one `--settle` plus one batch; the explanations by
  trigger; the batches (count, median and longest);
- over time (every 5 s of the load, and at its end): events queued in the
  client and the age of the oldest, pods due and the age of the oldest;
- CPU time (user+sys) of the watch's process from its first batch done
  until it caught up: what the load cost it, whatever the machine gave it;
- memory: RSS after the first batch, after catching up, peak.

Figures vary with the machine's load: run it more than once.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]

from bench_watch import Null, ask, paced, peak_mib, rss_mib, say, start_server  # noqa: E402

NODE_MIX = "heartbeat=80,images=6,labels=5,taints=3,cordon=3,add-remove=3"


# ---- the server's node events --------------------------------------------------------------


class NodeChurn:
    """Node traffic of a big cluster: mostly kubelet heartbeats (which
    scheduling does not read), now and then a node's images, labels, a taint
    or a cordon (each put on and later taken off again, so that the cluster
    stays as it was on average), and nodes added and removed (an
    autoscaler). `mix`: kind -> weight."""

    def __init__(self, store, rng: random.Random, nodes: list[str], mix: dict[str, float], max_changed: int = 50):
        self.store = store
        self.rng = rng
        self.nodes = nodes
        self.kinds = list(mix)
        self.weights = [mix[k] for k in self.kinds]
        self.max_changed = max_changed
        self.labelled: deque = deque()
        self.tainted: deque = deque()
        self.cordoned: deque = deque()
        self.extra: deque = deque()
        self.n_extra = 0
        self.beat = 0
        self.counts = Counter()

    def step(self) -> None:
        kind = self.rng.choices(self.kinds, self.weights)[0]
        getattr(self, kind.replace("-", "_"))()
        self.counts[kind] += 1

    def _update(self, name: str, change) -> None:
        self.store.update("Node", None, name, change)

    def heartbeat(self) -> None:
        self.beat += 1
        stamp = f"2025-01-01T{self.beat // 3600 % 24:02d}:{self.beat // 60 % 60:02d}:{self.beat % 60:02d}Z"

        def change(node):
            node.setdefault("status", {})["conditions"] = [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": stamp}]
            return node

        self._update(self.rng.choice(self.nodes), change)

    def images(self) -> None:
        k = self.rng.randrange(1000)

        def change(node):
            node.setdefault("status", {})["images"] = [
                {"names": [f"registry.example/cache:{k}"], "sizeBytes": 100_000_000 + k}]
            return node

        self._update(self.rng.choice(self.nodes), change)

    def _toggle(self, held: deque, put, take) -> None:
        if len(held) >= self.max_changed or (held and self.rng.random() < 0.5):
            self._update(held.popleft(), take)
        else:
            name = self.rng.choice(self.nodes)
            if name in held:
                return
            held.append(name)
            self._update(name, put)

    def labels(self) -> None:
        value = str(self.rng.randrange(100))

        def put(node):
            node["metadata"].setdefault("labels", {})["example.com/rack-group"] = value
            return node

        def take(node):
            node["metadata"].get("labels", {}).pop("example.com/rack-group", None)
            return node

        self._toggle(self.labelled, put, take)

    def taints(self) -> None:
        taint = {"key": "example.com/maintenance", "effect": "NoSchedule"}

        def put(node):
            node.setdefault("spec", {})["taints"] = [taint]
            return node

        def take(node):
            node.setdefault("spec", {}).pop("taints", None)
            return node

        self._toggle(self.tainted, put, take)

    def cordon(self) -> None:
        def put(node):
            node.setdefault("spec", {})["unschedulable"] = True
            return node

        def take(node):
            node.setdefault("spec", {}).pop("unschedulable", None)
            return node

        self._toggle(self.cordoned, put, take)

    def add_remove(self) -> None:
        if len(self.extra) >= self.max_changed or (self.extra and self.rng.random() < 0.5):
            self.store.delete("Node", None, self.extra.popleft())
            return
        from gen_mixed_workload import make_node

        self.n_extra += 1
        node = make_node(self.n_extra, 3, self.rng)
        name = f"extra-{self.n_extra:05d}"
        node["metadata"]["name"] = name
        node["metadata"]["labels"]["kubernetes.io/hostname"] = name
        self.extra.append(name)
        self.store.put(node)


def parse_mix(text: str) -> dict[str, float]:
    mix = {}
    for part in text.split(","):
        kind, _, weight = part.partition("=")
        if kind not in ("heartbeat", "images", "labels", "taints", "cordon", "add-remove"):
            raise SystemExit(f"--node-mix: unknown kind {kind!r}")
        mix[kind] = float(weight)
    return mix


def serve(args) -> None:
    from kubeapi_churn import Churn

    server = start_server(Path(args.serve), args.nodes, args.pods)
    nodes = [f"node-{i:05d}" for i in range(args.nodes)]
    pods = Churn(server.store, random.Random(7), nodes)
    node_churn = NodeChurn(server.store, random.Random(11), nodes, parse_mix(args.node_mix))
    rng = random.Random(13)
    store = server.store
    timeline: list[tuple[int, float]] = []  # (resourceVersion after the event, when)

    def step():
        if rng.random() < args.node_share:
            node_churn.step()
        else:
            pods.step()
        timeline.append((store.resource_version, time.monotonic()))

    say({"ready": True, "rv": store.resource_version})
    for line in sys.stdin:
        cmd = line.split()
        if cmd and cmd[0] == "load":
            timeline.clear()
            seconds = paced(int(cmd[1]), float(cmd[2]), step)
            say({"done": True, "rv": store.resource_version, "seconds": round(seconds, 2),
                 "pods": pods.counts, "nodes": dict(node_churn.counts), "timeline": timeline})
        elif cmd and cmd[0] == "quit":
            break
    server.stop()


# ---- the watch client --------------------------------------------------------------------------


class TimedQueue(queue.Queue):
    """The watcher's event queue, noting when each event was put and when it
    was taken (the consumer is one thread: FIFO pairs them)."""

    def __init__(self, maxsize: int):
        super().__init__(maxsize)
        self.taken_rv = ""  # the event the consumer is working on
        self.taken: list[tuple[str, float]] = []  # (rv, when taken), every 20th event with an rv
        self.most = 0
        self._n = 0
        # Times apart from the items: the watch peeks at the head's
        # `received` for its own lag metric.
        self._times: deque = deque()

    def _put(self, item):
        self.queue.append(item)
        self._times.append(time.monotonic())
        if len(self.queue) > self.most:
            self.most = len(self.queue)

    def _get(self):
        item = self.queue.popleft()
        self._times.popleft()
        if item.rv:
            self.taken_rv = item.rv
            self._n += 1
            if self._n % 20 == 0:
                self.taken.append((item.rv, time.monotonic()))
        return item

    def oldest_age(self, now: float) -> float:
        with self.mutex:
            return now - self._times[0] if self._times else 0.0


def trigger_kind(reason: str) -> str:
    """A due reason (commands/watch.py's texts) as a small set of kinds."""
    words = (reason or "").split()
    if not words:
        return "other"
    if words[0] == "node" and len(words) > 2:
        return "node " + ("images" if words[2] == "images" else words[2].split("(")[0])
    if words[0] == "pod" and len(words) > 2:
        return "pod " + words[2]
    return words[0].rstrip(":")


def watch(args) -> None:
    from kschedx.api.selection import PodSelection
    from kschedx.commands.watch import WatchObserver, watch_into
    from kschedx.render.watch import WatchHumanSink, WatchJsonlSink
    from kschedx.result.node_choice import parse_node_choice
    from kschedx.sources.cluster import KINDS, connect

    holder: dict = {}
    due_since: dict[str, tuple[float, str, str]] = {}  # pod -> (when first due, event rv, reason)
    explained: list[tuple[float, float, str, str]] = []  # (written, first due, event rv, trigger kind)
    batches: list[tuple[float, float, int]] = []  # (start, seconds, pods explained)
    samples: list[dict] = []

    own_staleness: list[float] = []  # the watch's own measure (kschedx_explanation_staleness_seconds)

    class Observer(WatchObserver):
        def staleness(self, seconds):
            own_staleness.append(seconds)

        def explained(self, doc, seconds, trigger):
            since = due_since.pop(doc["pod"], None)
            if since is not None:
                explained.append((time.monotonic(), since[0], since[1], trigger_kind(since[2])))

    def instrument(run):
        # Instance attributes over the WatchRun's own methods: what made each
        # pod due and when, and each batch's duration. Nothing else changes.
        run.watcher.events = events = TimedQueue(run.watcher.events.maxsize)
        holder["events"] = events
        due, flush = run._due, run._flush

        def timed_due(t, now, reason, settle=None):
            if t.due is None and t.key not in due_since:
                if t.due_since is not None:
                    # Made due by scores computed again: since the event that
                    # flagged its nodes (the watch's own due_since), not the
                    # event applied last.
                    due_since[t.key] = (t.due_since, "", reason)
                else:
                    due_since[t.key] = (time.monotonic(), events.taken_rv, reason)
            due(t, now, reason, settle)

        def timed_flush(now, scheds=None):
            before, start = len(explained), time.monotonic()
            flush(now, scheds)
            if len(explained) > before:
                batches.append((start, time.monotonic() - start, len(explained) - before))

        run._due, run._flush = timed_due, timed_flush
        holder["run"] = run

    conn = connect(args.kubeconfig, request_timeout=120, pool_size=len(KINDS) + 4)
    stop = threading.Event()
    nodes = parse_node_choice(args.nodes_written) if args.nodes_written else None
    profile = None
    if args.profile:
        import cProfile

        profile = cProfile.Profile()

    def target():
        if profile is not None:
            profile.enable()
        try:
            sink = WatchJsonlSink(Null()) if args.output == "jsonl" else WatchHumanSink(out=Null(), color=False)
            watch_into(sink, conn, all_pending=True, selection=PodSelection(None, True, None, None),
                       tie_break="name", seed=None, settle=args.settle, nodes=nodes, observer=Observer(),
                       stop=stop, on_run=instrument)
        finally:
            if profile is not None:
                profile.disable()

    started = time.monotonic()
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    while "run" not in holder or holder["run"].batches < 1:
        time.sleep(0.05)
    run = holder["run"]
    events = holder["events"]
    while any(t.due is not None for t in run.tracked.values()):
        time.sleep(0.1)
    first_s = time.monotonic() - started
    rss0 = rss_mib()
    cpu0 = time.process_time()
    sampling = threading.Event()

    def sampler():
        while not sampling.wait(0.5):
            now = time.monotonic()
            tracked = run.tracked
            for key in [k for k in list(due_since) if k not in tracked]:
                due_since.pop(key, None)  # bound or deleted before it was explained
            dues = [since[0] for key, t in list(tracked.items())
                    if t.due is not None and (since := due_since.get(key)) is not None]
            samples.append({"t": now, "queued": events.qsize(), "oldest_event": round(events.oldest_age(now), 2),
                            "due": len(dues), "oldest_due": round(now - min(dues), 2) if dues else 0.0,
                            "rss": round(rss_mib())})

    say({"ready": True, "first_batch_s": round(first_s, 1), "rss0_mib": round(rss0)})
    mark = len(explained)
    own_mark = len(own_staleness)
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "start":
            del samples[:]
            threading.Thread(target=sampler, daemon=True).start()
            say({"sampling": True})
        elif cmd[0] == "sync":
            ok = run.sync(int(cmd[1]), timeout=args.timeout)
            synced_at = time.monotonic()
            sampling.set()
            say({"synced": ok, "synced_at": synced_at, "cpu_s": round(time.process_time() - cpu0, 1), "rss_mib": round(rss_mib()), "peak_mib": round(peak_mib()),
                 "relists": run.summary.relists, "explanations": run.summary.explanations,
                 "batches": run.batches, "events": sum(run.summary.events.values()),
                 "most_queued": events.most, "taken": events.taken, "samples": samples,
                 "explained": explained[mark:], "batch_times": batches,
                 "own_staleness": own_staleness[own_mark:], "lag": run.summary_dict()["lag"],
                 "rescored": [run.summary.rescored, run.summary.rescored_moved, run.summary.rescore_skipped],
                 "still_due": sum(1 for t in list(run.tracked.values()) if t.due is not None)})
        elif cmd[0] == "quit":
            break
    stop.set()
    thread.join(60)
    if profile is not None:
        profile.dump_stats(args.profile)


# ---- the parent ---------------------------------------------------------------------------------


def spawn(role: str, *argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, f"--{role}", *argv], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))] if values else float("nan")


def summary(values: list[float]) -> str:
    if not values:
        return "none"
    return (f"median {statistics.median(values):.2f} s, p90 {pct(values, 0.9):.2f} s, max {max(values):.2f} s "
            f"({len(values)})")


def measure(args) -> None:
    events = int(args.rate * args.seconds)
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kschedx-bench-watch-load-") as tmp:
        server = spawn("serve", tmp, "--nodes", str(args.nodes), "--pods", str(args.pods),
                       "--node-share", str(args.node_share), "--node-mix", args.node_mix)
        watcher = None
        try:
            ready = ask(server)
            print(f"server: {args.nodes} nodes, {args.pods} bound pods, 200 pending; resourceVersion {ready['rv']}",
                  flush=True)
            extra = ["--settle", str(args.settle), "--timeout", str(args.timeout), "--output", args.output]
            if args.nodes_written:
                extra += ["--nodes-written", args.nodes_written]
            if args.profile:
                extra += ["--profile", str(Path(args.profile).resolve())]
            watcher = spawn("watch", str(Path(tmp) / "kubeconfig"), *extra)
            w0 = ask(watcher)
            print(f"watch: first batch (200 pods) done {w0['first_batch_s']} s after start; RSS {w0['rss0_mib']} MiB",
                  flush=True)
            ask(watcher, "start")
            done = ask(server, f"load {events} {args.rate}")
            timeline = done["timeline"]
            last_event = timeline[-1][1] if timeline else time.monotonic()
            print(f"{events} events in {done['seconds']} s ({events / done['seconds']:.0f}/s): pods {done['pods']}, "
                  f"nodes {done['nodes']}", flush=True)
            w1 = ask(watcher, f"sync {done['rv']}")
            ask_quit(server, wait=False)
        except BaseException:
            for proc in (watcher, server):
                if proc is not None and proc.poll() is None:
                    proc.kill()
            raise
        rvs = [rv for rv, _ in timeline]

        def made_at(rv: str) -> float | None:
            """When the server made the event of resourceVersion rv (None: before the load)."""
            if not rv:
                return None
            i = bisect.bisect_left(rvs, int(rv))
            return timeline[i][1] if i < len(timeline) else None

        lag = w1["synced_at"] - last_event
        print(f"lag: {'caught up' if w1['synced'] else 'NOT caught up'} {lag:.1f} s after the last event "
              f"({w1['still_due']} pods still due; {w1['events']} events applied, "
              f"{w1['explanations']} explanations in {w1['batches']} batches, "
              f"{w1['relists']} relists)")
        waits = [t - made for rv, t in w1["taken"] if (made := made_at(rv)) is not None]
        print(f"events, from the server to the watch's triggers: {summary(waits)}; "
              f"at most {w1['most_queued']} queued in the client")
        load_start = timeline[0][1] if timeline else 0.0
        stale, by_kind, worst = [], Counter(), {}
        for written, first_due, rv, kind in w1["explained"]:
            made = made_at(rv)
            stale.append(written - (made if made is not None and made >= load_start else first_due))
            by_kind[kind] += 1
            worst[kind] = max(worst.get(kind, 0.0), stale[-1])
        print(f"staleness of each explanation (its first trigger's event to the line written): {summary(stale)}")
        print("the longest by trigger: " + ", ".join(f"{k} {v:.2f} s" for k, v in sorted(worst.items(),
                                                                                      key=lambda kv: -kv[1])))
        print(f"the watch's own staleness (from the event reaching the watch, kschedx_explanation_staleness_seconds): "
              f"{summary(w1['own_staleness'])}; its summary's lag: {w1['lag']}; scored again "
              f"{w1['rescored'][0]} times (the verdict moved {w1['rescored'][1]}; skipped, its pods gone or due already: "
              f"{(w1['rescored'] + [0, 0])[2]})")
        batch_s = [b[1] for b in w1["batch_times"] if b[0] >= load_start]
        if batch_s:
            print(f"batches during and after the load: {len(batch_s)}, median {statistics.median(batch_s):.1f} s, "
                  f"longest {max(batch_s):.1f} s; the target, one --settle plus one batch: "
                  f"{args.settle + statistics.median(batch_s):.1f} s")
        print("explanations by trigger: " + ", ".join(f"{k} {n}" for k, n in by_kind.most_common()))
        print("over time (seconds since the first event: events queued in the client / oldest; pods due / oldest; RSS):")
        step = max(1, int(5 / 0.5))
        rows = w1["samples"][::step]
        if w1["samples"] and rows[-1] is not w1["samples"][-1]:
            rows.append(w1["samples"][-1])
        for s in rows:
            print(f"  {s['t'] - load_start:6.1f} s: {s['queued']:6d} / {s['oldest_event']:6.1f} s;"
                  f" {s['due']:4d} / {s['oldest_due']:6.1f} s; {s['rss']} MiB")
        print(f"CPU time of the watch's process (user+sys), from its first batch done until caught up: "
              f"{w1['cpu_s']} s")
        print(f"memory: RSS {w0['rss0_mib']} MiB after the first batch, {w1['rss_mib']} MiB after catching up "
              f"({w1['rss_mib'] - w0['rss0_mib']:+d} MiB), peak {w1['peak_mib']} MiB")
        ask_quit(watcher)
        server.wait(60)
        print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)


def ask_quit(proc: subprocess.Popen, wait: bool = True) -> None:
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    if wait:
        proc.wait(120)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--pods", type=int, default=50_000)
    p.add_argument("--rate", type=float, default=500.0, help="events a second")
    p.add_argument("--seconds", type=float, default=20.0, help="how long the load lasts")
    p.add_argument("--node-share", type=float, default=0.1, help="the share of node events")
    p.add_argument("--node-mix", default=NODE_MIX, help="node event kinds and their weights")
    p.add_argument("--settle", type=float, default=2.0)
    p.add_argument("--nodes-written", help="the watch's --nodes (e.g. top=3); default: every node")
    p.add_argument("--output", choices=("jsonl", "human"), default="jsonl",
                   help="the watch's -o (human: its default, the report drawn to nowhere)")
    p.add_argument("--timeout", type=float, default=1800.0, help="the longest wait for the watch to catch up")
    p.add_argument("--profile", help="write a cProfile of the watch's thread here")
    p.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--watch", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve:
        serve(args)
    elif args.watch:
        args.kubeconfig = args.watch
        watch(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()
