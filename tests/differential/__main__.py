"""The differential tests by hand, from the repository's root:

    python -m tests.differential run [--versions 1.35 1.36] [--seed S] [--cases N] [--shrink K]
        N cases from seed S per version: a line per case that differs, then
        the count per kind of difference; the first K differences of each
        kind shrunk and written (KSCHEDX_DIFF_DIR, default $TMPDIR/kschedx-differential)
    python -m tests.differential show SEED [--version V]
        the case of a seed: its fixture (and config) written, both programs run
    python -m tests.differential shrink SEED --version V
        the smallest case that keeps the seed's difference, written with both
        documents and the commands that show it
    python -m tests.differential add DIR NAME
        a shrunk case (DIR/fixture.yaml, DIR/config.yaml) kept as the
        regression case cases/NAME.yaml, its expected documents written
    python -m tests.differential regenerate [--check]
        every regression case's expected documents from the oracles
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

import json
import shutil
from pathlib import Path

from tests.oracle import golden_text, keep_reason_order

from . import (CASES, EXACT, MODES, REPO, VERSIONS, check, close_servers, expected_path, generate, oracle,
               output_dir, regression_cases, regression_gates, regression_paths, write)
from .shrink import shrink


def cmd_run(args) -> int:
    failed = 0
    for version in args.versions:
        start = time.monotonic()
        kinds: collections.Counter = collections.Counter()
        examples: dict[str, list[int]] = collections.defaultdict(list)
        stats = collections.Counter()
        for seed in range(args.seed, args.seed + args.cases):
            outcome = check(generate(seed), version)
            stats["cases"] += 1
            if outcome.both_refused:
                stats["refused by both"] += 1
            if outcome.unstable:
                stats["oracle unstable"] += 1
                print(f"{version} seed {seed}: the oracle gave two answers ({outcome.mode}); not compared")
                continue
            if not outcome.differs:
                continue
            stats["differ"] += 1
            cats = sorted(outcome.categories())
            for c in cats:
                kinds[c] += 1
                examples[c].append(seed)
            first = cats[0]
            print(f"{version} seed {seed} ({outcome.mode}): {outcome.diffs[0][:300]}")
            if args.shrink and len(examples[first]) <= args.shrink:
                small = shrink(outcome)
                directory = output_dir() / f"v{version}-seed-{seed}"
                print("\n".join("    " + line for line in write(small, directory).splitlines()))
        took = time.monotonic() - start
        print(f"== {version}: {stats['cases']} cases in {took:.0f} s, {stats['differ']} differ "
              f"({'exact' if EXACT[version] else 'for information'}), "
              f"{stats['oracle unstable']} not compared (oracle unstable), {stats['refused by both']} refused by both")
        for c, n in kinds.most_common():
            print(f"   {n:5d}  {c}  (seeds {', '.join(map(str, examples.get(c, [])[:8]))})")
        if EXACT[version] and stats["differ"]:
            failed += 1
    close_servers()
    return 1 if failed else 0


def cmd_show(args) -> int:
    case = generate(args.seed)
    directory = output_dir() / f"seed-{args.seed}"
    outcome = check(case, args.version, work=directory)
    print(f"{directory}/fixture.yaml" + (" (and config.yaml)" if case.config else ""))
    if outcome.differs:
        print(write(outcome, directory))
    else:
        print(f"no difference at {args.version}" + (" (the oracle is unstable)" if outcome.unstable else ""))
    close_servers()
    return 0


def cmd_shrink(args) -> int:
    outcome = check(generate(args.seed), args.version)
    if not outcome.differs:
        print(f"seed {args.seed}: no difference at {args.version}")
        return 0
    small = shrink(outcome, log=print if args.verbose else None)
    print(write(small, output_dir() / f"v{args.version}-seed-{args.seed}"))
    close_servers()
    return 1


def regenerate(names, check_only: bool = False) -> list[str]:
    """The expected documents of regression cases `names`, from the oracle of
    every version; returns the files that changed (or would)."""
    changed = []
    for name in names:
        fixture, config = regression_paths(name)
        for version in VERSIONS:
            for mode in MODES:
                target = expected_path(name, version, mode)
                doc = oracle(version, regression_gates(name, version)).run(fixture, mode, config)
                if target.exists():
                    doc = keep_reason_order(doc, json.loads(target.read_text()))
                text = golden_text(doc)
                if target.exists() and target.read_text() == text:
                    continue
                changed.append(target.relative_to(REPO).as_posix())
                if not check_only:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(text)
    return changed


def cmd_add(args) -> int:
    src = Path(args.directory)
    CASES.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src / "fixture.yaml", CASES / f"{args.name}.yaml")
    if (src / "config.yaml").exists():
        shutil.copyfile(src / "config.yaml", CASES / f"{args.name}.config.yaml")
    for path in regenerate([args.name]):
        print(f"  {path}")
    close_servers()
    print(f"cases/{args.name}.yaml: say in its first lines what kube-scheduler does there")
    return 0


def cmd_regenerate(args) -> int:
    changed = regenerate(regression_cases(), args.check)
    close_servers()
    verb = "differ" if args.check else "written"
    print(f"{len(regression_cases())} regression cases, {len(changed)} expected files {verb}"
          + "".join(f"\n  {c}" for c in changed))
    return 1 if args.check and changed else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run cases, report the differences")
    p.add_argument("--versions", nargs="+", default=list(VERSIONS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cases", type=int, default=100)
    p.add_argument("--shrink", type=int, default=1, metavar="K",
                   help="shrink and write the first K cases of each kind of difference (0: none)")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("show", help="write a seed's case and compare it")
    p.add_argument("seed", type=int)
    p.add_argument("--version", default=VERSIONS[0])
    p.set_defaults(func=cmd_show)
    p = sub.add_parser("shrink", help="shrink a seed's difference")
    p.add_argument("seed", type=int)
    p.add_argument("--version", default=VERSIONS[0])
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=cmd_shrink)
    p = sub.add_parser("add", help="keep a shrunk case as a regression case")
    p.add_argument("directory")
    p.add_argument("name")
    p.set_defaults(func=cmd_add)
    p = sub.add_parser("regenerate", help="the regression cases' expected documents")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    p.set_defaults(func=cmd_regenerate)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
