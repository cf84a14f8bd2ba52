"""explain --watch on a large cluster: memory after thousands of pod events,
and the cost of each re-explanation, against a one-shot explain.

    python benchmarks/bench_watch.py [--nodes 5000 --pods 50000 --events 10000 --rate 500]

Three processes besides this one, so that each figure is its own process's:
the test API server (tests/kubeapi.py) with the mixed workload of
gen_mixed_workload.py (as read from a cluster), a one-shot client (read +
admission + snapshot + explain of one pending pod, then that pod's cycle
and document timed alone, 5 times), and a watch client (explain --watch -A
-o jsonl to /dev/null, settle 2 s), whose resident memory is taken after its
first batch, then after `--events` pod events (tests/kubeapi_churn.py: pods
made pending, bound, deleted, status updates, new Jobs), once it has caught
up. --relist also ends the pod watch with 410 Gone in the middle of the
events, and reports what the relist cost.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "benchmarks")]


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def say(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


# ---- server ------------------------------------------------------------------------------


def start_server(workdir: Path, nodes: int, pods: int):
    """The test API server (started, its kubeconfig in workdir) holding the
    mixed workload of gen_mixed_workload.py as read from a cluster: `nodes`
    nodes, `pods` bound pods, 200 pending (benchmarks/bench_watch_load.py
    serves the same)."""
    from gen_mixed_workload import generate
    from kubeapi import KubeAPIServer
    from kubeapi_store import BY_KIND, _index_fields, dumps
    from kubeapi_tls import make_server_material

    server = KubeAPIServer(make_server_material(workdir / "tls"), watch_history=50_000,
                           bookmark_interval=1.0).start()
    objects = generate(nodes, pods, 3, 200, 20, 5, 1, from_cluster=True)
    by_kind: dict[str, list] = {}
    for obj in objects:
        by_kind.setdefault(obj["kind"], []).append(obj)
    del objects
    for kind in ("Node", "Pod"):
        resource_ = BY_KIND[kind]

        def rows(objs, resource_=resource_):
            for obj in objs:
                obj = {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
                meta = obj["metadata"]
                key = f'{meta["namespace"]}/{meta["name"]}' if resource_.namespaced else meta["name"]
                yield key, dumps(obj), _index_fields(resource_, obj)

        server.store.put_raw_many(kind, rows(by_kind.pop(kind)))
    for objs in by_kind.values():
        server.add(*objs)
    server.add(*[{"kind": "Namespace", "metadata": {"name": n}} for n in ("ns-0", "ns-1", "ns-2", "ns-3", "churn")])
    server.write_kubeconfig(workdir / "kubeconfig")
    return server


def paced(n: int, rate: float, step) -> float:
    """step() n times at `rate` a second (checked every 50 steps); the seconds it took."""
    start = time.monotonic()
    for i in range(n):
        step()
        if i % 50 == 49:
            ahead = (i + 1) / rate - (time.monotonic() - start)
            if ahead > 0:
                time.sleep(ahead)
    return time.monotonic() - start


def serve(args) -> None:
    from kubeapi_churn import Churn

    server = start_server(Path(args.serve), args.nodes, args.pods)
    nodes = [f"node-{i:05d}" for i in range(args.nodes)]
    churn = Churn(server.store, random.Random(7), nodes)
    say({"ready": True, "rv": server.store.resource_version})
    for line in sys.stdin:
        cmd = line.split()
        if cmd and cmd[0] == "churn":
            seconds = paced(int(cmd[1]), float(cmd[2]), churn.step)
            say({"done": True, "rv": server.store.resource_version, "counts": churn.counts,
                 "seconds": round(seconds, 1)})
        elif cmd and cmd[0] == "expire":
            server.watch_error(410, "Pod")
            say({"done": True})
        elif cmd and cmd[0] == "quit":
            break
    server.stop()


# ---- clients ---------------------------------------------------------------------------------


class Null:
    def write(self, text):
        pass

    def flush(self):
        pass


def one_shot(args) -> None:
    from kschedx.commands.explain import explain_into, explainer_for
    from kschedx.commands.load import load_workload_from_cluster
    from kschedx.framework.dispatch import new_schedulers
    from kschedx.render.machine import JsonlSink
    from kschedx.sources.cluster import connect

    conn = connect(args.kubeconfig, request_timeout=120, freeze_reads=True)
    start = time.perf_counter()
    workload = load_workload_from_cluster(conn, (), (args.pod,))
    load_s = time.perf_counter() - start
    sink = JsonlSink(Null())
    start = time.perf_counter()
    explain_into(sink, workload, tie_break="name")
    explain_s = time.perf_counter() - start
    rss = rss_mib()
    # The pod's cycle and document alone, once the state is loaded (what a watch
    # pays for each re-explanation): a fresh explainer each time, nothing reused.
    scheds = new_schedulers(workload.cluster, tie_break="name", seed=None)
    pi = workload.pods[0]
    times = []
    from kschedx.util.gc_policy import collector_paused

    writes = []
    for _ in range(args.repeat):
        explainer = explainer_for(scheds, workload, sink, reuse=False)
        with collector_paused():  # as explain_into and the watch run a pod
            t = time.perf_counter()
            doc = explainer.explain(pi, None, last=True)  # what the watch times: cycle and document
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            sink.pod(doc)
            writes.append(time.perf_counter() - t)
            del doc
    say({"load_s": round(load_s, 2), "explain_s": round(explain_s, 2), "rss_mib": round(rss),
         "peak_mib": round(peak_mib()), "t_one_ms": round(statistics.median(times) * 1000, 1),
         "write_ms": round(statistics.median(writes) * 1000, 1),
         "pods": len(workload.cluster.pods)})


def watch(args) -> None:
    from kschedx.api.selection import PodSelection
    from kschedx.commands.watch import WatchObserver, watch_into
    from kschedx.render.watch import WatchJsonlSink
    from kschedx.sources.cluster import connect
    from kschedx.sources.kinds import KINDS

    latencies: list[float] = []
    same_pod: list[float] = []  # the one-shot's pod, explained again

    class Timing(WatchObserver):
        def explained(self, doc, seconds, trigger):
            latencies.append(seconds)
            if doc["pod"] == args.pod and trigger != "pending":
                same_pod.append(seconds)

    conn = connect(args.kubeconfig, request_timeout=120, pool_size=len(KINDS) + 4)
    stop = threading.Event()
    runs = {}
    started = time.perf_counter()
    thread = threading.Thread(target=lambda: watch_into(
        WatchJsonlSink(Null()), conn, all_pending=True, selection=PodSelection(None, True, None, None),
        tie_break="name", seed=None, settle=2.0, observer=Timing(), stop=stop,
        on_run=lambda r: runs.setdefault("run", r)), daemon=True)
    thread.start()
    while "run" not in runs or runs["run"].batches < 1:
        time.sleep(0.05)
    run = runs["run"]
    first_s = time.perf_counter() - started
    while any(t.due is not None for t in run.tracked.values()):
        time.sleep(0.1)
    rss0 = rss_mib()
    first = len(latencies)
    say({"ready": True, "first_batch_s": round(first_s, 1), "rss0_mib": round(rss0)})
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "sync":
            t = time.perf_counter()
            ok = run.sync(int(cmd[1]), timeout=1800)
            say({"synced": ok, "catch_up_s": round(time.perf_counter() - t, 1), "rss_mib": round(rss_mib()),
                 "peak_mib": round(peak_mib()), "relists": run.summary.relists,
                 "explanations": run.summary.explanations, "batches": run.batches,
                 "events": sum(run.summary.events.values())})
        elif cmd[0] == "quit":
            break
    later = sorted(latencies[first:])
    cycles = [s for s in later if s > 0.002]  # a pod identical to one before it takes its result (reuse)
    stop.set()
    thread.join(30)
    say({"latency_ms": {
        "explanations": len(later),
        "median": round(statistics.median(later) * 1000, 1) if later else None,
        "cycles": len(cycles),
        "cycle_median": round(statistics.median(cycles) * 1000, 1) if cycles else None,
        "cycle_p90": round(cycles[int(len(cycles) * 0.9)] * 1000, 1) if cycles else None,
        "same_pod": len(same_pod),
        "same_pod_median": round(statistics.median(same_pod) * 1000, 1) if same_pod else None}})


# ---- the parent -------------------------------------------------------------------------------


POD = "ns-0/pending-plain-0-0"  # a pending pod of the workload, explained by both


def child(args, role: str, tmp: str, *extra) -> subprocess.Popen:
    cmd = [sys.executable, __file__, f"--{role}", tmp, "--nodes", str(args.nodes), "--pods", str(args.pods), *extra]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def ask(proc, line: str | None = None) -> dict:
    if line is not None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    text = proc.stdout.readline()
    if not text:
        sys.exit("a benchmark process ended early")
    return json.loads(text)


def measure(args) -> None:
    with tempfile.TemporaryDirectory(prefix="kschedx-bench-watch-") as tmp:
        server = child(args, "serve", tmp)
        try:
            ready = ask(server)
            print(f"server: {args.nodes} nodes, {args.pods} pods (200 pending), resourceVersion {ready['rv']}")
            kubeconfig = str(Path(tmp) / "kubeconfig")
            one = subprocess.run([sys.executable, __file__, "--one-shot", kubeconfig, "--pod", POD,
                                  "--repeat", str(args.repeat)], capture_output=True, text=True, check=True)
            shot = json.loads(one.stdout.splitlines()[-1])
            print(f"one-shot explain of one pod: read+admit {shot['load_s']} s, explain {shot['explain_s']} s, "
                  f"RSS {shot['rss_mib']} MiB (peak {shot['peak_mib']} MiB); that pod's cycle and document "
                  f"alone: {shot['t_one_ms']} ms (median of {args.repeat}; writing its line: {shot['write_ms']} ms)")
            if args.one_shot_only:
                return
            watcher = child(args, "watch", kubeconfig, "--pod", POD)
            w0 = ask(watcher)
            print(f"watch: first batch (200 pods) after {w0['first_batch_s']} s; RSS {w0['rss0_mib']} MiB")
            if args.relist:
                done = ask(server, f"churn {args.events // 2} {args.rate}")
                ask(server, "expire")
                done = ask(server, f"churn {args.events - args.events // 2} {args.rate}")
            else:
                done = ask(server, f"churn {args.events} {args.rate}")
            print(f"{args.events} pod events in {done['seconds']} s: {done['counts']}")
            w1 = ask(watcher, f"sync {done['rv']}")
            print(f"watch caught up {w1['catch_up_s']} s after the last event: {w1['events']} events applied, "
                  f"{w1['explanations']} explanations in {w1['batches']} batches, {w1['relists']} relists; "
                  f"RSS {w1['rss_mib']} MiB (peak {w1['peak_mib']} MiB)")
            lat = ask(watcher, "quit")["latency_ms"]
            print(f"re-explanations: {lat['explanations']}, of which {lat['cycles']} ran a cycle (the rest took an "
                  f"identical pod's result): cycle + document median {lat['cycle_median']} ms, "
                  f"p90 {lat['cycle_p90']} ms; {POD} re-explained {lat['same_pod']} times, median "
                  f"{lat['same_pod_median']} ms (one-shot, after loading: {shot['t_one_ms']} ms)")
            print(f"memory: watch after the events {w1['rss_mib']} MiB = "
                  f"{w1['rss_mib'] / shot['rss_mib']:.2f} x the one-shot's {shot['rss_mib']} MiB; "
                  f"{w1['rss_mib'] - w0['rss0_mib']:+d} MiB since the first batch")
            watcher.wait(60)
            server.stdin.write("quit\n")
            server.stdin.flush()
        finally:
            for p in (server,):
                if p.poll() is None:
                    p.stdin.close()
                    p.wait(60)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--pods", type=int, default=50_000)
    p.add_argument("--events", type=int, default=10_000)
    p.add_argument("--rate", type=float, default=500.0, help="pod events per second")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--relist", action="store_true", help="end the pod watch with 410 Gone halfway")
    p.add_argument("--one-shot-only", action="store_true", help="measure the one-shot client only")
    p.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--one-shot", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    p.add_argument("--watch", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    p.add_argument("--pod", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve:
        serve(args)
    elif args.one_shot:
        args.kubeconfig = args.one_shot
        one_shot(args)
    elif args.watch:
        args.kubeconfig = args.watch
        watch(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()
