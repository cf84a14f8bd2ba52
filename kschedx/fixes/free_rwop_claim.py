"""free-rwop-claim: a ReadWriteOncePod claim of the pod is in use by
another pod (VolumeRestrictions keeps the pod off every node), and
preemption cannot free it: delete the pod holding it. Never a DaemonSet or
static pod (they come back); a holder a controller makes again is named,
with its controller (its new pod would compete for the claim)."""

from __future__ import annotations

from ..config import names
from ..plugins.volumerestrictions import ERR_REASON_RWOP_CONFLICT

KIND = "free-rwop-claim"
ORDER = 2
PLUGIN = names.VolumeRestrictions


def _holders(search, blockers, node: str | None = None):
    """(holders as PodInfos, words) or None."""
    from .remove_pods import _owned_by_daemon

    if (search.pod_doc.get("preemption") or {}).get("nominatedNode"):
        return None
    nodes = [node] if node is not None else list(blockers.by_node)
    details = None
    for n in nodes:
        if ERR_REASON_RWOP_CONFLICT in blockers.reasons(n, PLUGIN):
            details = blockers.detail(n, PLUGIN)
            break
    if not details:
        return None
    by_key = search.__dict__.get("_claim_users")
    if by_key is None:
        by_key = search.__dict__["_claim_users"] = {}
        for ni in search.snapshot.node_infos:
            if ni.pvc_ref_counts:
                for p in ni.pods:
                    if p.pvc_names:
                        by_key.setdefault(p.key, p)
    holders, words = [], []
    for entry in details.get("readWriteOncePodClaims") or ():
        for key in entry.get("usedBy") or ():
            pi = by_key.get(key)
            if pi is None or _owned_by_daemon(pi):
                return None
            if all(pi.uid != h.uid for h in holders):
                holders.append(pi)
                words.append(f"{key} (holds claim {entry['claim']}, ReadWriteOncePod{_controller(search, pi)})")
    if not holders:
        return None
    return holders, words


def _controller(search, pi) -> str:
    ref = next((r for r in (pi.pod.get("metadata") or {}).get("ownerReferences") or () if r.get("controller")),
               None)
    if ref is None:
        return ""
    kind, name = ref.get("kind"), ref.get("name")
    if kind == "ReplicaSet":
        rs = search.cluster.replica_sets.get(f"{pi.namespace}/{name}") or {}
        up = next((r for r in (rs.get("metadata") or {}).get("ownerReferences") or () if r.get("controller")), None)
        if up is not None:
            kind, name = up.get("kind"), up.get("name")
    return f"; its {kind} {name} makes a new pod that competes for the claim: scale it down"


def _candidate(search, blockers, node=None):
    from .search import CLUSTER, Candidate, pod_target

    made = _holders(search, blockers, node)
    if made is None:
        return None
    holders, words = made
    change = f"delete pod {'; '.join(words)}" if len(words) == 1 else f"delete pods {'; '.join(words)}"
    return Candidate(KIND, CLUSTER, change, removed=holders, magnitude=len(holders), order=ORDER,
                     changes=[{"action": "delete", "target": pod_target(h), "patch": []} for h in holders])


def find(search) -> list:
    if not search.blockers.only(PLUGIN):
        return []
    cand = _candidate(search, search.blockers)
    if cand is None:
        return []
    fix = search.check(cand)
    return [fix] if fix is not None else []


def parts(ctx, node: str):
    from .parts import Part

    cand = _candidate(ctx.search, ctx.blockers, node)
    if cand is None:
        return []
    return [Part(KIND, PLUGIN, cand.side, cand.change, removed=cand.removed, changes=cand.changes,
                 magnitude=cand.magnitude)]
