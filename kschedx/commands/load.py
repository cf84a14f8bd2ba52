"""The pods a command is about, and the cluster they are scheduled on: a
Workload read from snapshot files or a live cluster, with POD_FILEs
(workloads expanded into their pods), the pending pods chosen by name or
selector, in queue order."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..framework.queue import queue_order
from ..sources import read_ahead as ahead_scan
from ..sources.admission import object_ref
from ..sources import strict
from ..sources.fixtures import CLASS_KINDS, ObjectList, read_objects
from ..sources.strict import Validation
from ..sources.workloads import WORKLOAD_KINDS, expand_workloads
from ..state.cluster import ClusterState, build_cluster
from ..state.types import PodInfo
from ..util.errors import ClusterError, InputError

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
    # "namespace/name" -> the WorkloadRef of a pod expanded from a POD_FILE
    # workload (keep_raw): its fixes patch the workload's pod template, and
    # its raw pod is the one that template makes as written.
    workload_refs: dict = field(default_factory=dict)
    # The workloads of the POD_FILEs (sources/workloads.WorkloadGroup, `pods`
    # their uids in the controller's order), and uid -> (group, index):
    # explain places a workload's replicas one after another.
    groups: list = field(default_factory=list)
    group_of: dict = field(default_factory=dict)


def load_workload(snapshot_paths, pod_paths=(), *, cluster_objects=None, namespace: str | None = None,
                  enforce_namespace: bool | None = None, keep_raw: bool = False, read_ahead: bool = True,
                  validation: Validation | None = None, server_version: str | None = None,
                  pods_optional: bool = False, controllers: bool = True) -> Workload:
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
    `validation` (default: strict): how the objects of the files are checked
    against the API of the run's version (sources/strict.py), that of
    --kube-version, else `server_version` (a live cluster's gitVersion) or
    the one the snapshot recorded, else the newest. `cluster_objects` are
    not checked (an API server served them).
    `controllers`: the command needs the pods' controllers (--drain,
    --node-template); without it, kinds of CONTROLLER_KINDS a snapshot
    recorded as unreadable are not warned about (see unreadable_warnings).
    """
    validation = validation or Validation()
    # Reading a file twice needs a file: not stdin.
    read_ahead = read_ahead and "-" not in (snapshot_paths or ()) and "-" not in (pod_paths or ())
    try:
        return _load_workload(snapshot_paths, pod_paths, cluster_objects, namespace, enforce_namespace, keep_raw,
                              read_ahead, validation, server_version, pods_optional, controllers)
    except ahead_scan.Void:
        # A document the read-ahead read otherwise than the parser (two
        # "items" keys...): read it again, in this process alone.
        ahead_scan.discard()
        return _load_workload(snapshot_paths, pod_paths, cluster_objects, namespace, enforce_namespace, keep_raw,
                              False, validation, server_version, pods_optional, controllers)
    finally:
        ahead_scan.discard()  # a read-ahead of a snapshot that was not built (sources/read_ahead.py)


def _load_workload(snapshot_paths, pod_paths, cluster_objects, namespace, enforce_namespace,
                   keep_raw, allow_read_ahead, validation, server_version, pods_optional=False,
                   controllers=True) -> Workload:
    duplicates = validation.notes_duplicates
    if cluster_objects is None:
        _check_read_once(snapshot_paths, pod_paths)
        cluster_objects = read_objects(snapshot_paths, read_ahead=allow_read_ahead, note_duplicates=duplicates)
        if snapshot_paths and not cluster_objects:
            # An empty file or an empty pipe (`kubectl get ... | kschedx` after kubectl
            # failed): not "no pending pods", which would read as a finding.
            raise InputError("holds no Kubernetes objects: the snapshot is empty", source=_sources(snapshot_paths))
    else:
        cluster_objects = list(cluster_objects)
    pod_objects = read_objects(pod_paths, lines=True, note_duplicates=duplicates) if pod_paths else []
    if namespace is not None:
        _place_in_namespace(pod_objects, namespace,
                            enforce=namespace is not None if enforce_namespace is None else enforce_namespace)
    validation_warnings = _validate(validation, cluster_objects, pod_objects, server_version)
    incoming_uids = set()
    warnings = validation_warnings
    notes: list[str] = []
    refs: dict = {}
    groups: list = []
    if any(obj.get("kind") in WORKLOAD_KINDS for obj, _ in pod_objects):
        nodes = [obj for obj, _ in cluster_objects + pod_objects if obj.get("kind") == "Node"]
        pod_objects, notes = expand_workloads(pod_objects, nodes, cluster_objects, refs if keep_raw else None,
                                              groups)
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
    for key, ref in refs.items():
        if key in raw_pods:
            # The pod its template makes as written (the expanded one carries
            # what the controller adds): a fix's patch applies to the template.
            import copy

            raw_pods[key] = dict(raw_pods[key], spec=copy.deepcopy(ref.template().get("spec") or {}))
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
            raise NoPodsToEvaluate(_no_pods(pod_objects, notes), notes, source=_sources(pod_paths))
        # Pods asked about never met the resourceclaim controller: create
        # their template claims as it would (snapshot pods stay as they are).
        from ..plugins.dynamicresources.controller import instantiate_pod_claims

        for pod in pods:
            warnings.extend(instantiate_pod_claims(pod, cluster.resource_claim_templates, cluster.resource_claims))
    else:
        pods = cluster.pending_pods()
        if not pods and snapshot_paths and not pods_optional:  # (--drain moves pods of its own)
            warnings.append(NO_PENDING)
    for key, pdb in sorted(cluster.pod_disruption_budgets.items()):
        if "disruptionsAllowed" not in (pdb.get("status") or {}):
            # kube-scheduler reads the count the disruption controller writes;
            # without it a PDB allows no disruption at all.
            warnings.append(f"PodDisruptionBudget {key} has no status.disruptionsAllowed: "
                            "preemption takes it as 0, as kube-scheduler would")
    pod_infos = queue_order([PodInfo(p) for p in pods])
    sources = _pod_sources(pod_objects if pod_paths else cluster_objects if snapshot_paths else ())
    unreadable = unreadable_warnings(cluster.unreadable_kinds, controllers=controllers)
    group_of = _group_members(groups, incoming_uids)
    return Workload(cluster, pod_infos, warnings + unreadable + cluster.warnings, notes, sources, set(incoming_uids),
                    raw_pods, refs, groups, group_of)


def _group_members(groups: list, uids: set) -> dict:
    """Each workload's pods as uids (admission gave them in place), and
    uid -> (group, index among its pods). Pods admission left out (none,
    today) are left out of their group too."""
    group_of = {}
    for g in groups:
        g.pods = [p["metadata"]["uid"] for p in g.pods if (p.get("metadata") or {}).get("uid") in uids]
        for i, uid in enumerate(g.pods):
            group_of[uid] = (g, i)
    return group_of


def _validate(validation: Validation, cluster_objects, pod_objects, server_version) -> list[str]:
    """The objects of the files read, but those of snapshots kschedx wrote,
    checked against the run's version (sources/strict.py): its warnings,
    or an InvalidObjects error."""
    items = []
    for objects in (cluster_objects, pod_objects):
        for part in getattr(objects, "files", ()):
            if not part.own:
                items.extend((obj, origin, part.duplicates) for obj, origin in objects[part.start:part.end])
    if not items:
        return []
    if server_version is None:
        for obj, _ in getattr(cluster_objects, "infos", ()):
            git_version = (obj.get("source") or {}).get("gitVersion") if isinstance(obj.get("source"), dict) else None
            if isinstance(git_version, str):
                server_version = git_version
                break
    return strict.check(items, validation.version(server_version), validation.mode)


# Said when a snapshot is given no POD_FILE and has no pending pod to take.
NO_PENDING = "the snapshot has no pending pods: name POD_FILEs to evaluate them against it"


def unreadable_warnings(unreadable: dict[str, str], *, controllers: bool) -> list[str]:
    """The warnings for the kinds that could not be read, those a live read of
    the same command would have read: it lists the pods' controllers
    (CONTROLLER_KINDS) only for --drain and --node-template
    (ClusterConnection.read_objects), while `kschedx snapshot` always lists
    them. So a snapshot whose Deployments were forbidden warns about them
    only where a live run would have tried to list them, and explaining the
    file says what explaining the cluster says. The kinds stay in
    ClusterState.unreadable_kinds either way."""
    from ..sources.kinds import CONTROLLER_KINDS

    skipped = set() if controllers else {k.kind for k in CONTROLLER_KINDS}
    return [unreadable_warning(kind, why) for kind, why in unreadable.items() if kind not in skipped]


def unreadable_warning(kind: str, why: str) -> str:
    """What a kind that could not be read costs: the plugins that read it
    (their declarations say) are listed in notEvaluated."""
    from ..plugins.registry import readers_of

    plugins = readers_of(kind)
    if plugins:
        cost = f"{', '.join(plugins)} {'is' if len(plugins) == 1 else 'are'} listed in notEvaluated"
    else:
        cost = "results ignore them"
    return f"{kind} objects could not be read ({why}): {cost}"


def _check_read_once(snapshot_paths, pod_paths) -> None:
    """A file named both as POD_FILE and in --snapshot (or twice) would make
    every object in it a duplicate: say that instead."""
    import os

    from ..sources.fixtures import expand_paths

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


class NoPodsToEvaluate(InputError):
    """POD_FILEs that gave no pod. `notes`: their workloads' expansions, for
    a command with words of its own for a workload of no pods (capacity)."""

    def __init__(self, message: str, notes: list[str], **where):
        super().__init__(message, **where)
        self.notes = notes


def _no_pods(objects, expansions) -> str:
    """Why POD_FILEs gave no pod to evaluate: workloads of no replicas,
    nothing at all, or only other kinds."""
    # Workloads first: a suspended Job leaves no object behind, and the file
    # is not empty.
    if expansions:
        return "no pods to evaluate: " + "; ".join(n.partition(": ")[2] or n for n in expansions)
    if not objects:
        return "holds no Kubernetes objects: no pods to evaluate"
    kinds: dict[str, int] = {}
    for obj, _ in objects:
        kinds[obj["kind"]] = kinds.get(obj["kind"], 0) + 1
    found = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    return (f"no Pod or workload (Deployment, Job, ...) to evaluate, only {found}; "
            "cluster objects go in --snapshot")


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
    from ..sources.admission import NAMESPACED_KINDS

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


def load_workload_from_cluster(conn, pod_paths=(), pod_refs=(), all_pending: bool = False, *,
                               progress=None, selection=None, keep_raw: bool = False,
                               controllers: bool = False, pods_required: bool = True,
                               validation: Validation | None = None) -> Workload:
    """A live cluster instead of a snapshot: exactly the Workload load_workload
    gives for a `kschedx snapshot` of it.

    The pods to schedule are the POD_FILE pods, the pending pods named by
    `pod_refs` ("namespace/name", or "name" in the selection's namespace), and
    with `all_pending` every pending pod the selection (kubectl's -n, -A, -l,
    --field-selector; by default the context's namespace) takes.
    Kinds the cluster would not let us read are recorded (SnapshotInfo, as a
    snapshot file records them): the plugins reading them are notEvaluated.
    `controllers`: also read the pods' controllers (a drain, node templates);
    without `pods_required` no pod need be named (a drain's own pods).
    """
    from ..util.errors import UsageError

    if pods_required and not (pod_paths or pod_refs or all_pending):
        raise UsageError("which pods? give POD_FILEs, NAMESPACE/NAME of pending pods, or --all-pending")
    return workload_of_read(conn, conn.read_objects(progress, controllers=controllers), pod_paths, pod_refs,
                            all_pending, selection=selection, keep_raw=keep_raw, validation=validation)


def workload_of_read(conn, read, pod_paths=(), pod_refs=(), all_pending: bool = False, *, selection=None,
                     keep_raw: bool = False, validation: Validation | None = None) -> Workload:
    """load_workload_from_cluster's Workload, from a ClusterRead already made
    (a watch keeps the read: its resourceVersions, its unreadable kinds)."""
    from ..sources.fixtures import Origin
    from ..sources.snapshot_info import server_git_version, snapshot_info

    origin = Origin(f"cluster {conn.server}")
    objects = [(obj, origin) for obj in read.objects]
    objects.append((snapshot_info(server=conn.server, context=conn.context_name,
                                  unreadable=read.unreadable, fields="scheduling", version=read.version), origin))
    explicit = selection is not None and selection.namespace is not None
    # Like `kubectl apply -f`: objects without a namespace go to the context's; only an
    # explicit -n refuses objects of another one.
    try:
        workload = load_workload((), pod_paths, cluster_objects=objects,
                                 namespace=selection.namespace if explicit else conn.namespace,
                                 enforce_namespace=explicit, keep_raw=keep_raw, validation=validation,
                                 server_version=server_git_version(read.version))
    except InputError as e:
        if e.source is not origin:
            raise  # a POD_FILE: the user's input
        raise served_wrong_shape(e) from None
    workload.warnings[:0] = read.warnings
    # "Now" for what depends on time (DynamicResources' binding timeout).
    workload.cluster.read_at = read.read_at
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
    from ..api.selection import PodSelection

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
            matching = [p for p in pending if matches(p)]
            if not matching and NO_PENDING not in workload.warnings:
                text = f"no pending pods {selection.describe(default_namespace)} in {where}"
                if pending:
                    text += (f": the selection matched none of its {len(pending)} pending "
                             f"pod{'' if len(pending) == 1 else 's'}")
                workload.warnings.append(text)
            pending = matching
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
