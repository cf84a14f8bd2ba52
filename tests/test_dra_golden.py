"""DynamicResources against the golden cases, field by field, including what
the general comparison leaves out while other plugins are not evaluated:
the DynamicResources part of the PostFilter message, and `simulate`, where
claims allocated for one pod are in flight for the next."""

from __future__ import annotations

import pytest

from golden_compare import GOLDEN, case_names, load_expected
from kschedx.state import cache
from kschedx.commands.explain import explain
from kschedx.features import Features
from kschedx.commands.load import load_workload
from kschedx.framework.runtime import Framework
from kschedx.state.snapshot import build_snapshot

DRA = "DynamicResources"
# The golden corpus is kube-scheduler v1.35.4's output. The same cases use
# nothing v1.36 changes (no consumable capacity, partitions, taints, binding
# conditions, extended resources; no allocated claim before one to allocate),
# so v1.36's default gates must give the same DynamicResources verdicts
# there: a check that the v1.36 code paths leave ordinary claims alone.
V135 = Features("1.35")
VERSIONS = [pytest.param(V135, id="1.35"), pytest.param(Features("1.36"), id="1.36-same-verdicts")]
DRA_CASES = [n for n in case_names() if n.startswith("dra-") or n == "hand-dra"]
POST_FILTER_TEXTS = ("no new claims to deallocate", "still not schedulable", "deallocation of ResourceClaim completed")


def _dra_view(pod: dict) -> dict:
    """Everything DynamicResources decides for one pod, as comparable data."""
    view = {
        "gate": (pod.get("gate") or {}).get("reasons") if (pod.get("gate") or {}).get("plugin") == DRA else None,
        "preFilter": [(s["code"], s["reasons"]) for s in pod.get("preFilter") or () if s["plugin"] == DRA],
        "error": pod["message"] if pod["status"] == "Error" else None,
        "filters": {},
        "scores": {},
    }
    for node in pod.get("nodes") or ():
        for f in node.get("filters") or ():
            if f["plugin"] == DRA:
                view["filters"][node["name"]] = (f["code"], sorted(f["reasons"]))
        for s in node.get("scores") or ():
            if s["plugin"] == DRA:
                view["scores"][node["name"]] = (s["raw"], s["normalized"], s.get("skipped", False))
    pre = pod.get("preemption")
    if pre is not None:
        msg = pre.get("message") or ""
        view["postFilter"] = next((t for t in POST_FILTER_TEXTS if msg.startswith(t)), msg)
    return view


def _pods_with_claims(doc: dict, workload) -> set[str]:
    return {pi.key for pi in workload.pods if pi.spec.get("resourceClaims")}


@pytest.mark.parametrize("features", VERSIONS)
@pytest.mark.parametrize("name", DRA_CASES)
def test_explain_dynamic_resources(name, features):
    workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    actual = explain(workload, tie_break="name", features=features)
    expected = load_expected("explain", name)
    assert DRA not in actual["notEvaluated"]
    for ep, ap in zip(expected["pods"], actual["pods"]):
        assert ep["pod"] == ap["pod"]
        assert _dra_view(ap) == _dra_view(ep), ep["pod"]


def simulate_dra(workload, features=V135):
    """The pods one after another: placed pods are assumed and their claims'
    allocations go in flight (Reserve), as in the golden `simulate` runs.
    Stops where preemption would change the cluster (not this plugin's job)."""
    snapshot = build_snapshot(workload.cluster, features)
    fw = Framework(snapshot, tie_break="name")
    results = []
    for pi in workload.pods:
        r = fw.schedule(pi)
        r.settle()  # explanations are read before the snapshot changes, as simulate does
        results.append(r)
        if r.status == "Scheduled":
            fw.run_reserve_plugins(r, r.selected_node)
            cache.assume_pod(snapshot, pi, r.selected_node)
    return fw, results


@pytest.mark.parametrize("features", VERSIONS)
@pytest.mark.parametrize("name", DRA_CASES)
def test_simulate_dynamic_resources(name, features):
    from kschedx.result.document import build_document

    workload = load_workload([str(GOLDEN / "cases" / f"{name}.yaml")])
    fw, results = simulate_dra(workload, features)
    actual = build_document(results, mode="simulate", tie_break="name", profile=fw.profile.name,
                            not_evaluated=fw.profile.not_evaluated, warnings=[])
    expected = load_expected("simulate", name)
    for ep, ap in zip(expected["pods"], actual["pods"]):
        assert ep["pod"] == ap["pod"]
        assert _dra_view(ap) == _dra_view(ep), ep["pod"]
        if ep["status"] == "Scheduled":
            assert ap["status"] == "Scheduled" and ap["selectedNode"] == ep["selectedNode"], ep["pod"]
        if (ep.get("preemption") or {}).get("nominatedNode") or ep.get("placedNode") != ep.get("selectedNode"):
            break  # the cluster now depends on preemption
