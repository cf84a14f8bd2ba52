"""The oracle (`oracle/` at the repository's root): the real kube-scheduler
framework, built per Kubernetes minor against that release's
k8s.io/kubernetes module, run over a kschedx fixture. It writes kschedx's
result document (the fields of tests/golden/expected), so tests and
scripts compare kschedx with the real scheduler field by field.

    build(version) -> Path of the binary (built once, then cached)
    run(version, fixture, mode, config=None, feature_gates=None) -> dict
    Server(version, feature_gates=None).run(fixture, mode, config=None) -> dict
        the same document from one long-running oracle (`--serve`): many
        runs without a process each (the differential tests)

Go missing: build() raises OracleUnavailable. Tests call binary_or_skip(),
which skips them then, unless KSCHEDX_REQUIRE_ORACLE=1 (CI sets it: there a
missing oracle is a failure, not a skip).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ORACLE = REPO / "oracle"
GOLDEN = REPO / "tests" / "golden"
REQUIRE_ENV = "KSCHEDX_REQUIRE_ORACLE"


class OracleUnavailable(RuntimeError):
    """The oracle cannot be built here (no Go toolchain)."""


class OracleError(RuntimeError):
    """The oracle failed to build, or refused its input."""


def versions() -> tuple[str, ...]:
    """The Kubernetes minors the oracle builds for (one oracle/mod/k8s-MINOR.mod each)."""
    found = (p.name[len("k8s-"):-len(".mod")] for p in (ORACLE / "mod").glob("k8s-*.mod"))
    return tuple(sorted(found, key=lambda v: tuple(int(x) for x in v.split("."))))


_built: dict[str, Path] = {}


def build(version: str) -> Path:
    """The oracle binary for `version` ("1.35"), built if its sources changed
    since the last build (oracle/build keeps it in the user's cache)."""
    if version in _built:
        return _built[version]
    if shutil.which("go") is None:
        raise OracleUnavailable("Go is not installed: the oracle (the real kube-scheduler) cannot be built")
    proc = subprocess.run([str(ORACLE / "build"), version], capture_output=True, text=True)
    if proc.returncode != 0:
        raise OracleError(f"oracle/build {version} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    path = Path(proc.stdout.strip().splitlines()[-1])
    _built[version] = path
    return path


def _gates_arg(feature_gates) -> str:
    if isinstance(feature_gates, str):
        return feature_gates
    return ",".join(f"{name}={'true' if on else 'false'}" for name, on in feature_gates.items())


def run(version: str, fixture, mode: str = "explain", config=None, feature_gates=None) -> dict:
    """The oracle's result document for `fixture` (a path, or a list of
    paths) at `version`: `mode` "explain" or "simulate"; `config` a
    KubeSchedulerConfiguration file; `feature_gates` "A=true,B=false" or
    {"A": True}."""
    args = [str(build(version)), "--mode", mode]
    if config is not None:
        args += ["--config", str(config)]
    if feature_gates:
        args += ["--feature-gates", _gates_arg(feature_gates)]
    paths = [fixture] if isinstance(fixture, (str, os.PathLike)) else list(fixture)
    args += [str(p) for p in paths]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise OracleError(f"oracle {version} failed (exit {proc.returncode}) on {', '.join(map(str, paths))}:\n"
                          f"{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


def gate_dump(version: str, feature_gates=None) -> dict:
    """`oracle --dump-gates`: every gate the version's kube-scheduler
    registers, {"gates": {name: {stage, default, locked, since, enabled,
    history: [specs], dependencies: [...]}}, "emulationVersion", ...}."""
    args = [str(build(version)), "--dump-gates"]
    if feature_gates:
        args += ["--feature-gates", _gates_arg(feature_gates)]
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise OracleError(f"oracle {version} --dump-gates failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


_STAGES = {"Alpha": "ALPHA", "Beta": "BETA", "GA": "GA", "Deprecated": "DEPRECATED"}


def history_row(spec: dict) -> str:
    """A versioned spec of the dump as kschedx/features/history.py writes it."""
    parts = [f'"{spec["version"]}"', "True" if spec["default"] else "False", _STAGES.get(spec["stage"], spec["stage"])]
    if spec["locked"] or spec.get("minCompatibilityVersion"):
        parts.append("LOCKED" if spec["locked"] else "False")
    if spec.get("minCompatibilityVersion"):
        parts.append(f'"{spec["minCompatibilityVersion"]}"')
    return "(" + ", ".join(parts) + ")"


def gate_table_differences(version: str, dump: dict) -> list[str]:
    """Where kschedx's table of `version` (features/versions.gate_table,
    derived from features/history.py) is not kube-scheduler's, as texts
    naming what to change; [] when they agree (gates, stage, default,
    lock, since, dependencies, and each gate's history rows)."""
    from kschedx.features import history
    from kschedx.features.versions import gate_table

    gates, dependencies = gate_table(version)
    real = dump["gates"]
    out = []
    for name in sorted(set(real) - set(gates)):
        rows = ", ".join(history_row(s) for s in real[name]["history"])
        out.append(f"{name}: registered by kube-scheduler {version}, not in kschedx's table "
                   f"(HISTORY: ({rows}{',' if len(real[name]['history']) == 1 else ''}); REGISTERED / REMOVED)")
    for name in sorted(set(gates) - set(real)):
        out.append(f"{name}: in kschedx's {version} table, not registered by kube-scheduler {version} "
                   "(REGISTERED / REMOVED)")
    for name in sorted(set(gates) & set(real)):
        r = real[name]
        want = (r["stage"], r["default"], r["locked"], r.get("since"))
        if gates[name] != want:
            out.append(f"{name}: kschedx {gates[name]}, kube-scheduler {want} at {version}")
        if sorted(dependencies.get(name, ())) != sorted(r["dependencies"]):
            out.append(f"{name}: depends on {sorted(dependencies.get(name, ()))} in kschedx, on "
                       f"{sorted(r['dependencies'])} in kube-scheduler {version} (DEPENDENCIES)")
        if _newest_registering(name) == version:
            rows = tuple(tuple(x) for x in history.HISTORY.get(name, ()))
            real_rows = "(" + ", ".join(history_row(s) for s in r["history"]) + ")"
            mine = "(" + ", ".join(history_row(_spec_dict(x)) for x in rows) + ")"
            if mine != real_rows:
                out.append(f"{name}: HISTORY rows {mine}, kube-scheduler {version} keeps {real_rows}")
    return out


def _newest_registering(name: str) -> str:
    """The newest supported minor whose table has the gate (its rows are that release's)."""
    from kschedx.features.versions import SUPPORTED_VERSIONS, gate_table

    return [v for v in SUPPORTED_VERSIONS if name in gate_table(v)[0]][-1]


def _spec_dict(row) -> dict:
    d = {"version": row[0], "default": row[1], "stage": row[2], "locked": bool(row[3]) if len(row) > 3 else False}
    if len(row) > 4 and row[4]:
        d["minCompatibilityVersion"] = row[4]
    return d


class Server:
    """One oracle process serving many runs (`oracle --serve`): requests
    one at a time, each answered with the document `run()` would return.
    Feature gates are the process's own. Restarted once if it died."""

    def __init__(self, version: str, feature_gates=None):
        self.version = version
        self.feature_gates = feature_gates
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._next = 0

    def _start(self) -> subprocess.Popen:
        args = [str(build(self.version)), "--serve"]
        if self.feature_gates:
            args += ["--feature-gates", _gates_arg(self.feature_gates)]
        return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, bufsize=1)

    def run(self, fixture, mode: str = "explain", config=None) -> dict:
        paths = [fixture] if isinstance(fixture, (str, os.PathLike)) else list(fixture)
        with self._lock:
            self._next += 1
            request = {"id": self._next, "mode": mode, "paths": [str(p) for p in paths]}
            if config is not None:
                request["config"] = str(config)
            for attempt in (1, 2):
                if self._proc is None or self._proc.poll() is not None:
                    self._proc = self._start()
                try:
                    self._proc.stdin.write(json.dumps(request) + "\n")
                    self._proc.stdin.flush()
                    line = self._proc.stdout.readline()
                except (BrokenPipeError, OSError):
                    line = ""
                if line:
                    break
                try:
                    code = self._proc.wait(timeout=10)
                    err = self._proc.stderr.read()
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    code, err = None, "(no answer, killed)"
                self._proc = None
                if code == 2:
                    raise OracleError(f"oracle {self.version} refused its flags: {err.strip()[-2000:]}")
                if attempt == 2:
                    raise OracleError(f"oracle {self.version} --serve died on {', '.join(map(str, paths))}:\n"
                                      f"{err[-4000:]}")
        answer = json.loads(line)
        if answer.get("id") != request["id"]:
            raise OracleError(f"oracle {self.version} --serve answered request {answer.get('id')}, "
                              f"not {request['id']}")
        if "error" in answer:
            raise OracleError(f"oracle {self.version} refused {', '.join(map(str, paths))}: {answer['error']}")
        return answer["document"]

    def close(self) -> None:
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                self._proc.stdin.close()
                try:
                    self._proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._proc = None


def binary_or_skip(version: str) -> Path:
    """build(version) for a test: skipped when Go is missing, failed instead
    when KSCHEDX_REQUIRE_ORACLE=1."""
    import pytest

    try:
        return build(version)
    except OracleUnavailable as exc:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{exc} ({REQUIRE_ENV}=1: the oracle is required here)")
        pytest.skip(str(exc))


# -- golden-versions/differences -------------------------------------------------

DIFFERENCES = REPO / "tests" / "golden-versions" / "differences"


def difference_runs() -> list[dict]:
    """golden-versions/differences/index.yaml: each run with its `case`
    (fixture path), `gates` ({minor: "A=true,..."}), `versions` and where
    each version's expected document is (`expected`: {minor: path})."""
    import yaml

    out = []
    for entry in yaml.safe_load((DIFFERENCES / "index.yaml").read_text()):
        name = entry["run"]
        case = DIFFERENCES / f"{entry.get('case', name)}.yaml"
        vs = entry.get("versions") or versions()
        out.append({
            "run": name, "case": case, "gates": entry.get("gates") or {}, "versions": vs,
            "shows": entry.get("shows", ""),
            "expected": {v: REPO / "tests" / "golden-versions" / "expected" / f"v{v}" / "differences" / f"{name}.json"
                         for v in vs},
        })
    return out


# -- the golden corpus's file format ---------------------------------------------


def golden_text(doc: dict) -> str:
    """A document as tests/golden/expected holds it: compact JSON, keys sorted."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def keep_reason_order(new, old):
    """`new`, with each `reasons` list that holds the same reasons as the
    matching list of `old` in `old`'s order. Some plugins' reasons come in
    Go map order (NodeResourcesFit's extended resources and hugepages), a
    new order at every run: regenerating a file keeps its committed order,
    so that only a real change shows."""
    if isinstance(new, dict) and isinstance(old, dict):
        out = {}
        for key, value in new.items():
            if key == "reasons" and isinstance(value, list) and isinstance(old.get(key), list) \
                    and sorted(value) == sorted(old[key]):
                out[key] = list(old[key])
            elif key in old:
                out[key] = keep_reason_order(value, old[key])
            else:
                out[key] = value
        return out
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [keep_reason_order(n, o) for n, o in zip(new, old)]
    return new


def without_reason_order(doc):
    """`doc` with every `reasons` list sorted: what comparisons look at."""
    if isinstance(doc, dict):
        return {k: sorted(v) if k == "reasons" and isinstance(v, list) else without_reason_order(v)
                for k, v in doc.items()}
    if isinstance(doc, list):
        return [without_reason_order(x) for x in doc]
    return doc
