"""What a command does, between reading input and rendering: the CLI calls
these and never computes anything itself."""

from __future__ import annotations

from dataclasses import dataclass, field

from .cluster import ClusterState, build_cluster
from .errors import InputError
from .framework.runner import Framework, queue_order
from .result import build_document
from .snapshot import PodInfo, build_snapshot
from .sources.fixtures import read_objects


@dataclass
class Workload:
    """The cluster to schedule on and the pods to schedule, in queue order."""

    cluster: ClusterState
    pods: list[PodInfo]
    warnings: list[str] = field(default_factory=list)


def load_workload(snapshot_paths, pod_paths=(), *, cluster_objects=None) -> Workload:
    """Read the snapshot (cluster) and the POD_FILEs.

    Objects in POD_FILEs other than pods (a PVC next to its pod, a
    PriorityClass) join the cluster. Without POD_FILEs the pods to schedule
    are the pending pods of the snapshot. `cluster_objects`, (object, origin)
    pairs read elsewhere (a live cluster), stand in for the snapshot files.
    """
    cluster_objects = read_objects(snapshot_paths) if cluster_objects is None else list(cluster_objects)
    pod_objects = read_objects(pod_paths) if pod_paths else []
    incoming_uids = set()
    warnings = []
    for obj, origin in pod_objects:
        if obj["kind"] == "Pod":
            spec = obj.get("spec")
            if isinstance(spec, dict) and spec.get("nodeName"):
                # A pod that names its node never reaches the scheduler; the
                # user asks "where would this go", so ask it without the name.
                warnings.append(f"{origin}: pod {obj.get('metadata', {}).get('name')} has spec.nodeName set; "
                                "evaluating it as if it were pending")
                obj["spec"] = {k: v for k, v in spec.items() if k != "nodeName"}
    cluster = build_cluster(cluster_objects + pod_objects)
    if pod_paths:
        for obj, _ in pod_objects:
            if obj["kind"] == "Pod":
                incoming_uids.add(obj["metadata"]["uid"])
        pods = [p for p in cluster.pods if p["metadata"]["uid"] in incoming_uids]
        if not pods:
            raise InputError("no pods found in the given POD_FILE(s)", source=", ".join(pod_paths))
    else:
        pods = cluster.pending_pods()
    pod_infos = queue_order([PodInfo(p) for p in pods])
    return Workload(cluster, pod_infos, warnings + cluster.warnings)


def new_framework(cluster: ClusterState, *, tie_break: str, seed: int | None):
    snapshot = build_snapshot(cluster)
    fw = Framework(snapshot, tie_break=tie_break, seed=seed)
    for pod in cluster.pending_pods():
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        if nominated and snapshot.get(nominated) is not None:
            fw.nominator.add(PodInfo(pod), nominated)
    return fw


def load_workload_from_cluster(conn, pod_paths=(), pod_refs=(), all_pending: bool = False, *,
                               progress=None) -> Workload:
    """A live cluster instead of a snapshot: exactly the Workload load_workload
    gives for a `kschedx snapshot` of it.

    The pods to schedule are the POD_FILE pods, the pending pods named by
    `pod_refs` ("namespace/name"), and with `all_pending` every pending pod.
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
    workload = load_workload((), pod_paths, cluster_objects=objects)
    workload.warnings[:0] = read.warnings
    if pod_refs or all_pending:
        select_pods(workload, pod_refs, all_pending=all_pending, keep=bool(pod_paths),
                    where=f"the cluster ({conn.server})")
    return workload


def select_pods(workload: Workload, pod_refs=(), *, all_pending: bool = False, keep: bool = False,
                where: str = "the snapshot") -> None:
    """Schedule the pending pods named "namespace/name" (and with `all_pending`,
    every pending pod) instead of, or with `keep` besides, the workload's pods."""
    chosen = list(workload.pods) if keep else []
    seen = {pi.uid for pi in chosen}
    pods = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in workload.cluster.pods}
    picked = []
    for ref in pod_refs:
        ns, _, name = ref.rpartition("/")
        key = f"{ns or 'default'}/{name}"
        pod = pods.get(key)
        if pod is None:
            raise InputError(f"pod {key} not found in {where} (pods that finished, Succeeded or Failed, "
                             "are not read)")
        if pod["spec"].get("nodeName"):
            raise InputError(f"pod {key} is already bound to node {pod['spec']['nodeName']}: only pending "
                             "pods are scheduled (to ask where it would go, save it without "
                             "spec.nodeName and pass the file)")
        picked.append(pod)
    if all_pending:
        picked.extend(workload.cluster.pending_pods())
    # Input order breaks queue-order ties: take the cluster's order, not the
    # command line's, so naming pods or taking them all orders them alike.
    position = {id(p): i for i, p in enumerate(workload.cluster.pods)}
    picked.sort(key=lambda p: position[id(p)])
    for pod in picked:
        if pod["metadata"]["uid"] not in seen:
            seen.add(pod["metadata"]["uid"])
            chosen.append(PodInfo(pod))
    workload.pods = queue_order(chosen)


def snapshot(conn, path: str, *, full: bool = False, progress=None):
    """Write the cluster as a fixture file (snapshot_writer); returns its summary."""
    from .cluster import snapshot_info, unreadable_warning
    from .snapshot_writer import write_snapshot

    read = conn.read_objects(progress, full=full)
    info = snapshot_info(server=conn.server, context=conn.context_name, unreadable=read.unreadable,
                         fields="full" if full else "scheduling")
    summary = write_snapshot(path, read.objects, info)
    summary.warnings = read.warnings + [unreadable_warning(k, why) for k, why in sorted(read.unreadable.items())]
    return summary


def explain(workload: Workload, *, tie_break: str = "random", seed: int | None = None) -> dict:
    """Every pod against the same snapshot."""
    fw = new_framework(workload.cluster, tie_break=tie_break, seed=seed)
    results = [fw.schedule(pi) for pi in workload.pods]
    return build_document(
        results,
        mode="explain",
        tie_break=tie_break,
        profile=fw.profile.name,
        not_evaluated=fw.profile.not_evaluated,
        warnings=workload.warnings + fw.snapshot.warnings,
    )
