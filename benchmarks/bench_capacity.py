#!/usr/bin/env python3
"""`kschedx capacity` at scale: 1,000 copies placed on the mixed workload.

    python benchmarks/gen_mixed_workload.py -o benchmarks/out/mixed-5k.json
    nice python benchmarks/bench_capacity.py --snapshot benchmarks/out/mixed-5k.json

For each template kind of the mixed workload (plain Deployment replicas
under the system default spreading; zone DoNotSchedule + hostname
ScheduleAnyway topology spread; hostname anti-affinity) the first pending pod
of that kind is written as a POD_FILE and `kschedx capacity --max N -o json`
runs as a whole process, once with --max 1 (reading the snapshot and one
copy) and once with --max N. The difference is the cost of the other N - 1
copies. CPU time (user + system) is printed next to wall time: on a shared
machine wall time grows with the others' load, CPU time much less. A
measurement, not a test: no figure is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
KINDS = ("plain", "spread", "anti")


def pod_file(snapshot: str, kind: str) -> str:
    path = OUT / f"capacity-{kind}.json"
    if not path.exists():
        items = json.loads(Path(snapshot).read_bytes())["items"]
        pod = next(o for o in items if o["kind"] == "Pod" and not o["spec"].get("nodeName")
                   and o["metadata"]["labels"].get("kind") == kind)
        pod["metadata"]["name"] = "asked-" + pod["metadata"]["name"]
        path.write_text(json.dumps(pod))
    return str(path)


def run(argv: list[str], limit: int) -> tuple[float, float, float, dict]:
    cmd = ["prlimit", f"--as={limit}", "--", sys.executable, "-m", "kschedx", *argv]
    out_path = OUT / "capacity-out.json"
    t0 = time.perf_counter()
    import subprocess

    with open(out_path, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, cwd=OUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"kschedx exited {code}: {' '.join(argv)}")
    doc = json.loads(out_path.read_bytes())
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshot", default=str(OUT / "mixed-5k.json"))
    ap.add_argument("--copies", type=int, default=1000)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--limit", type=int, default=8_000_000_000, help="address-space cap per run (bytes)")
    args = ap.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    snapshot = str(Path(args.snapshot).resolve())
    print(f"{'template':<8} {'copies':>6}  {'wall':>7} {'cpu':>7} {'rss':>8}   per copy (cpu, after the first)  stop")
    for kind in args.kinds.split(","):
        pod = pod_file(snapshot, kind)
        base = ["capacity", pod, "--snapshot", snapshot, "-o", "json", "--tie-break", "name"]
        w1, c1, _, _ = run(base + ["--max", "1"], args.limit)
        wn, cn, rss, doc = run(base + ["--max", str(args.copies)], args.limit)
        t = doc["templates"][0]
        per = (cn - c1) / max(1, t["count"] - 1) * 1000
        print(f"{kind:<8} {t['count']:>6}  {wn:>6.1f}s {cn:>6.1f}s {rss:>6.0f}MiB   {per:.1f} ms "
              f"(--max 1: {w1:.1f}s wall, {c1:.1f}s cpu)  {t['stop']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
