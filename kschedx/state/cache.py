"""The cache's changes to a snapshot (upstream's backend/cache/cache.go),
in two sets:

- simulate's and preemption's: a pod assumed on a node (AssumePod) and a
  pod taken off its node (ForgetPod, or RemovePod when a victim goes), in
  the order the scheduler's cache gives (the swap of NodeInfo.remove_pod);
- a watch's (state/live.py): pods and nodes added, updated and removed as
  events come, in the order a fresh read of the same objects gives
  (NodeInfo.insert_pod / delete_pod, nodes in name order), with the image
  counts across nodes kept.
"""

from __future__ import annotations

from bisect import bisect_left
from operator import attrgetter

from .snapshot import Snapshot, image_names, image_states_of
from .types import ImageStateSummary, NodeInfo, PodInfo

_NAME = attrgetter("name")


# -- simulate and preemption --------------------------------------------------------------
def assume_pod(snapshot: Snapshot, pi: PodInfo, node_name: str) -> None:
    """Place a pod on a node, as the scheduler cache's AssumePod does."""
    if pi.node_name != node_name:
        pod = dict(pi.pod)
        pod["spec"] = dict(pod["spec"], nodeName=node_name)
        pi = snapshot.pod_info(pod)
    snapshot.by_name[node_name].add_pod(pi)
    snapshot.pod_infos[pi.uid] = pi
    snapshot.assigned_pod_node[pi.uid] = node_name


def forget_pod(snapshot: Snapshot, pi: PodInfo) -> None:
    """A pod off its node (an assumed pod forgotten, a victim removed)."""
    node = snapshot.assigned_pod_node.pop(pi.uid, None)
    if node is not None:
        snapshot.by_name[node].remove_pod(pi)
    snapshot.pod_infos.pop(pi.uid, None)


# -- a live cluster's events: what a re-read would build -----------------------------------
def add_pod(snapshot: Snapshot, pi: PodInfo) -> bool:
    """A bound pod onto its node, in key order; False when the node is missing."""
    ni = snapshot.by_name.get(pi.node_name)
    if ni is None:
        return False
    ni.insert_pod(pi)
    snapshot.pod_infos[pi.uid] = pi
    snapshot.assigned_pod_node[pi.uid] = ni.name
    return True


def remove_pod(snapshot: Snapshot, pi: PodInfo) -> None:
    """A bound pod gone, the other pods of its node kept in their order."""
    node = snapshot.assigned_pod_node.pop(pi.uid, None)
    if node is not None:
        snapshot.by_name[node].delete_pod(pi)
    snapshot.pod_infos.pop(pi.uid, None)


def add_node(snapshot: Snapshot, node: dict) -> NodeInfo:
    """A new node, in name order, without pods; its image states and the
    other nodes' counts of its images are set."""
    ni = NodeInfo(node)
    i = bisect_left(snapshot.node_infos, ni.name, key=_NAME)
    snapshot.node_infos.insert(i, ni)  # in place: plugins compare the list by identity
    snapshot.by_name[ni.name] = ni
    if snapshot.pod_index is not None:
        ni.pod_index = snapshot.pod_index
    snapshot.drop_columns()
    snapshot.node_version += 1
    _images_changed(snapshot, ni, set(), image_names(node))
    return ni


def remove_node(snapshot: Snapshot, name: str) -> list[PodInfo]:
    """A node gone: its pods leave the snapshot and are returned."""
    ni = snapshot.by_name.pop(name)
    snapshot.node_infos.remove(ni)
    ni.columns = None  # a cycle (columns remember node lists) that gc.freeze() would keep
    ni.pod_index = None
    pods = list(ni.pods)
    for pi in pods:
        if snapshot.pod_index is not None:
            snapshot.pod_index.update(pi, name, -1)
        snapshot.pod_infos.pop(pi.uid, None)
        snapshot.assigned_pod_node.pop(pi.uid, None)
    snapshot.drop_columns()
    snapshot.node_version += 1
    _images_changed(snapshot, None, image_names(ni.node), set())
    return pods


def update_node(snapshot: Snapshot, node: dict) -> set[str]:
    """A node's new object: what changed of what scheduling reads
    ("labels", "spec", "status", "images", "metadata")."""
    ni = snapshot.by_name[node["metadata"]["name"]]
    old = ni.node
    changed = set()
    if (old["metadata"].get("labels") or {}) != (node["metadata"].get("labels") or {}):
        changed.add("labels")
    if {k: v for k, v in old["metadata"].items() if k not in ("labels", "resourceVersion")} != \
            {k: v for k, v in node["metadata"].items() if k not in ("labels", "resourceVersion")}:
        changed.add("metadata")
    if (old.get("spec") or {}) != (node.get("spec") or {}):
        changed.add("spec")
    old_status, new_status = old.get("status") or {}, node.get("status") or {}
    if old_status.get("images") != new_status.get("images"):
        changed.add("images")
    if {k: v for k, v in old_status.items() if k != "images"} != \
            {k: v for k, v in new_status.items() if k != "images"}:
        changed.add("status")
    ni.set_node(node)  # refreshes its columns' row
    if "labels" in changed:
        snapshot.node_version += 1
    if "images" in changed:
        _images_changed(snapshot, ni, image_names(old), image_names(node))
    return changed


def _images_changed(snapshot: Snapshot, ni: NodeInfo | None, old: set, new: set) -> None:
    """Counts of image names held by nodes, after a node's images went
    from `old` to `new`; `ni` (None: it is gone) gets its states again,
    every other node holding a changed name its summary of that name."""
    existence = snapshot.image_existence
    for name in old - new:
        n = existence.get(name, 0) - 1
        if n > 0:
            existence[name] = n
        else:
            existence.pop(name, None)
    for name in new - old:
        existence[name] = existence.get(name, 0) + 1
    if ni is not None:
        ni.image_states = image_states_of(ni.node, existence)
    changed = old ^ new
    if not changed:
        return
    for other in snapshot.node_infos:
        if other is ni:
            continue
        states = other.image_states
        for name in changed:
            summary = states.get(name)
            if summary is not None:
                states[name] = ImageStateSummary(summary.size, existence.get(name, 0))
