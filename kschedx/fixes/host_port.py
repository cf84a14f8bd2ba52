"""relax-host-port: the hostPort the pod asks for, dropped (the
containerPort stays), when the port is held on the nodes by pods that
cannot be deleted: DaemonSet and static pods (remove-pods proposes the
others)."""

from __future__ import annotations

from ..config import names
from ..state.types import DEFAULT_BIND_ALL_HOST_IP, HostPortInfo
from .jsonpatch import pointer

KIND = "relax-host-port"
ORDER = 5


def _taken(pi, ni) -> tuple[set, list]:
    """The pod's (ip, protocol, port) the node's pods hold, and those pods."""
    held = set()
    holders = []
    for other in ni.pods:
        ports = HostPortInfo()
        for ip, proto, port in other.host_ports:
            ports.add(ip, proto, port)
        mine = {(ip, proto, port) for ip, proto, port in pi.host_ports if ports.check_conflict(ip, proto, port)}
        if mine:
            held |= mine
            holders.append(other)
    return held, holders


def _counted(field: str, container: dict) -> bool:
    """Whether NodePorts counts the container's host ports: a sidecar's
    (restartPolicy Always) run beside the containers, a plain init
    container's are gone before they start."""
    return field == "containers" or container.get("restartPolicy") == "Always"


def _triple(port: dict) -> tuple:
    """The port as NodePorts keys it: an unset hostIP binds every address."""
    return port.get("hostIP") or DEFAULT_BIND_ALL_HOST_IP, port.get("protocol") or "TCP", port.get("hostPort")


def _ops(raw_pod: dict, held: set) -> tuple[list, list]:
    """Remove hostPort (and hostIP) of the container ports in `held`: a port
    of the same number but another protocol or address is no conflict and
    stays."""
    ops, words = [], []
    for field in ("initContainers", "containers"):
        for i, c in enumerate((raw_pod.get("spec") or {}).get(field) or ()):
            if not _counted(field, c):
                continue
            for j, p in enumerate(c.get("ports") or ()):
                if not p.get("hostPort") or _triple(p) not in held:
                    continue
                ops.append({"op": "remove", "path": pointer("spec", field, i, "ports", j, "hostPort")})
                if "hostIP" in p:
                    ops.append({"op": "remove", "path": pointer("spec", field, i, "ports", j, "hostIP")})
                words.append(f"{_port_text(p)} of container {c.get('name', i)}")
    return ops, words


def _port_text(port: dict) -> str:
    ip = port.get("hostIP")
    where = f" on {ip}" if ip and ip != DEFAULT_BIND_ALL_HOST_IP else ""
    return f"{port['hostPort']}/{port.get('protocol') or 'TCP'}{where}"


def _candidate(pi, raw_pod, ni, *, only_undeletable: bool):
    from .remove_pods import _owned_by_daemon

    held, holders = _taken(pi, ni)
    if not held:
        return None
    if only_undeletable and not all(_owned_by_daemon(h) for h in holders):
        return None
    ops, words = _ops(raw_pod, held)
    if not ops:
        return None
    who = ", ".join(h.key for h in holders)
    return ops, f"drop hostPort {', '.join(words)} (held on node {ni.name} by {who}; the containerPort stays)"


def find(search) -> list:
    from .search import MAX_CANDIDATES

    seen = set()
    fixes = []
    for name in search.blockers.only(names.NodePorts):
        made = _candidate(search.pod_info, search.raw_pod, search.snapshot.get(name), only_undeletable=True)
        if made is None:
            continue
        ops, change = made
        key = repr(ops)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > MAX_CANDIDATES:
            break
        fix = search.try_pod_patch(KIND, change, ops, magnitude=len(ops), order=ORDER)
        if fix is not None:
            fixes.append(fix)
            break  # the same ports elsewhere only repeat it
    return fixes


def parts(ctx, node: str):
    from .parts import Part
    from .search import POD

    made = _candidate(ctx.pod_info, ctx.raw_pod, ctx.search.snapshot.get(node), only_undeletable=False)
    if made is None:
        return []
    ops, words = made
    return [Part(KIND, names.NodePorts, POD, words, pod_patch=ops, magnitude=len(ops))]
