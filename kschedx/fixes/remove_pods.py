"""remove-pods: the fewest pods to delete from one node to make room, when
preemption cannot (the pods there are not of lower priority, or the pod
may not preempt). Offered for nodes the pod misses only for resources in
use; pods of DaemonSets and static pods are left alone (they come back)."""

from __future__ import annotations

from ..resources import PODS

KIND = "remove-pods"
ORDER = 3


def _owned_by_daemon(pi) -> bool:
    meta = pi.pod.get("metadata") or {}
    if "kubernetes.io/config.mirror" in (meta.get("annotations") or {}):
        return True
    return any(o.get("kind") == "DaemonSet" for o in meta.get("ownerReferences") or ())


def victims_for(pi, ni) -> list | None:
    """Pods of the node whose removal frees what the pod lacks, fewest first
    (largest share of the shortage first); None when no removal can."""
    need = pi.resource.as_dict()
    alloc, used = ni.allocatable.as_dict(), ni.requested.as_dict()
    short = {}
    for k, v in need.items():
        if v and used.get(k, 0) + v > alloc.get(k, 0):
            if v > alloc.get(k, 0):
                return None
            short[k] = used.get(k, 0) + v - alloc.get(k, 0)
    pods_short = len(ni.pods) + 1 - ni.allocatable.allowed_pod_number
    if pods_short > 0:
        short[PODS] = pods_short
    if not short:
        return None
    chosen = []
    movable = [p for p in ni.pods if not _owned_by_daemon(p)]
    while short:
        def share(p):
            have = p.resource.as_dict()
            return sum(min(have.get(k, 0) if k != PODS else 1, s) / s for k, s in short.items())

        movable.sort(key=lambda p: (-share(p), p.priority, p.key))
        if not movable or share(movable[0]) == 0:
            return None
        p = movable.pop(0)
        chosen.append(p)
        have = p.resource.as_dict()
        for k in list(short):
            short[k] -= 1 if k == PODS else have.get(k, 0)
            if short[k] <= 0:
                del short[k]
    return chosen


def find(search) -> list:
    from . import MAX_CANDIDATES, pod_target

    pre = search.pod_doc.get("preemption") or {}
    if pre.get("nominatedNode"):
        return []  # preemption already makes room
    candidates = []
    for name in search.blockers.only("NodeResourcesFit"):
        victims = victims_for(search.pod_info, search.snapshot.get(name))
        if victims:
            candidates.append((len(victims), name, victims))
    candidates.sort(key=lambda c: c[0])
    fixes = []
    for size, name, victims in candidates[:MAX_CANDIDATES]:
        change = (f"delete {size} pod(s) from node {name}: {', '.join(v.key for v in victims)} "
                  f"(priority {', '.join(str(v.priority) for v in victims)})")
        changes = [{"action": "delete", "target": pod_target(v), "patch": []} for v in victims]
        fix = search.try_cluster_change(KIND, change, changes,
                                        lambda victims=victims: search.verifier.pods_removed(victims),
                                        magnitude=size, order=ORDER)
        if fix is not None:
            fixes.append(fix)
            break  # the fewest pods on one node: more nodes only repeat the idea
    return fixes
