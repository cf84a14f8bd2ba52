"""remove-pods: the fewest pods to delete to make room on one node, when
preemption cannot (the pods there are not of lower priority, or the pod may
not preempt). Offered for nodes the pod misses only because of what runs
there: resources in use, host ports taken, existing pods' required
anti-affinity. Pods of DaemonSets and static pods are never proposed (they
come back); a node that needs one of them removed is left out."""

from __future__ import annotations

from ..config import names
from ..plugins.interpodaffinity.filtering import ERR_REASON_EXISTING_ANTI_AFFINITY
from ..api.resources import PODS
from ..state.types import HostPortInfo

KIND = "remove-pods"
ORDER = 7


def _owned_by_daemon(pi) -> bool:
    meta = pi.pod.get("metadata") or {}
    if "kubernetes.io/config.mirror" in (meta.get("annotations") or {}):
        return True
    return any(o.get("kind") == "DaemonSet" for o in meta.get("ownerReferences") or ())


def _port_holders(pi, ni) -> list:
    """Pods of the node holding a host port the pod wants."""
    out = []
    for other in ni.pods:
        ports = HostPortInfo()
        for ip, proto, port in other.host_ports:
            ports.add(ip, proto, port)
        if any(ports.check_conflict(ip, proto, port) for ip, proto, port in pi.host_ports):
            out.append(other)
    return out


def _anti_affinity_holders(search, name: str, by_key: dict) -> list | None:
    """The existing pods whose required anti-affinity rejects the pod on the
    node (None when the result lists only some of them). `by_key`: the
    snapshot's pods with required anti-affinity by namespace/name, filled
    on first use."""
    details = search.blockers.detail(name, names.InterPodAffinity) or {}
    listed = details.get("existingPods") or []
    if details.get("matchingPods", 0) != len(listed):
        return None
    if not by_key:
        for ni in search.snapshot.have_pods_with_required_anti_affinity():
            for p in ni.pods_with_required_anti_affinity:
                by_key[p.key] = p
    holders = [by_key.get(p["pod"]) for p in listed]
    return None if None in holders else holders


def victims_for(pi, ni, forced=()) -> list | None:
    """`forced` and then the node's pods whose removal frees what the pod
    lacks, fewest first (largest share of the shortage first); None when no
    removal can."""
    if any(_owned_by_daemon(p) for p in forced):
        return None
    chosen = list(forced)
    freed = [p for p in chosen if p.node_name == ni.name]
    need = pi.resource.as_dict()
    alloc, used = ni.allocatable.as_dict(), dict(ni.requested.as_dict())
    for p in freed:
        for k, v in p.resource.as_dict().items():
            used[k] = used.get(k, 0) - v
    short = {}
    for k, v in need.items():
        if v and used.get(k, 0) + v > alloc.get(k, 0):
            if v > alloc.get(k, 0):
                return None
            short[k] = used.get(k, 0) + v - alloc.get(k, 0)
    pods_short = len(ni.pods) - len(freed) + 1 - ni.allocatable.allowed_pod_number
    if pods_short > 0:
        short[PODS] = pods_short
    taken = {p.uid for p in chosen}
    movable = [p for p in ni.pods if not _owned_by_daemon(p) and p.uid not in taken]
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
    return chosen or None


def find(search) -> list:
    from .search import MAX_CANDIDATES, pod_target

    pre = search.pod_doc.get("preemption") or {}
    if pre.get("nominatedNode"):
        return []  # preemption already makes room
    candidates = []
    by_key: dict = {}
    for name in search.blockers.only(names.NodeResourcesFit, names.NodePorts, names.InterPodAffinity):
        ni = search.snapshot.get(name)
        failing = search.blockers.by_node[name]
        forced = []
        if names.NodePorts in failing:
            forced += _port_holders(search.pod_info, ni)
        if names.InterPodAffinity in failing:
            if set(failing[names.InterPodAffinity]) != {ERR_REASON_EXISTING_ANTI_AFFINITY}:
                continue  # the pod's own terms: not a matter of other pods being there
            holders = _anti_affinity_holders(search, name, by_key)
            if holders is None:
                continue
            forced += [p for p in holders if p.uid not in {f.uid for f in forced}]
        victims = victims_for(search.pod_info, ni, forced)
        if victims:
            candidates.append((len(victims), name, victims))
        if len(candidates) >= 20 * MAX_CANDIDATES:
            break
    candidates.sort(key=lambda c: c[0])
    fixes = []
    for size, name, victims in candidates[:MAX_CANDIDATES]:
        change = (f"delete {size} pod(s) to make room on node {name}: {', '.join(v.key for v in victims)} "
                  f"(priority {', '.join(str(v.priority) for v in victims)})")
        changes = [{"action": "delete", "target": pod_target(v), "patch": []} for v in victims]
        fix = search.try_cluster_change(KIND, change, changes,
                                        lambda victims=victims: search.verifier.pods_removed(victims),
                                        magnitude=size, order=ORDER)
        if fix is not None:
            fixes.append(fix)
            break  # the fewest pods on one node: more nodes only repeat the idea
    return fixes


def parts(ctx, node: str, plugin: str):
    """The pods to delete on the node for one plugin: what runs there
    (resources), holders of a host port, existing pods whose anti-affinity
    rejects the pod. Never when preemption makes room."""
    from .parts import Part
    from .search import CLUSTER, pod_target

    if (ctx.search.pod_doc.get("preemption") or {}).get("nominatedNode"):
        return []
    ni = ctx.search.snapshot.get(node)
    pi = ctx.pod_info
    if plugin == names.NodePorts:
        victims = _port_holders(pi, ni)
        if not victims or any(_owned_by_daemon(p) for p in victims):
            return []
    elif plugin == names.InterPodAffinity:
        if set(ctx.blockers.reasons(node, plugin)) != {ERR_REASON_EXISTING_ANTI_AFFINITY}:
            return []
        victims = _anti_affinity_holders_in(ctx, node)
        if not victims or any(_owned_by_daemon(p) for p in victims):
            return []
    elif plugin == names.NodeResourcesFit:
        victims = victims_for(pi, ni)
        if not victims:
            return []
    else:
        return []
    listed = ", ".join(v.key for v in victims)
    return [Part(KIND, plugin, CLUSTER, f"delete {len(victims)} pod(s) on node {node}: {listed}",
                 removed=list(victims), magnitude=len(victims),
                 changes=[{"action": "delete", "target": pod_target(v), "patch": []} for v in victims])]


def _anti_affinity_holders_in(ctx, node: str) -> list | None:
    details = ctx.blockers.detail(node, names.InterPodAffinity) or {}
    listed = details.get("existingPods") or []
    if details.get("matchingPods", 0) != len(listed):
        return None
    by_key = {}
    for ni in ctx.search.snapshot.have_pods_with_required_anti_affinity():
        for p in ni.pods_with_required_anti_affinity:
            by_key[p.key] = p
    holders = [by_key.get(p["pod"]) for p in listed]
    return None if None in holders else holders
