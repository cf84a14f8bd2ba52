#!/usr/bin/env python3
"""Time `explain --fix` on the 5,000-node mixed workload.

    python benchmarks/gen_mixed_workload.py -o benchmarks/out/mixed-5k.json
    nice python benchmarks/bench_fix.py benchmarks/out/mixed-5k.json

Explains a few pods that do not fit the cluster, each for another reason
(a request no free node has, a nodeSelector no node matches, a required
pod affinity no pod satisfies, a tolerations-free pod with every node of a
zone tainted), once without and once with --fix, and prints per pod the
CPU time of each, the cycles the fix search ran, and the fixes found.
CPU time (user + system of this process) is the figure to compare on a
shared machine; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import copy
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.sources.fixtures import Origin, read_objects  # noqa: E402

ZONE = "topology.kubernetes.io/zone"


def _pod(name: str, cpu: str = "500m", memory: str = "512Mi", **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns-0", "labels": {"app": name},
                         "creationTimestamp": "2025-01-02T00:00:00Z"},
            "spec": {"containers": [{"name": "app", "image": "registry.example/app:1",
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}}


PODS = [
    _pod("huge", cpu="80", memory="64Gi"),
    _pod("nvme", nodeSelector={"disk": "nvme"}),
    _pod("lonely", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "does-not-exist"}}, "topologyKey": ZONE}]}}),
    _pod("zone-2-only", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone-2"]}]}]}}}),
]


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fixture")
    args = ap.parse_args(argv)

    t0 = cpu_seconds()
    objects = read_objects([args.fixture])
    # Every node of zone-2 tainted: zone-2-only fits nowhere without a toleration.
    for obj, _ in objects:
        if obj["kind"] == "Node" and obj["metadata"]["labels"].get(ZONE) == "zone-2":
            obj.setdefault("spec", {})["taints"] = [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]
    origin = Origin("bench")
    objects = [(o, origin) for o, _ in objects if o["kind"] != "Pod" or o["spec"].get("nodeName")]
    workload = load_workload((), cluster_objects=objects + [(copy.deepcopy(p), origin) for p in PODS],
                                 keep_raw=True)
    print(f"read and load: {cpu_seconds() - t0:.1f} s CPU")
    everyone = workload.pods
    # Each explain builds its snapshot (the same cost with and without --fix):
    # the difference is the fix search.
    for pi in everyone:
        workload.pods = [pi]
        t1 = cpu_seconds()
        plain = explain(workload, tie_break="name")
        t2 = cpu_seconds()
        fixed = explain(workload, tie_break="name", fix=True)
        t3 = cpu_seconds()
        (p,) = fixed["pods"]
        search = p.get("fixSearch") or {}
        print(f"{pi.name}: {plain['pods'][0]['status']}; explain {t2 - t1:.2f} s CPU, "
              f"explain --fix {t3 - t2:.2f} s CPU (+{t3 - t2 - (t2 - t1):.2f} s: {search.get('cycles', 0)} "
              f"cycles, {len(p.get('fixes') or [])} fixes)")
        for f in p.get("fixes") or ():
            print(f"    {f['kind']}: {f['description']}")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
