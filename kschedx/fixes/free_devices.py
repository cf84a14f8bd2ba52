"""free-devices: the devices a node lacks for the pod are held by other
pods' claims: delete the fewest of those pods (lowest priority first, as
remove-pods: v1.35's preemption never frees devices, the DynamicResources
Filter being unresolvable), then what the resourceclaim controller does
(deletes a claim made for the pod; deallocates a claim no pod uses any
more), listed `by` it. Never a DaemonSet or static pod, an adminAccess
allocation, or a claim reserved by a pod the snapshot does not have."""

from __future__ import annotations

import re

from ..config import names
from .claims import CONTROLLER, ctx_claims, device_matches, dra_nodes, explained, requests_of, target_of

KIND = "free-devices"
ORDER = 6
PLUGIN = names.DynamicResources
_HELD = re.compile(r"^already allocated to claim (\S+)$")


def _pods_by_uid(search) -> dict:
    cache = getattr(search, "_pods_by_uid", None)
    if cache is None:
        cache = {}
        for ni in search.snapshot.node_infos:
            for p in ni.pods:
                cache[p.uid] = p
        search._pods_by_uid = cache
    return cache


def _device(cluster, label: str):
    driver, pool, name = (label.split("/", 2) + ["", ""])[:3]
    for s in cluster.resource_slices.values():
        spec = s.get("spec") or {}
        if spec.get("driver") == driver and (spec.get("pool") or {}).get("name") == pool:
            for d in spec.get("devices") or ():
                if d.get("name") == name:
                    return driver, d
    return None


def _held(ctx, node: str) -> bool:
    """Whether some device of the node's explanation is held by a claim."""
    for c in (ctx.blockers.detail(node, PLUGIN) or {}).get("claims") or ():
        for r in c.get("requests") or ():
            for cand in r.get("candidates") or ():
                if (cand.get("reason") or "").startswith("already allocated to claim "):
                    return True
    return False


def _candidate(ctx, node: str, claims=None):
    from .remove_pods import _owned_by_daemon
    from .search import CLUSTER, Candidate, pod_target

    search = ctx.search
    cluster = search.cluster
    if not _held(ctx, node):
        return None
    mine = explained(ctx.blockers, node)
    holders: dict[str, int] = {}  # claim key -> matching devices it frees
    short = False
    for pc in claims if claims is not None else ctx_claims(ctx):
        if pc.allocated or pc.key not in mine:
            continue
        for req in requests_of(pc):
            info = mine[pc.key].get(req.label) or {}
            need = (req.count - info.get("eligible", 0)) if req.mode == "ExactCount" else 0
            if need <= 0 or "/" in req.label:
                continue
            short = True
            freed = {}
            for cand in info.get("candidates") or ():
                m = _HELD.match(cand.get("reason") or "")
                if not m:
                    continue
                found = _device(cluster, cand["device"])
                if found is None or not device_matches(cluster, req.device_class, req.selectors, *found):
                    continue
                freed[m.group(1)] = freed.get(m.group(1), 0) + 1
            if sum(freed.values()) < need:
                return None
            got = 0
            for key, n in sorted(freed.items(), key=lambda kv: -kv[1]):
                if got >= need:
                    break
                holders[key] = max(holders.get(key, 0), n)
                got += n
    if not short or not holders:
        return None
    by_uid = _pods_by_uid(search)
    removed, changes, objects, words = [], [], [], []
    for key in sorted(holders):
        claim = cluster.resource_claims.get(key)
        if claim is None:
            return None
        status = claim.get("status") or {}
        if any(r.get("adminAccess") for r in ((status.get("allocation") or {}).get("devices") or {}).get(
                "results") or ()):
            return None
        users = [r for r in status.get("reservedFor") or () if r.get("resource", "pods") == "pods"]
        if not users:
            return None
        pods = []
        for r in users:
            pi = by_uid.get(r.get("uid"))
            if pi is None or _owned_by_daemon(pi):
                return None
            pods.append(pi)
        for pi in pods:
            if all(pi.uid != q.uid for q in removed):
                removed.append(pi)
        owned = any(ref.get("controller") and ref.get("kind") == "Pod" and ref.get("uid") in {p.uid for p in pods}
                    for ref in (claim.get("metadata") or {}).get("ownerReferences") or ())
        if owned:
            changes.append({"action": "delete", "target": target_of(claim), "patch": [], "by": CONTROLLER})
            objects.append(("ResourceClaim", key, None))
        else:
            ops = [{"op": "remove", "path": "/status/allocation"}, {"op": "remove", "path": "/status/reservedFor"}]
            changes.append({"action": "patch", "target": target_of(claim), "patch": ops, "by": CONTROLLER})
            rest = {k: v for k, v in status.items() if k not in ("allocation", "reservedFor")}
            objects.append(("ResourceClaim", key, dict(claim, status=rest)))
        words.append(f"claim {key}")
    removed.sort(key=lambda p: (p.priority, p.key))
    change = (f"delete {len(removed)} pod(s) holding devices on node {node}: "
              f"{', '.join(p.key for p in removed)} (priority {', '.join(str(p.priority) for p in removed)}; "
              f"holding {', '.join(words)})")
    pod_changes = [{"action": "delete", "target": pod_target(p), "patch": []} for p in removed]
    return Candidate(KIND, CLUSTER, change, changes=pod_changes + changes, objects=objects, removed=removed,
                     magnitude=len(removed) + max((p.priority for p in removed), default=0) / 1e10, order=ORDER)


def find(search) -> list:
    from .parts import Context
    from .search import MAX_CANDIDATES

    ctx = Context.of(search)
    claims = ctx_claims(ctx)
    found, seen = [], set()
    for node in dra_nodes(ctx, None):
        cand = _candidate(ctx, node, claims)
        if cand is None:
            continue
        key = tuple(sorted(p.uid for p in cand.removed))
        if key in seen:
            continue
        seen.add(key)
        found.append(cand)
        if len(found) >= 4 * MAX_CANDIDATES:
            break
    found.sort(key=lambda c: c.magnitude)
    fixes = []
    for cand in found[:MAX_CANDIDATES]:
        fix = search.check(cand)
        if fix is not None:
            fixes.append(fix)
            break
    return fixes


def parts(ctx, node: str):
    from .parts import Part

    cand = _candidate(ctx, node)
    if cand is None:
        return []
    return [Part(KIND, PLUGIN, cand.side, cand.change, objects=cand.objects, changes=cand.changes,
                 removed=cand.removed, magnitude=cand.magnitude)]
