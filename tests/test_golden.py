"""Every golden case from upstream kube-scheduler v1.35.4 must agree, field by field."""

from __future__ import annotations

import pytest

from kschedx import app
from golden_compare import GOLDEN, case_names, compare, load_expected


@pytest.mark.parametrize("name", case_names())
def test_explain_matches_upstream(name):
    workload = app.load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    actual = app.explain(workload, tie_break="name")
    diffs = compare(load_expected("explain", name), actual)
    assert not diffs, "\n".join(diffs[:40])
