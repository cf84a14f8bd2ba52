"""`simulate --tie-break name` on every golden case agrees with upstream
kube-scheduler v1.35.4, placement by placement."""

from __future__ import annotations

import pytest

from kschedx import app
from golden_compare import GOLDEN, case_names, compare, load_expected


@pytest.mark.parametrize("name", case_names())
def test_simulate_matches_upstream(name):
    workload = app.load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    actual = app.simulate(workload, tie_break="name")
    assert actual["mode"] == "simulate"
    diffs = compare(load_expected("simulate", name), actual, simulate=True)
    assert not diffs, "\n".join(diffs[:40])
