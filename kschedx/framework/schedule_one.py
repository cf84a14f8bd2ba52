"""The scheduling algorithm of one cycle (upstream's schedule_one.go):
schedulePod (PreEnqueue, then a cycle), findNodesThatFitPod (PreFilter,
the nominated node first, Filter on every node, the sampled search,
extenders), prioritizeNodes and selectHost, and an unschedulable pod's
FitError with its PostFilter outcome. The extension points themselves run
in runtime.py; each function here takes the profile's Framework (fwk).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress

from ..state.types import NodeInfo, PodInfo
from .cycle_state import CycleState
from .fit_error import fit_error_message
from .interface import PluginError
from .records import NodeRecords, NodeResult, PodResult, left_out_status
from .sampling import best_of_some_window, walk
from .status import Status

# CycleState key: this cycle ends before PostFilter (schedule_pod).
NO_POST_FILTER = "kschedx/no-post-filter"
ONE_FEASIBLE_NOTE = "only one feasible node: kube-scheduler selects it without scoring (scores shown for information)"
# The nominated node passed: kube-scheduler looked no further (other nodes'
# verdicts are shown for information).
NOMINATED_FITS_NOTE = ("nominated node {node} passed the filters: kube-scheduler selects it without looking at "
                       "other nodes or scoring")


def schedule_pod(fwk, pod: PodInfo, *, post_filter: bool = True, record: bool = True) -> PodResult:
    """One scheduling cycle. `post_filter=False` stops an unschedulable
    pod's cycle before PostFilter (preemption): for callers that only ask
    whether a pod fits as it is (`explain --fix` checking a change).
    `record=False`: only the outcome is wanted (simulate's retry of a
    preemptor on its nominated node): when the nominated node fits, the
    cycle stops there as kube-scheduler's does (evaluateNominatedNode),
    without filtering or scoring the other nodes for their records."""
    result = PodResult(pod)
    try:
        gate = fwk.run_pre_enqueue(pod)
    except PluginError as exc:
        result.status = "Error"
        result.message = str(exc)
        result.nodes = []
        return result
    if gate is not None:
        result.status = "Gated"
        result.gate = gate
        result.message = gate.message()
        return result
    state = CycleState()
    if not post_filter:
        state.write(NO_POST_FILTER, True)
    result.cycle_state = state
    try:
        _schedule_pod(fwk, state, pod, result, record)
    except PluginError as exc:
        result.status = "Error"
        result.message = str(exc)
        result.nodes = []
        result.selected_node = None
        result.top_nodes = []
        result.preemption = None
    return result


@dataclass(slots=True)
class FitResult:
    """What findNodesThatFitPod found: the feasible nodes (in node order),
    each failed candidate's status, the status of the nodes without one (a
    PreFilter rejection or a PreFilterResult leaving them out), the sampled
    search (None: every node was checked), and PreFilter's rejection."""

    feasible: list
    node_status: dict
    absent_status: Status | None = None
    search: object = None
    pre_filter_msg: str = ""
    nominated_fits: bool = False
    nominated_only: bool = False  # the nominated node fit and nothing else was filtered


def _schedule_pod(fwk, state: CycleState, pod: PodInfo, result: PodResult, record: bool = True) -> None:
    """schedulePod: the nodes that fit, then (unless only one does) their
    scores and the pick; the FitError and PostFilter when none fits."""
    if not fwk.snapshot.node_infos:
        result.message = "no nodes available to schedule pods"
        return
    fit = find_nodes_that_fit_pod(fwk, state, pod, result, record)
    feasible = fit.feasible
    if fit.nominated_only:
        result.top_nodes = [feasible[0].name]
        result.selected_node = feasible[0].name
        result.status = "Scheduled"
        return
    if not feasible:
        _unschedulable(fwk, state, pod, result, fit.node_status, fit.absent_status, fit.pre_filter_msg)
        return
    if len(feasible) == 1:
        _only_feasible(fwk, state, pod, result, feasible[0], fit.nominated_fits)
        totals = [0]
    else:
        totals = prioritize_nodes(fwk, state, pod, result, feasible)
        select_host(fwk, result, feasible, totals)
    if fit.search is not None and fwk.sampling.mode == "all" and result.status == "Scheduled":
        _could_pick(fwk, result, feasible, totals, fit.search)


def find_nodes_that_fit_pod(fwk, state: CycleState, pod: PodInfo, result: PodResult,
                            record: bool = True) -> FitResult:
    """findNodesThatFitPod: PreFilter, the nominated node first, Filter on
    every node (the records of all of them left to the result), the
    sampled search, the extenders' filters. Without `record`, a nominated
    node that fits ends the search (see schedule_pod)."""
    snapshot = fwk.snapshot
    all_nodes = snapshot.node_infos
    pre_res, pre_status, narrowing = fwk.run_pre_filter_plugins(state, pod, result)

    node_status: dict[str, Status] = {}
    absent_status: Status | None = None
    if pre_status is not None:
        # Every node gets the PreFilter rejection; no Filter runs.
        pre_status_plugin = pre_status.plugin
        for ni in all_nodes:
            result.nodes.append(NodeResult(ni.name, [], pre_status, pre_status_plugin or None, False))
        return FitResult([], node_status, pre_status, pre_filter_msg=pre_status.message())

    candidate_names = None  # every node
    if pre_res is not None and not pre_res.all_nodes():
        candidate_names = {ni.name for ni in all_nodes if ni.name in pre_res.node_names}
        absent_status = left_out_status(narrowing)
        result.pre_filter_result = {"nodeNames": sorted(pre_res.node_names), "plugins": narrowing}

    # evaluateNominatedNode: a pod's nominated node is filtered first,
    # before the PreFilterResult narrows the candidates. When it fits it is
    # the only feasible node (no other node is filtered or scored); when it
    # does not, its status stays explicit even if the PreFilterResult left
    # it out.
    nominated_name = ((pod.pod.get("status") or {}).get("nominatedNodeName")) or ""
    nominated = snapshot.get(nominated_name) if nominated_name else None
    explicit: dict[str, NodeResult] = {}  # nodes filtered one by one
    if nominated is not None:
        try:
            explicit[nominated.name] = fwk.record_node(state, pod, nominated)
        except PluginError:
            # kube-scheduler logs an Error on the nominated node and filters
            # every node, this one included, in node order: the Error it
            # reports is the first one met there.
            nominated = None
    if nominated is not None:
        if explicit[nominated.name].feasible and fwk.extenders is not None \
                and not fwk.extenders.filter_nominated(result, pod, nominated, node_status):
            # Rejected by an extender: upstream then filters every node,
            # this one again (and asks the extenders again).
            del explicit[nominated.name]
            node_status.pop(nominated.name, None)
            nominated = None
    if not record and nominated is not None and explicit[nominated.name].feasible:
        return FitResult([nominated], node_status, absent_status, nominated_only=True)

    feasible = find_nodes_that_pass_filters(fwk, state, pod, result, candidate_names, nominated, explicit,
                                            node_status, absent_status, narrowing)
    search = None
    if not (nominated is not None and explicit[nominated.name].feasible):
        # The nominated node's shortcut searches nothing: the start index stays.
        search = _search(fwk, result, feasible, node_status, candidate_names, nominated)
        if search is not None and fwk.sampling.mode == "upstream":
            feasible = search.found
    if fwk.extenders is not None and (nominated is None or feasible != [nominated]):
        # findNodesThatPassExtenders, on the nodes the search kept (the
        # nominated node passed them already)
        feasible = fwk.extenders.filter(result, pod, feasible, node_status)
    return FitResult(feasible, node_status, absent_status, search,
                     nominated_fits=nominated is not None and explicit[nominated.name].feasible)


def find_nodes_that_pass_filters(fwk, state, pod, result, candidate_names, nominated, explicit, node_status,
                                 absent_status, narrowing) -> list[NodeInfo]:
    """Every Filter plugin on every node (the nominated node is done):
    returns the feasible nodes in node order, fills node_status with the
    failed candidates' statuses, and leaves the records to the result."""
    all_nodes = fwk.snapshot.node_infos
    nominated_fits = nominated is not None and explicit[nominated.name].feasible

    # Nodes holding nominated pods are filtered one by one (with and
    # without those pods); all others in one table, plugin by plugin.
    by_one = fwk.nodes_with_nominated_pods(pod) - explicit.keys()
    row_of = None  # node name -> table row; None: row i is all_nodes[i]
    batch = all_nodes
    if explicit or by_one:
        batch = [ni for ni in all_nodes if ni.name not in explicit and ni.name not in by_one]
        row_of = {ni.name: i for i, ni in enumerate(batch)}
    table, unsuccessful = fwk.filter_table(state, pod, batch)

    # Only nodes with a non-Success verdict and nodes filtered one by one
    # need a look of their own, in node order: the first Error kube-
    # scheduler would meet aborts the cycle.
    if row_of is None:
        interesting = sorted(unsuccessful)
    else:
        interesting = [j for j, ni in enumerate(all_nodes)
                       if ni.name not in row_of or row_of[ni.name] in unsuccessful]
    outcomes: dict[str, tuple | None] = {}  # table nodes: (status, plugin), None = passes
    for j in interesting:
        ni = all_nodes[j]
        name = ni.name
        if name in explicit:
            continue
        strict = (candidate_names is None or name in candidate_names) and not nominated_fits
        if row_of is not None and name not in row_of:
            explicit[name] = fwk.record_node(state, pod, ni, strict=strict)
        else:
            outcomes[name] = fwk.table_outcome(table, unsuccessful[j if row_of is None else row_of[name]], strict)

    if candidate_names is None and not explicit:
        # The common case: every node a candidate, all in the table.
        node_status.update((name, o[0]) for name, o in outcomes.items() if o is not None)
        feasible = [ni for ni in all_nodes if ni.name not in node_status] if node_status else list(all_nodes)
    else:
        feasible = _classify(all_nodes, nominated, candidate_names, explicit, outcomes, node_status)
    result.node_records = NodeRecords(all_nodes, table, row_of, explicit, outcomes, candidate_names,
                                      nominated.name if nominated is not None else "", absent_status,
                                      ", ".join(narrowing))
    return [nominated] if nominated_fits else feasible



def _classify(all_nodes, nominated, candidate_names, explicit, outcomes, node_status) -> list[NodeInfo]:
    """The feasible nodes, in node order; failed candidates go into
    node_status. Nodes the PreFilterResult left out are neither (their
    records say so, see NodeRecords)."""
    feasible = []
    for ni in all_nodes:
        name = ni.name
        if ni is nominated:
            if not explicit[name].feasible:
                node_status[name] = explicit[name].status
            continue
        if candidate_names is not None and name not in candidate_names:
            continue
        nr = explicit.get(name)
        if nr is not None:
            if nr.feasible:
                feasible.append(ni)
            else:
                node_status[name] = nr.status
            continue
        outcome = outcomes.get(name)
        if outcome is None:
            feasible.append(ni)
        else:
            node_status[name] = outcome[0]
    return feasible



# -- node sampling ------------------------------------------------------------
def _search(fwk, result, feasible, node_status, candidate_names, nominated):
    """findNodesThatPassFilters' search over the Filter outcomes kschedx
    has for every node: how far kube-scheduler would go from the start
    index, and the start index of the next cycle. Returns the Search when
    kube-scheduler would stop before the last node (result.sampling then
    says so), None when it checks every node."""
    sampling = fwk.sampling
    all_nodes = fwk.snapshot.node_infos
    num_all = len(all_nodes)
    num_nodes = num_all if candidate_names is None else len(candidate_names)
    k = sampling.num_to_find(fwk.profile, num_nodes)
    start = sampling.next_start_node_index
    if k >= num_nodes:
        # Every node is checked: the failed ones (and a nominated node
        # that failed) are the statuses kube-scheduler records.
        sampling.advance(len(feasible) + len(node_status), num_all)
        return None
    order = sampling.order(fwk.snapshot)
    if candidate_names is not None:
        # kube-scheduler takes a PreFilterResult's nodes in Go map order
        # (random); kschedx keeps them in node-tree order.
        order = [ni for ni in order if ni.name in candidate_names]
    # A candidate is feasible unless it has a failure status.
    search = walk(order, lambda ni: ni.name not in node_status, start, k)
    processed = search.processed
    if nominated is not None and nominated.name in node_status and nominated.name not in search.failed:
        processed += 1  # its status was recorded when it was tried first
    sampling.advance(processed, num_all)
    plan = fwk.profile.plan
    pct = plan.percentage_of_nodes_to_score
    result.sampling = {
        "mode": sampling.mode,
        "percentageOfNodesToScore": pct if pct is not None else (sampling.global_percentage or 0),
        "numFeasibleNodesToFind": k,
        "nodes": num_nodes,
        "feasibleNodes": len(feasible),
        "startIndex": start,
        "processedNodes": processed,
        "nextStartIndex": sampling.next_start_node_index,
        "foundNodes": len(search.found),
    }
    return search


def _could_pick(fwk, result, feasible, totals, search) -> None:
    """`all` mode: what a sampled search could have picked instead. From
    this cycle's start index: the best of the nodes it finds. From any
    start: every node that is best among some window of k consecutive
    feasible nodes in node-tree order. Scores are those kschedx computed
    over every feasible node."""
    info = result.sampling
    k = info["numFeasibleNodesToFind"]
    names = fwk.sampling.order_names(fwk.snapshot)
    if fwk.extenders is None:
        # The feasible nodes are the snapshot's own NodeInfos: they are
        # the keys (no names to gather for thousands of nodes).
        keys, order = feasible, fwk.sampling.order(fwk.snapshot)
        found = search.found
    else:
        # An extender may answer with Node objects (new NodeInfos).
        keys, order = [ni.name for ni in feasible], names
        found = [ni.name for ni in search.found]
    total_of = dict(zip(keys, totals))
    # Nodes an extender rejected after the search are no pick either.
    found = [n for n in found if n in total_of]
    best = max(map(total_of.__getitem__, found), default=None)
    best_found = [n for n in found if total_of[n] == best]
    info["startWindowBest"] = sorted(best_found if fwk.extenders is not None else [ni.name for ni in best_found])
    if len(feasible) <= k:
        info["couldBeMissed"] = False
        info["upstreamCouldPick"] = list(result.top_nodes)
        return
    got = list(map(total_of.get, order))  # None: not feasible
    if len(total_of) == len(names):
        ordered, values = names, got
    else:
        kept = [v is not None for v in got]
        ordered, values = list(compress(names, kept)), list(compress(got, kept))
    picks = best_of_some_window(values, k)
    info["couldBeMissed"] = True
    info["upstreamCouldPick"] = sorted(ordered[i] for i in picks)


def _only_feasible(fwk, state: CycleState, pod: PodInfo, result: PodResult, node: NodeInfo,
                   nominated: bool = False) -> None:
    """kube-scheduler takes the only feasible node (or the nominated node
    that passed the filters) without running PreScore/Score, so a scoring
    failure cannot fail this cycle; kschedx scores it all the same, for
    information."""
    result.notes.append(NOMINATED_FITS_NOTE.format(node=node.name) if nominated else ONE_FEASIBLE_NOTE)
    try:
        fwk.run_score_plugins(state, pod, result, [node])
    except PluginError as exc:
        result.notes.append(f"scores not available: {exc}")
    result.top_nodes = [node.name]
    result.selected_node = node.name
    result.status = "Scheduled"


def prioritize_nodes(fwk, state: CycleState, pod: PodInfo, result: PodResult, feasible: list[NodeInfo]) -> list[int]:
    """prioritizeNodes: PreScore, Score (recorded), the extenders'
    priorities; each feasible node's total."""
    totals = fwk.run_score_plugins(state, pod, result, feasible)
    if fwk.extenders is not None:
        fwk.extenders.prioritize(result, pod, feasible, totals)
    return totals


def select_host(fwk, result: PodResult, feasible: list[NodeInfo], totals: list[int]) -> None:
    """selectHost: a node with the best total; among equal ones, by the
    run's tie-break (kube-scheduler's reservoir sampling is a uniform draw)."""
    best = max(totals)
    top = sorted(ni.name for ni, total in zip(feasible, totals) if total == best)
    result.top_nodes = top
    if fwk.tie_break == "name" or len(top) == 1:
        result.selected_node = top[0]
    else:
        result.selected_node = fwk.rng.choice(top)
        result.tie_drawn = True
    result.status = "Scheduled"


def _unschedulable(fwk, state, pod, result, node_status, absent_status, pre_filter_msg: str = "") -> None:
    """No node fits: the FitError message, and PostFilter's outcome."""
    message = fit_error_message(fwk.snapshot.num_nodes(), node_status, absent_status, pre_filter_msg)
    result.status = "Unschedulable"
    post_msg = handle_post_filter(fwk, state, pod, result, node_status, absent_status)
    if post_msg:
        message += " " + post_msg
    result.message = message


def handle_post_filter(fwk, state, pod, result, node_status, absent_status) -> str:
    """RunPostFilterPlugins, and its outcome written to the result (the
    preemption, its victims, the nomination); returns the PostFilter part
    of the FitError message."""
    if not fwk.profile.post_filter or state.read(NO_POST_FILTER):
        return ""
    post_result, final = fwk.run_post_filter_plugins(state, pod, node_status, absent_status)
    result.preemption = {
        "code": final.code.label,
        "message": final.message() or None,
        "nominatedNode": (post_result.nominated_node or None) if post_result else None,
        "pdbViolations": (post_result.details.get("pdbViolations", 0) if post_result else 0),
        "victims": (post_result.details.get("victims", []) if post_result else []),
    }
    if post_result is not None:
        for key, value in post_result.details.items():
            # *PodInfos keys carry objects for simulate, not for the document;
            # nodePreemption goes into the candidate nodes' records.
            if key not in result.preemption and not key.endswith("PodInfos") and key != "nodePreemption":
                result.preemption[key] = value
        node_preemption = post_result.details.get("nodePreemption")
        if node_preemption:
            result.set_node_preemption(node_preemption)
        result.victims = post_result.details.get("victimPodInfos", [])
        result.cleared_nominations = post_result.details.get("clearedNominationPodInfos", [])
        # "" = the pod's nomination is cleared; None (no result) = unchanged.
        result.nominated_node = post_result.nominated_node or ""
    if final.is_success() and post_result is not None and post_result.nominated_node:
        result.selected_node = post_result.nominated_node
    return final.message()
