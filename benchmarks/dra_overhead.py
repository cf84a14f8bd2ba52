"""What DynamicResources costs per scheduling cycle.

1. A pod without claims: the plugin's share of a cycle on N nodes (PreFilter
   returns Skip, so Filter never runs; Score returns 0 at once).
2. A pod with a claim for 2 GPUs (CEL selector) on N nodes with 8 GPUs each:
   the whole cycle, first pod (selectors evaluated) and next pods (cached).

    python benchmarks/dra_overhead.py [NODES]
"""

from __future__ import annotations

import sys
import time

from kschedx.state.cluster import build_cluster
from kschedx.framework.runner import Framework
from kschedx.state.snapshot import PodInfo, build_snapshot
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


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    cluster = build_cluster(cluster_objects(n, with_gpus=False))
    fw = Framework(build_snapshot(cluster), tie_break="name")
    spent = timed_plugin(fw, "DynamicResources")
    pods = [PodInfo(p) for p in cluster.pending_pods()]
    t = time.perf_counter()
    for pi in pods:
        fw.schedule(pi)
    total = time.perf_counter() - t
    print(f"pod without claims, {n} nodes: cycle {total / len(pods) * 1000:.1f} ms, "
          f"DynamicResources {spent[0] / len(pods) * 1000:.3f} ms ({spent[0] / total * 100:.2f}% of the cycle)")

    cluster = build_cluster(cluster_objects(n, with_gpus=True))
    fw = Framework(build_snapshot(cluster), tie_break="name")
    spent = timed_plugin(fw, "DynamicResources")
    for pi in [PodInfo(p) for p in cluster.pending_pods()]:
        spent[0] = 0.0
        t = time.perf_counter()
        r = fw.schedule(pi)
        total = time.perf_counter() - t
        print(f"pod with a 2-GPU claim, {n} nodes x 8 GPUs: cycle {total * 1000:.0f} ms, "
              f"DynamicResources {spent[0] * 1000:.0f} ms -> {r.status} {r.selected_node}")


if __name__ == "__main__":
    main()
