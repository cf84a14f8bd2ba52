"""Cost of a non-default scheduler configuration at scale: `simulate` on the
5,000-node mixed workload (gen_mixed_workload.py) with the default profile,
then with each configuration (read as --config reads it), printing the CPU
time of each simulate and its overhead over the default.

Only the simulate is timed (loading the workload does not depend on the
configuration); each configuration gets a freshly loaded cluster, since
simulate changes it. CPU time (time.process_time) is the figure to read on a
shared machine; --repeat N keeps the best of N runs, taken round-robin.

    python benchmarks/bench_pluginargs.py                       # 5,000 nodes, 50,000 bound, 200 pending
    python benchmarks/bench_pluginargs.py --nodes 500 --pods 5000
    python benchmarks/bench_pluginargs.py --config my-scheduler.yaml
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from gen_mixed_workload import generate  # noqa: E402

from kschedx.commands.load import Workload
from kschedx.commands.simulate import simulate
from kschedx.state.cluster import build_cluster  # noqa: E402
from kschedx.framework.configured import load_config, parse_config  # noqa: E402
from kschedx.framework.queue import queue_order# noqa: E402
from kschedx.state.types import PodInfo# noqa: E402
from kschedx.sources.fixtures import Origin  # noqa: E402

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
INLINE = {
    "MostAllocated": """\
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 3}]
""",
    "RequestedToCapacityRatio": """\
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 2}]
        requestedToCapacityRatio:
          shape: [{utilization: 0, score: 10}, {utilization: 50, score: 7}, {utilization: 100, score: 0}]
""",
    "addedAffinity+reweighted": """\
profiles:
- plugins:
    multiPoint:
      enabled: [{name: InterPodAffinity, weight: 5}, {name: TaintToleration, weight: 1}]
      disabled: [{name: ImageLocality}]
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 80
          preference:
            matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-1]}]
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
""",
}
FILES = {
    "default written out": ROOT / "tests" / "config" / "default-full.yaml",
    "bin-packing.yaml": ROOT / "fixtures" / "config" / "bin-packing.yaml",
    "two-profiles.yaml": ROOT / "fixtures" / "config" / "two-profiles.yaml",
}


def configurations(paths) -> dict:
    out = {"default": None}
    if paths:
        out.update({p: load_config(p) for p in paths})
        return out
    out.update({name: load_config(str(path)) for name, path in FILES.items()})
    out.update({name: parse_config(HEAD + text, name) for name, text in INLINE.items()})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=50_000, help="bound pods")
    ap.add_argument("--pending", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=1, help="runs per configuration; the best is kept")
    ap.add_argument("--config", action="append", default=[], metavar="FILE",
                    help="a KubeSchedulerConfiguration to time (repeatable); default: a built-in set")
    args = ap.parse_args(argv)

    configs = configurations(args.config)
    # A small untimed run with each configuration first: modules imported
    # and caches filled on first use would otherwise be charged to the first.
    small = generate(50, 200, 3, 10, 4, 5, 1)
    for cfg in configs.values():
        cluster = build_cluster([(o, Origin("generated")) for o in small])
        simulate(Workload(cluster, queue_order([PodInfo(p) for p in cluster.pending_pods()])),
                     tie_break="name", detail="placements", config=cfg)
    objs = generate(args.nodes, args.pods, 3, args.pending, 20, 5, 1)
    best: dict[str, float] = {}
    placed: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, cfg in configs.items():
            cluster = build_cluster([(o, Origin("generated")) for o in objs])
            workload = Workload(cluster, queue_order([PodInfo(p) for p in cluster.pending_pods()]))
            t0 = time.process_time()
            doc = simulate(workload, tie_break="name", detail="placements", config=cfg)
            elapsed = time.process_time() - t0
            best[name] = min(best.get(name, elapsed), elapsed)
            placed[name] = doc["summary"]["placed"]
            print(f"  {name}: {elapsed:.2f}s CPU", file=sys.stderr, flush=True)
    base = best["default"]
    for name in configs:
        print(f"{name:26s} simulate {best[name]:7.2f}s CPU  {100 * (best[name] / base - 1):+6.1f}%  "
              f"placed {placed[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
