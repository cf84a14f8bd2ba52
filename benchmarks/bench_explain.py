#!/usr/bin/env python3
"""Time `explain` (and `simulate`, once kschedx has it) on a generated workload.

    python benchmarks/gen_affinity_workload.py -o benchmarks/out/affinity-5k.json.gz
    python benchmarks/bench_explain.py benchmarks/out/affinity-5k.json.gz --pods 8

Prints the load time (reading, admission, snapshot), the latency of each
explained pod, pods/second, the time to build the result document, and the
process's peak RSS. No figure here is asserted anywhere: this is a
measurement, not a test.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kschedx.commands.load import load_workload
from kschedx.commands import simulate as simulating
from kschedx.framework.dispatch import new_framework
from kschedx.result.document import build_document  # noqa: E402


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fixture", nargs="+")
    ap.add_argument("--pods", type=int, default=8, help="pending pods to explain (0 = all)")
    ap.add_argument("--simulate", action="store_true", help="also time simulate, when kschedx has it")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    workload = load_workload(args.fixture)
    t1 = time.perf_counter()
    fw = new_framework(workload.cluster, tie_break="name", seed=None)
    t2 = time.perf_counter()
    nodes = len(fw.snapshot.node_infos)
    running = sum(len(ni.pods) for ni in fw.snapshot.node_infos)
    print(f"cluster: {nodes} nodes, {running} running pods, {len(workload.pods)} pending pods")
    print(f"load (read + admission): {t1 - t0:.2f} s; snapshot + framework: {t2 - t1:.2f} s")

    pods = workload.pods if args.pods == 0 else workload.pods[: args.pods]
    results = []
    latencies = []
    for pi in pods:
        s = time.perf_counter()
        r = fw.schedule(pi)
        latencies.append(time.perf_counter() - s)
        results.append(r)
        print(f"  {pi.key:<28} {r.status:<14} {r.selected_node or '-':<12} {latencies[-1] * 1000:8.0f} ms")
    s = time.perf_counter()
    build_document(results, mode="explain", tie_break="name", profile=fw.profile.name,
                   not_evaluated=fw.profile.not_evaluated)
    doc_time = time.perf_counter() - s
    total = sum(latencies)
    if latencies:
        print(f"explain: {len(latencies)} pods in {total:.2f} s = {len(latencies) / total:.2f} pods/s; "
              f"one pod: min {min(latencies) * 1000:.0f} ms, median {sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms, "
              f"max {max(latencies) * 1000:.0f} ms; result document: {doc_time:.2f} s")

    if args.simulate:
        simulate = getattr(simulating, "simulate", None)
        if simulate is None:
            print("simulate: not available in this version of kschedx")
        else:
            s = time.perf_counter()
            simulate(workload, tie_break="name")
            el = time.perf_counter() - s
            print(f"simulate: {len(workload.pods)} pods in {el:.2f} s = {len(workload.pods) / el:.2f} pods/s")
    print(f"peak RSS: {peak_rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
