#!/usr/bin/env python3
"""Write a scheduler_perf-like cluster with inter-pod affinity and spreading.

The cluster (defaults: 5,000 nodes in 3 zones, 150,000 running pods) mixes:
- pods with required anti-affinity on kubernetes.io/hostname (one per node
  at most, like scheduler_perf's SchedulingPodAntiAffinity);
- pods with preferred affinity to their group on topology.kubernetes.io/zone
  (SchedulingPreferredPodAffinity);
- pods with a zone DoNotSchedule + hostname ScheduleAnyway spread
  (SchedulingPodTopologySpread-like);
- plain Deployment replicas (ReplicaSet owner + Service), which get the
  system default spreading.
and pending pods of each kind to explain. Output is one JSON List (optionally
gzipped), deterministic for a given seed.

    python benchmarks/gen_affinity_workload.py -o benchmarks/out/affinity-5k.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from pathlib import Path

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def make_node(i: int, zones: int) -> dict:
    name = f"node-{i:05d}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: f"zone-{i % zones}", "kubernetes.io/os": "linux"}},
        "spec": {},
        "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
    }


def container(cpu="100m", memory="128Mi") -> list:
    return [{"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu, "memory": memory}}}]


def pod(name: str, labels: dict, node: str | None, *, affinity=None, spread=None, owner=None) -> dict:
    p = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": dict(labels),
                     "creationTimestamp": "2025-01-01T00:00:00Z"},
        "spec": {"containers": container()},
    }
    if node:
        p["spec"]["nodeName"] = node
        p["status"] = {"phase": "Running", "startTime": "2025-01-01T00:00:00Z"}
    if affinity:
        p["spec"]["affinity"] = affinity
    if spread:
        p["spec"]["topologySpreadConstraints"] = spread
    if owner:
        p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                             "uid": f"uid-{owner}", "controller": True}]
    return p


def anti_affinity(group: str) -> dict:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"anti": group}}, "topologyKey": HOST}]}}


def preferred_affinity(group: str) -> dict:
    return {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": {"labelSelector": {"matchLabels": {"pref": group}}, "topologyKey": ZONE}}]}}


def spread(group: str) -> list:
    sel = {"matchLabels": {"spread": group}}
    return [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel},
        {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": sel},
    ]


def generate(nodes: int, pods: int, zones: int, pending: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    objects = [make_node(i, zones) for i in range(nodes)]
    node_names = [n["metadata"]["name"] for n in objects]

    n_anti = min(nodes * 4 // 5, pods // 10)  # at most one per node per group
    n_pref = pods // 5
    n_spread = pods // 5
    n_plain = pods - n_anti - n_pref - n_spread

    # Required anti-affinity on hostname: each replica on its own node.
    for i, host in enumerate(rng.sample(node_names, n_anti)):
        objects.append(pod(f"anti-{i}", {"anti": "a", "app": "anti"}, host, affinity=anti_affinity("a")))
    # Preferred zone affinity, in 20 groups.
    for i in range(n_pref):
        g = f"p{i % 20}"
        objects.append(pod(f"pref-{i}", {"pref": g, "app": "pref"}, rng.choice(node_names),
                           affinity=preferred_affinity(g)))
    # Zone (hard) + hostname (soft) spreading, in 50 groups, placed round-robin over zones.
    by_zone = [[n for j, n in enumerate(node_names) if j % zones == z] for z in range(zones)]
    for i in range(n_spread):
        g = f"s{i % 50}"
        host = rng.choice(by_zone[(i // 50) % zones])
        objects.append(pod(f"spread-{i}", {"spread": g, "app": "spread"}, host, spread=spread(g)))
    # Deployment replicas: ReplicaSet + Service, system default spreading.
    deployments = 100
    for d in range(deployments):
        labels = {"app": f"web-{d}", "pod-template-hash": f"h{d:04d}"}
        objects.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                        "metadata": {"name": f"web-{d}-h{d:04d}", "namespace": "default", "uid": f"uid-web-{d}-h{d:04d}"},
                        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                                 "template": {"metadata": {"labels": labels}, "spec": {"containers": container()}}}})
        objects.append({"apiVersion": "v1", "kind": "Service",
                        "metadata": {"name": f"web-{d}", "namespace": "default"},
                        "spec": {"selector": {"app": f"web-{d}"}, "ports": [{"port": 80}]}})
    for i in range(n_plain):
        d = i % deployments
        labels = {"app": f"web-{d}", "pod-template-hash": f"h{d:04d}"}
        objects.append(pod(f"web-{d}-{i}", labels, rng.choice(node_names), owner=f"web-{d}-h{d:04d}"))

    # Pending pods, one kind after another.
    kinds = ("anti", "pref", "spread", "web")
    for i in range(pending):
        kind = kinds[i % len(kinds)]
        if kind == "anti":
            p = pod(f"pending-anti-{i}", {"anti": "a", "app": "anti"}, None, affinity=anti_affinity("a"))
        elif kind == "pref":
            p = pod(f"pending-pref-{i}", {"pref": "p0", "app": "pref"}, None, affinity=preferred_affinity("p0"))
        elif kind == "spread":
            p = pod(f"pending-spread-{i}", {"spread": "s0", "app": "spread"}, None, spread=spread("s0"))
        else:
            labels = {"app": "web-0", "pod-template-hash": "h0000"}
            p = pod(f"pending-web-{i}", labels, None, owner="web-0-h0000")
        p["metadata"]["creationTimestamp"] = f"2025-01-02T00:00:{i % 60:02d}Z"
        objects.append(p)
    return objects


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default="benchmarks/out/affinity-5k.json.gz")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150_000, help="running pods")
    ap.add_argument("--zones", type=int, default=3)
    ap.add_argument("--pending", type=int, default=20, help="pending pods to explain")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    objects = generate(args.nodes, args.pods, args.zones, args.pending, args.seed)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, separators=(",", ":")).encode()
    if out.suffix == ".gz":
        with gzip.open(out, "wb", compresslevel=5) as f:
            f.write(data)
    else:
        out.write_bytes(data)
    print(f"wrote {out}: {args.nodes} nodes, {args.pods} running pods, {args.pending} pending pods")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
