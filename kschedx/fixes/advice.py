"""Advice: what kschedx can say about a pod it has no checked change for,
never counted as a fix (`fixAdvice`).

- await-provisioning: an Immediate claim waits for its class's provisioner,
  whose volume's topology then decides the nodes (kschedx does not invent
  the volume a provisioner would make);
- volume-attach-room: NodeVolumeLimits keeps the pod off nodes at their
  attach limit (a CSINode's limit is the driver's): which nodes have room
  for one more, and what else keeps the pod off them.
"""

from __future__ import annotations

from ..config import names
from ..plugins.volumebinding.volume_binding import ERR_UNBOUND_IMMEDIATE
from ..storage.objects import claim_class
from .volumes import provisioner, provisions

LIMITS = names.NodeVolumeLimits
SHOWN = 5


def find(search) -> None:
    _await_provisioning(search)
    _attach_room(search)


def _await_provisioning(search) -> None:
    st = search.blockers.pre_filter.get(names.VolumeBinding) or {}
    if ERR_UNBOUND_IMMEDIATE not in st.get("reasons", ()):
        return
    cluster = search.cluster
    for note in (st.get("details") or {}).get("claims") or ():
        pvc = cluster.persistent_volume_claims.get(note["claim"])
        if pvc is None:
            continue
        cls = claim_class(pvc)
        sc = cluster.storage_classes.get(cls) if cls else None
        if note.get("persistentVolume"):
            search.add_advice("await-provisioning", f"claim {note['claim']} is pre-bound to PersistentVolume "
                                                    f"{note['persistentVolume']}: the PV controller binds it")
        elif provisions(sc):
            search.add_advice("await-provisioning", (
                f"claim {note['claim']} (StorageClass {cls}, Immediate binding) is not bound yet: "
                f"{provisioner(sc)} provisions it and the volume's topology then decides the nodes; if it stays "
                f"Pending, see `kubectl describe pvc -n {note['claim'].split('/')[0]} {note['claim'].split('/')[1]}`"))


def _attach_room(search) -> None:
    b = search.blockers
    full = [n for n, f in b.by_node.items() if LIMITS in f]
    if not full:
        return
    room = [n for n, f in b.by_node.items() if LIMITS not in f]
    if not room:
        search.add_advice("volume-attach-room", f"every node is at its volume attach limit for the pod's volumes "
                                                f"({len(full)} node(s)): only a new node (add-node) or fewer "
                                                "volumes attached there make room")
        return
    parts = []
    for n in room[:SHOWN]:
        others = sorted(b.by_node[n])
        parts.append(f"{n}" + (f" (kept off by {', '.join(others)})" if others else ""))
    more = f" and {len(room) - SHOWN} more" if len(room) > SHOWN else ""
    search.add_advice("volume-attach-room", f"{len(full)} node(s) are at their volume attach limit; room for the "
                                            f"pod's volumes on {', '.join(parts)}{more}")
