"""simulate throughput at scale: pods placed per second.

Generates a deterministic "basic workload": N nodes in 3 zones (8-32 cores,
32-128 GiB, 110 pods), a few running pods per node, and pending pods of a
handful of Deployment-like shapes (requests only, a third with a
nodeSelector on the zone, some with a higher priority so that preemption
happens once the cluster fills up). Then runs `simulate` (default profile,
--tie-break name) and prints pods/s.

    python benchmarks/bench_simulate.py                 # 5,000 nodes, 500 pods
    python benchmarks/bench_simulate.py --nodes 500 --pods 2000
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kschedx.commands.load import Workload
from kschedx.commands.simulate import simulate
from kschedx.state.cluster import build_cluster  # noqa: E402
from kschedx.framework.queue import queue_order# noqa: E402
from kschedx.state.types import PodInfo# noqa: E402
from kschedx.sources.fixtures import Origin  # noqa: E402

ZONES = ("zone-a", "zone-b", "zone-c")
SHAPES = (  # (app, cpu, memory, priority)
    ("web", "250m", "256Mi", 0),
    ("api", "500m", "512Mi", 0),
    ("worker", "1", "2Gi", 0),
    ("cache", "2", "4Gi", 100),
    ("critical", "1", "1Gi", 1000),
)


def generate(num_nodes: int, num_pods: int, running_per_node: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    objs: list[dict] = []
    for name, value in (("high", 1000), ("medium", 100)):
        objs.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                     "metadata": {"name": name}, "value": value})
    for i in range(num_nodes):
        name = f"node-{i:05d}"
        cpu = rng.choice((8, 16, 32))
        objs.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": ZONES[i % 3]}},
            "status": {"capacity": {"cpu": str(cpu), "memory": f"{cpu * 4}Gi", "pods": "110"}},
        })
        for j in range(running_per_node):
            objs.append(_pod(f"run-{i:05d}-{j}", rng.choice(SHAPES[:3]), node=name,
                             start=f"2024-01-01T00:{j:02d}:00Z"))
    for k in range(num_pods):
        shape = SHAPES[k % len(SHAPES)]
        selector = {"topology.kubernetes.io/zone": ZONES[k % 3]} if k % 3 == 0 else None
        objs.append(_pod(f"{shape[0]}-{k:06d}", shape, selector=selector))
    return objs


def _pod(name, shape, node=None, selector=None, start=None) -> dict:
    app_name, cpu, memory, priority = shape
    spec = {"containers": [{"name": "c", "image": f"registry.example/{app_name}:1",
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
            "priority": priority}
    if node:
        spec["nodeName"] = node
    if selector:
        spec["nodeSelector"] = selector
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default", "labels": {"app": app_name}}, "spec": spec}
    if start:
        pod["status"] = {"phase": "Running", "startTime": start}
    return pod


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=500)
    ap.add_argument("--running-per-node", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--detail", choices=("full", "placements"), default="placements",
                    help="keep per-node verdicts of every pod (memory grows with nodes x pods)")
    ap.add_argument("--kube-version", default=None, help="the kube-scheduler version to reproduce (default: newest)")
    args = ap.parse_args(argv)
    from kschedx.features import default_features

    features = default_features(args.kube_version) if args.kube_version else None

    t0 = time.perf_counter()
    objs = generate(args.nodes, args.pods, args.running_per_node, args.seed)
    cluster = build_cluster([(o, Origin("generated")) for o in objs])
    workload = Workload(cluster, queue_order([PodInfo(p) for p in cluster.pending_pods()]))
    t1 = time.perf_counter()
    c1 = time.process_time()
    doc = simulate(workload, tie_break="name", detail=args.detail, features=features)
    t2 = time.perf_counter()
    c2 = time.process_time()

    s = doc["summary"]
    print(f"nodes={args.nodes} running={args.nodes * args.running_per_node} pending={len(workload.pods)}")
    print(f"load {t1 - t0:.2f}s  simulate {t2 - t1:.2f}s ({c2 - c1:.2f}s CPU)")
    print(f"placed {s['placed']} ({s['placedByPreemption']} by preemption, {s['victims']} victims), "
          f"unschedulable {s['unschedulable']}")
    print(f"throughput: {len(workload.pods) / (t2 - t1):.1f} pods/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
