"""The real kube-scheduler's figures beside kschedx's, in the same run.

The oracle (oracle/, Go: the release's own scheduler over a fake API client)
has a timing mode, `oracle --time` (oracle/timing.go):

- `--mode simulate`: the scheduler's own loop (scheduler.New, sched.Run)
  binds and preempts through the fake client until every pending pod is
  bound, or no pod is left to try: what `kschedx simulate` computes;
- `--mode explain`: each pending pod through the scheduler's SchedulePod
  (and PostFilter) against one unchanged snapshot: what `kschedx explain`
  computes.

Logging off, parallelism 16, GOMAXPROCS the machine's, every node scored
(percentageOfNodesToScore 100, as kschedx evaluates every node). It prints
one JSON line: wall and CPU seconds (getrusage), peak RSS, scheduling
attempts, placements, nominations, victims, and how long reading the
fixture took (the real scheduler reads no file: `wallSeconds` minus
`readSeconds` is its time from objects in memory to the last binding).

The benchmarks (bench_preemption.py, bench_scale.py, `--oracle`) run it as
a whole process, like kschedx, interleaved with kschedx's runs.

    python benchmarks/oracle_timing.py --mode simulate benchmarks/out/preempt-5k.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def kschedx_version(extra: list[str] | None = None) -> str:
    """The Kubernetes minor kschedx reproduces in these runs: --kube-version
    among the options, else kschedx's default."""
    extra = extra or []
    for i, arg in enumerate(extra):
        if arg == "--kube-version" and i + 1 < len(extra):
            return extra[i + 1]
        if arg.startswith("--kube-version="):
            return arg.split("=", 1)[1]
    out = subprocess.run([sys.executable, "-c", "from kschedx.features import default_features as d; "
                          "print(d().version)"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def build(minor: str) -> str:
    """The oracle binary for a Kubernetes minor (oracle/build; cached)."""
    proc = subprocess.run([str(ROOT / "oracle" / "build"), minor], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"oracle/build {minor} failed:\n{proc.stderr}")
    return proc.stdout.strip().splitlines()[-1]


def run(binary: str, mode: str, fixture: str, config: str | None = None) -> dict:
    """One timed run of the real scheduler as a whole process: wall, CPU and
    peak RSS measured from outside (wait4), the oracle's own line besides."""
    cmd = [binary, "--time", "--mode", mode, fixture] + (["--config", config] if config else [])
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"oracle --time failed ({proc.returncode}):\n{err.decode(errors='replace')}")
    line = json.loads(out)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss // 1024, "line": line}


def summary(fig: dict) -> str:
    line = fig["line"]
    victims = len(line["victims"])
    return (f"{fig['wall']:.2f} s wall, {fig['cpu']:.2f} s CPU, {fig['rss']} MiB peak RSS; "
            f"{line['wallSeconds'] - line['readSeconds']:.2f} s from objects in memory, "
            f"{line['schedulingSeconds']:.2f} s first attempt to last binding; "
            f"{line['attempts']} attempts, {len(line['placements'])} placed, {len(line['nominations'])} nominated, "
            f"{victims} victims")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fixture")
    ap.add_argument("--mode", choices=("simulate", "explain"), default="simulate")
    ap.add_argument("--kube-version", help="the minor (default: kschedx's default version)")
    ap.add_argument("--config")
    args = ap.parse_args(argv)
    binary = build(args.kube_version or kschedx_version())
    print(summary(run(binary, args.mode, args.fixture, args.config)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
