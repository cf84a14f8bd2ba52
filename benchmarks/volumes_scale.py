"""Time the volume plugins on a large cluster.

    python benchmarks/volumes_scale.py [--nodes 5000] [--pods-per-node 30]

Builds, in memory, a cluster of NODES nodes in three zones, each with a
CSINode (EBS, 25 attachable volumes) and PODS_PER_NODE running pods, a
third of them with a bound EBS claim, plus one local PV per node. Then it
times one scheduling cycle for pods that exercise each volume path and for
a pod without volumes (the baseline). The first cycle with volumes fills
NodeVolumeLimits' per-pod cache. With a cluster this size, Python's cyclic
garbage collector can dominate a cycle; --freeze-gc shows the cost without it.
"""

from __future__ import annotations

import argparse
import gc
import time

from kschedx.state.cluster import build_cluster
from kschedx.framework.runtime import Framework
from kschedx.state.snapshot import build_snapshot
from kschedx.state.types import PodInfo
from kschedx.sources.fixtures import Origin

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


def objects(n_nodes: int, per_node: int):
    out = [
        {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": "gp3"},
         "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer",
         "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone",
                                                           "values": list(ZONES[:2])}]}]},
        {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": "local"},
         "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
    ]
    for i in range(n_nodes):
        name = f"node-{i:05d}"
        zone = ZONES[i % 3]
        out.append({"kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}},
            "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "250"}}})
        out.append({"kind": "CSINode", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": name},
                    "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": name, "allocatable": {"count": 25}}]}})
        out.append({"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": f"local-{name}"},
                    "spec": {"capacity": {"storage": "100Gi"}, "accessModes": ["ReadWriteOnce"],
                             "storageClassName": "local", "local": {"path": "/mnt/disk"},
                             "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                                 {"key": "kubernetes.io/hostname", "operator": "In", "values": [name]}]}]}}},
                    "status": {"phase": "Available"}})
        for j in range(per_node):
            pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": f"p-{i}-{j}", "namespace": "default"},
                   "spec": {"nodeName": name, "containers": [{"name": "c", "image": "x", "resources": {
                       "requests": {"cpu": "100m", "memory": "128Mi"}}}]}}
            if j % 3 == 0:
                claim = f"data-{i}-{j}"
                pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
                out.append(_bound_claim(claim, zone))
                out.append(_ebs_pv(claim, zone))
            out.append(pod)
    out.append(_bound_claim("zonal", ZONES[0]))
    out.append(_ebs_pv("zonal", ZONES[0]))
    out.append({"kind": "PersistentVolumeClaim", "apiVersion": "v1", "metadata": {"name": "new", "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
                         "resources": {"requests": {"storage": "10Gi"}}}})
    out.append({"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                "metadata": {"name": "scratch", "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                         "resources": {"requests": {"storage": "50Gi"}}}})
    for name, claim in (("no-volumes", None), ("bound-zonal", "zonal"), ("provision", "new"), ("local-pv", "scratch")):
        pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "default"},
               "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}
        if claim:
            pod["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]
        out.append(pod)
    return out


def _bound_claim(name, zone):
    return {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": "default",
                         "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3", "volumeName": f"pv-{name}",
                     "resources": {"requests": {"storage": "10Gi"}}}}


def _ebs_pv(name, zone):
    return {"kind": "PersistentVolume", "apiVersion": "v1",
            "metadata": {"name": f"pv-{name}", "labels": {"topology.kubernetes.io/zone": zone}},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "gp3",
                     "claimRef": {"namespace": "default", "name": name},
                     "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": f"vol-{name}"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}]}}},
            "status": {"phase": "Bound"}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--freeze-gc", action="store_true",
                    help="move the loaded cluster out of the garbage collector's sight (gc.freeze) before timing")
    args = ap.parse_args()
    t0 = time.perf_counter()
    cluster = build_cluster([(o, Origin("generated")) for o in objects(args.nodes, args.pods_per_node)])
    fw = Framework(build_snapshot(cluster), tie_break="name")
    if args.freeze_gc:
        gc.collect()
        gc.freeze()
    print(f"cluster: {args.nodes} nodes, {len(cluster.pods)} pods, {len(cluster.persistent_volumes)} PVs "
          f"(built in {time.perf_counter() - t0:.1f}s)")
    pending = {p["metadata"]["name"]: PodInfo(p) for p in cluster.pending_pods()}
    for name in ("no-volumes", "bound-zonal", "provision", "local-pv"):
        for round_ in ("first", "again"):
            t = time.perf_counter()
            r = fw.schedule(pending[name])
            dt = time.perf_counter() - t
            feasible = sum(1 for n in r.nodes if n.feasible)
            print(f"{name:12} {round_:5} {dt:6.2f}s  {r.status} on {r.selected_node}, {feasible} feasible")


if __name__ == "__main__":
    main()
