"""The Snapshot: the cluster as one scheduling cycle sees it (upstream's
backend/cache/snapshot.go), and build_snapshot, which makes it from a
ClusterState. Its nodes and pods are the types of types.py; the changes
made to it afterwards (simulate's placements, a watch's events) are the
cache's (cache.py).
"""

from __future__ import annotations

from ..features import Features, default_features
from ..util.gc_policy import builds_long_lived
from .cluster import ClusterState
from .types import ImageStateSummary, NodeInfo, PodInfo, SpecFacts, request_options, spec_facts_key

# Pods whose specs hold the same objects share what PodInfo derives from
# them (SpecFacts); False computes it for every pod (tests compare the two).
SHARE_SPEC_FACTS = True


class Snapshot:
    """The cluster as one scheduling cycle sees it."""

    def __init__(self, cluster: ClusterState, node_infos: list[NodeInfo], warnings: list[str] | None = None,
                 features: Features | None = None):
        self.cluster = cluster
        # The version and gates the snapshot was built for (NodeInfo and
        # PodInfo accounting follows some gates, as upstream's cache does).
        self.features = features if features is not None else default_features()
        self.request_options = request_options(self.features)
        self.node_infos = node_infos
        self.by_name = {ni.name: ni for ni in node_infos}
        self.warnings = warnings or []
        self.pod_infos: dict[str, PodInfo] = {}
        # The cluster's pods without a node when the snapshot was built
        # (cluster.pending_pods(), found on the way).
        self.pending_pods: list[dict] = []
        self.assigned_pod_node: dict[str, str] = {}  # uid -> node name
        # image name -> how many nodes hold it (ImageStateSummary.num_nodes)
        self.image_existence: dict[str, int] = {}
        # Changes when nodes are added, removed or relabelled (node-tree order).
        self.node_version = 0
        # -- slots the modules that own them fill in, when first asked --------
        # PodIndex | None, by state/pod_index.py index_of(): the pods by label
        # signature and by affinity terms (each NodeInfo.pod_index points to it).
        self.pod_index = None
        # NodeColumns | None, by state/node_columns.py columns_for(): the
        # nodes' resource numbers as columns; drop_columns() lets them go
        # when nodes come or go.
        self.node_columns = None
        # DRAState | None, by state/dra.py dra_state(): the run's DRA state
        # (claims in flight, allocated devices) over the cluster's DRA objects.
        self.dra = None

    # -- listers -------------------------------------------------------------
    def get(self, name: str) -> NodeInfo | None:
        return self.by_name.get(name)

    def num_nodes(self) -> int:
        return len(self.node_infos)

    def have_pods_with_affinity(self) -> list[NodeInfo]:
        return [ni for ni in self.node_infos if ni.pods_with_affinity]

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        return [ni for ni in self.node_infos if ni.pods_with_required_anti_affinity]

    def is_pvc_used_by_pods(self, key: str) -> bool:
        return any(key in ni.pvc_ref_counts for ni in self.node_infos)

    def pod_info(self, pod: dict, facts: "SpecFacts | None" = None) -> PodInfo:
        """A PodInfo whose requests follow the snapshot's feature gates."""
        return PodInfo(pod, facts, self.request_options)

    def drop_columns(self) -> None:
        """Nodes were added or removed: the columns are built again when next asked.
        (Also what lets a snapshot go: NodeInfos and their columns refer to each
        other, and a NodeInfo built to last is frozen out of the collector's sight.)"""
        self.node_columns = None
        for ni in self.node_infos:
            ni.columns = None
            ni.row = -1


def image_names(node: dict) -> set[str]:
    names = set()
    for image in (node.get("status") or {}).get("images") or ():
        names.update(image.get("names") or ())
    return names


def image_states_of(node: dict, existence: dict[str, int]) -> dict:
    """A node's ImageStateSummary per image name: the node's size of it, and
    how many nodes hold an image of that name."""
    states = {}
    for image in (node.get("status") or {}).get("images") or ():
        size = image.get("sizeBytes") or 0
        for name in image.get("names") or ():
            states[name] = ImageStateSummary(size, existence.get(name, 0))
    return states


@builds_long_lived
def build_snapshot(cluster: ClusterState, features: Features | None = None) -> Snapshot:
    """The snapshot of the cluster for the features' version and gates (the
    newest version's defaults when None)."""
    nodes = sorted(cluster.nodes, key=lambda n: n["metadata"]["name"])
    node_infos = [NodeInfo(n) for n in nodes]
    by_name = {ni.name: ni for ni in node_infos}

    # Image states: per node, each image name with the node's size and the
    # number of nodes holding an image of that name.
    existence: dict[str, int] = {}
    for n in nodes:
        for name in image_names(n):
            existence[name] = existence.get(name, 0) + 1
    for ni in node_infos:
        ni.image_states = image_states_of(ni.node, existence)

    snap = Snapshot(cluster, node_infos, features=features)
    snap.image_existence = existence
    missing: dict[str, int] = {}
    shared: dict[tuple, SpecFacts] = {}
    # Each node's pods, in input order, added at once below: the same
    # aggregates as add_pod() one by one, for a fraction of the cost.
    on_node: dict[str, list[PodInfo]] = {ni.name: [] for ni in node_infos}
    pod_infos, assigned = snap.pod_infos, snap.assigned_pod_node
    share = SHARE_SPEC_FACTS
    options = snap.request_options
    pending = snap.pending_pods
    # Groups of pods known to have the same facts (ClusterState.facts_groups),
    # for the pods still where they were when grouped.
    grouped = cluster.facts_groups
    if grouped is None or len(grouped[0]) != len(cluster.pods):
        grouped = ((), ())
    group_pods, group_of = grouped
    by_group: dict[int, SpecFacts] = {}
    for i, pod in enumerate(cluster.pods):
        node_name = pod["spec"].get("nodeName")
        if not node_name:
            pending.append(pod)
            continue
        pis = on_node.get(node_name)
        if pis is None:
            missing[node_name] = missing.get(node_name, 0) + 1
            continue
        if share:
            group = group_of[i] if group_pods and group_pods[i] is pod else -1
            if group >= 0:
                facts = by_group.get(group)
                pi = PodInfo(pod, facts, options)
                if facts is None:
                    by_group[group] = SpecFacts(pi)
            else:
                key = spec_facts_key(pod)
                facts = shared.get(key) if key is not None else None
                pi = PodInfo(pod, facts, options)
                if facts is None and key is not None:
                    shared[key] = SpecFacts(pi)
        else:
            pi = PodInfo(pod, None, options)
        pis.append(pi)
        uid = pi.uid
        pod_infos[uid] = pi
        assigned[uid] = node_name
    for ni in node_infos:
        pis = on_node[ni.name]
        if pis:
            ni.add_pods(pis)
    for name, count in sorted(missing.items()):
        snap.warnings.append(f"ignored {count} pod(s) bound to node {name!r}, which is not in the snapshot")
    return snap
