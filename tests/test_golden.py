"""Every golden case from upstream kube-scheduler v1.35.4 must agree, field by field."""

from __future__ import annotations

import pytest

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from golden_compare import GOLDEN, V135, case_names, compare, load_expected


@pytest.mark.parametrize("name", case_names())
def test_explain_matches_upstream(name):
    workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    actual = explain(workload, tie_break="name", features=V135)
    diffs = compare(load_expected("explain", name), actual)
    assert not diffs, "\n".join(diffs[:40])
