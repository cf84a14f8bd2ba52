"""The fix kinds in the order they search, and one pod's `fixes` and
`fixSearch`."""

from __future__ import annotations

from .blockers import Blockers
from .search import MAX_FIXES, MAX_RUNS, Fix, Search
from .verify import Verifier


def _kinds():
    from . import (add_node, combined, node_affinity, node_labels, node_taints, pod_affinity, priority, remove_pods,
                   requests, spread, tolerations)

    # Cheap, likely candidates first: the budget is shared.
    return (tolerations, node_affinity, spread, pod_affinity, requests, priority, combined, node_taints,
            node_labels, add_node, remove_pods)


def find_fixes(fw, pod_info, pod_doc: dict, raw_pod: dict, *, max_runs: int = MAX_RUNS) -> dict:
    """The `fixes` of one Unschedulable pod's result, and how many candidates
    were checked: {"fixes": [...], "fixSearch": {...}}."""
    search = Search(Verifier(fw, raw_pod, pod_info), Blockers(pod_doc), pod_doc, max_runs=max_runs)
    found = search.fixes
    for kind in _kinds():
        if not search.has_budget():
            break
        found.extend(kind.find(search))
    found.sort(key=Fix.rank)
    shown = found[:MAX_FIXES]
    return {
        "fixes": [f.document() for f in shown],
        "fixSearch": {"candidates": search.tried, "cycles": search.verifier.runs, "verified": len(found),
                      "budgetExhausted": not search.has_budget()},
    }
