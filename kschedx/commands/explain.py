"""`kschedx explain`: every pod against the same snapshot, each result
handed to the sink as soon as it is computed. Identical pods share one cycle
(reuse.py), worker processes compute pods ahead (util/workers.py), and
--fix searches each unschedulable pod's fixes (fixes/). A workload's
replicas are judged as a whole, one after another (sequence.py)."""

from __future__ import annotations

from ..framework.dispatch import new_schedulers
from ..result.document import Tally
from ..result.sink import DocumentSink, ResultSink
from ..state.types import PodInfo
from ..util.gc_policy import collector_paused
from .document import head, pod_document, tail
from .load import Workload

def explain(workload: Workload, *, tie_break: str = "random", seed: int | None = None, config=None,
            sampling: str = "all", fix: bool = False, nodes=None, features=None, templates=()) -> dict:
    """Every pod against the same snapshot: the whole document."""
    sink = DocumentSink()
    explain_into(sink, workload, tie_break=tie_break, seed=seed, config=config, sampling=sampling, fix=fix,
                 nodes=nodes, features=features, templates=templates)
    return sink.doc


def explain_into(sink: ResultSink, workload: Workload, *, tie_break: str = "random",
                 seed: int | None = None, config=None, sampling: str = "all", fix: bool = False,
                 nodes=None, reuse: bool = True, jobs: int = 1, features=None, templates=()) -> int:
    """Every pod against the same snapshot, each result handed to `sink` as
    soon as it is computed and then dropped. Returns the exit code.
    `config`: a SchedulerConfig (--config): each pod is evaluated by the
    profile of its schedulerName. Each pod is its own first scheduling cycle
    (node sampling starts at index 0): an answer does not depend on which
    other pods were asked about. A workload of the POD_FILEs is judged as a
    whole: its replicas one after another, each with the ones before it
    placed, the snapshot put back after it (sequence.py); the document then
    ends with `workloads`. `fix`: each Unschedulable pod's result
    gains `fixes`, changes checked by running its cycle again (kschedx/fixes;
    the workload must be loaded with keep_raw). `nodes`: a NodeChoice
    (--nodes), which node records each pod's document keeps (None: all).
    `reuse`: a pod identical to an earlier one for scheduling takes its
    result (commands/reuse.py); `jobs`: worker processes
    (util/workers.py). Neither changes the output. `features`: the
    Kubernetes version and feature gates to reproduce (the configuration's;
    without one, the newest version's defaults when None). `templates`
    (--node-template, sources/node_templates.NodeTemplate): each
    unschedulable pod's result gains `templates`, which node pools could
    take it (one new node of each, the cycle run again), and --fix adds
    nodes of those pools instead of copies of existing nodes."""
    scheds = new_schedulers(workload.cluster, tie_break=tie_break, seed=seed, config=config, sampling=sampling,
                            features=features)
    pods = scheds.queue_order(workload.pods)
    sink.begin(head(scheds, "explain", nodes))
    tally = Tally()
    if scheds.extenders is not None:
        # An extender is a service of its own: it sees every pod, in order, once.
        reuse, jobs = False, 1
    explainer = explainer_for(scheds, workload, sink, reuse=reuse, fix=fix, nodes=nodes, templates=templates)
    explained = pod_documents(explainer, pods, sink, jobs)
    while True:
        with collector_paused():  # from the pod's cycle until it is written and dropped
            p = next(explained, None)
            if p is None:
                break
            tally.add(p)
            sink.pod(p)
            del p  # the sink has it written: only the next pod is kept
    sink.end(tail(scheds, workload, {"workloads": explainer.workloads} if explainer.workloads else None))
    return tally.exit_code


def explainer_for(scheds, workload: Workload, sink: ResultSink, *, reuse: bool = True, fix: bool = False,
                  nodes=None, templates=()) -> "_PodExplainer":
    """What explains pods against `scheds` for `sink` (explain_into's, and
    each batch of a watch's: commands/watch.py)."""
    return _PodExplainer(scheds, workload, reuse, fix, nodes, getattr(sink, "node_records_encoder", None),
                         getattr(sink, "reads_score_details", True), templates,
                         getattr(sink, "node_records_view", None))


def pod_documents(explainer: "_PodExplainer", pods: list[PodInfo], sink: ResultSink, jobs: int = 1):
    """Each pod's document, in order, made for `sink` (see _explained)."""
    return _explained(explainer, pods, jobs, getattr(sink, "nodes_encoder", None),
                      getattr(sink, "body_renderer", None))


class _PodExplainer:
    """explain's work for one pod: its cycle, or an identical pod's result."""

    def __init__(self, scheds, workload: Workload, reuse: bool, fix: bool = False, nodes=None, encoder=None,
                 score_details: bool = True, templates=(), view=None):
        from .reuse import ResultReuse

        self.scheds = scheds
        self.templates = list(templates)
        self.encoder = encoder  # the sink's node_records_encoder
        self.view = view  # the sink's node_records_view
        self.score_details = score_details  # whether the sink reads score explanations
        self.workload = workload
        self.fix = fix
        self.nodes = nodes
        # --nodes failing|top=N keeps the selected node: a document whose
        # node was drawn at random is then its draw's own.
        self.draw_shapes_nodes = nodes is not None and not nodes.is_all
        self.reuse = ResultReuse(scheds, workload) if reuse else None
        # on_cycle(pod, result): told of each cycle before its document is
        # made (explain --watch keeps what its verdict depends on).
        self.on_cycle = None
        self.workloads: list[dict] = []  # each workload's summary (sequence.py), in order
        self._simulation = None

    def simulation(self):
        """The simulate step over this run's snapshot (a workload's replicas)."""
        if self._simulation is None:
            from ..framework.simulation import Simulation

            self._simulation = Simulation(self.scheds)
        return self._simulation

    def choose_nodes(self, doc: dict, r) -> None:
        _choose_nodes(doc, r, self.nodes)

    def key(self, pi: PodInfo) -> str | None:
        return self.reuse.key(pi) if self.reuse is not None else None

    def shared(self, key: str | None) -> bool:
        return key is not None and key in self.reuse.templates

    def cycle(self, pi: PodInfo, own: bool = False) -> tuple[dict, int, bool, bool | None]:
        """(document, random draws made, whether the selected node was drawn
        among topNodes, and with `own` whether the document names its pod:
        reuse.names_own_pod, None when reuse is off or `own` not asked)."""
        scheds = self.scheds
        rng = scheds.rng
        before = rng.draws
        scheds.sampling.next_start_node_index = 0
        r = scheds.schedule(pi)
        if self.on_cycle is not None:
            self.on_cycle(pi, r)
        drawn = r.tie_drawn
        own = own and self.reuse is not None
        records = None
        if self.fix and r.status == "Unschedulable":
            # The fix search reads every node's verdicts, whatever --nodes writes.
            doc = pod_document(r, "explain", self.workload)
            _add_fixes(doc, scheds.framework_for(pi), pi, self.workload, self.templates)
            _choose_nodes(doc, r, self.nodes)
            _add_templates(doc, scheds, pi, self.templates)
        else:
            whole = self.encoder is None and (self.nodes is None or self.nodes.is_all)
            if whole:
                # Every node's explanations computed once, now: the document's
                # node dicts are then built a column at a time (result/node_dicts.py)
                # or read through the sink's view, and names_own_pod reads the
                # same records.
                r.settle(self.score_details)
            doc = pod_document(r, "explain", self.workload, self.nodes,
                               self.encoder if not whole or self.view is None else self.view)
            if whole and own:
                records = r.nodes  # built by the document (read before it, they change its counts)
            if r.status == "Unschedulable":
                _add_templates(doc, scheds, pi, self.templates)
        named = None
        if own:
            from .reuse import names_own_pod

            named = names_own_pod(doc, pi, records)
        del r, records
        return doc, rng.draws - before, drawn, named

    def transferable(self, draws: int, drawn: bool) -> bool:
        """Whether a document computed elsewhere (an earlier pod's, a
        worker's) holds for this run once its tie-break draw is made again:
        it drew nothing else, and its node list does not follow the draw."""
        return draws == (1 if drawn else 0) and not (drawn and self.draw_shapes_nodes)

    def explain(self, pi: PodInfo, key: str | None, last: bool = False) -> dict:
        """The pod's document; `last`: no pod comes after it, so its result
        is not kept for another (nor searched for its own name)."""
        if key is not None:
            hit = self.reuse.document(key, pi)
            if hit is not None:
                return hit[0]
        doc, draws, drawn, own = self.cycle(pi, own=key is not None and not last)
        if not last:
            self.keep(key, pi, doc, draws, drawn, own)
        return doc

    def keep(self, key, pi, doc, draws, drawn, own=None) -> None:
        if key is not None and self.transferable(draws, drawn):
            self.reuse.remember(key, pi, drawn, doc, draws, own)


def _explained(explainer: _PodExplainer, pods: list[PodInfo], jobs: int, encoder=None, renderer=None):
    """Each pod's document, in order. `encoder`: the sink's nodes_encoder,
    `renderer`: its body_renderer, applied by the workers. A workload's
    replicas are judged together, in this process (sequence.py)."""
    from .sequence import units

    work = units(pods, explainer.workload)
    if any(isinstance(u, tuple) for u in work):
        yield from _explained_units(explainer, work, jobs, encoder, renderer)
        return
    if jobs <= 1 or len(pods) <= 2:
        # A pod no later pod shares its key with is `last`: its document is
        # neither kept nor searched for its own name. (Keys by their hash:
        # memory stays that of one pod; a collision merely keeps a document.)
        later = _shared_later(explainer.key(pi) for pi in pods)
        for i, pi in enumerate(pods):
            yield explainer.explain(pi, explainer.key(pi), last=not later[i])
        return
    # The first pod here: the caches it fills (pod index, parsed terms) are
    # then the workers' too.
    yield explainer.explain(pods[0], explainer.key(pods[0]))
    yield from _explained_by_workers(explainer, pods, min(jobs, len(pods) - 1), encoder, renderer)


def _shared_later(keys) -> list[bool]:
    """For each key, whether a later one may be the same (None: never)."""
    hashes = [None if k is None else hash(k) for k in keys]
    seen: set = set()
    out = [False] * len(hashes)
    for i in range(len(hashes) - 1, -1, -1):
        h = hashes[i]
        if h is not None:
            out[i] = h in seen
            seen.add(h)
    return out


def _explained_units(explainer: _PodExplainer, work: list, jobs: int, encoder=None, renderer=None):
    """Pods and workloads (sequence.units): a workload's replicas one after
    another here; the pods between them as without workloads, by workers
    when there are enough of them."""
    from .sequence import explain_workload

    i = 0
    while i < len(work):
        unit = work[i]
        if isinstance(unit, tuple):
            yield from explain_workload(explainer, *unit)
            i += 1
            continue
        j = i
        while j < len(work) and not isinstance(work[j], tuple):
            j += 1
        pods = work[i:j]
        last = j == len(work)
        if jobs <= 1 or len(pods) <= 2:
            for k, pi in enumerate(pods, 1):
                yield explainer.explain(pi, explainer.key(pi), last=last and k == len(pods))
        else:
            yield explainer.explain(pods[0], explainer.key(pods[0]))
            yield from _explained_by_workers(explainer, pods, min(jobs, len(pods) - 1), encoder, renderer)
        i = j


def _explained_by_workers(explainer: _PodExplainer, pods: list[PodInfo], jobs: int, encoder=None, renderer=None):
    """Pods 1... computed by worker processes, written in order. A pod whose
    scheduling key an earlier pod has is not sent: it takes that pod's
    result here. The run's random draws are made here, in pod order: a
    worker's result whose only draw was the final tie-break gets the draw
    made again; a cycle that drew otherwise (preemption with --tie-break
    random) or failed is computed again here, as --jobs 1 computes it."""
    from collections import deque

    from ..util.workers import WorkerPool

    rng = explainer.scheds.rng

    def task(i):
        # Whether the result may be shared is decided here too, while the
        # parent writes.
        doc, draws, drawn, own = explainer.cycle(pods[i], own=True)
        if encoder is not None and isinstance(doc.get("nodes"), list) and doc["nodes"]:
            # Writing a pod's nodes costs more than computing them: done here too.
            doc["nodes"] = encoder(doc["nodes"])
        # Drawing it for people: here too.
        if renderer is not None and not drawn:
            # (A drawn selected node is drawn again in the parent: its body
            # is drawn there, from the whole document.)
            doc = renderer(doc)
        return doc, draws, drawn, own

    window: deque = deque()  # (index, key, worker or None: computed here)
    in_flight: dict[str, int] = {}  # key -> pods of that key sent to workers, not yet read
    sent = 0
    next_i = 1
    with WorkerPool(task, jobs) as pool:
        while next_i < len(pods) or window:
            while next_i < len(pods) and sent < 2 * jobs and len(window) < 256:
                pi = pods[next_i]
                key = explainer.key(pi)
                w = None
                if not (explainer.shared(key) or in_flight.get(key)):
                    w = pool.submit(next_i)
                    if w is not None:
                        sent += 1
                        if key is not None:
                            in_flight[key] = in_flight.get(key, 0) + 1
                window.append((next_i, key, w))
                next_i += 1
            i, key, w = window.popleft()
            pi = pods[i]
            if w is None:
                yield explainer.explain(pi, key)
                continue
            sent -= 1
            ok, out = pool.result(w)
            if key is not None:
                in_flight[key] -= 1
                if not in_flight[key]:
                    del in_flight[key]
            if ok and explainer.transferable(out[1], out[2]):
                doc, draws, drawn, own = out
                del out
                if drawn:
                    doc["selectedNode"] = rng.choice(doc["topNodes"])
                explainer.keep(key, pi, doc, draws, drawn, own)
            else:
                del out
                doc, draws, drawn, own = explainer.cycle(pi, own=key is not None)
                explainer.keep(key, pi, doc, draws, drawn, own)
            yield doc
            del doc


def _choose_nodes(p: dict, r, nodes) -> None:
    """Narrow a pod document written with every node to a NodeChoice."""
    if nodes is None or nodes.is_all:
        return
    keep = nodes.pick(r.outline(), r.selected_node)
    p["nodes"] = [n for n in p["nodes"] if n["name"] in keep]


def _add_templates(p: dict, scheds, pi: PodInfo, templates) -> None:
    """--node-template: which pools could take an unschedulable pod."""
    if not templates:
        return
    from ..whatif.templates import add_templates

    add_templates(p, scheds, pi, templates)


def _add_fixes(p: dict, fw, pi: PodInfo, workload: Workload, templates=()) -> None:
    from ..fixes.find import find_fixes

    raw = workload.raw_pods.get(pi.key)
    if raw is None:
        return
    found = find_fixes(fw, pi, p, raw, workload=workload.workload_refs.get(pi.key), templates=templates)
    source = p.pop("source", None)
    p.update(found)
    if source is not None:
        p["source"] = source  # the pod's last key stays last
