#!/usr/bin/env python3
"""Time `explain` of a workload judged as a whole, on the 5,000-node mixed
workload, next to `simulate` of the same workload (the same step, one cycle
per replica), and the fix search of a workload whose last replicas do not
fit (each candidate checked by placing every replica again).

    python benchmarks/gen_mixed_workload.py -o benchmarks/out/mixed-5k.json
    nice python benchmarks/bench_workload.py benchmarks/out/mixed-5k.json

- spread-N: a Deployment of N replicas, at most one per node (required
  hostname anti-affinity): every replica placed;
- eight-nodes: 12 replicas, one per node, allowed on 8 nodes only (a
  required node affinity on their hostnames): the fixes that place all 12.

CPU time of this process, the least of --repeat runs; nothing is asserted.
The peak RSS printed is this script's: it holds the fixture's objects twice
(read once, then loaded for each run); a whole `kschedx explain` process
needs less (docs/performance.md, Workloads judged as a whole).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kschedx.commands import explain as explaining  # noqa: E402
from kschedx.commands import simulate as simulating  # noqa: E402
from kschedx.commands.load import load_workload  # noqa: E402
from kschedx.result.sink import DocumentSink, ResultSink  # noqa: E402
from kschedx.sources.fixtures import Origin, read_objects  # noqa: E402

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def deployment(name: str, replicas: int, **spec) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "bench"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {
                         "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                             {"labelSelector": {"matchLabels": {"app": name}}, "topologyKey": HOST}]}},
                         "containers": [{"name": "app", "image": "registry.example/app:1",
                                         "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}],
                         **spec}}}}


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class _Count(ResultSink):
    """Keeps nothing but what the report prints."""

    def __init__(self):
        self.placed = self.pods = 0
        self.fixes: list = []
        self.search: dict | None = None

    def pod(self, pod: dict) -> None:
        self.pods += 1
        self.placed += bool(pod.get("placedNode"))
        if "fixes" in pod:
            self.fixes, self.search = pod["fixes"], pod["fixSearch"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fixture")
    ap.add_argument("--replicas", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    objects = read_objects([args.fixture])
    origin = Origin("bench.yaml")
    cluster = [(o, origin) for o, _ in objects if o["kind"] != "Pod" or o["spec"].get("nodeName")]
    names = sorted(o["metadata"]["name"] for o, _ in cluster if o["kind"] == "Node")[:8]
    eight = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": HOST, "operator": "In", "values": names}]}]}}}
    cases = [
        (f"spread-{args.replicas}", deployment("spread", args.replicas), False),
        ("eight-nodes", deployment("eight", 12), True),
    ]
    cases[1][1]["spec"]["template"]["spec"]["affinity"].update(eight)
    tmp = Path(tempfile.mkdtemp())
    for name, dep, fix in cases:
        times, sim_times, sink = [], [], None
        for _ in range(args.repeat):
            path = tmp / f"{dep['metadata']['name']}.json"
            path.write_text(json.dumps(dep))
            workload = load_workload((), [str(path)], cluster_objects=list(cluster), keep_raw=fix)
            sink = _Count()
            t = cpu_seconds()
            explaining.explain_into(sink, workload, tie_break="name", fix=fix)
            times.append(cpu_seconds() - t)
            if not fix:
                t = cpu_seconds()
                simulating.simulate_into(DocumentSink(), workload, tie_break="name", detail="placements")
                sim_times.append(cpu_seconds() - t)
        line = f"{name}: explain {min(times):.2f} s CPU ({sink.placed} of {sink.pods} placed)"
        if sim_times:
            line += f"; simulate --detail placements {min(sim_times):.2f} s CPU"
        print(line)
        if sink.search is not None:
            s = sink.search
            print(f"    fix search: {s['candidates']} candidates, {s.get('sequences')} sequences, {s['cycles']} cycles")
            for f in sink.fixes:
                print(f"    {f['kind']} ({f['widening']}): {f['description']}")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
