"""What DynamicResources costs per scheduling cycle.

1. A pod without claims: the plugin's share of a cycle on N nodes (PreFilter
   returns Skip, so Filter never runs; Score returns 0 at once).
2. A pod with a claim for 2 GPUs (CEL selector) on N nodes with 8 GPUs each:
   the whole cycle, first pod (selectors evaluated) and next pods (cached).
3. (v1.36 gates) A pod with a claim for 2 GPU partitions on N nodes whose 8
   GPUs are each offered as 4 partitions drawing on shared counters
   (DRAPartitionableDevices), and one for 10Gi of a shared GPU's memory
   (DRAConsumableCapacity).

    python benchmarks/dra_overhead.py [NODES] [--kube-version 1.35|1.36]

The last line is the process's peak memory (ru_maxrss).
"""

from __future__ import annotations

import resource
import sys
import time

from kschedx.features import Features
from kschedx.state.cluster import build_cluster
from kschedx.framework.runtime import Framework
from kschedx.state.snapshot import build_snapshot
from kschedx.state.types import PodInfo
from kschedx.sources.fixtures import Origin


def cluster_objects(n_nodes: int, with_gpus: bool):
    objs = []
    for i in range(n_nodes):
        name = f"node-{i:05d}"
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                     "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"}}})
        if with_gpus:
            objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-gpus"},
                         "spec": {"driver": "gpu.example.com", "nodeName": name,
                                  "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                  "devices": [{"name": f"gpu-{g}", "attributes": {"model": {"string": "A100" if i % 2 else "T4"}},
                                               "capacity": {"memory": {"value": "80Gi" if i % 2 else "16Gi"}}}
                                              for g in range(8)]}})
    if with_gpus:
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
                     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
        for p in range(3):
            objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": f"claim-{p}", "namespace": "default"},
                         "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                             "deviceClassName": "gpu.example.com", "count": 2, "selectors": [{"cel": {
                                 "expression": 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'}}]}}]}}})
    for p in range(3):
        spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}
        if with_gpus:
            spec["resourceClaims"] = [{"name": "gpus", "resourceClaimName": f"claim-{p}"}]
        objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{p}", "namespace": "default"}, "spec": spec})
    return [(o, Origin("bench", i)) for i, o in enumerate(objs)]


def timed_plugin(fw, name):
    """Wrap one plugin's extension points to add up the time spent in them."""
    pl = fw.profile.by_name[name]
    spent = [0.0]
    depth = [0]  # a batch method may call the per-node one: count the outer call only
    for point in ("pre_enqueue", "pre_filter", "filter", "filter_all", "score", "score_all", "normalize_score",
                  "normalize_all", "post_filter"):
        fn = getattr(pl, point, None)
        if fn is None:
            continue

        def wrapper(*a, _fn=fn, **k):
            t = time.perf_counter()
            depth[0] += 1
            try:
                return _fn(*a, **k)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    spent[0] += time.perf_counter() - t

        setattr(pl, point, wrapper)
    return spent


def partition_objects(n_nodes: int):
    """Each node: 8 GPUs of 80Gi, each split into 4 partitions of 20Gi that
    draw on the GPU's counter set; and one shared GPU whose memory claims
    take a share of (allowMultipleAllocations, a request policy)."""
    objs = []
    for i in range(n_nodes):
        name = f"node-{i:05d}"
        objs.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                     "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "110"}}})
        pool = {"name": name, "generation": 1, "resourceSliceCount": 2}
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-counters"},
                     "spec": {"driver": "gpu.example.com", "nodeName": name, "pool": pool,
                              "sharedCounters": [{"name": f"gpu-{g}", "counters": {"memory": {"value": "80Gi"}}}
                                                 for g in range(8)]}})
        devices = [{"name": f"gpu-{g}-part-{p}", "capacity": {"memory": {"value": "20Gi"}},
                    "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {"memory": {"value": "20Gi"}}}]}
                   for g in range(8) for p in range(4)]
        devices.append({"name": "shared-gpu", "allowMultipleAllocations": True,
                        "capacity": {"memory": {"value": "80Gi", "requestPolicy": {
                            "default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}}}})
        objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{name}-devices"},
                     "spec": {"driver": "gpu.example.com", "nodeName": name, "pool": pool, "devices": devices}})
    objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
                 "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": "partitions", "namespace": "default"},
                 "spec": {"devices": {"requests": [{"name": "parts", "exactly": {
                     "deviceClassName": "gpu.example.com", "count": 2}}]}}})
    objs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": "share", "namespace": "default"},
                 "spec": {"devices": {"requests": [{"name": "mem", "exactly": {
                     "deviceClassName": "gpu.example.com", "count": 1,
                     "selectors": [{"cel": {"expression": "device.allowMultipleAllocations"}}],
                     "capacity": {"requests": {"memory": "10Gi"}}}}]}}})
    for p, c in (("pod-parts", "partitions"), ("pod-share", "share")):
        spec = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
                "resourceClaims": [{"name": "gpus", "resourceClaimName": c}]}
        objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": p, "namespace": "default"}, "spec": spec})
    return [(o, Origin("bench", i)) for i, o in enumerate(objs)]


def main():
    args = sys.argv[1:]
    version = "1.36"
    if "--kube-version" in args:
        i = args.index("--kube-version")
        version = args[i + 1]
        del args[i:i + 2]
    n = int(args[0]) if args else 2000
    features = Features(version)
    cluster = build_cluster(cluster_objects(n, with_gpus=False))
    fw = Framework(build_snapshot(cluster, features), tie_break="name")
    spent = timed_plugin(fw, "DynamicResources")
    pods = [PodInfo(p) for p in cluster.pending_pods()]
    t = time.perf_counter()
    for pi in pods:
        fw.schedule(pi)
    total = time.perf_counter() - t
    print(f"[{version}] pod without claims, {n} nodes: cycle {total / len(pods) * 1000:.1f} ms, "
          f"DynamicResources {spent[0] / len(pods) * 1000:.3f} ms ({spent[0] / total * 100:.2f}% of the cycle)")

    cluster = build_cluster(cluster_objects(n, with_gpus=True))
    fw = Framework(build_snapshot(cluster, features), tie_break="name")
    spent = timed_plugin(fw, "DynamicResources")
    for pi in [PodInfo(p) for p in cluster.pending_pods()]:
        spent[0] = 0.0
        t = time.perf_counter()
        r = fw.schedule(pi)
        total = time.perf_counter() - t
        print(f"[{version}] pod with a 2-GPU claim, {n} nodes x 8 GPUs: cycle {total * 1000:.0f} ms, "
              f"DynamicResources {spent[0] * 1000:.0f} ms -> {r.status} {r.selected_node}")

    if version != "1.35":
        cluster = build_cluster(partition_objects(n))
        fw = Framework(build_snapshot(cluster, features), tie_break="name")
        spent = timed_plugin(fw, "DynamicResources")
        for pi in [PodInfo(p) for p in cluster.pending_pods()]:
            spent[0] = 0.0
            t = time.perf_counter()
            r = fw.schedule(pi)
            total = time.perf_counter() - t
            print(f"[{version}] {pi.name}, {n} nodes x (32 partitions + 1 shared GPU): cycle {total * 1000:.0f} ms, "
                  f"DynamicResources {spent[0] * 1000:.0f} ms -> {r.status} {r.selected_node}")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
