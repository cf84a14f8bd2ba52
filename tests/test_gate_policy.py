"""No gate --feature-gates accepts is ignored in silence (features/policy.py).

Every settable gate of every version is walked: one kschedx reproduces (a
plugin or the scheduler's own code in kschedx declares and reads it), one
kschedx refuses with a message that says it does not reproduce it (also when
AllAlpha / AllBeta reach it), one the scheduler reads for what kschedx never
computes (ACCEPTED, each with its reason), or one kube-scheduler's own code
does not read at all. That last set, SCHEDULER_READS, is derived again here
from each release's source in the Go module cache (the oracle's build puts
it there): every `features.X` of pkg/scheduler outside tests.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kschedx.features import SUPPORTED_VERSIONS, FeatureGateError, Features, default_features
from kschedx.features.features import FIELDS
from kschedx.features.policy import ACCEPTED, NOT_REPRODUCED, SCHEDULER_READS
from kschedx.features.versions import REFERENCES, gate_table
from kschedx.plugins.registry import gates_read
from tests.oracle import REQUIRE_ENV


def settable(version: str) -> list[str]:
    return sorted(name for name, spec in gate_table(version)[0].items() if not spec[2])


def with_dependencies(version: str, name: str, value: bool) -> dict:
    """The gate set to `value`, and when enabling it, what it needs enabled too."""
    settings = {name: value}
    todo = [name] if value else []
    deps = gate_table(version)[1]
    while todo:
        for d in deps.get(todo.pop(), ()):
            if d not in settings:
                settings[d] = True
                todo.append(d)
    return settings


def _refused(version: str, settings: dict) -> str:
    with pytest.raises(FeatureGateError) as e:
        Features(version, settings)
    return str(e.value)


PACKAGE = Path(__file__).resolve().parent.parent / "kschedx"


def gates_read_by_code() -> set[str]:
    """The gates kschedx's code reads (a Features field, or enabled("Gate")),
    outside the gate tables themselves: a gate a declaration names but no
    code reads would change nothing kschedx computes."""
    out = set()
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "features":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in FIELDS:
                out.add(FIELDS[node.attr])
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "enabled" and node.args and isinstance(node.args[0], ast.Constant):
                out.add(node.args[0].value)
    return out


def reproduced() -> set[str]:
    """Gates kschedx reproduces: a plugin (or the scheduler's code in kschedx)
    declares the gate, and the code reads it."""
    return set(gates_read()) & gates_read_by_code()


def unaccounted(version: str, reproduced: set[str]) -> list[str]:
    """The settable gates of `version` that would be accepted and ignored.
    A gate kschedx refuses is checked to be refused (set by hand to the
    value that is not its default, with what it needs) and accepted at its
    default."""
    out = []
    for name in settable(version):
        if name in NOT_REPRODUCED:
            default = gate_table(version)[0][name][1]
            assert "kschedx does not reproduce " + name in _refused(
                version, with_dependencies(version, name, not default)), name
            Features(version, {name: default})
        elif name in reproduced or name in ACCEPTED or name not in SCHEDULER_READS.get(version, ()):
            continue
        else:
            out.append(name)
    return out


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_every_settable_gate_is_reproduced_refused_or_not_the_schedulers(version):
    assert unaccounted(version, reproduced()) == []


def test_a_settable_gate_nothing_reads_fails_the_walk():
    """The walk is not vacuous: take away one reproduced gate's reader and
    that gate is reported, at every version where it can be set."""
    name = "TaintTolerationComparisonOperators"
    for version in SUPPORTED_VERSIONS:
        assert name in settable(version) and name in SCHEDULER_READS[version]
        assert unaccounted(version, reproduced() - {name}) == [name]
    # A declaration alone is not a reader: the code must read the gate too.
    assert name in gates_read_by_code()


def test_the_issues_three_gates_are_reproduced():
    """The three gates kschedx used to accept and ignore are read now."""
    assert {"TaintTolerationComparisonOperators", "MatchLabelKeysInPodTopologySpread",
            "PodLevelResources"} <= gates_read()
    f = Features("1.37", {"TaintTolerationComparisonOperators": True})
    assert f.enable_taint_toleration_comparison_operators


def test_the_policys_gates_are_the_schedulers():
    every = set().union(*SCHEDULER_READS.values())
    assert set(NOT_REPRODUCED) <= every and set(ACCEPTED) <= every
    assert not set(NOT_REPRODUCED) & set(ACCEPTED)
    for gates in (NOT_REPRODUCED, ACCEPTED):
        assert all(why.strip() for why in gates.values())


def test_all_alpha_and_all_beta_are_checked_by_the_values_they_give():
    """AllAlpha=true turns on GenericWorkload (and GangScheduling) in 1.35:
    refused, naming the gate AllAlpha set; AllBeta=false gives no gate
    kschedx refuses a non-default value (none of them is a default-on beta)."""
    text = _refused("1.35", {"AllAlpha": True})
    assert "kschedx does not reproduce GenericWorkload=true, which AllAlpha=true sets" in text
    assert "set GenericWorkload=false too" in text
    for version in SUPPORTED_VERSIONS:
        f = Features(version, {"AllBeta": False})
        assert not f.enable_pod_level_resources
    # The defaults alone are never refused.
    for version in SUPPORTED_VERSIONS:
        assert default_features(version).changed_gates == {}


# ---- SCHEDULER_READS from the release's source --------------------------------------------------


def _module_source(version: str) -> Path | None:
    if shutil.which("go") is None:
        return None
    cache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True).stdout.strip()
    path = Path(cache) / f"k8s.io/kubernetes@{REFERENCES[version]}"
    return path if (path / "pkg" / "scheduler").is_dir() else None


def _gates_in_source(root: Path) -> set[str]:
    """The gate names (the strings, not the Go identifiers) pkg/scheduler reads."""
    names = {}
    for f in (root / "pkg" / "features").glob("*.go"):
        if f.name.endswith("_test.go"):
            continue
        for m in re.finditer(r'^\s*(\w+)\s+featuregate\.Feature\s*=\s*"(\w+)"', f.read_text(), re.M):
            names[m.group(1)] = m.group(2)
    found = set()
    for f in (root / "pkg" / "scheduler").rglob("*.go"):
        if f.name.endswith("_test.go") or "/testing/" in f.as_posix():
            continue
        for m in re.finditer(r"\bfeatures\.(\w+)\b", f.read_text()):
            if m.group(1) in names:
                found.add(names[m.group(1)])
    return found


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_scheduler_reads_is_what_the_release_reads(version):
    root = _module_source(version)
    if root is None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"k8s.io/kubernetes@{REFERENCES[version]} is not in the Go module cache "
                        "(oracle/build puts it there)")
        pytest.skip(f"k8s.io/kubernetes@{REFERENCES[version]} is not in the Go module cache")
    reads = _gates_in_source(root)
    written = SCHEDULER_READS.get(version, frozenset())
    assert (sorted(reads - written), sorted(written - reads)) == ([], []), \
        f"SCHEDULER_READS[{version!r}]: (to add, to remove)"
