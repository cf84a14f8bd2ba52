"""The fix kinds in the order they search, and one pod's `fixes`,
`fixSearch` and `fixAdvice`."""

from __future__ import annotations

from .blockers import Blockers
from .kinds import kinds as _kinds
from .search import CLUSTER, MAX_FIXES, MAX_RUNS, Fix, Search
from .verify import Verifier

# On snapshots of more nodes than this, each side (the pod's, the
# cluster's) stops searching once ENOUGH of its fixes are verified: a cycle
# there costs 0.02-0.15 s of CPU. The fixes shown are still each checked by
# its own cycle; fewer alternatives are looked for (fixSearch.stopped).
LARGE = 1000
ENOUGH = 1


def find_fixes(fw, pod_info, pod_doc: dict, raw_pod: dict, *, max_runs: int = MAX_RUNS, workload=None,
               verifier=None, templates=()) -> dict:
    """The `fixes` of one Unschedulable pod's result, how the search went,
    and advice: {"fixes": [...], "fixSearch": {...}[, "fixAdvice": [...]]}.
    `workload`: the pod's WorkloadRef when it was expanded from a POD_FILE
    workload (its fixes then patch the workload). `verifier`: what checks
    a candidate, when not one cycle of the pod (sequence.py: every replica
    of its workload placed again); `max_runs` then counts its checks.
    `templates`: node templates (--node-template): add-node adds a node of
    one of them instead of a copy of an existing node."""
    from . import advice, combine
    from .workload_target import find_owner

    if verifier is None:
        owner = find_owner(pod_info.pod, fw.snapshot.cluster) if workload is None else None
        verifier = Verifier(fw, raw_pod, pod_info, workload=workload, owner=owner)
    search = Search(verifier, Blockers(pod_doc), pod_doc, max_runs=max_runs, templates=list(templates))
    if len(fw.snapshot.node_infos) > LARGE:
        search.enough = ENOUGH
    pod_side, cluster_side = _kinds()
    for kind in pod_side:
        if search.done():
            break
        search.fixes.extend(kind.find(search))
    if not search.done():
        combine.pod_join(search)
    search.phase = CLUSTER
    for kind in cluster_side:
        if search.done():
            break
        search.fixes.extend(kind.find(search))
    if not search.done():
        combine.mixed_join(search)
    if not search.done():
        combine.chained(search)
    if not search.done():
        combine.last_resort(search)
    advice.find(search)
    found = sorted(search.fixes, key=Fix.rank)
    shown = found[:MAX_FIXES]
    cycles = getattr(verifier, "cycles", None)
    fix_search = {"candidates": search.tried, "combinations": search.combinations,
                  "cycles": verifier.runs if cycles is None else cycles,
                  "verified": len(found), "budgetExhausted": not search.has_budget()}
    if cycles is not None:
        fix_search["sequences"] = verifier.runs  # each check placed the replicas again
    if search.stopped and search.has_budget():
        fix_search["stopped"] = "enough"
    if search.uncovered:
        fix_search["uncovered"] = search.uncovered
    out = {"fixes": [f.document() for f in shown], "fixSearch": fix_search}
    if search.advice:
        out["fixAdvice"] = search.advice
    return out
