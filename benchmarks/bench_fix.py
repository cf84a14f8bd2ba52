#!/usr/bin/env python3
"""Time `explain --fix` on the 5,000-node mixed workload.

    python benchmarks/gen_mixed_workload.py -o benchmarks/out/mixed-5k.json
    nice python benchmarks/bench_fix.py benchmarks/out/mixed-5k.json

Explains pods that do not fit the cluster, each for another reason, and
times each pod's fix search itself (`find_fixes`, the least of 3 runs, CPU
time of this process) next to one cycle of the pod as it is:

- huge: a request no node has free; nvme: a nodeSelector no node matches;
  lonely: a required pod affinity no pod satisfies; zone-2-only: a zone
  whose nodes are all tainted (the script taints zone-2);
- rwop: a ReadWriteOncePod claim a running pod holds;
- local-10gi: a WaitForFirstConsumer claim of a no-provisioner class whose
  only PersistentVolume is too small;
- gpu-4: 4 devices of a class whose 500 nodes have 2 each (DRA);
- pair: a required zone whose nodes are all tainted, with more memory than
  any node has free (no single change fits: a combination).

The bound the fix search is held to: 0.2 s CPU per pod. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import copy
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kschedx.commands.document import pod_document  # noqa: E402
from kschedx.commands.load import load_workload  # noqa: E402
from kschedx.framework.dispatch import new_schedulers  # noqa: E402
from kschedx.sources.fixtures import Origin, read_objects  # noqa: E402

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NS = "ns-0"


def _pod(name: str, cpu: str = "500m", memory: str = "512Mi", **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": {"app": name},
                         "creationTimestamp": "2025-01-02T00:00:00Z"},
            "spec": {"containers": [{"name": "app", "image": "registry.example/app:1",
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}}


def _claim_volume(claim: str) -> list:
    return [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]


PODS = [
    _pod("huge", cpu="80", memory="64Gi"),
    _pod("nvme", nodeSelector={"disk": "nvme"}),
    _pod("lonely", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "does-not-exist"}}, "topologyKey": ZONE}]}}),
    _pod("zone-2-only", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-2"]}]}]}}}),
    _pod("rwop", volumes=_claim_volume("exclusive")),
    _pod("local-10gi", volumes=_claim_volume("big-local")),
    _pod("gpu-4", resourceClaims=[{"name": "gpus", "resourceClaimName": "four-gpus"}]),
    _pod("pair", memory="300Gi", nodeSelector={ZONE: "zone-2"}),
]


def extra_objects(nodes: list[dict]) -> list[dict]:
    """The claims, volumes, classes and slices the new pods need."""
    holder = _pod("rwop-holder", volumes=_claim_volume("exclusive"))
    holder["spec"]["nodeName"] = nodes[10]["metadata"]["name"]
    holder["status"] = {"phase": "Running"}
    out = [holder]
    out.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "csi"},
                "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"})
    out.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-exclusive"},
                "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOncePod"],
                         "storageClassName": "csi", "csi": {"driver": "csi.example.com", "volumeHandle": "v1"},
                         "claimRef": {"namespace": NS, "name": "exclusive"}},
                "status": {"phase": "Bound"}})
    out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "exclusive", "namespace": NS,
                             "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                "spec": {"accessModes": ["ReadWriteOncePod"], "resources": {"requests": {"storage": "1Gi"}},
                         "storageClassName": "csi", "volumeName": "pv-exclusive"},
                "status": {"phase": "Bound"}})
    local_node = nodes[21]["metadata"]["name"]
    out.append({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
                "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"})
    out.append({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "local-pv-0"},
                "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                         "storageClassName": "local", "local": {"path": "/mnt/disks/0"},
                         "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                             {"key": HOST, "operator": "In", "values": [local_node]}]}]}}},
                "status": {"phase": "Available"}})
    out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "big-local", "namespace": NS},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}},
                         "storageClassName": "local"},
                "status": {"phase": "Pending"}})
    driver = "gpu.example.com"
    out.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": driver},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}})
    for n in nodes[:500]:
        name = n["metadata"]["name"]
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                    "metadata": {"name": f"{name}-gpu"},
                    "spec": {"driver": driver, "nodeName": name,
                             "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                             "devices": [{"name": f"gpu-{i}", "attributes": {"index": {"int": i}}}
                                         for i in range(2)]}})
    out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "four-gpus", "namespace": NS},
                "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                    "deviceClassName": driver, "allocationMode": "ExactCount", "count": 4}}]}}})
    return out


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fixture")
    ap.add_argument("--pods", help="only these pods (comma-separated names)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each search; the least is printed")
    args = ap.parse_args(argv)

    from kschedx.fixes.find import find_fixes
    from kschedx.fixes.verify import Verifier

    t0 = cpu_seconds()
    objects = read_objects([args.fixture])
    # Every node of zone-2 tainted: zone-2-only fits nowhere without a toleration.
    for obj, _ in objects:
        if obj["kind"] == "Node" and obj["metadata"]["labels"].get(ZONE) == "zone-2":
            obj.setdefault("spec", {})["taints"] = [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]
    origin = Origin("bench")
    nodes = [o for o, _ in objects if o["kind"] == "Node"]
    objects = [(o, origin) for o, _ in objects if o["kind"] != "Pod" or o["spec"].get("nodeName")]
    objects += [(o, origin) for o in extra_objects(nodes)]
    pods = PODS
    if args.pods:
        wanted = args.pods.split(",")
        pods = [p for p in PODS if p["metadata"]["name"] in wanted]
    workload = load_workload((), cluster_objects=objects + [(copy.deepcopy(p), origin) for p in pods],
                             keep_raw=True)
    print(f"read and load: {cpu_seconds() - t0:.1f} s CPU")
    scheds = new_schedulers(workload.cluster, tie_break="name", seed=None)
    worst = 0.0
    for pi in scheds.queue_order(workload.pods):
        fw = scheds.framework_for(pi)
        result = scheds.schedule(pi)
        doc = pod_document(result, "explain", workload)
        raw = workload.raw_pods[pi.key]
        times, found = [], None
        for _ in range(args.repeat):
            t = cpu_seconds()
            found = find_fixes(fw, pi, doc, raw)
            times.append(cpu_seconds() - t)
        verifier = Verifier(fw, raw, pi)
        cycle = []
        for _ in range(args.repeat):
            t = cpu_seconds()
            verifier.run()
            cycle.append(cpu_seconds() - t)
        search = found["fixSearch"]
        worst = max(worst, min(times))
        print(f"{pi.name}: {result.status}; fix search {min(times):.3f} s CPU ({search['cycles']} cycles, "
              f"{search['candidates']} candidates, {search.get('combinations', 0)} combinations, "
              f"{len(found['fixes'])} fixes); one cycle {min(cycle):.3f} s")
        for f in found["fixes"]:
            print(f"    {f['kind']}: {f['description']}")
    print(f"slowest fix search: {worst:.3f} s CPU")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
