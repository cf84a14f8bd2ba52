#!/usr/bin/env python3
"""Write a preemption-heavy cluster as one JSON List: every node full, every
pending pod able to fit only by preempting.

Defaults (the cluster of issue 31): 5,000 nodes in 3 zones, 4 cores, 16 GiB
and 110 pods each, each full with ten running pods of priority 0 asking 400m
CPU and 256Mi; 20 pending pods of priority 1000 (PriorityClass `high`)
asking 2 CPU and 1Gi, identical replicas of one ReplicaSet. Each preemptor
evicts five pods, and every node is a potential node: with DefaultPreemption's
default args kube-scheduler wants max(10%, 100) of them as candidates.

Nodes carry both capacity and allocatable, pods an explicit spec.priority
and a start time, so that the real scheduler (which runs no admission) reads
the same cluster. Start times are spread over a day, drawn from --seed
(`--start-times equal`: all the same, so that every candidate ties on every
criterion and the most alternatives are possible). Deterministic for a seed.

    python benchmarks/gen_preemption_workload.py -o benchmarks/out/preempt-5k.json
    python benchmarks/gen_preemption_workload.py --nodes 500 --pending 5 -o benchmarks/out/preempt-500.json
    kschedx simulate --snapshot benchmarks/out/preempt-5k.json --detail placements -o json --tie-break name
    python benchmarks/bench_preemption.py --snapshot benchmarks/out/preempt-5k.json --repeat 3

Prints one line: what it wrote.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_preemption import pod_object  # noqa: E402
from gen_mixed_workload import write_list  # noqa: E402

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def node_object(i: int, zones: int, cpu: str, memory: str) -> dict:
    name = f"node-{i:05d}"
    resources = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, ZONE: f"zone-{i % zones}",
                                                  "kubernetes.io/os": "linux"}},
            "spec": {},
            "status": {"capacity": dict(resources), "allocatable": dict(resources)}}


def generate(nodes: int = 5000, pending: int = 20, *, per_node: int = 10, pod_cpu: str = "400m",
             pod_memory: str = "256Mi", node_cpu: str = "4", node_memory: str = "16Gi", zones: int = 3,
             preemptor_cpu: str = "2", preemptor_memory: str = "1Gi", start_times: str = "spread",
             seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    objs: list[dict] = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                         "metadata": {"name": "high"}, "value": 1000}]
    for i in range(nodes):
        node = node_object(i, zones, node_cpu, node_memory)
        objs.append(node)
        name = node["metadata"]["name"]
        for j in range(per_node):
            if start_times == "equal":
                start = "2025-01-01T00:00:00Z"
            else:
                s = rng.randrange(86_400)
                start = f"2025-01-01T{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z"
            p = pod_object(f"filler-{i:05d}-{j}", f"filler-{i % 20}", pod_cpu, 0, node=name, start=start,
                           memory=pod_memory)
            objs.append(p)
    for k in range(pending):
        p = pod_object(f"urgent-{k:04d}", "urgent", preemptor_cpu, 1000, memory=preemptor_memory)
        meta = p["metadata"]
        meta["creationTimestamp"] = f"2025-01-02T00:{k // 60 % 60:02d}:{k % 60:02d}Z"
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "urgent-rs",
                                    "uid": "uid-rs-urgent", "controller": True}]
        p["spec"]["priorityClassName"] = "high"
        p["status"] = {"phase": "Pending"}
        objs.append(p)
    return objs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default="benchmarks/out/preempt-5k.json", help=".json or .json.gz")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pending", type=int, default=20, help="preemptors (priority 1000)")
    ap.add_argument("--per-node", type=int, default=10, help="running pods of priority 0 per node")
    ap.add_argument("--pod-cpu", default="400m", help="each running pod's CPU request")
    ap.add_argument("--node-cpu", default="4", help="each node's CPU (per-node x pod-cpu fills it)")
    ap.add_argument("--preemptor-cpu", default="2")
    ap.add_argument("--zones", type=int, default=3)
    ap.add_argument("--start-times", choices=("spread", "equal"), default="spread")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    objs = generate(args.nodes, args.pending, per_node=args.per_node, pod_cpu=args.pod_cpu,
                    node_cpu=args.node_cpu, preemptor_cpu=args.preemptor_cpu, zones=args.zones,
                    start_times=args.start_times, seed=args.seed)
    out = Path(args.output)
    write_list(out, objs)
    print(f"wrote {out}: {args.nodes} nodes, each full with {args.per_node} pods of {args.pod_cpu} CPU "
          f"(priority 0); {args.pending} pending pods of priority 1000 asking {args.preemptor_cpu} CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
