#!/usr/bin/env python3
"""What calling extenders costs kschedx: `simulate --detail placements` on a
mixed workload without extenders, with one pass-through extender (filter +
prioritize) with nodeCacheCapable, and without it (whole Node objects both
ways). The extender is tests/extender_server.py in a process of its own, so
the CPU time reported (user + system of the kschedx process) is kschedx's.

    python benchmarks/bench_extenders.py                      # 1,000 nodes, 10,000 pods, 20 pending
    python benchmarks/bench_extenders.py --nodes 5000 --pods 50000 --pending 50
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER = """
import sys, time
sys.path.insert(0, {tests!r})
from extender_server import ExtenderServer
s = ExtenderServer().start()
def names(a):
    return a["NodeNames"] if a.get("NodeNames") is not None else [n["metadata"]["name"] for n in a["Nodes"]["items"]]
s.on("filter", lambda a: {{"NodeNames": a["NodeNames"]}} if a.get("NodeNames") is not None
     else {{"Nodes": {{"items": a["Nodes"]["items"]}}}})
s.on("prioritize", lambda a: [{{"Host": n, "Score": i % 11}} for i, n in enumerate(names(a))])
print(s.url, flush=True)
sys.stdin.read()
"""


def run(args: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=False, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10_000)
    ap.add_argument("--pending", type=int, default=20)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workload = Path(tmp) / "mixed.json"
        subprocess.run([sys.executable, str(HERE / "gen_mixed_workload.py"), "--nodes", str(opts.nodes), "--pods",
                        str(opts.pods), "--pending", str(opts.pending), "-o", str(workload)], check=True,
                       stdout=subprocess.DEVNULL)
        server = subprocess.Popen([sys.executable, "-c", SERVER.format(tests=str(HERE.parent / "tests"))],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            url = server.stdout.readline().strip()
            head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            configs = {"no extender": head}
            for ncc in (True, False):
                ext = {"urlPrefix": url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "weight": 1,
                       "nodeCacheCapable": ncc}
                configs[f"nodeCacheCapable: {str(ncc).lower()}"] = head + "extenders:\n- " + json.dumps(ext) + "\n"
            for label, text in configs.items():
                cfg = Path(tmp) / "sched.yaml"
                cfg.write_text(text)
                wall, cpu = run([sys.executable, "-m", "kschedx", "simulate", "--snapshot", str(workload),
                                 "--config", str(cfg), "--detail", "placements", "-o", "json",
                                 "--tie-break", "name"])
                print(f"{label:28} {wall:6.2f} s wall  {cpu:6.2f} s CPU")
        finally:
            server.stdin.close()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
