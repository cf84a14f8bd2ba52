"""--report at scale: time and size of the HTML report.

Uses bench_simulate's generated cluster (N nodes, a few running pods per
node, pending pods of a handful of shapes). Times `explain` of the first
--explain pending pods and `simulate` of all of them (--detail failures, the
report's default), then the rendering of each report, and prints sizes.

    python benchmarks/bench_report.py                          # 5,000 nodes
    python benchmarks/bench_report.py --nodes 500 --pods 200
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_simulate import generate  # noqa: E402

from kschedx.commands.explain import explain
from kschedx.commands.load import Workload
from kschedx.commands.simulate import simulate
from kschedx.state.cluster import build_cluster  # noqa: E402
from kschedx.framework.queue import queue_order# noqa: E402
from kschedx.render.html import to_html  # noqa: E402
from kschedx.state.types import PodInfo# noqa: E402
from kschedx.sources.fixtures import Origin  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=500)
    ap.add_argument("--explain", type=int, default=10, help="pending pods explained")
    ap.add_argument("--running-per-node", type=int, default=4)
    args = ap.parse_args(argv)

    objs = generate(args.nodes, args.pods, args.running_per_node, 1)
    cluster = build_cluster([(o, Origin("generated")) for o in objs])
    pods = queue_order([PodInfo(p) for p in cluster.pending_pods()])
    for mode in ("explain", "simulate"):
        chosen = pods[:args.explain] if mode == "explain" else pods
        workload = Workload(cluster, chosen)
        t0 = time.perf_counter()
        if mode == "explain":
            doc = explain(workload, tie_break="name")
        else:
            doc = simulate(workload, tie_break="name", detail="failures")
        t1 = time.perf_counter()
        page = to_html(doc)
        t2 = time.perf_counter()
        kept = sum(1 for p in doc["pods"] if p["nodes"])
        print(f"{mode}: {len(chosen)} pods on {args.nodes} nodes ({kept} with per-node verdicts): "
              f"run {t1 - t0:.2f}s, report {t2 - t1:.2f}s, {len(page.encode()) / 2**20:.1f} MiB")
        cluster = build_cluster([(o, Origin("generated")) for o in objs])  # simulate changes nothing shared, but be sure
        pods = queue_order([PodInfo(p) for p in cluster.pending_pods()])
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
