"""Plugins' batch fast paths (filter_all / score_all) give exactly what their
per-node filter / score give: on every golden case, the whole explain
document (verdicts, reasons, details, scores, explanations) is the same with
the fast paths and without them."""

from __future__ import annotations

import json

import pytest

from kschedx import app
from kschedx.result import build_document
from golden_compare import GOLDEN, case_names

BATCH_METHODS = ("filter_all", "score_all", "normalize_all")


def explain_document(name: str, batch: bool) -> str:
    workload = app.load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    fw = app.new_framework(workload.cluster, tie_break="name", seed=None)
    if not batch:
        for pl in fw.profile.plugins:
            for method in BATCH_METHODS:
                setattr(pl, method, None)  # the runner then calls filter / score per node
    results = [fw.schedule(pi) for pi in workload.pods]
    doc = build_document(results, mode="explain", tie_break="name", profile=fw.profile.name,
                         not_evaluated=fw.profile.not_evaluated)
    return json.dumps(doc, sort_keys=True, default=repr)


def test_the_default_profile_has_batch_paths():
    workload = app.load_workload([str(GOLDEN / "cases" / f"{case_names()[0]}.yaml")])
    fw = app.new_framework(workload.cluster, tie_break="name", seed=None)
    with_batch = {pl.name for pl in fw.profile.plugins if any(callable(getattr(pl, m, None)) for m in BATCH_METHODS)}
    assert {"NodeResourcesFit", "NodeResourcesBalancedAllocation", "TaintToleration", "ImageLocality",
            "PodTopologySpread", "InterPodAffinity"} <= with_batch


@pytest.mark.parametrize("name", case_names())
def test_batch_paths_agree_with_per_node_methods(name):
    assert explain_document(name, batch=True) == explain_document(name, batch=False)
