"""The oracle's document against kschedx's, field by field: what the golden
corpus is compared on (tests/golden_compare.py: every Filter verdict and its
reasons, firstFailure, PreFilter, PreFilterResult, gate, scores raw,
normalized and weighted, topNodes, selectedNode, the message, preemption's
outcome and victims, simulate's placements), plus what a golden file cannot
let slip: kschedx evaluating every plugin (an empty notEvaluated), the
profile each pod ran in, and the notes that say how kube-scheduler chose
(the nominated node taken without looking further, the only feasible node).
"""

from __future__ import annotations

from tests.golden_compare import compare

# Notes both write that say how kube-scheduler took its decision.
DECISION_NOTES = ("nominated node ", "only one feasible node")


def _decision_notes(pod: dict) -> list[str]:
    return sorted(n for n in pod.get("notes") or () if n.startswith(DECISION_NOTES))


def differences(expected: dict, actual: dict, *, simulate: bool = False) -> list[str]:
    out = []
    if actual.get("notEvaluated"):
        out.append(f"run notEvaluated: expected [], got {actual['notEvaluated']}")
    out.extend(compare(expected, actual, simulate=simulate))
    exp = {p["pod"]: p for p in expected["pods"]}
    for ap in actual["pods"]:
        ep = exp.get(ap["pod"])
        if ep is None:
            continue
        if ep.get("schedulerName") != ap.get("schedulerName"):
            continue  # reported by compare
        e_notes, a_notes = _decision_notes(ep), _decision_notes(ap)
        if e_notes != a_notes:
            out.append(f"pod {ap['pod']} notes: expected {e_notes!r}, got {a_notes!r}")
    return out
