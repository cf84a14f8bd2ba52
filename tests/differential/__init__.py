"""The differential tests: kschedx against the real kube-scheduler (the
oracle, oracle/) on random clusters, every supported version, field by field.

    generate(seed)                         a random case (generate.py)
    check(case, version) -> Outcome        both sides, explain and simulate, compared
    shrink(outcome) -> Outcome             the smallest case that keeps the difference (shrink.py)
    write(outcome, directory)              the case, both documents, the difference, the commands

The differences found and fixed are kept as regression cases: cases/NAME.yaml
(and NAME.config.yaml), the oracle's documents for every version in
expected/vMINOR/MODE/NAME.json (`python -m tests.differential regenerate`).

kschedx runs in this process through its command line (`explain` and
`simulate` with `--kube-version V --tie-break name -o json`, the case's
`--config`); the oracle runs as one long-lived process per version
(`oracle --serve`). `tests/test_differential.py` runs them in the test
suite; `python -m tests.differential` runs, shows and shrinks cases by hand.
"""

from __future__ import annotations

import os
import re
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.oracle import OracleError, Server, without_reason_order

from .generate import Case, generate  # noqa: F401  (the package's API)

VERSIONS = ("1.35", "1.36", "1.37")

# Whether kschedx is held to the oracle of a version exactly. A version
# marked False is run for information: its differences are reported, never
# failures (kschedx answers it with its newest supported version). Every
# supported version is held exactly; a new release's oracle may come first,
# False until kschedx reproduces it (docs/development.md, "A new Kubernetes
# version").
EXACT = {"1.35": True, "1.36": True, "1.37": True}

MODES = ("explain", "simulate")
REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
EXPECTED = HERE / "expected"


def kschedx_version(version: str) -> str:
    """The --kube-version kschedx is run with for the oracle of `version`:
    the same, or its newest supported one while it does not reproduce it."""
    from kschedx.features.versions import NEWEST, SUPPORTED_VERSIONS

    return version if version in SUPPORTED_VERSIONS else NEWEST


# -- one side each -----------------------------------------------------------------

# One oracle process per version and gate set; a gate set is the process's
# own. Cases of the "gates" group draw a few dozen sets per version (about
# 60 MB each): only the most recently used few are kept running.
_servers: dict = {}
MAX_SERVERS = 6


def oracle(version: str, feature_gates: dict | None = None) -> Server:
    key = (version, tuple(sorted((feature_gates or {}).items())))
    server = _servers.pop(key, None)
    if server is None:
        server = Server(version, feature_gates or None)
    _servers[key] = server  # the newest last
    while len(_servers) > MAX_SERVERS:
        _servers.pop(next(iter(_servers))).close()
    return server


def gates_for(case: Case, version: str) -> dict[str, bool]:
    """The case's feature gates that `version` has and lets be set (the
    table of kschedx's version for it)."""
    if not case.feature_gates:
        return {}
    from kschedx.features.versions import gate_table

    table, needs = gate_table(kschedx_version(version))
    gates = {g: on for g, on in case.feature_gates.items() if g in table and not table[g][2]}
    return with_dependents_off(gates, table, needs)


def with_dependents_off(gates: dict[str, bool], table: dict, needs: dict) -> dict[str, bool]:
    """`gates` and, for each gate turned off, the gates on by default that
    need it (featuregate Dependencies, at the version), turned off as a
    user must: left on, both programs refuse the flags and the case
    compares nothing (v1.36's InPlacePodLevelResourcesVerticalScaling
    needs PodLevelResources; every version's
    MatchLabelKeysInPodTopologySpreadSelectorMerge needs
    MatchLabelKeysInPodTopologySpread)."""
    out = dict(gates)
    changed = True
    while changed:
        changed = False
        off = {g for g, on in out.items() if on is False}
        for gate, required in needs.items():
            stage, default, locked, _ = table[gate]
            if gate not in out and default and not locked and off.intersection(required):
                out[gate] = False
                changed = True
    return out


def gates_arg(gates: dict[str, bool]) -> str:
    return ",".join(f"{g}={'true' if on else 'false'}" for g, on in sorted(gates.items()))


def close_servers() -> None:
    for server in _servers.values():
        server.close()
    _servers.clear()


@dataclass
class Side:
    """One program's answer: its document, or why there is none."""
    doc: dict | None = None
    refused: str | None = None   # bad input: exit 3 / the oracle's error
    crash: str | None = None     # a traceback, an oracle that died


def kschedx_args(version: str, fixture, mode: str, config=None, gates=None) -> list[str]:
    # A case is drawn once for every version, and the oracle's decoder drops
    # what its release does not know: kschedx takes the input as it comes
    # (strict input has tests of its own, tests/test_strict_input.py).
    args = [mode, "--snapshot", str(fixture), "--kube-version", kschedx_version(version),
            "--tie-break", "name", "-o", "json", "--validate=ignore"]
    if config is not None:
        args += ["--config", str(config)]
    if gates:
        args += ["--feature-gates", gates_arg(gates)]
    return args


_runs = [0]


def run_kschedx(version: str, fixture, mode: str, config=None, gates=None) -> Side:
    import gc
    import json

    from click.testing import CliRunner

    from kschedx.cli.main import main

    result = CliRunner().invoke(main, kschedx_args(version, fixture, mode, config, gates) + ["--debug"],
                                catch_exceptions=True)
    _runs[0] += 1
    if _runs[0] % 25 == 0:
        # A run freezes what exists when it has read its input (kschedx's
        # gc_policy: a one-shot process keeps it to the end), the earlier
        # runs' reference cycles included: thousands of runs in one process
        # would keep them all. Unfrozen and collected now and then.
        gc.unfreeze()
        gc.collect()
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return Side(crash="".join(traceback.format_exception(*result.exc_info)))
    if result.exit_code not in (0, 1):
        return Side(refused=f"exit {result.exit_code}: {result.stderr.strip()}")
    try:
        return Side(doc=json.loads(result.stdout))
    except ValueError as exc:
        return Side(crash=f"output is not JSON ({exc}): {result.stdout[:2000]}")


def run_oracle(version: str, fixture, mode: str, config=None, gates=None) -> Side:
    try:
        return Side(doc=oracle(version, gates).run(fixture, mode, config))
    except OracleError as exc:
        text = str(exc)
        if "refused" in text and "panic:" not in text:
            return Side(refused=text)
        return Side(crash=text)


# -- a case on disk ----------------------------------------------------------------


def write_case(case: Case, directory: Path) -> tuple[Path, Path | None]:
    """fixture.yaml (and config.yaml) in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    fixture = directory / "fixture.yaml"
    fixture.write_text(case.header() + yaml.safe_dump_all(case.objects, sort_keys=False, explicit_start=True))
    config = None
    if case.config is not None:
        config = directory / "config.yaml"
        config.write_text(yaml.safe_dump(case.config, sort_keys=False))
    elif (directory / "config.yaml").exists():
        (directory / "config.yaml").unlink()
    return fixture, config


# -- comparing -----------------------------------------------------------------------


@dataclass
class Outcome:
    case: Case
    version: str
    mode: str | None = None          # the mode of the first difference
    diffs: list[str] = field(default_factory=list)
    oracle: Side | None = None
    kschedx: Side | None = None
    unstable: bool = False           # the oracle does not give one answer
    both_refused: bool = False       # an input neither takes: nothing to compare

    @property
    def differs(self) -> bool:
        return bool(self.diffs) and not self.unstable

    def categories(self) -> set[str]:
        return {category(d) for d in self.diffs}


_DIFF = re.compile(r"^pod \S+ (?:node \S+ )?(?P<field>.*?):? (?:expected|missing)")


def category(diff: str) -> str:
    """What a difference is about, without the pod, the node and the values:
    "filter InterPodAffinity", "message", "score NodeResourcesFit raw"."""
    if diff.startswith("pods differ"):
        return "pods"
    m = _DIFF.match(diff)
    if m:
        return m.group("field")
    return diff.split(":", 1)[0]


def compare_sides(oracle_side: Side, kschedx_side: Side, mode: str) -> list[str]:
    from .compare import differences

    if oracle_side.crash:
        return [f"oracle failed: {oracle_side.crash[:3000]}"]
    if kschedx_side.crash:
        return [f"kschedx crashed: {kschedx_side.crash[-3000:]}"]
    if oracle_side.refused and kschedx_side.refused:
        return []
    if oracle_side.refused:
        return [f"input refused by kube-scheduler, taken by kschedx: {oracle_side.refused[:1000]}"]
    if kschedx_side.refused:
        return [f"input refused by kschedx, taken by kube-scheduler: {kschedx_side.refused[:1000]}"]
    return differences(oracle_side.doc, kschedx_side.doc, simulate=mode == "simulate")


def check(case: Case, version: str, modes=MODES, work: Path | None = None) -> Outcome:
    """Both programs over `case` at `version`, each mode; the first mode
    that differs is the outcome's."""
    with tempfile.TemporaryDirectory(prefix="kschedx-diff-") as tmp:
        fixture, config = write_case(case, Path(work or tmp))
        outcome = Outcome(case, version)
        gates = gates_for(case, version)
        for mode in modes:
            o = run_oracle(version, fixture, mode, config, gates)
            k = run_kschedx(version, fixture, mode, config, gates)
            diffs = compare_sides(o, k, mode)
            if o.refused and k.refused:
                outcome.both_refused = True
            if diffs:
                outcome.mode, outcome.diffs, outcome.oracle, outcome.kschedx = mode, diffs, o, k
                if o.doc is not None:
                    again = run_oracle(version, fixture, mode, config, gates)
                    outcome.unstable = _normal(again.doc) != _normal(o.doc)
                return outcome
    return outcome


def _normal(doc):
    return without_reason_order(doc) if doc is not None else None


# -- reporting -----------------------------------------------------------------------


def output_dir() -> Path:
    return Path(os.environ.get("KSCHEDX_DIFF_DIR") or Path(tempfile.gettempdir()) / "kschedx-differential")


def write(outcome: Outcome, directory: Path) -> str:
    """The case, both documents and the difference in `directory`; returns
    the report to print: the difference and the commands that show it."""
    import json

    fixture, config = write_case(outcome.case, directory)
    for name, side in (("oracle", outcome.oracle), ("kschedx", outcome.kschedx)):
        if side is not None and side.doc is not None:
            (directory / f"{name}.json").write_text(json.dumps(side.doc, indent=1, sort_keys=True) + "\n")
    text = "\n".join(outcome.diffs)
    (directory / "diff.txt").write_text(text + "\n")
    rel = _relative(fixture)
    conf = f" --config {_relative(config)}" if config else ""
    gates = gates_for(outcome.case, outcome.version)
    conf += f" --feature-gates {gates_arg(gates)}" if gates else ""
    kx = " ".join(kschedx_args(outcome.version, rel, outcome.mode or "explain"))
    lines = [
        f"kube-scheduler v{outcome.version} and kschedx differ ({outcome.mode}) on the case in {directory}:",
        *(f"  {d}" for d in outcome.diffs[:30]),
        *([f"  ... {len(outcome.diffs) - 30} more"] if len(outcome.diffs) > 30 else []),
        "the two commands that show it:",
        f"  kschedx {kx}{conf}",
        f"  \"$(oracle/build {outcome.version})\" --mode {outcome.mode or 'explain'} {rel}{conf}",
    ]
    return "\n".join(lines)


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# -- regression cases ----------------------------------------------------------------


def regression_cases() -> list[str]:
    return sorted(p.stem for p in CASES.glob("*.yaml") if not p.name.endswith(".config.yaml"))


def regression_paths(name: str) -> tuple[Path, Path | None]:
    config = CASES / f"{name}.config.yaml"
    return CASES / f"{name}.yaml", config if config.exists() else None


def regression_gates(name: str, version: str) -> dict[str, bool]:
    """The feature gates a regression case runs with: its header's
    `# feature-gates=A=true,B=false` line (as a shrunk case writes it), those
    `version` lets be set."""
    gates: dict[str, bool] = {}
    for line in (CASES / f"{name}.yaml").read_text().splitlines():
        if not line.startswith("#"):
            break
        if line.startswith("# feature-gates="):
            for pair in line[len("# feature-gates="):].split(","):
                gate, _, value = pair.partition("=")
                gates[gate.strip()] = value.strip() == "true"
    return gates_for(Case(0, [], [], feature_gates=gates), version)


def expected_path(name: str, version: str, mode: str) -> Path:
    return EXPECTED / f"v{version}" / mode / f"{name}.json"
