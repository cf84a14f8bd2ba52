#!/usr/bin/env python3
"""What --validate (strict input, sources/strict.py) costs where it must
cost nothing: loading a 150,000-pod snapshot that `kschedx snapshot` wrote,
whose objects an API server already validated.

    python benchmarks/bench_strict_load.py --before ../kschedx-main   # a checkout without strict input
    python benchmarks/bench_strict_load.py --before ../kschedx-main --runs 5 --formats json,json.gz

The cluster is benchmarks/gen_mixed_workload.py's (5,000 nodes, 150,000 bound
pods as read from a cluster, one pending pod), written once as a kschedx
snapshot (its SnapshotInfo first) under benchmarks/out/. Each run is a whole
`python -m kschedx explain --snapshot FILE -o json` process, this checkout
and the --before one interleaved; CPU time (user + system) and peak RSS come
from the child's rusage. Printed: the least of each and the spread (max -
min). A hand-written file of the same objects (no SnapshotInfo) is validated
and is measured too with --hand-written, to show what is skipped.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"


def make_snapshots(formats: list[str], pods: int, hand_written: bool) -> dict[str, Path]:
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gen_mixed_workload import generate

    from kschedx.sources.snapshot_info import snapshot_info
    from kschedx.sources.writer import write_snapshot

    OUT.mkdir(exist_ok=True)
    paths = {fmt: OUT / f"strict-{pods // 1000}k.{fmt}" for fmt in formats}
    hand = OUT / f"strict-{pods // 1000}k-hand.json"
    missing = [p for p in paths.values() if not p.exists()] + ([hand] if hand_written and not hand.exists() else [])
    if missing:
        objects = generate(5000, pods, 3, 1, 20, 5, 1, True)
        info = snapshot_info(server="https://bench.example", context=None, unreadable={}, fields="scheduling",
                             version={"gitVersion": "v1.36.3"})
        for fmt, path in paths.items():
            if not path.exists():
                write_snapshot(str(path), objects, info)
        if hand_written and not hand.exists():
            import json

            hand.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    if hand_written:
        paths["hand-written json"] = hand
    return paths


def one_run(tree: Path, snapshot: Path) -> tuple[float, float, int]:
    """(CPU seconds, peak RSS MB, exit code) of one explain process run from `tree`."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, "-m", "kschedx", "explain", "--snapshot", str(snapshot), "-o", "json",
           "--tie-break", "name", "--jobs", "1"]
    with open(os.devnull, "wb") as sink:
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=sink, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        stderr = proc.stderr.read().decode()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{tree}: explain --snapshot {snapshot} failed ({code}): {stderr}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pods", type=int, default=150_000)
    ap.add_argument("--formats", default="json", help="snapshot formats, comma-separated (json, json.gz, yaml...)")
    ap.add_argument("--hand-written", action="store_true",
                    help="also a file of the same objects without kschedx's SnapshotInfo (validated)")
    args = ap.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": ROOT}
    for label, path in make_snapshots(args.formats.split(","), args.pods, args.hand_written).items():
        rows: dict[str, list[tuple[float, float]]] = {t: [] for t in trees}
        codes = set()
        for _ in range(args.runs):
            for tree, where in trees.items():  # interleaved: the machine's load falls on both alike
                cpu, rss, code = one_run(where, path)
                rows[tree].append((cpu, rss))
                codes.add((tree, code))
        print(f"{label} ({path.stat().st_size / 1e6:,.0f} MB, {args.runs} runs each, exit codes {sorted(codes)}):")
        for tree, measured in rows.items():
            cpus = [c for c, _ in measured]
            rsss = [r for _, r in measured]
            print(f"  {tree:6} CPU {min(cpus):6.2f} s (spread {max(cpus) - min(cpus):.2f}), "
                  f"peak RSS {min(rsss):6.0f} MB (spread {max(rsss) - min(rsss):.0f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
