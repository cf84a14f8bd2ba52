"""simulate --add-nodes auto: the fewest nodes made from the templates that
place every pending pod a template can take. cluster-autoscaler's
estimator, with kube-scheduler's exact cycle at every step.

Nodes arrive after the scheduler has placed what it could (the plain run,
with the drain if any): the pods left Unschedulable are the ones nodes are
added for, and the pods already placed stay where they are.

1. Probe: for each class of those pods (pods a template answers alike) and
   each template, one node of it added, the class's first pod's cycle:
   which templates fit, and each other's failing plugin and reason.
2. A lower bound: classes no two of which share a template each need a
   node of their own; classes only one template fits need its nodes for
   their requests.
3. A greedy placement (each pod in queue order that does not fit gets a
   node of a template that fits it): an upper bound, and a plan.
4. Every count from the lower bound up is tried as a whole run (fresh
   snapshot, the plain run, the nodes added, the pods retried), smallest
   first; the first that places every pod is the answer, proven minimal
   for the number of nodes when every smaller plan was tried.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations_with_replacement

from ..framework.journal import Journal
from ..framework.simulation import probe_cycle
from ..sources.workloads import daemon_pods_for_node
from ..state.types import PodInfo
from .play import Play, class_key
from .templates import joined, new_node, verdict

# Whole runs the search may make to prove a smaller plan, and nodes it adds at most.
MAX_RUNS = 64
MAX_NODES = 100
# Search.reason when the probe found no template for any pending pod.
NONE_FITS = "no template fits any pending pod, so no plan was tried"


@dataclass
class Search:
    """The search's outcome: the plan (template name per node, in order),
    each class's probe, and how it went."""

    plan: list = field(default_factory=list)
    classes: list = field(default_factory=list)  # {"key", "pods", "fits", "why"}
    targets: list = field(default_factory=list)  # pod keys nodes are added for
    lower: int = 0
    greedy: int | None = None
    runs: int = 0
    cycles: int = 0
    proven: bool = True
    found: bool = True
    reason: str = ""
    unplaced: set = field(default_factory=set)  # uids of the pods the plain run leaves unplaced


def search(workload, new_run, templates, drain=None) -> Search:
    """`new_run()`: fresh Schedulers for a whole run."""
    out = Search()
    base = Play(workload, new_run(), documents=False)
    try:
        found = _on_base(out, base, templates, drain)
    finally:
        # The base run changed the cluster every whole run is made from (the
        # drain's cordons, the budgets' statuses, the greedy pass's nodes):
        # each whole run must start from the cluster as read.
        base.close()
    if found is not None:
        _whole_runs(out, workload, new_run, templates, drain, *found)
    return out


def _on_base(out: Search, base: Play, templates, drain):
    """Steps 1 to 3 on the plain run's state: (the classes some template
    fits, the greedy plan or None), or None when there is nothing to search."""
    base.run(drain)
    targets = [e for e in base.waiting_all() if e.doc and e.doc["status"] == "Unschedulable"]
    out.targets = [e.pi.key for e in targets]
    out.unplaced = {e.pi.uid for e in base.pending}
    if not targets:
        out.plan = []
        return None
    scheds = base.scheds
    # 1. probe
    out.classes = _probe(targets, templates, scheds, out)
    fitting = [c for c in out.classes if c["fits"]]
    if not fitting:
        # Nothing to search: no bound, no greedy pass, no run; nothing proven.
        out.found = False
        out.proven = False
        out.reason = NONE_FITS
        return None
    order = {t.name: i for i, t in enumerate(templates)}
    by_name = {t.name: t for t in templates}
    # 2. lower bound
    out.lower = _lower_bound(fitting, by_name, scheds)
    # 3. greedy, on the plain run's state
    greedy = _greedy(base, fitting, templates, order, out)
    out.greedy = len(greedy) if greedy is not None else None
    return fitting, greedy


def _probe(targets, templates, scheds, out: Search) -> list[dict]:
    """Per class of the target pods, which templates fit its first pod and
    why the others do not."""
    classes: dict[str, dict] = {}
    for e in targets:
        key = class_key(e.pi)
        c = classes.get(key)
        if c is None:
            c = classes[key] = {"key": key, "exemplar": e, "pods": [], "fits": [], "why": {}}
        c["pods"].append(e)
    for c in classes.values():
        pi = c["exemplar"].pi
        for t in templates:
            journal = Journal(scheds.snapshot, scheds.frameworks)
            made = new_node(scheds.snapshot, t)
            try:
                fw = scheds.framework_for(pi)
                joined(journal, fw, made)
                r = probe_cycle(fw, pi)
                out.cycles += 1
                v = verdict(r, made.name, record=False)
            finally:
                journal.rollback()
            if v["feasible"]:
                c["fits"].append(t.name)
            else:
                c["why"][t.name] = {"plugin": v.get("plugin"), "code": v.get("code"), "reasons": v.get("reasons") or []}
    return list(classes.values())


def _whole_runs(out: Search, workload, new_run, templates, drain, fitting, greedy) -> None:
    """Step 4: plans tried as whole runs, smallest first; the first that
    places every pod nodes are added for is out.plan."""
    order = {t.name: i for i, t in enumerate(templates)}
    by_name = {t.name: t for t in templates}
    useful = sorted({t for c in fitting for t in c["fits"]}, key=order.get)
    target_uids = {e.pi.uid for c in fitting for e in c["pods"]}

    def first_placing(k: int):
        """(the first plan of k nodes that places every pod or None, whether
        every plan of k nodes was tried before the search's budget ended)."""
        for plan in _plans(k, useful, fitting, order, by_name):
            if out.runs >= MAX_RUNS:
                return None, False
            if _places_all(workload, new_run, templates, drain, plan, target_uids, out):
                return plan, True
        return None, True

    # Every count below the greedy plan's, smallest first.
    first = max(out.lower, 1)
    upper = out.greedy if out.greedy is not None else MAX_NODES
    for k in range(first, upper):
        plan, complete = first_placing(k)
        if plan is not None:
            out.plan = plan
            return
        if not complete:
            out.proven = False
            break
    if greedy is not None and _places_all(workload, new_run, templates, drain, greedy, target_uids, out):
        out.plan = greedy
        return
    # The greedy plan did not hold as a whole run (or there was none): more
    # nodes. The answer stays proven while every smaller plan was tried.
    start = out.greedy if out.greedy is not None else first
    for k in range(start, min(start + 3, MAX_NODES + 1)):
        plan, complete = first_placing(k)
        if plan is not None:
            out.plan = plan
            return
        if not complete:
            break
    out.found = False
    out.proven = False
    out.reason = "no plan kschedx tried places every pod"


def _lower_bound(fitting, by_name, scheds) -> int:
    """The larger of: classes no two of which share a fitting template (each
    needs a node of its own), and per template, what the classes only it
    fits request over what one of its nodes offers."""
    picked: list[set] = []
    for c in fitting:
        fits = set(c["fits"])
        if all(not (fits & other) for other in picked):
            picked.append(fits)
    disjoint = len(picked)
    need: dict[str, dict] = {}
    for c in fitting:
        if len(c["fits"]) != 1:
            continue
        t = c["fits"][0]
        acc = need.setdefault(t, {"pods": 0})
        for e in c["pods"]:
            acc["pods"] += 1
            for res, amount in e.pi.resource.as_dict().items():
                acc[res] = acc.get(res, 0) + amount
    by_template = 0
    daemon_sets = [o for o in scheds.snapshot.cluster.workloads if o.get("kind") == "DaemonSet"]
    for t, acc in need.items():
        made = new_node(scheds.snapshot, by_name[t])
        offer = _allocatable(made.node)
        # What its DaemonSet pods (and static pods) take first.
        for pod in daemon_pods_for_node(made.node, daemon_sets) + made.pods:
            offer["pods"] -= 1
            for res, amount in PodInfo(pod).resource.as_dict().items():
                offer[res] = offer.get(res, 0) - amount
        n = 0
        for res, amount in acc.items():
            if amount and offer.get(res, 0) > 0:
                n = max(n, -(-amount // offer[res]))
        by_template += max(n, 1)
    return max(disjoint, by_template)


def _allocatable(node: dict) -> dict:
    from ..api.resources import Resource, to_milli_list

    r = Resource.from_milli_list(to_milli_list((node.get("status") or {}).get("allocatable")))
    out = r.as_dict()
    out["pods"] = r.allowed_pod_number
    return out


def _greedy(base: Play, fitting, templates, order, out: Search):
    """Pods in queue order; one that does not fit gets a node of the first
    template that fits its class (those fitting most classes first, then
    the smallest, then command-line order); checked by the cycle with the
    node; nodes are kept once a pod is placed there. The plan, or None
    when some pod is placed by none."""
    scheds = base.scheds
    journal = base.journal
    covering = {t.name: sum(1 for c in fitting if t.name in c["fits"]) for t in templates}
    sizes = {t.name: (_allocatable(t.node).get("cpu", 0), _allocatable(t.node).get("memory", 0)) for t in templates}
    by_name = {t.name: t for t in templates}
    class_of = {e.pi.uid: c for c in fitting for e in c["pods"]}
    plan: list[str] = []
    taken: set[str] = set()
    for e in base.waiting_all():
        c = class_of.get(e.pi.uid)
        if c is None:
            continue
        fw = scheds.framework_for(e.pi)
        r = probe_cycle(fw, e.pi)
        out.cycles += 1
        if r.status == "Scheduled":
            journal.assume_pod(e.pi, r.selected_node)
            continue
        for name in sorted(c["fits"], key=lambda n: (-covering[n], sizes[n], order[n])):
            mark = journal.mark()
            made = new_node(scheds.snapshot, by_name[name], taken)
            joined(journal, fw, made)
            r = probe_cycle(fw, e.pi)
            out.cycles += 1
            if r.status == "Scheduled":
                journal.assume_pod(e.pi, r.selected_node)
                plan.append(name)
                taken.add(made.name)
                break
            journal.rollback(mark)
        else:
            return None
        if len(plan) >= MAX_NODES:
            return None
    return plan


def _plans(k: int, useful, fitting, order, by_name):
    """Plans of k nodes over the useful templates, each class given a
    template it fits: fewest distinct templates first, then the smallest
    total allocatable, then command-line order."""
    plans = []
    for combo in combinations_with_replacement(useful, k):
        chosen = set(combo)
        if not all(chosen & set(c["fits"]) for c in fitting):
            continue
        cpu = sum(_allocatable(by_name[n].node).get("cpu", 0) for n in combo)
        mem = sum(_allocatable(by_name[n].node).get("memory", 0) for n in combo)
        plans.append(((len(chosen), cpu, mem, [order[n] for n in combo]), list(combo)))
    plans.sort(key=lambda p: p[0])
    return [p[1] for p in plans]


def made_nodes(snapshot, templates, plan) -> list:
    """The nodes of a plan (template names), named T-1, T-2... in plan order."""
    by_name = {t.name: t for t in templates}
    taken: set[str] = set()
    out = []
    for name in plan:
        made = new_node(snapshot, by_name[name], taken)
        taken.add(made.name)
        out.append(made)
    return out


def _places_all(workload, new_run, templates, drain, plan, target_uids, out: Search) -> bool:
    """A whole run with the plan's nodes: does it place every target pod,
    and every pod the plain run placed or never made?"""
    out.runs += 1
    run = Play(workload, new_run(), documents=False)
    try:
        run.run(drain, made_nodes(run.snapshot, templates, plan))
        out.cycles += len(run.entries)
        pending = {e.pi.uid for e in run.pending}
    finally:
        run.close()
    # Only the pods nodes are not added for (gated, no template fits) may
    # stay: a new pod of a drain the nodes unblock must be placed too.
    return pending <= (out.unplaced - target_uids)
