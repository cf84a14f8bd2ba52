"""`simulate --tie-break name` on every golden case agrees with upstream
kube-scheduler v1.35.4, placement by placement."""

from __future__ import annotations

import pytest

from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from golden_compare import GOLDEN, V135, case_names, compare, load_expected


@pytest.mark.parametrize("name", case_names())
def test_simulate_matches_upstream(name):
    workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    actual = simulate(workload, tie_break="name", features=V135)
    assert actual["mode"] == "simulate"
    diffs = compare(load_expected("simulate", name), actual, simulate=True)
    assert not diffs, "\n".join(diffs[:40])
