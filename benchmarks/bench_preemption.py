"""Preemption on a full cluster: what DefaultPreemption's dry runs cost.

Generates a deterministic cluster where no node has room: N nodes in 3
zones (8 cores, 32 GiB, 110 pods), each full of lower-priority pods (2 or 4
cores, priorities 0 and 100, spread start times, some covered by a
PodDisruptionBudget), and pending pods of priority 1000 that fit only by
preempting. Every node is a potential node, so with the default args
(minCandidateNodesPercentage 10, minCandidateNodesAbsolute 100) kube-
scheduler looks for N/10 candidates among N nodes. Then runs each command
as a whole process under /usr/bin/time and prints wall time, CPU time and
peak RSS:

- `explain -o json --nodes failing` of every pending pod;
- `simulate --detail placements -o json` (the pods placed one after
  another, each preemption applied).

    python benchmarks/bench_preemption.py                  # 5,000 nodes, 20 pending pods
    python benchmarks/bench_preemption.py --nodes 500 --pending 10
    python benchmarks/bench_preemption.py --config args.yaml   # e.g. other minCandidateNodes* args
    python benchmarks/bench_preemption.py --snapshot benchmarks/out/preempt-5k.json --repeat 3

--snapshot runs the same two commands on another cluster (such as
gen_preemption_workload.py's, the cluster of issue 31); --repeat N runs
each N times, interleaved, and prints each run, then the least and the
spread (least-most) of each figure, with the load average before and after.

--oracle runs the real kube-scheduler of the same version too, in the same
rounds (oracle_timing.py: `oracle --time`, its own loop with a fake API
client, every node scored): `--mode simulate` beside kschedx's simulate,
`--mode explain` beside kschedx's explain, and checks that both placed as
many pods with as many victims. --before DIR runs a second kschedx checkout
(PYTHONPATH=DIR) in the same rounds, for before/after figures.

    python benchmarks/bench_preemption.py --snapshot benchmarks/out/preempt-5k.json --repeat 3 --oracle
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
sys.path.insert(0, str(ROOT / "benchmarks"))
ZONES = ("zone-a", "zone-b", "zone-c")


def generate(num_nodes: int, num_pending: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    objs: list[dict] = []
    for name, value in (("high", 1000), ("medium", 100)):
        objs.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                     "metadata": {"name": name}, "value": value})
    objs.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                 "metadata": {"name": "db", "namespace": "default"},
                 "spec": {"selector": {"matchLabels": {"app": "db"}}, "maxUnavailable": 0},
                 "status": {"disruptionsAllowed": 0}})
    for i in range(num_nodes):
        name = f"node-{i:05d}"
        objs.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  "topology.kubernetes.io/zone": ZONES[i % 3]}},
            "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
        })
        used = 0
        j = 0
        while used < 8:
            cpu = min(rng.choice((2, 2, 4)), 8 - used)
            app = rng.choice(("web", "web", "batch", "db"))
            prio = 100 if app == "db" or rng.random() < 0.3 else 0
            objs.append(pod_object(f"run-{i:05d}-{j}", app, cpu, prio, node=name,
                                   start=f"2024-01-01T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z"))
            used += cpu
            j += 1
    for k in range(num_pending):
        objs.append(pod_object(f"urgent-{k:04d}", "urgent", rng.choice((2, 3, 4)), 1000))
    return objs


def pod_object(name, app, cpu, priority, node=None, start=None, memory="1Gi") -> dict:
    """A pod of the given requests and priority (gen_preemption_workload.py
    builds its pods with this too); bound and Running when `node` is given."""
    spec = {"containers": [{"name": "c", "image": f"registry.example/{app}:1",
                            "resources": {"requests": {"cpu": str(cpu), "memory": memory}}}],
            "priority": priority}
    if node:
        spec["nodeName"] = node
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default", "labels": {"app": app}}, "spec": spec}
    if start:
        pod["status"] = {"phase": "Running", "startTime": start}
    return pod


def run(label: str, argv: list[str], env: dict | None = None, out: Path | None = None) -> dict:
    with tempfile.NamedTemporaryFile("w+", suffix=".time") as tf:
        with open(out if out is not None else os.devnull, "wb") as sink:
            # Run from out/: the kschedx imported is the installed one, or
            # the one PYTHONPATH names (--before), not the current directory's.
            proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf.name, *argv],
                                  stdout=sink, stderr=subprocess.PIPE, env=env, cwd=OUT)
        if proc.returncode not in (0, 1):
            sys.stderr.write(proc.stderr.decode(errors="replace"))
            raise SystemExit(f"{label}: exit code {proc.returncode}")
        wall, user, system, rss = tf.read().split()[-4:]
    fig = {"wall": float(wall), "cpu": float(user) + float(system), "rss": int(rss) // 1024}
    print(f"{label}: {fig['wall']:.2f} s wall, {fig['cpu']:.2f} s CPU, {fig['rss']} MiB peak RSS", flush=True)
    return fig


def compare(figures: dict, plan: list) -> None:
    """kschedx's least wall and CPU against the real scheduler's, and the
    counts both placed and evicted."""
    oracle = {mode: figures[label] for label, _, _, _, mode in plan if mode}
    mine = {label.split()[0]: (label, figures[label], out) for label, _, env, out, mode in plan
            if mode is None and env is None}
    for command, mode in (("simulate", "simulate"), ("explain", "explain")):
        if command not in mine or mode not in oracle:
            continue
        label, figs, out = mine[command]
        theirs = oracle[mode]
        w, c = min(f["wall"] for f in figs), min(f["cpu"] for f in figs)
        ow, oc = min(f["wall"] for f in theirs), min(f["cpu"] for f in theirs)
        print(f"{label} against the real scheduler ({mode}), least of each: wall {w:.2f} / {ow:.2f} s = "
              f"{w / ow:.2f}x, CPU {c:.2f} / {oc:.2f} s = {c / oc:.2f}x")
        line = theirs[-1]["line"]
        if out is not None:
            s = json.loads(out.read_text())["summary"]
            print(f"    kschedx / real scheduler: placed {s['placed']} / {len(line['placements'])}, victims "
                  f"{s['victims']} / {len(line['victims'])}, preemptions {s['preemptions']} / "
                  f"{len(line['nominations'])}")
        else:
            print(f"    the real scheduler: {len(line['placements'])} scheduled, {len(line['nominations'])} nominated")


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pending", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--config", help="a KubeSchedulerConfiguration for every run")
    ap.add_argument("--snapshot", help="run on this cluster instead of generating one")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each command, interleaved")
    ap.add_argument("--oracle", action="store_true",
                    help="run the real kube-scheduler of the same version in the same rounds (oracle --time)")
    ap.add_argument("--before", metavar="DIR", help="also run the kschedx checkout in DIR (PYTHONPATH) in the same rounds")
    ap.add_argument("--kube-version", help="passed to kschedx (and the oracle's version)")
    args = ap.parse_args(argv)

    OUT.mkdir(parents=True, exist_ok=True)
    if args.snapshot:
        path = Path(args.snapshot).resolve()
        print(f"{path}: every pending pod")
    else:
        path = OUT / f"preempt-{args.nodes}-{args.pending}.json"
        if not path.exists():
            objs = generate(args.nodes, args.pending, args.seed)
            path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
        print(f"{args.nodes} nodes, every one full; {args.pending} pending pods that fit only by preempting")
    kschedx = [sys.executable, "-m", "kschedx"]
    if args.config:
        args.config = str(Path(args.config).resolve())
    extra = ["--config", args.config] if args.config else []
    if args.kube_version:
        extra += ["--kube-version", args.kube_version]
    runs = {
        "explain -o json --nodes failing":
            kschedx + ["explain", "--snapshot", str(path), "-o", "json", "--nodes", "failing",
                       "--tie-break", "name"] + extra,
        "simulate --detail placements -o json":
            kschedx + ["simulate", "--snapshot", str(path), "-o", "json", "--detail", "placements",
                       "--tie-break", "name"] + extra,
    }
    env_before = None
    if args.before:
        env_before = dict(os.environ, PYTHONPATH=str(Path(args.before).resolve()))
    plan = []  # (label, argv, env, output file or None, oracle mode or None)
    for label, argv in runs.items():
        # simulate's document is kept for the comparison with the oracle's
        # counts (explain's, thousands of node records a pod, is not).
        out = OUT / "preempt-simulate.json" if label.startswith("simulate") else None
        plan.append((label, argv, None, out, None))
        if env_before is not None:
            plan.append((f"{label} (before)", argv, env_before, None, None))
    binary = None
    if args.oracle:
        from oracle_timing import build, kschedx_version, summary

        version = args.kube_version or kschedx_version()
        binary = build(version)
        print(f"the real kube-scheduler: oracle/build {version}: {binary}")
        plan.append((f"real kube-scheduler {version}, its own loop (oracle --time --mode simulate)", None, None, None,
                     "simulate"))
        plan.append((f"real kube-scheduler {version}, each pod against one snapshot (oracle --time --mode explain)",
                     None, None, None, "explain"))
    figures: dict[str, list[dict]] = {p[0]: [] for p in plan}
    print(f"load average {load_average()}", flush=True)
    for _ in range(args.repeat):
        for label, argv, env, out, mode in plan:
            if mode is None:
                figures[label].append(run(label, argv, env, out))
                continue
            from oracle_timing import run as run_oracle

            fig = run_oracle(binary, mode, str(path), args.config)
            print(f"{label}: {summary(fig)}", flush=True)
            figures[label].append(fig)
    print(f"load average {load_average()}", flush=True)
    if args.repeat > 1:
        for label, figs in figures.items():
            def span(key, fmt):
                values = sorted(f[key] for f in figs)
                return f"{fmt(values[0])} (+{fmt(values[-1] - values[0])})"
            print(f"{label}, least (+spread) of {args.repeat}: {span('wall', lambda v: f'{v:.2f} s')} wall, "
                  f"{span('cpu', lambda v: f'{v:.2f} s')} CPU, {span('rss', lambda v: f'{v} MiB')} peak RSS")
    if binary is not None:
        compare(figures, plan)
    return 0


if __name__ == "__main__":
    sys.exit(main())
