#!/usr/bin/env python3
"""How many Unschedulable pods of the golden corpus get a verified fix.

    python benchmarks/fix_coverage.py [-v] [CASE-PREFIX...]

Runs `explain --snapshot CASE --fix --tie-break name` on every case of
tests/golden/cases (what tests/test_fixes_corpus.py walks) and prints
"N of M Unschedulable pods get a verified fix", the pods left without one
(with the plugins that keep them off and what `fixSearch.uncovered` says),
the first fix's kind per pod, and the CPU time spent. Nothing is asserted
here: tests/test_fixes_corpus.py::test_coverage holds the bound.
"""

from __future__ import annotations

import argparse
import collections
import copy
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kschedx.commands.explain import explain  # noqa: E402
from kschedx.commands.load import load_workload  # noqa: E402
from kschedx.sources.fixtures import Origin, read_objects  # noqa: E402

CASES = ROOT / "tests" / "golden" / "cases"


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def failing_plugins(p: dict) -> list[str]:
    seen: dict[str, None] = {}
    for st in p.get("preFilter") or ():
        if st.get("code") not in ("Success", "Skip"):
            seen[st["plugin"]] = None
    for n in p.get("nodes") or ():
        for f in n.get("filters") or ():
            if f.get("code") not in ("Success", "Skip"):
                seen[f["plugin"]] = None
    return list(seen)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prefixes", nargs="*", help="only cases whose name starts with one of these")
    ap.add_argument("-v", "--verbose", action="store_true", help="every pod's first fix")
    args = ap.parse_args(argv)
    names = sorted(p.stem for p in CASES.glob("*.yaml"))
    if args.prefixes:
        names = [n for n in names if any(n.startswith(x) for x in args.prefixes)]
    origin = Origin("golden")
    total = fixed = 0
    first_kinds: collections.Counter = collections.Counter()
    uncovered = []
    cycles = []
    t0 = cpu_seconds()
    for name in names:
        objects = [o for o, _ in read_objects([str(CASES / f"{name}.yaml")])]
        workload = load_workload((), cluster_objects=[(copy.deepcopy(o), origin) for o in objects], keep_raw=True)
        doc = explain(workload, tie_break="name", fix=True)
        for p in doc["pods"]:
            if p["status"] != "Unschedulable":
                continue
            total += 1
            search = p.get("fixSearch") or {}
            cycles.append(search.get("cycles", 0))
            if p.get("fixes"):
                fixed += 1
                first = p["fixes"][0]
                first_kinds[first["kind"]] += 1
                if args.verbose:
                    print(f"  {name} {p['pod']}: [{first['kind']}] {first['description']}")
            else:
                why = "; ".join(f"{u['plugin']}: {u['reason']}" for u in search.get("uncovered") or ())
                uncovered.append(f"{name} {p['pod']}: {', '.join(failing_plugins(p))}"
                                 f" ({search.get('candidates', 0)} candidates){': ' + why if why else ''}")
    spent = cpu_seconds() - t0
    print(f"{fixed} of {total} Unschedulable pods get a verified fix")
    print("first fix by kind: " + ", ".join(f"{k} {n}" for k, n in first_kinds.most_common()))
    if cycles:
        print(f"cycles per pod: max {max(cycles)}, mean {sum(cycles) / len(cycles):.1f}")
    print(f"without a fix ({len(uncovered)}):")
    for line in uncovered:
        print("  " + line)
    print(f"{len(names)} cases, {spent:.1f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
