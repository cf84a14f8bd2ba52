"""The oracle's commands, from the repository's root:

    python -m tests.oracle build [MINOR...]        build (or find built) each oracle; all by default
    python -m tests.oracle regenerate [--check]    tests/golden/expected/ from the v1.35 oracle
    python -m tests.oracle placements [MINOR...] [--write]
                                                   the oracle's placements against golden-config
                                                   (v1.35) and golden-versions (v1.36, v1.37);
                                                   --write keeps them there
    python -m tests.oracle differences [--check]   golden-versions/differences: each case's explain
                                                   document at every version
    python -m tests.oracle gates [MINOR...]        kschedx's gate tables against kube-scheduler's
                                                   own (--dump-gates): the history rows to change
    python -m tests.oracle compare MINOR [--mode simulate] [CASE...]
                                                   kschedx against the oracle on the golden corpus's
                                                   clusters at any version, field by field
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import (GOLDEN, REPO, build, difference_runs, gate_dump, gate_table_differences, golden_text,
               keep_reason_order, run, versions)

# The release the golden corpus was produced by.
CORPUS_VERSION = "1.35"
CONFIGS = REPO / "tests" / "golden-config"
# Where each minor's placements of the golden-config clusters are kept.
VERSIONS_DIR = REPO / "tests" / "golden-versions"
PLACEMENTS = {
    "1.35": CONFIGS / "expected",
    "1.36": VERSIONS_DIR / "expected" / "v1.36",
    "1.37": VERSIONS_DIR / "expected" / "v1.37",
}


def cmd_build(args) -> int:
    for version in args.versions or versions():
        start = time.monotonic()
        path = build(version)
        print(f"{version}: {path} ({time.monotonic() - start:.1f} s, {path.stat().st_size / 1e6:.1f} MB)")
    return 0


def cmd_regenerate(args) -> int:
    """Write (with --check: compare) every expected file of the golden corpus."""
    build(CORPUS_VERSION)
    jobs = [(mode, case) for mode in ("explain", "simulate") for case in sorted((GOLDEN / "cases").glob("*.yaml"))]

    def one(job):
        mode, case = job
        target = GOLDEN / "expected" / mode / f"{case.stem}.json"
        doc = run(CORPUS_VERSION, case, mode)
        if target.exists():
            doc = keep_reason_order(doc, json.loads(target.read_text()))
        text = golden_text(doc)
        old = target.read_text() if target.exists() else None
        if text == old:
            return None
        if not args.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        return target.relative_to(REPO).as_posix()

    with ThreadPoolExecutor(args.jobs) as pool:
        changed = [c for c in pool.map(one, jobs) if c]
    verb = "differ" if args.check else "written"
    print(f"{len(jobs)} expected files, {len(changed)} {verb}" + "".join(f"\n  {c}" for c in changed))
    return 1 if args.check and changed else 0


def placements_text(doc: dict) -> str:
    """A run's placements as golden-config and golden-versions keep them:
    each pod's status and node, and its message when it was not placed."""
    pods = []
    for p in doc["pods"]:
        kept = {"pod": p["pod"], "status": p["status"], "selectedNode": p.get("selectedNode")}
        if p["status"] != "Scheduled":
            kept["message"] = p.get("message")
        pods.append(kept)
    return json.dumps({"pods": pods}, indent=1, sort_keys=True)


def placement_runs(version: str):
    """(configuration name, config file or None, case file, expected file) of every run."""
    expected = PLACEMENTS.get(version)
    configs = [("default", None)] + [(p.stem, p) for p in sorted((CONFIGS / "configs").glob("*.yaml"))]
    for name, config in configs:
        for case in sorted((CONFIGS / "cases").glob("*.json")):
            target = expected / name / f"{case.stem}.json" if expected is not None else None
            yield name, config, case, target


def compare_placements(expected: dict, actual: dict) -> list[str]:
    """Pod by pod: status and selectedNode."""
    out = []
    exp = {p["pod"]: p for p in expected["pods"]}
    act = {p["pod"]: p for p in actual["pods"]}
    if list(exp) != list(act):
        return [f"pods differ: {sorted(set(exp) ^ set(act))[:10]}"]
    for name, e in exp.items():
        a = act[name]
        if (e["status"], e.get("selectedNode")) != (a["status"], a.get("selectedNode")):
            out.append(f"{name}: expected {e['status']} {e.get('selectedNode')}, "
                       f"got {a['status']} {a.get('selectedNode')}")
    return out


def cmd_placements(args) -> int:
    failed = 0
    for version in args.versions or versions():
        build(version)
        runs = list(placement_runs(version))

        def one(r):
            name, config, case, target = r
            doc = run(version, case, "simulate", config=config)
            if args.write and target is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(placements_text(doc))
            if target is None or not target.exists():
                return name, case.stem, len(doc["pods"]), None
            return name, case.stem, len(doc["pods"]), compare_placements(json.loads(target.read_text()), doc)

        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(one, runs))
        by_config: dict[str, list[int]] = {}
        for name, case, pods, diffs in results:
            counts = by_config.setdefault(name, [0, 0])
            counts[1] += pods
            counts[0] += pods - len(diffs or ())
            for d in diffs or ():
                print(f"  {version} {name} {case}: {d}")
            if diffs:
                failed += 1
        if all(d is None for *_, d in results):
            print(f"{version}: no expected placements; ran {sum(p for _, _, p, _ in results)} pods")
            continue
        for name, (equal, total) in by_config.items():
            print(f"{version} {name}: {equal}/{total} placed as expected")
    return 1 if failed else 0


def cmd_differences(args) -> int:
    """Write (with --check: compare) every run's expected document at every version."""
    jobs = [(r, v) for r in difference_runs() for v in r["versions"]]
    for v in sorted({v for _, v in jobs}):
        build(v)

    def one(job):
        r, v = job
        target = r["expected"][v]
        doc = run(v, r["case"], "explain", feature_gates=r["gates"].get(v))
        if target.exists():
            doc = keep_reason_order(doc, json.loads(target.read_text()))
        text = golden_text(doc)
        if target.exists() and target.read_text() == text:
            return None
        if not args.check:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        return target.relative_to(REPO).as_posix()

    with ThreadPoolExecutor(args.jobs) as pool:
        changed = [c for c in pool.map(one, jobs) if c]
    verb = "differ" if args.check else "written"
    print(f"{len(jobs)} expected files, {len(changed)} {verb}" + "".join(f"\n  {c}" for c in changed))
    return 1 if args.check and changed else 0


def cmd_gates(args) -> int:
    """Each version's kschedx gate table against kube-scheduler's own."""
    failed = 0
    for version in args.versions or versions():
        diffs = gate_table_differences(version, gate_dump(version))
        print(f"{version}: " + ("the table is kube-scheduler's" if not diffs else f"{len(diffs)} differences"))
        for d in diffs:
            print(f"  {d}")
        failed += bool(diffs)
    return 1 if failed else 0


def cmd_compare(args) -> int:
    """kschedx's whole documents against the oracle's on the golden cases."""
    sys.path.insert(0, str(REPO / "tests"))
    from golden_compare import compare

    from kschedx.commands.explain import explain
    from kschedx.commands.load import load_workload
    from kschedx.commands.simulate import simulate
    from kschedx.features import Features

    build(args.version)
    cases = [GOLDEN / "cases" / f"{c}.yaml" for c in args.cases] or sorted((GOLDEN / "cases").glob("*.yaml"))
    features = Features(args.version)

    def one(case):
        return case, run(args.version, case, args.mode)

    differ = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for case, expected in pool.map(one, cases):
            workload = load_workload([str(case)])
            command = simulate if args.mode == "simulate" else explain
            diffs = compare(expected, command(workload, tie_break="name", features=features),
                            simulate=args.mode == "simulate")
            if diffs:
                differ += 1
                print(f"{case.stem}: {len(diffs)} differences")
                for d in diffs[:10]:
                    print(f"  {d}")
    print(f"{args.version} {args.mode}: {len(cases) - differ}/{len(cases)} cases agree")
    return 1 if differ else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.oracle", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("build", help="build the oracles")
    p.add_argument("versions", nargs="*")
    p.set_defaults(func=cmd_build)
    p = sub.add_parser("regenerate", help="the golden corpus's expected files from the v1.35 oracle")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    p.add_argument("--jobs", type=int, default=2)
    p.set_defaults(func=cmd_regenerate)
    p = sub.add_parser("placements", help="placements of the golden-config clusters against the kept ones")
    p.add_argument("versions", nargs="*")
    p.add_argument("--write", action="store_true",
                   help="write each run's placements where the version's are kept (golden-config/expected for 1.35, "
                        "golden-versions/expected/vMINOR otherwise)")
    p.add_argument("--jobs", type=int, default=2)
    p.set_defaults(func=cmd_placements)
    p = sub.add_parser("differences", help="golden-versions/differences: each run's document at every version")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    p.add_argument("--jobs", type=int, default=2)
    p.set_defaults(func=cmd_differences)
    p = sub.add_parser("gates", help="kschedx's gate tables against kube-scheduler's (--dump-gates)")
    p.add_argument("versions", nargs="*")
    p.set_defaults(func=cmd_gates)
    p = sub.add_parser("compare", help="kschedx against the oracle on the golden cases, field by field")
    p.add_argument("version")
    p.add_argument("cases", nargs="*", help="case names (default: every golden case)")
    p.add_argument("--mode", choices=("explain", "simulate"), default="explain")
    p.add_argument("--jobs", type=int, default=2)
    p.set_defaults(func=cmd_compare)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
