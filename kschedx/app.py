"""What a command does, between reading input and rendering: the CLI calls
these and never computes anything itself."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .cluster import ClusterState, build_cluster
from .errors import ClusterError, InputError
from .framework.profile import PROFILE_NAME
from .framework.runner import queue_order
from .gc_policy import collector_paused, pauses_collector
from .result import Tally, add_source, document_head, document_tail, pod_dict
from .sink import DocumentSink, ResultSink
from .snapshot import PodInfo
from .sources.admission import object_ref
from .sources import read_ahead as ahead_scan
from .sources.fixtures import CLASS_KINDS, ObjectList, read_objects
from .workloads import WORKLOAD_KINDS, expand_workloads


def _check_read_once(snapshot_paths, pod_paths) -> None:
    """A file named both as POD_FILE and in --snapshot (or twice) would make
    every object in it a duplicate: say that instead."""
    import os

    from .sources.fixtures import expand_paths

    seen: dict[str, str] = {}
    for role, paths in (("--snapshot", snapshot_paths), ("POD_FILE", pod_paths or ())):
        for path in expand_paths(paths):
            real = "-" if path == "-" else os.path.realpath(path)
            if real == "-" and real in seen:
                raise InputError("stdin (-) can be read only once: give it to --snapshot or as a POD_FILE, "
                                 "not both", source="<stdin>")
            if real in seen:
                how = f"twice as {role}" if seen[real] == role else f"both as {seen[real]} and as {role}"
                raise InputError(f"given {how}: each object in it would be a duplicate", source=path)
            seen[real] = role


def _sources(paths) -> str:
    return ", ".join("<stdin>" if p == "-" else str(p) for p in paths)


def _no_pods(objects, expansions) -> str:
    """Why POD_FILEs gave no pod to evaluate: nothing at all, workloads of no
    replicas, or only other kinds."""
    if not objects:
        return "holds no Kubernetes objects: no pods to evaluate"
    if expansions:
        return "no pods to evaluate: " + "; ".join(n.partition(": ")[2] or n for n in expansions)
    from .cluster import suggest_kind

    kinds: dict[str, int] = {}
    for obj, _ in objects:
        kinds[obj["kind"]] = kinds.get(obj["kind"], 0) + 1
    for kind in kinds:
        if suggest_kind(kind) in ("Pod", *WORKLOAD_KINDS):
            return f"no pods to evaluate: kind {kind!r} is not a kind (did you mean {suggest_kind(kind)}?)"
    found = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    return (f"no Pod or workload (Deployment, Job, ...) to evaluate, only {found}; "
            "cluster objects go in --snapshot")


@dataclass
class Workload:
    """The cluster to schedule on and the pods to schedule, in queue order."""

    cluster: ClusterState
    pods: list[PodInfo]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # uid -> {"file", "line"}: where a pod to schedule was read from, for CI
    # annotations (line: of its metadata.name, POD_FILEs only).
    sources: dict[str, dict] = field(default_factory=dict)
    # uids of the pods asked for by name (POD_FILE, NAMESPACE/NAME): a pod no
    # profile serves fails the exit code only when it was asked for.
    asked: set = field(default_factory=set)
    # "namespace/name" -> the pod as written, before admission (keep_raw):
    # `explain --fix` writes its patches against these.
    raw_pods: dict[str, dict] = field(default_factory=dict)


def load_workload(snapshot_paths, pod_paths=(), *, cluster_objects=None, namespace: str | None = None,
                  enforce_namespace: bool | None = None, keep_raw: bool = False, read_ahead: bool = True) -> Workload:
    """Read the snapshot (cluster) and the POD_FILEs.

    Objects in POD_FILEs other than pods (a PVC next to its pod, a
    PriorityClass) join the cluster. Without POD_FILEs the pods to schedule
    are the pending pods of the snapshot. `cluster_objects`, (object, origin)
    pairs read elsewhere (a live cluster), stand in for the snapshot files.
    `namespace` is given to POD_FILE objects that have none, as `kubectl apply
    -n` does; `enforce_namespace` (default: when a namespace is given) refuses
    objects of another namespace, as kubectl does for an explicit -n.
    `read_ahead`: a second process may help read a big snapshot
    (sources/read_ahead.py); False keeps the load in this one.
    """
    # Reading a file twice needs a file: not stdin.
    read_ahead = read_ahead and "-" not in (snapshot_paths or ()) and "-" not in (pod_paths or ())
    try:
        return _load_workload(snapshot_paths, pod_paths, cluster_objects, namespace, enforce_namespace, keep_raw,
                              read_ahead)
    except ahead_scan.Void:
        # A document the read-ahead read otherwise than the parser (two
        # "items" keys...): read it again, in this process alone.
        ahead_scan.discard()
        return _load_workload(snapshot_paths, pod_paths, cluster_objects, namespace, enforce_namespace, keep_raw,
                              False)
    finally:
        ahead_scan.discard()  # a read-ahead of a snapshot that was not built (sources/read_ahead.py)


def _load_workload(snapshot_paths, pod_paths, cluster_objects, namespace, enforce_namespace,
                   keep_raw, allow_read_ahead) -> Workload:
    if cluster_objects is None:
        _check_read_once(snapshot_paths, pod_paths)
        cluster_objects = read_objects(snapshot_paths, read_ahead=allow_read_ahead)
        if snapshot_paths and not cluster_objects:
            # An empty file or an empty pipe (`kubectl get ... | kschedx` after kubectl
            # failed): not "no pending pods", which would read as a finding.
            raise InputError("holds no Kubernetes objects: the snapshot is empty", source=_sources(snapshot_paths))
    else:
        cluster_objects = list(cluster_objects)
    pod_objects = read_objects(pod_paths, lines=True) if pod_paths else []
    if namespace is not None:
        _place_in_namespace(pod_objects, namespace,
                            enforce=namespace is not None if enforce_namespace is None else enforce_namespace)
    incoming_uids = set()
    warnings = []
    notes: list[str] = []
    if any(obj.get("kind") in WORKLOAD_KINDS for obj, _ in pod_objects):
        nodes = [obj for obj, _ in cluster_objects + pod_objects if obj.get("kind") == "Node"]
        pod_objects, notes = expand_workloads(pod_objects, nodes, cluster_objects)
    for obj, origin in pod_objects:
        if obj["kind"] == "Pod":
            spec = obj.get("spec")
            if isinstance(spec, dict) and spec.get("nodeName"):
                # A pod that names its node never reaches the scheduler; the
                # user asks "where would this go", so ask it without the name.
                warnings.append(f"{origin}: {object_ref(obj)} has spec.nodeName set; "
                                "evaluating it as if it were pending")
                obj["spec"] = {k: v for k, v in spec.items() if k != "nodeName"}
    raw_pods = _raw_pending_pods(cluster_objects + pod_objects) if keep_raw else {}
    classes = None
    if isinstance(cluster_objects, ObjectList):
        # The snapshot's classes were noted as it was read; the POD_FILEs' are few.
        classes = cluster_objects.classes + [pair for pair in pod_objects if pair[0].get("kind") in CLASS_KINDS]
    cluster = build_cluster(cluster_objects + pod_objects, classes=classes)
    if pod_paths:
        incoming = set()
        for obj, _ in pod_objects:
            if obj["kind"] == "Pod":
                incoming_uids.add(obj["metadata"]["uid"])
                incoming.add(id(obj))
        # The pods asked about follow the snapshot's objects, and admission
        # keeps both the order and the objects: they end cluster.pods (but
        # the terminal ones, which it leaves out). Found from the end, the
        # snapshot's 150,000 pods are not looked at.
        first = len(cluster.pods)
        while first and id(cluster.pods[first - 1]) in incoming:
            first -= 1
        pods = cluster.pods[first:]
        if not pods:
            raise InputError(_no_pods(pod_objects, notes), source=_sources(pod_paths))
        # Pods asked about never met the resourceclaim controller: create
        # their template claims as it would (snapshot pods stay as they are).
        from .plugins.dynamicresources.controller import instantiate_pod_claims

        for pod in pods:
            warnings.extend(instantiate_pod_claims(pod, cluster.resource_claim_templates, cluster.resource_claims))
    else:
        pods = cluster.pending_pods()
    for key, pdb in sorted(cluster.pod_disruption_budgets.items()):
        if "disruptionsAllowed" not in (pdb.get("status") or {}):
            # kube-scheduler reads the count the disruption controller writes;
            # without it a PDB allows no disruption at all.
            warnings.append(f"PodDisruptionBudget {key} has no status.disruptionsAllowed: "
                            "preemption takes it as 0, as kube-scheduler would")
    pod_infos = queue_order([PodInfo(p) for p in pods])
    sources = _pod_sources(pod_objects if pod_paths else cluster_objects if snapshot_paths else ())
    return Workload(cluster, pod_infos, warnings + cluster.warnings, notes, sources, set(incoming_uids), raw_pods)


def _raw_pending_pods(objects) -> dict[str, dict]:
    """Copies of the pods without a node as written (admission changes them in place)."""
    import copy

    out = {}
    for obj, _ in objects:
        if obj.get("kind") != "Pod" or not isinstance(obj.get("metadata"), dict):
            continue
        spec = obj.get("spec")
        if isinstance(spec, dict) and not spec.get("nodeName"):
            meta = obj["metadata"]
            out[f"{meta.get('namespace') or 'default'}/{meta.get('name')}"] = copy.deepcopy(obj)
    return out


def _pod_sources(objects) -> dict[str, dict]:
    """Where each pod read from a file came from (admission gave every pod
    its uid in place)."""
    out = {}
    for obj, origin in objects:
        if obj.get("kind") != "Pod" or origin.path == "<stdin>":
            continue
        uid = (obj.get("metadata") or {}).get("uid")
        if uid:
            out[uid] = {"file": origin.path, "line": origin.line} if origin.line else {"file": origin.path}
    return out


def _place_in_namespace(objects, namespace: str, *, enforce: bool) -> None:
    from .sources.admission import NAMESPACED_KINDS

    for obj, origin in objects:
        if obj.get("kind") not in NAMESPACED_KINDS or not isinstance(obj.get("metadata"), dict):
            continue
        meta = obj["metadata"]
        if not meta.get("namespace"):
            meta["namespace"] = namespace
        elif enforce and meta["namespace"] != namespace:
            raise InputError(f"{object_ref(obj)}: metadata.namespace {meta['namespace']!r} does not match "
                             f"the namespace {namespace!r} given with -n (pass -n {meta['namespace']}, "
                             "or leave metadata.namespace out)", source=str(origin))


def new_schedulers(cluster: ClusterState, *, tie_break: str, seed: int | None, config=None, sampling: str = "all"):
    """The frameworks of a run, one per profile of `config` (the default
    profile without one), over one snapshot (dispatch.Schedulers).
    `sampling`: "all" evaluates every node; "upstream" stops searching where
    kube-scheduler's node sampling would."""
    from .dispatch import Schedulers

    return Schedulers(cluster, tie_break=tie_break, seed=seed, config=config, sampling=sampling)


def new_framework(cluster: ClusterState, *, tie_break: str, seed: int | None):
    """The default profile's framework over the cluster."""
    return new_schedulers(cluster, tie_break=tie_break, seed=seed).primary


def load_workload_from_cluster(conn, pod_paths=(), pod_refs=(), all_pending: bool = False, *,
                               progress=None, selection=None, keep_raw: bool = False) -> Workload:
    """A live cluster instead of a snapshot: exactly the Workload load_workload
    gives for a `kschedx snapshot` of it.

    The pods to schedule are the POD_FILE pods, the pending pods named by
    `pod_refs` ("namespace/name", or "name" in the selection's namespace), and
    with `all_pending` every pending pod the selection (kubectl's -n, -A, -l,
    --field-selector; by default the context's namespace) takes.
    Kinds the cluster would not let us read are recorded (SnapshotInfo, as a
    snapshot file records them): the plugins reading them are notEvaluated.
    """
    from .cluster import snapshot_info
    from .errors import UsageError
    from .sources.fixtures import Origin

    if not (pod_paths or pod_refs or all_pending):
        raise UsageError("which pods? give POD_FILEs, NAMESPACE/NAME of pending pods, or --all-pending")
    read = conn.read_objects(progress)
    origin = Origin(f"cluster {conn.server}")
    objects = [(obj, origin) for obj in read.objects]
    objects.append((snapshot_info(server=conn.server, context=conn.context_name,
                                  unreadable=read.unreadable, fields="scheduling"), origin))
    explicit = selection is not None and selection.namespace is not None
    # Like `kubectl apply -f`: objects without a namespace go to the context's; only an
    # explicit -n refuses objects of another one.
    try:
        workload = load_workload((), pod_paths, cluster_objects=objects,
                                 namespace=selection.namespace if explicit else conn.namespace,
                                 enforce_namespace=explicit, keep_raw=keep_raw)
    except InputError as e:
        if e.source is not origin:
            raise  # a POD_FILE: the user's input
        raise served_wrong_shape(e) from None
    workload.warnings[:0] = read.warnings
    if pod_refs or all_pending:
        select_pods(workload, pod_refs, all_pending=all_pending, keep=bool(pod_paths),
                    where=f"the cluster ({conn.server})", selection=selection,
                    default_namespace=conn.namespace)
    return workload


def select_pods(workload: Workload, pod_refs=(), *, all_pending: bool = False, keep: bool = False,
                where: str = "the snapshot", selection=None, default_namespace: str | None = None) -> None:
    """Schedule the pending pods named "namespace/name" or "name" (and with
    `all_pending`, every pending pod the selection takes) instead of, or with
    `keep` besides, the workload's pods. All of them in queue order.

    `default_namespace` is the source's own (a kubeconfig context's; None for
    a snapshot, whose pending pods are taken from every namespace unless -n
    says otherwise); a pod named without a namespace is in -n's, else that
    one, else "default"."""
    from .selection import PodSelection

    selection = selection or PodSelection()
    chosen = list(workload.pods) if keep else []
    seen = {pi.uid for pi in chosen}
    pods = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in workload.cluster.pods}
    picked = []
    name_namespace = selection.namespace or default_namespace or "default"
    for ref in pod_refs:
        ns, _, name = ref.rpartition("/")
        key = f"{ns or name_namespace}/{name}"
        pod = pods.get(key)
        if pod is None:
            raise InputError(f"pod {key} not found in {where} (pods that finished, Succeeded or Failed, "
                             "are not read)")
        if pod["spec"].get("nodeName"):
            raise InputError(f"pod {key} is already bound to node {pod['spec']['nodeName']}: only pending "
                             "pods are scheduled (to ask where it would go, save it without "
                             "spec.nodeName and pass the file)")
        picked.append(pod)
    workload.asked = (set(workload.asked) if keep else set()) | {p["metadata"]["uid"] for p in picked}
    if all_pending:
        pending = workload.cluster.pending_pods()
        if selection.given or default_namespace is not None:
            matches = selection.matcher(default_namespace)
            pending = [p for p in pending if matches(p)]
            if not pending:
                workload.warnings.append(f"no pending pods {selection.describe(default_namespace)} in {where}")
        picked.extend(pending)
    # Input order breaks queue-order ties: take the cluster's order, not the
    # command line's, so naming pods or taking them all orders them alike.
    position = {id(p): i for i, p in enumerate(workload.cluster.pods)}
    picked.sort(key=lambda p: position[id(p)])
    for pod in picked:
        if pod["metadata"]["uid"] not in seen:
            seen.add(pod["metadata"]["uid"])
            chosen.append(PodInfo(pod))
    workload.pods = queue_order(chosen)


def served_wrong_shape(e: InputError) -> ClusterError:
    """An object the API server served that no API server stores: the
    cluster's problem (exit 4), not the user's input (exit 3)."""
    return ClusterError(f"{e} (served by the API server; a conforming API server never stores such an object)")


def snapshot(conn, path: str, *, full: bool = False, progress=None):
    """Write the cluster as a fixture file (snapshot_writer); returns its summary."""
    from .cluster import snapshot_info, unreadable_warning
    from .snapshot_writer import write_snapshot
    from .sources.shape import check_shape

    read = conn.read_objects(progress, full=full)
    origin = f"cluster {conn.server}"
    for obj in read.objects:
        try:
            check_shape(obj, origin, object_ref(obj))
        except InputError as e:
            # Nothing is written: a snapshot kschedx could not read back is no snapshot.
            raise served_wrong_shape(e) from None
    info = snapshot_info(server=conn.server, context=conn.context_name, unreadable=read.unreadable,
                         fields="full" if full else "scheduling")
    summary = write_snapshot(path, read.objects, info)
    summary.warnings = read.warnings + [unreadable_warning(k, why) for k, why in sorted(read.unreadable.items())]
    return summary


def explain(workload: Workload, *, tie_break: str = "random", seed: int | None = None, config=None,
            sampling: str = "all", fix: bool = False, nodes=None) -> dict:
    """Every pod against the same snapshot: the whole document."""
    sink = DocumentSink()
    explain_into(sink, workload, tie_break=tie_break, seed=seed, config=config, sampling=sampling, fix=fix,
                 nodes=nodes)
    return sink.doc


def explain_into(sink: ResultSink, workload: Workload, *, tie_break: str = "random",
                 seed: int | None = None, config=None, sampling: str = "all", fix: bool = False,
                 nodes=None, reuse: bool = True, jobs: int = 1) -> int:
    """Every pod against the same snapshot, each result handed to `sink` as
    soon as it is computed and then dropped. Returns the exit code.
    `config`: a SchedulerConfig (--config): each pod is evaluated by the
    profile of its schedulerName. Each pod is its own first scheduling cycle
    (node sampling starts at index 0): an answer does not depend on which
    other pods were asked about. `fix`: each Unschedulable pod's result
    gains `fixes`, changes checked by running its cycle again (kschedx/fixes;
    the workload must be loaded with keep_raw). `nodes`: a NodeChoice
    (--nodes), which node records each pod's document keeps (None: all).
    `reuse`: a pod identical to an earlier one for scheduling takes its
    result (kschedx/reuse.py); `jobs`: worker processes
    (kschedx/workers.py). Neither changes the output."""
    scheds = new_schedulers(workload.cluster, tie_break=tie_break, seed=seed, config=config, sampling=sampling)
    pods = scheds.queue_order(workload.pods)
    sink.begin(_head(scheds, "explain", nodes))
    tally = Tally()
    if scheds.extenders is not None:
        # An extender is a service of its own: it sees every pod, in order, once.
        reuse, jobs = False, 1
    explainer = _PodExplainer(scheds, workload, reuse, fix, nodes, getattr(sink, "node_records_encoder", None),
                              getattr(sink, "reads_score_details", True))
    explained = _explained(explainer, pods, jobs, getattr(sink, "nodes_encoder", None),
                           getattr(sink, "body_renderer", None))
    while True:
        with collector_paused():  # from the pod's cycle until it is written and dropped
            p = next(explained, None)
            if p is None:
                break
            tally.add(p)
            sink.pod(p)
            del p  # the sink has it written: only the next pod is kept
    sink.end(_tail(scheds, workload))
    return tally.exit_code


class _PodExplainer:
    """explain's work for one pod: its cycle, or an identical pod's result."""

    def __init__(self, scheds, workload: Workload, reuse: bool, fix: bool = False, nodes=None, encoder=None,
                 score_details: bool = True):
        from .reuse import ResultReuse

        self.scheds = scheds
        self.encoder = encoder  # the sink's node_records_encoder
        self.score_details = score_details  # whether the sink reads score explanations
        self.workload = workload
        self.fix = fix
        self.nodes = nodes
        # --nodes failing|top=N keeps the selected node: a document whose
        # node was drawn at random is then its draw's own.
        self.draw_shapes_nodes = nodes is not None and not nodes.is_all
        self.reuse = ResultReuse(scheds, workload) if reuse else None

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
        drawn = r.tie_drawn
        own = own and self.reuse is not None
        records = None
        if self.fix and r.status == "Unschedulable":
            # The fix search reads every node's verdicts, whatever --nodes writes.
            doc = _pod_document(r, "explain", self.workload)
            _add_fixes(doc, scheds.framework_for(pi), pi, self.workload)
            _choose_nodes(doc, r, self.nodes)
        else:
            whole = self.encoder is None and (self.nodes is None or self.nodes.is_all)
            if whole:
                # Every node's explanations computed once, now: the document's
                # node dicts are then built a column at a time (result_dicts),
                # and names_own_pod reads the same records.
                r.settle(self.score_details)
            doc = _pod_document(r, "explain", self.workload, self.nodes, self.encoder)
            if whole and own:
                records = r.nodes  # built by the document (read before it, they change its counts)
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
    `renderer`: its body_renderer, applied by the workers."""
    if jobs <= 1 or len(pods) <= 2:
        for i, pi in enumerate(pods, 1):
            yield explainer.explain(pi, explainer.key(pi), last=i == len(pods))
        return
    # The first pod here: the caches it fills (pod index, parsed terms) are
    # then the workers' too.
    yield explainer.explain(pods[0], explainer.key(pods[0]))
    yield from _explained_by_workers(explainer, pods, min(jobs, len(pods) - 1), encoder, renderer)


def _explained_by_workers(explainer: _PodExplainer, pods: list[PodInfo], jobs: int, encoder=None, renderer=None):
    """Pods 1... computed by worker processes, written in order. A pod whose
    scheduling key an earlier pod has is not sent: it takes that pod's
    result here. The run's random draws are made here, in pod order: a
    worker's result whose only draw was the final tie-break gets the draw
    made again; a cycle that drew otherwise (preemption with --tie-break
    random) or failed is computed again here, as --jobs 1 computes it."""
    from collections import deque

    from .workers import WorkerPool

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


def _add_fixes(p: dict, fw, pi: PodInfo, workload: Workload) -> None:
    from .fixes import find_fixes

    raw = workload.raw_pods.get(pi.key)
    if raw is None:
        return
    found = find_fixes(fw, pi, p, raw)
    source = p.pop("source", None)
    p.update(found)
    if source is not None:
        p["source"] = source  # the pod's last key stays last


def simulate(workload: Workload, *, tie_break: str = "random", seed: int | None = None, progress=None,
             detail: str = "full", config=None, sampling: str = "all", nodes=None) -> dict:
    """The pods one after another (see simulate_into): the whole document."""
    sink = DocumentSink()
    simulate_into(sink, workload, tie_break=tie_break, seed=seed, progress=progress, detail=detail, config=config,
                  sampling=sampling, nodes=nodes)
    return sink.doc


def simulate_into(sink: ResultSink, workload: Workload, *, tie_break: str = "random", seed: int | None = None,
                  progress=None, detail: str = "full", config=None, sampling: str = "all", nodes=None) -> int:
    """The pods one after another in queue order, each outcome applied to the
    snapshot before the next pod, as kube-scheduler's cache would see it.

    - Scheduled: the pod is assumed on its node (NodeInfo updated in place).
    - Preemption: the victims are deleted (gone for good, not re-queued),
      lower-priority pods nominated to the node lose their nomination, and
      the preemptor is retried at once: nominated to the node, it is tried
      there first and placed.
    - Unschedulable: stays pending; a failed preemption clears its
      nomination, as upstream's PostFilterResult does.

    Each pod's result goes to `sink` as soon as it is final: at once, unless
    a later pod of higher priority could still preempt it (it would gain
    `preemptedBy`); queue order puts higher priorities first, so that wait
    is empty in practice. `progress(done, total)` is called after each pod.
    detail "placements" leaves out each pod's per-node verdicts and scores
    (every other field is kept); "failures" keeps them for the pods left
    unplaced only; `nodes` (--nodes) chooses among the records kept.
    Returns the exit code. `config`: as for explain_into.
    Node sampling's start index is carried from each scheduling cycle to the
    next, as kube-scheduler carries it (the run starting at 0).
    """
    from .simulation import Simulation, without_nomination

    scheds = new_schedulers(workload.cluster, tie_break=tie_break, seed=seed, config=config, sampling=sampling)
    snapshot = scheds.snapshot
    sim = Simulation(scheds)
    queue = scheds.queue_order(list(workload.pods))
    sink.begin(_head(scheds, "simulate", nodes))
    before = node_usage(snapshot)
    position = {pi.uid: i for i, pi in enumerate(queue)}
    # Highest priority among the pods after position i: a placed pod of at
    # least that priority can no longer be preempted by this run.
    later_max = [0] * len(queue)
    highest = None
    for i in range(len(queue) - 1, -1, -1):
        later_max[i] = highest
        highest = queue[i].priority if highest is None else max(highest, queue[i].priority)
    held: dict[str, dict] = {}  # uid -> document of a placed pod a later pod could still preempt
    waiting: list[tuple[str, dict, int]] = []  # (uid, pod document, priority) not yet handed to the sink
    tally = Tally()
    encoder = getattr(sink, "node_records_encoder", None)
    summary = {"pods": 0, "placed": 0, "placedByPreemption": 0, "unschedulable": 0, "gated": 0, "errors": 0,
               "preemptions": 0, "victims": 0}
    if config is not None:
        summary["noProfile"] = 0  # pods of schedulerNames no profile serves

    def release(i):
        # Hand over, in queue order, every pod no pod after position i can preempt.
        while waiting:
            uid, p, priority = waiting[0]
            if p["placedNode"] and later_max[i] is not None and later_max[i] > priority:
                return
            waiting.pop(0)
            held.pop(uid, None)
            _count(summary, tally, p)
            sink.pod(p)

    for i in range(len(queue)):
        pi = queue[i]
        # Explanations are read before the snapshot changes; "failures" keeps
        # them only for pods that are not placed at once.
        settled = False

        def settle(r):
            nonlocal settled
            settled = detail == "full" or (detail == "failures" and r.status != "Scheduled")
            return settled

        r = sim.step(pi, settle=settle)
        if r.status != "Scheduled" and r.nominated_node:
            summary["preemptions"] += 1
            summary["victims"] += len(r.victims)
            for v in r.victims:
                earlier = held.get(v.uid)
                if earlier is not None:
                    earlier["preemptedBy"] = pi.key
                    if "source" in earlier:  # the pod's last key stays last
                        earlier["source"] = earlier.pop("source")
            for np in r.cleared_nominations:
                j = position.get(np.uid)
                if j is not None and j > i:
                    queue[j] = without_nomination(queue[j])
        if detail == "placements" or (detail == "failures" and (r.placed_node or not settled)):
            r.drop_nodes()
        p = _pod_document(r, "simulate", workload, nodes, encoder)
        del r
        if p["placedNode"]:
            held[pi.uid] = p
        waiting.append((pi.uid, p, pi.priority))
        del p
        release(i)
        if progress is not None:
            progress(i + 1, len(queue))

    after = node_usage(snapshot)
    extra = {"detail": detail, "summary": summary, "utilization": _utilization(snapshot, before, after)}
    if workload.notes:
        extra["inputNotes"] = list(workload.notes)
    sink.end(_tail(scheds, workload, extra))
    return tally.exit_code


def _count(summary: dict, tally: Tally, p: dict) -> None:
    """simulate's closing summary, one pod at a time. A pod placed and later
    preempted still counts as placed (its placedNode stays)."""
    tally.add(p)
    summary["pods"] += 1
    placed = bool(p["placedNode"])
    summary["placed"] += placed
    summary["placedByPreemption"] += placed and p["status"] != "Scheduled"
    summary["unschedulable"] += not placed and p["status"] == "Unschedulable"
    summary["gated"] += p["status"] == "Gated"
    summary["errors"] += p["status"] == "Error"
    if "noProfile" in summary:
        summary["noProfile"] += p["status"] == "NoProfile"


@pauses_collector
def _pod_document(r, mode: str, workload: Workload, nodes=None, encoder=None) -> dict:
    p = pod_dict(r, mode, nodes, encoder)
    p["profile"] = getattr(r, "profile", PROFILE_NAME)
    if p["status"] == "NoProfile" and r.pod_info.uid in workload.asked:
        p["askedByName"] = True
    return add_source(p, workload.sources)


def _head(scheds, mode: str, nodes=None) -> dict:
    head = document_head(mode=mode, tie_break=scheds.tie_break, profile=scheds.primary.profile.name,
                         not_evaluated=scheds.not_evaluated,
                         node_detail=None if nodes is None or nodes.is_all else nodes.text)
    if scheds.config is not None:
        head["profiles"] = scheds.profile_names
        head["config"] = scheds.config.source
    return head


def _tail(scheds, workload: Workload, extra: dict | None = None) -> dict:
    """What follows the pods: the warnings of the input, of the configuration
    and of the snapshot, and the mode's own closing fields."""
    config_warnings = scheds.config.warnings if scheds.config is not None else []
    return document_tail(warnings=workload.warnings + config_warnings + scheds.snapshot.warnings, extra=extra)


def node_usage(snapshot) -> dict[str, dict]:
    """Requested cpu (millicores), memory (bytes) and pod count per node."""
    return {
        ni.name: {"cpu": ni.requested.milli_cpu, "memory": ni.requested.memory, "pods": len(ni.pods)}
        for ni in snapshot.node_infos
    }


# Labels that name a node's group (pool) in the common managed clusters, the
# first one present wins; instance type last, as a group of like nodes.
NODE_GROUP_LABELS = (
    "karpenter.sh/nodepool",
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "node.kubernetes.io/instance-type",
)
_NAME_STEM = re.compile(r"^(.*?[a-z])[-.]?[0-9]+$")


def node_group(name: str, labels: dict) -> str:
    """The group a node belongs to, for charts of many nodes: `label=value` of
    the first NODE_GROUP_LABELS label it has, else its name without the
    trailing number (`worker-a12` -> `worker-a*`), else its name."""
    for key in NODE_GROUP_LABELS:
        value = labels.get(key)
        if value:
            return f"{key}={value}"
    m = _NAME_STEM.match(name)
    return f"{m.group(1)}*" if m else name


def _utilization(snapshot, before: dict, after: dict) -> list[dict]:
    out = []
    for ni in snapshot.node_infos:
        alloc = ni.allocatable
        out.append({
            "node": ni.name,
            "nodeGroup": node_group(ni.name, ni.labels),
            "allocatable": {"cpu": alloc.milli_cpu, "memory": alloc.memory, "pods": alloc.allowed_pod_number},
            "before": before[ni.name],
            "after": after[ni.name],
        })
    return out
