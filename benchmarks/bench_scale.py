#!/usr/bin/env python3
"""The scale targets, measured as a user meets them: whole `kschedx`
processes, start to finish, one at a time, with wall time and peak RSS.

    python benchmarks/gen_mixed_workload.py -o benchmarks/out/mixed-5k.json
    python benchmarks/gen_mixed_workload.py --pods 150000 --pending 1 -o benchmarks/out/mixed-150k.json
    python benchmarks/bench_scale.py --snapshot benchmarks/out/mixed-5k.json \\
        --big-snapshot benchmarks/out/mixed-150k.json

CPU time (user + system) is printed next to wall time: on a shared machine
wall time grows with the load of the others, CPU time much less. Each run is capped with `prlimit --as` (the machine is shared); output goes
to a file under benchmarks/out/ and is checked to be valid JSON where it is
JSON. No figure is asserted anywhere: a measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"


def one_pod_file(snapshot: str) -> str:
    """The first pending pod of the snapshot, as a POD_FILE without its
    namespace's uid (explain pod.yaml)."""
    path = OUT / "pod.json"
    if not path.exists():
        items = json.loads(Path(snapshot).read_bytes())["items"]
        pod = next(o for o in items if o["kind"] == "Pod" and not o["spec"].get("nodeName"))
        pod = json.loads(json.dumps(pod))
        pod["metadata"]["name"] = "asked-" + pod["metadata"]["name"]
        path.write_text(json.dumps(pod))
    return str(path)


def run(label: str, argv: list[str], limit: int, out_name: str, check_json: bool) -> dict:
    out_path = OUT / out_name
    cmd = ["prlimit", f"--as={limit}", "--", sys.executable, "-m", "kschedx", *argv]
    t0 = time.perf_counter()
    with open(out_path, "wb") as out, open(OUT / (out_name + ".err"), "wb") as err:
        # Run from out/: the kschedx imported is the installed one, or the
        # one PYTHONPATH names (to compare two checkouts).
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=OUT)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    rss_mib = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime
    valid = ""
    if check_json:
        try:
            json.loads(out_path.read_bytes())
            valid = "valid JSON"
        except ValueError:
            valid = "INVALID JSON"
    print(f"{label:<58} {wall:7.2f} s wall  {cpu:7.2f} s CPU  {rss_mib:6.0f} MiB  exit {code}  {valid}",
          flush=True)
    print(f"    {shlex.join(argv)}", flush=True)
    return {"label": label, "wall": wall, "cpu": cpu, "rss_mib": rss_mib, "exit": code}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshot", default=str(OUT / "mixed-5k.json"))
    ap.add_argument("--big-snapshot", default=str(OUT / "mixed-150k.json"))
    ap.add_argument("--limit", type=int, default=8_000_000_000, help="address-space cap per run (bytes)")
    ap.add_argument("--only", action="append", help="run only benchmarks whose label contains this")
    ap.add_argument("--extra", default="", help="extra options for every kschedx run (e.g. '--jobs 1')")
    args = ap.parse_args(argv)
    OUT.mkdir(exist_ok=True)
    extra = shlex.split(args.extra)
    snap, big = str(Path(args.snapshot).resolve()), str(Path(args.big_snapshot).resolve())
    runs = [
        ("simulate --detail placements -o json (5k/50k/200)",
         ["simulate", "--snapshot", snap, "--detail", "placements", "-o", "json", "--tie-break", "name"],
         "simulate-placements.json", True),
        ("explain -o json, 200 pending (5k/50k/200)",
         ["explain", "--snapshot", snap, "-o", "json", "--tie-break", "name"], "explain-all.json", True),
        ("explain human, 200 pending (5k/50k/200)",
         ["explain", "--snapshot", snap, "--tie-break", "name"], "explain-all.txt", False),
    ]
    if Path(big).exists():
        runs += [
            ("explain pod.json on 150k pods, start to finish",
             ["explain", one_pod_file(big), "--snapshot", big, "-o", "json", "--tie-break", "name"],
             "explain-one-150k.json", True),
        ]
    for label, cmd, out_name, check in runs:
        if args.only and not any(o in label for o in args.only):
            continue
        if cmd[0] == "explain":
            cmd = cmd + extra
        run(label, cmd, args.limit, out_name, check)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
