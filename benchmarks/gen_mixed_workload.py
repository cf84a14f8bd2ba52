#!/usr/bin/env python3
"""Write the mixed-workload cluster of the scale targets as one JSON List.

Defaults: 5,000 nodes in 3 zones, 50,000 bound pods and 200 pending pods.
Bound and pending pods mix five kinds, in equal shares:
- plain Deployment replicas (ReplicaSet owner + Service: the system default
  spreading applies);
- required node affinity on the zone plus a preferred one on a node label;
- required pod anti-affinity on kubernetes.io/hostname (one per node);
- preferred pod affinity to their group on the zone;
- topology spread: zone DoNotSchedule + hostname ScheduleAnyway.
Pending pods come in groups of identical replicas (as controllers make them).
Deterministic for a given seed.

    python benchmarks/gen_mixed_workload.py -o benchmarks/out/mixed-5k.json
    python benchmarks/gen_mixed_workload.py --pods 150000 --pending 1 -o benchmarks/out/mixed-150k.json
    python benchmarks/gen_mixed_workload.py --pods 150000 --pending 1 --from-cluster \
        -o benchmarks/out/cluster-150k.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from pathlib import Path

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
KINDS = ("plain", "nodeaffinity", "anti", "affinity", "spread")


def make_node(i: int, zones: int, rng: random.Random) -> dict:
    name = f"node-{i:05d}"
    cpu = rng.choice((16, 32, 64))
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {HOST: name, ZONE: f"zone-{i % zones}", "kubernetes.io/os": "linux",
                                              "disk": "ssd" if i % 2 else "hdd"}},
        "spec": {},
        "status": {"allocatable": {"cpu": str(cpu), "memory": f"{cpu * 4}Gi", "pods": "110"}},
    }


def pod(name: str, kind: str, group: int, node: str | None, zones: int) -> dict:
    labels = {"app": f"{kind}-{group}", "kind": kind}
    cpu, mem = (("100m", "128Mi"), ("250m", "256Mi"), ("500m", "512Mi"))[group % 3]
    spec: dict = {"containers": [{"name": "app", "image": f"registry.example/{kind}:{group}",
                                  "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    meta = {"name": name, "namespace": f"ns-{group % 4}", "labels": labels,
            "creationTimestamp": "2025-01-01T00:00:00Z"}
    sel = {"matchLabels": {"app": labels["app"]}}
    if kind == "plain":
        labels["pod-template-hash"] = f"h{group}"
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"plain-{group}-h{group}",
                                    "uid": f"uid-rs-plain-{group}", "controller": True}]
    elif kind == "nodeaffinity":
        spec["affinity"] = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": ZONE, "operator": "In", "values": [f"zone-{group % zones}", f"zone-{(group + 1) % zones}"]}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}}
    elif kind == "anti":
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": sel, "topologyKey": HOST}]}}
    elif kind == "affinity":
        spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"labelSelector": sel, "topologyKey": ZONE}}]}}
    elif kind == "spread":
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel},
            {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": sel}]
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    if node:
        spec["nodeName"] = node
        p["status"] = {"phase": "Running", "startTime": "2025-01-01T00:00:00Z"}
    return p


def as_read_from_a_cluster(p: dict, rng: random.Random) -> dict:
    """The pod as `kschedx snapshot` writes it from a live cluster (trimmed to
    what scheduling reads): every field admission set, a uid and an owner,
    the service-account volume with a name of its own, and the resources
    the kubelet reports per container (in-place resize, on by default)."""
    meta, spec = p["metadata"], p["spec"]
    suffix = "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    meta["uid"] = f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-" \
                  f"{rng.getrandbits(16):04x}-{rng.getrandbits(48):012x}"
    meta["resourceVersion"] = str(rng.randrange(10**6, 10**7))
    if "ownerReferences" not in meta:
        app = meta["labels"]["app"]
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{app}-rs",
                                    "uid": f"uid-rs-{app}", "controller": True, "blockOwnerDeletion": True}]
    spec["volumes"] = [{"name": f"kube-api-access-{suffix}", "projected": {}}]
    spec.update(restartPolicy="Always", terminationGracePeriodSeconds=30, schedulerName="default-scheduler",
                priority=0, preemptionPolicy="PreemptLowerPriority", tolerations=[
                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300},
                    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                     "tolerationSeconds": 300}])
    for c in spec["containers"]:
        c.setdefault("ports", [{"containerPort": 8080, "protocol": "TCP"}])
    if spec.get("nodeName"):
        p["status"]["containerStatuses"] = [{"name": c["name"], "resources": c["resources"]}
                                            for c in spec["containers"]]
    return p


def generate(nodes: int, pods: int, zones: int, pending: int, groups: int, replicas: int, seed: int,
             from_cluster: bool = False) -> list[dict]:
    rng = random.Random(seed)
    objects = [make_node(i, zones, rng) for i in range(nodes)]
    names = [n["metadata"]["name"] for n in objects]
    for g in range(groups):
        labels = {"app": f"plain-{g}", "kind": "plain", "pod-template-hash": f"h{g}"}
        ns = f"ns-{g % 4}"
        objects.append({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                        "metadata": {"name": f"plain-{g}-h{g}", "namespace": ns, "uid": f"uid-rs-plain-{g}"},
                        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                                 "template": {"metadata": {"labels": labels},
                                              "spec": {"containers": [{"name": "app", "image": "x"}]}}}})
        objects.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"plain-{g}", "namespace": ns},
                        "spec": {"selector": {"app": f"plain-{g}"}, "ports": [{"port": 80}]}})
    # Anti-affinity replicas of one group never share a node.
    anti_free = {g: list(names) for g in range(groups)}
    for g in anti_free:
        rng.shuffle(anti_free[g])
    for i in range(pods):
        kind = KINDS[i % len(KINDS)]
        g = (i // len(KINDS)) % groups
        if kind == "anti":
            node = anti_free[g].pop()
        elif kind == "spread":
            node = names[rng.randrange(nodes // zones) * zones + (i // len(KINDS)) % zones]
        else:
            node = rng.choice(names)
        p = pod(f"{kind}-{g}-{i}", kind, g, node, zones)
        objects.append(as_read_from_a_cluster(p, rng) if from_cluster else p)
    for i in range(pending):
        r = i // replicas  # a controller's replicas are consecutive and identical
        kind = KINDS[r % len(KINDS)]
        g = r % groups
        p = pod(f"pending-{kind}-{g}-{i}", kind, g, None, zones)
        p["metadata"]["creationTimestamp"] = f"2025-01-02T00:{i // 60 % 60:02d}:{i % 60:02d}Z"
        objects.append(p)
    return objects


def write_list(out: Path, objects: list[dict]) -> None:
    """The objects as one `kind: List` document, compact JSON, gzipped when
    the name ends in .gz (the other generators write through this too)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, separators=(",", ":")).encode()
    if out.suffix == ".gz":
        with gzip.open(out, "wb", compresslevel=5) as f:
            f.write(data)
    else:
        out.write_bytes(data)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", default="benchmarks/out/mixed-5k.json")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=50_000, help="bound pods")
    ap.add_argument("--pending", type=int, default=200)
    ap.add_argument("--zones", type=int, default=3)
    ap.add_argument("--groups", type=int, default=20, help="controllers per kind")
    ap.add_argument("--replicas", type=int, default=5, help="identical pending pods per controller")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--from-cluster", action="store_true",
                    help="bound pods as `kschedx snapshot` writes them from a live cluster")
    args = ap.parse_args(argv)
    objects = generate(args.nodes, args.pods, args.zones, args.pending, args.groups, args.replicas, args.seed,
                       args.from_cluster)
    out = Path(args.output)
    write_list(out, objects)
    print(f"wrote {out}: {args.nodes} nodes, {args.pods} bound pods, {args.pending} pending pods")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
