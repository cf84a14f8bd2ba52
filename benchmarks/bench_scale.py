#!/usr/bin/env python3
"""The scale targets, measured as a user meets them: whole `kschedx`
processes, start to finish, one at a time, with wall time and peak RSS.

    python benchmarks/gen_mixed_workload.py -o benchmarks/out/mixed-5k.json
    python benchmarks/gen_mixed_workload.py --pods 150000 --pending 1 -o benchmarks/out/mixed-150k.json
    python benchmarks/gen_mixed_workload.py --pods 150000 --pending 1 --from-cluster -o benchmarks/out/cluster-150k.json
    python benchmarks/bench_scale.py --snapshot benchmarks/out/mixed-5k.json \\
        --big-snapshot benchmarks/out/mixed-150k.json --cluster-snapshot benchmarks/out/cluster-150k.json

    python benchmarks/bench_scale.py --only "explain -o json, 200" --discard --repeat 3   # output to /dev/null
    python benchmarks/bench_scale.py --only "explain -o json, 200" --discard --extra=--no-reuse  # a cycle per pod

    python benchmarks/bench_scale.py --only "explain -o json, 200" --only "simulate --detail placements" \\
        --discard --repeat 3 --oracle      # the real kube-scheduler in the same rounds

--oracle runs the real kube-scheduler of kschedx's version in each round
(benchmarks/oracle_timing.py: `oracle --time`, whole processes like
kschedx's): its own loop (`--mode simulate`) beside simulate, each pod
against one snapshot (`--mode explain`) beside explain, and prints each
kschedx figure against the real scheduler's least of the same run.

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
        # In a process of its own, for the reason given in run().
        subprocess.run([sys.executable, __file__, "--make-pod-file", snapshot], check=True)
    return str(path)


def _make_pod_file(snapshot: str) -> None:
    path = OUT / "pod.json"
    items = json.loads(Path(snapshot).read_bytes())["items"]
    pod = next(o for o in items if o["kind"] == "Pod" and not o["spec"].get("nodeName"))
    pod = json.loads(json.dumps(pod))
    pod["metadata"]["name"] = "asked-" + pod["metadata"]["name"]
    path.write_text(json.dumps(pod))


class TreeMemory:
    """Peak memory of a process and its descendants (explain --jobs workers),
    sampled: the sum of their PSS (proportional set size), so that pages the
    forked workers share with their parent count once, not once per process.
    Peak RSS (from wait4) is the largest single process."""

    def __init__(self, pid: int, interval: float = 0.2):
        import threading

        self.pid = pid
        self.interval = interval
        self.peak_pss = 0
        self.processes = 1
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _tree(self) -> list[int]:
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
            except OSError:
                pass
        return pids

    def _run(self) -> None:
        while not self._done.wait(self.interval):
            total = 0
            pids = self._tree()
            for pid in pids:
                try:
                    with open(f"/proc/{pid}/smaps_rollup") as f:
                        for line in f:
                            if line.startswith("Pss:"):
                                total += int(line.split()[1]) * 1024
                                break
                except OSError:
                    pass
            self.processes = max(self.processes, len(pids))
            self.peak_pss = max(self.peak_pss, total)


def json_is_valid(path: Path) -> bool:
    """Whether the file is one valid JSON document, checked without holding
    it (a `--detail full` document of 5,000 nodes is several GB): a document
    written by kschedx's -o json puts each pod between lines "    {" and
    "    }" (strings never hold a raw newline), so the head, each pod and the
    tail are parsed one at a time, and their joins checked."""
    import mmap

    if path.stat().st_size == 0:
        return False
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        start = m.find(b'\n  "pods": [')
        if start < 0:
            return _loads(m[:])
        head = m[:start] + b'\n  "pods": []\n}'  # the head keys, closed
        if not _loads(head):
            return False
        pos = start + len(b'\n  "pods": [')
        if m[pos:pos + 1] == b"]":  # no pods
            return _loads(b"{" + m[pos + 1:].lstrip(b",")) if m[pos + 1:pos + 2] == b"," else \
                m[pos + 1:].strip() == b"}"
        while True:
            if m[pos:pos + 6] != b"\n    {":
                return False
            end = m.find(b"\n    }", pos)
            if end < 0 or not _loads(m[pos:end + 6]):
                return False
            pos = end + 6
            if m[pos:pos + 1] == b",":
                pos += 1
                continue
            rest = m[pos:]
            if not rest.startswith(b"\n  ]"):
                return False
            rest = rest[4:]
            return rest.strip() == b"}" or (rest.startswith(b",") and _loads(b"{" + rest[1:]))


def _loads(data: bytes) -> bool:
    try:
        json.loads(data)
        return True
    except ValueError:
        return False


def run(label: str, argv: list[str], limit: int, out_name: str, check_json: bool, discard: bool = False) -> dict:
    out_path = Path(os.devnull) if discard else OUT / out_name
    check_json = check_json and not discard
    cmd = ["prlimit", f"--as={limit}", "--", sys.executable, "-m", "kschedx", *argv]
    t0 = time.perf_counter()
    with open(out_path, "wb") as out, open(OUT / (out_name + ".err"), "wb") as err:
        # Run from out/: the kschedx imported is the installed one, or the
        # one PYTHONPATH names (to compare two checkouts).
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=OUT)
        sampler = TreeMemory(proc.pid)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        sampler.stop()
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    rss_mib = usage.ru_maxrss / 1024
    cpu = usage.ru_utime + usage.ru_stime
    valid = ""
    if check_json:
        # In a process of its own: reading a multi-GB file here would raise
        # this process's peak RSS, which the next run's child inherits (Linux
        # reports a vfork()ed child's peak RSS as at least its parent's).
        check = subprocess.run([sys.executable, __file__, "--check-json", str(out_path)])
        valid = "valid JSON" if check.returncode == 0 else "INVALID JSON"
    tree = f"  (process tree: peak {sampler.peak_pss / 2**20:.0f} MiB PSS, {sampler.processes} processes)"
    print(f"{label:<58} {wall:7.2f} s wall  {cpu:7.2f} s CPU  {rss_mib:6.0f} MiB  exit {code}  {valid}{tree}",
          flush=True)
    print(f"    {shlex.join(argv)}", flush=True)
    return {"label": label, "wall": wall, "cpu": cpu, "rss_mib": rss_mib, "exit": code,
            "tree_pss_mib": sampler.peak_pss / 2**20}


def compile_package() -> None:
    """Byte-compile the kschedx the runs import, as `pip install` does: with
    PYTHONDONTWRITEBYTECODE set (as in some containers and CI images) an
    editable checkout would otherwise compile every module again in every
    run, a cost no installed kschedx pays."""
    import compileall

    where = subprocess.run([sys.executable, "-c", "import kschedx, os; print(os.path.dirname(kschedx.__file__))"],
                           cwd=OUT, capture_output=True, text=True, check=True).stdout.strip()
    compileall.compile_dir(where, quiet=1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshot", default=str(OUT / "mixed-5k.json"))
    ap.add_argument("--big-snapshot", default=str(OUT / "mixed-150k.json"))
    ap.add_argument("--cluster-snapshot", default=str(OUT / "cluster-150k.json"),
                    help="150,000 pods as read from a live cluster (gen_mixed_workload.py --from-cluster)")
    ap.add_argument("--limit", type=int, default=8_000_000_000, help="address-space cap per run (bytes)")
    ap.add_argument("--only", action="append", help="run only benchmarks whose label contains this")
    ap.add_argument("--extra", default="", help="extra options for every kschedx run (e.g. '--jobs 1')")
    ap.add_argument("--discard", action="store_true",
                    help="write each output to /dev/null (not checked), as the real scheduler writes none")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each benchmark N times, interleaved, then print the least and the spread")
    ap.add_argument("--oracle", action="store_true",
                    help="run the real kube-scheduler of the same version in each round (oracle --time)")
    ap.add_argument("--check-json", metavar="FILE", help=argparse.SUPPRESS)
    ap.add_argument("--make-pod-file", metavar="SNAPSHOT", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.make_pod_file:
        _make_pod_file(args.make_pod_file)
        return 0
    if args.check_json:
        return 0 if json_is_valid(Path(args.check_json)) else 1
    OUT.mkdir(exist_ok=True)
    compile_package()
    extra = shlex.split(args.extra)
    snap, big = str(Path(args.snapshot).resolve()), str(Path(args.big_snapshot).resolve())
    runs = [
        ("simulate --detail placements -o json (5k/50k/200)",
         ["simulate", "--snapshot", snap, "--detail", "placements", "-o", "json", "--tie-break", "name"],
         "simulate-placements.json", True),
        ("simulate --detail full -o json (5k/50k/200)",
         ["simulate", "--snapshot", snap, "-o", "json", "--tie-break", "name"],
         "simulate-full.json", True),
        ("explain -o json, 200 pending (5k/50k/200)",
         ["explain", "--snapshot", snap, "-o", "json", "--tie-break", "name"], "explain-all.json", True),
        ("explain -o json --nodes failing, 200 pending (5k/50k/200)",
         ["explain", "--snapshot", snap, "-o", "json", "--tie-break", "name", "--nodes", "failing"],
         "explain-failing.json", True),
        ("explain human, 200 pending (5k/50k/200)",
         ["explain", "--snapshot", snap, "--tie-break", "name"], "explain-all.txt", False),
    ]
    if Path(big).exists():
        runs += [
            ("explain pod.json on 150k pods, start to finish",
             ["explain", one_pod_file(big), "--snapshot", big, "-o", "json", "--tie-break", "name"],
             "explain-one-150k.json", True),
            ("explain pod.json on 150k pods, human output, start to finish",
             ["explain", one_pod_file(big), "--snapshot", big, "--tie-break", "name"],
             "explain-one-150k.txt", False),
        ]
    live = str(Path(args.cluster_snapshot).resolve())
    if Path(live).exists():
        runs += [
            ("explain pod.json on 150k pods read from a cluster",
             ["explain", one_pod_file(big if Path(big).exists() else live), "--snapshot", live, "-o", "json",
              "--tie-break", "name"], "explain-one-cluster-150k.json", True),
        ]
    results: dict[str, list[dict]] = {}
    oracle_binary = None
    if args.oracle:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from oracle_timing import build, kschedx_version

        version = kschedx_version(extra)
        oracle_binary = build(version)
        print(f"the real kube-scheduler: oracle/build {version}: {oracle_binary}", flush=True)
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)
    for _ in range(args.repeat):
        modes = set()
        for label, cmd, out_name, check in runs:
            if args.only and not any(o in label for o in args.only):
                continue
            if cmd[0] == "explain":
                cmd = cmd + extra
            results.setdefault(label, []).append(run(label, cmd, args.limit, out_name, check, args.discard))
            if oracle_binary is not None and cmd[cmd.index("--snapshot") + 1] == snap:
                modes.add(cmd[0])
        for mode in sorted(modes):
            from oracle_timing import run as run_oracle, summary

            fig = run_oracle(oracle_binary, mode, snap)
            label = f"real kube-scheduler, oracle --time --mode {mode} (5k/50k/200)"
            print(f"{label:<58} {summary(fig)}", flush=True)
            results.setdefault(label, []).append({"wall": fig["wall"], "cpu": fig["cpu"], "rss_mib": fig["rss"],
                                                  "line": fig["line"]})
    print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}", flush=True)
    if oracle_binary is not None:
        for label, figs in results.items():
            if label.startswith("real kube-scheduler"):
                continue
            mode = label.split()[0]
            theirs = results.get(f"real kube-scheduler, oracle --time --mode {mode} (5k/50k/200)")
            if not theirs:
                continue
            w, c = min(f["wall"] for f in figs), min(f["cpu"] for f in figs)
            ow, oc = min(f["wall"] for f in theirs), min(f["cpu"] for f in theirs)
            print(f"{label} against the real scheduler, least of each: wall {w:.2f} / {ow:.2f} s = {w / ow:.2f}x, "
                  f"CPU {c:.2f} / {oc:.2f} s = {c / oc:.2f}x", flush=True)
    if args.repeat > 1:
        for label, figs in results.items():
            walls, cpus, rss = (sorted(f[k] for f in figs) for k in ("wall", "cpu", "rss_mib"))
            print(f"{label}, least (+spread) of {len(figs)}: {walls[0]:.2f} s (+{walls[-1] - walls[0]:.2f}) wall, "
                  f"{cpus[0]:.2f} s (+{cpus[-1] - cpus[0]:.2f}) CPU, {rss[0]:.0f} MiB (+{rss[-1] - rss[0]:.0f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
