"""What a command does, between reading input and rendering: the CLI calls
these and never computes anything itself."""

from __future__ import annotations

import gc
from dataclasses import dataclass, field

from .cluster import ClusterState, build_cluster
from .errors import InputError
from .framework.runner import Framework, queue_order
from .result import build_document
from .snapshot import PodInfo, build_snapshot
from .sources.admission import object_ref
from .sources.fixtures import read_objects


@dataclass
class Workload:
    """The cluster to schedule on and the pods to schedule, in queue order."""

    cluster: ClusterState
    pods: list[PodInfo]
    warnings: list[str] = field(default_factory=list)


def load_workload(snapshot_paths, pod_paths=()) -> Workload:
    """Read the snapshot (cluster) and the POD_FILEs.

    Objects in POD_FILEs other than pods (a PVC next to its pod, a
    PriorityClass) join the cluster. Without POD_FILEs the pods to schedule
    are the pending pods of the snapshot.
    """
    cluster_objects = read_objects(snapshot_paths)
    pod_objects = read_objects(pod_paths) if pod_paths else []
    incoming_uids = set()
    warnings = []
    for obj, origin in pod_objects:
        if obj["kind"] == "Pod":
            spec = obj.get("spec")
            if isinstance(spec, dict) and spec.get("nodeName"):
                # A pod that names its node never reaches the scheduler; the
                # user asks "where would this go", so ask it without the name.
                warnings.append(f"{origin}: {object_ref(obj)} has spec.nodeName set; "
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
        # Pods asked about never met the resourceclaim controller: create
        # their template claims as it would (snapshot pods stay as they are).
        from .plugins.dynamicresources.controller import instantiate_pod_claims

        for pod in pods:
            warnings.extend(instantiate_pod_claims(pod, cluster.resource_claim_templates, cluster.resource_claims))
    else:
        pods = cluster.pending_pods()
    pod_infos = queue_order([PodInfo(p) for p in pods])
    return Workload(cluster, pod_infos, warnings + cluster.warnings)


def new_framework(cluster: ClusterState, *, tie_break: str, seed: int | None):
    snapshot = build_snapshot(cluster)
    # The snapshot (millions of objects for a large cluster) lives as long as
    # the run: keep the cyclic GC from walking it again and again.
    gc.freeze()
    fw = Framework(snapshot, tie_break=tie_break, seed=seed)
    for pod in cluster.pending_pods():
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        if nominated and snapshot.get(nominated) is not None:
            fw.nominator.add(PodInfo(pod), nominated)
    return fw


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
