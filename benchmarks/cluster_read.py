"""Time ClusterConnection.read_objects() on a large cluster served by the test API server.

    python benchmarks/cluster_read.py [--nodes 5000 --pods 150000]

The server (tests/kubeapi.py) runs in a subprocess, so the figures are the
client's own: wall time of connect + read_objects, and the client process's
peak RSS (resource.getrusage). By default each page is trimmed to the fields
scheduling reads as it is parsed (what explain/bind/snapshot do); --full keeps
everything (snapshot --full). Pods look like `kubectl get pod -o json` output
of Deployment pods (labels, owner reference, 1-2 containers with requests,
probes, tolerations, spread constraints, status with conditions), plus the
managedFields the API server sends (kubectl hides them).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _current_rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


# ---- server side -------------------------------------------------------------------------


def _load(server, nodes: int, pods: int, pending: int, managed_fields: bool) -> int:
    """Generate the cluster straight into the store as serialized JSON; returns its size."""
    from kubeapi_objects import realistic_node, realistic_pod
    from kubeapi_store import BY_KIND, _index_fields, dumps

    rng = random.Random(42)
    total = 0

    def rows(kind, objs):
        nonlocal total
        resource_ = BY_KIND[kind]
        for obj in objs:
            obj.pop("kind")
            obj.pop("apiVersion")
            raw = dumps(obj)
            total += len(raw)
            meta = obj["metadata"]
            key = f'{meta["namespace"]}/{meta["name"]}' if resource_.namespaced else meta["name"]
            yield key, raw, _index_fields(resource_, obj)

    node_objs = [realistic_node(i, rng) for i in range(nodes)]
    node_names = [n["metadata"]["name"] for n in node_objs]
    server.store.put_raw_many("Node", rows("Node", node_objs))
    del node_objs
    server.store.put_raw_many("Pod", rows("Pod", (
        realistic_pod(i, node_names[i % len(node_names)] if i >= pending else None, rng,
                      managed_fields=managed_fields)
        for i in range(pods))))
    namespaces = [{"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": f"team-{i}"}}
                  for i in range(40)]
    server.add(*namespaces)
    return total


def serve(args) -> None:
    from kubeapi import KubeAPIServer
    from kubeapi_tls import make_server_material

    workdir = Path(args.serve)
    start = time.perf_counter()
    server = KubeAPIServer(make_server_material(workdir / "tls"), gzip=not args.no_gzip).start()
    size = _load(server, args.nodes, args.pods, args.pending, not args.no_managed_fields)
    server.write_kubeconfig(workdir / "kubeconfig")
    print(json.dumps({"ready": True, "generate_s": round(time.perf_counter() - start, 1),
                      "json_mb": round(size / 2**20, 1)}), flush=True)
    sys.stdin.read()  # serve until the parent closes our stdin
    print(json.dumps({"requests": len(server.requests), "connections": server.connections}),
          flush=True)
    server.stop()


# ---- client side ---------------------------------------------------------------------------


def measure(args) -> None:
    with tempfile.TemporaryDirectory(prefix="kschedx-bench-") as tmp:
        cmd = [sys.executable, __file__, "--serve", tmp, "--nodes", str(args.nodes),
               "--pods", str(args.pods), "--pending", str(args.pending)]
        cmd += ["--no-gzip"] * args.no_gzip + ["--no-managed-fields"] * args.no_managed_fields
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            ready = json.loads(proc.stdout.readline() or "{}")
            if not ready.get("ready"):
                sys.exit("the benchmark server did not start")
            print(f"server: {args.nodes} nodes, {args.pods} pods ({args.pending} pending), "
                  f"{ready['json_mb']} MiB of JSON, generated in {ready['generate_s']} s"
                  f"{'' if args.no_gzip else ', gzip'}")
            report = run_client(Path(tmp) / "kubeconfig", args)
            proc.stdin.close()
            server_stats = json.loads(proc.stdout.readline() or "{}")
        finally:
            if not proc.stdin.closed:
                proc.stdin.close()  # the server stops when its stdin closes
            proc.wait(timeout=60)
    print(f"client: {report}")
    print(f"server saw {server_stats.get('requests')} requests on "
          f"{server_stats.get('connections')} TLS connections")


def run_client(kubeconfig: Path, args) -> str:
    import tracemalloc

    from kschedx.sources.cluster import connect

    if args.tracemalloc:
        tracemalloc.start()
    base = _current_rss_mb()
    pages = {"Pod": 0}

    def progress(kind, count, done):
        if kind == "Pod":
            pages["Pod"] += 1

    start = time.perf_counter()
    conn = connect(str(kubeconfig), request_timeout=120)
    read = conn.read_objects(progress=progress, full=args.full)
    wall = time.perf_counter() - start
    conn.close()
    counts: dict[str, int] = {}
    for o in read.objects:
        counts[o["kind"]] = counts.get(o["kind"], 0) + 1
    parts = [f"{len(read.objects)} objects ({counts.get('Node', 0)} nodes, {counts.get('Pod', 0)} pods, "
             f"{pages['Pod']} pod pages) in {wall:.2f} s",
             f"{counts.get('Pod', 0) / wall:,.0f} pods/s",
             f"peak RSS {_rss_mb():,.0f} MiB (baseline {base:,.0f} MiB)"]
    if args.tracemalloc:
        _, peak = tracemalloc.get_traced_memory()
        parts.append(f"tracemalloc peak {peak / 2**20:,.0f} MiB")
    if read.warnings:
        parts.append(f"warnings: {read.warnings}")
    return "; ".join(parts)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=5000)
    p.add_argument("--pods", type=int, default=150_000)
    p.add_argument("--pending", type=int, default=100, help="pods without a node")
    p.add_argument("--no-gzip", action="store_true", help="serve uncompressed answers")
    p.add_argument("--no-managed-fields", action="store_true",
                   help="leave managedFields out of the served pods")
    p.add_argument("--full", action="store_true",
                   help="keep every field (kschedx snapshot --full) instead of trimming at parse time")
    p.add_argument("--tracemalloc", action="store_true", help="also trace allocations (slow)")
    p.add_argument("--serve", metavar="DIR", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve:
        serve(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()
