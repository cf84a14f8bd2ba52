"""add-resource-slice: the devices a node lacks for the pod, as a new
ResourceSlice of the node (a `create` change, as add-node creates a Node):
copies of devices the request's class and selectors accept, from the same
node when it has such devices (their attributes, so constraints still
hold), else from anywhere. A new pool of its own, so no existing pool is
left incomplete. Never a device that needs a feature off in v1.35
(partitionable devices, binding conditions), never an existing slice
changed; nothing to copy: fixSearch.uncovered says so."""

from __future__ import annotations

from ..config import names
from .claims import (copy_device, ctx_claims, device_id, device_matches, dra_nodes, explained, requests_of,
                     slice_devices, usable_shape)
from .volumes import create_change

KIND = "add-resource-slice"
ORDER = 4
PLUGIN = names.DynamicResources


def _matching(ctx, req) -> list[tuple[dict, dict]]:
    """Every device the request's class and selectors accept (allocation
    left aside), once per search."""
    import json

    cluster = ctx.search.cluster
    cache = ctx.search.__dict__.setdefault("_matching_devices", {})
    key = json.dumps([req.device_class, req.selectors], sort_keys=True)
    if key not in cache:
        cache[key] = [(s, d) for s, d in slice_devices(cluster) if usable_shape(d) and device_matches(
            cluster, req.device_class, req.selectors, (s.get("spec") or {}).get("driver", ""), d)]
    return cache[key]


def _sources(ctx, req, node: str) -> list[tuple[dict, dict]]:
    """Devices to copy for the request: the node's own first."""
    found = _matching(ctx, req)
    here = [(s, d) for s, d in found if (s.get("spec") or {}).get("nodeName") == node]
    return here or found


def _needed(ctx, node: str) -> list[tuple[dict, dict]] | None:
    """(slice, device) to copy onto the node; None when a request has no
    device to copy."""
    mine = explained(ctx.blockers, node)
    copies = []
    for pc in ctx_claims(ctx):
        if pc.allocated or pc.key not in mine:
            continue
        done: set[str] = set()
        subs: dict[str, list] = {}
        for req in requests_of(pc):
            parent = req.label.split("/")[0]
            if "/" in req.label:
                subs.setdefault(parent, []).append(req)
                continue
            info = mine[pc.key].get(req.label) or {}
            need = (req.count - info.get("eligible", 0)) if req.mode == "ExactCount" else 0
            if need <= 0 or req.spec.get("adminAccess"):
                continue
            src = _sources(ctx, req, node)
            if not src:
                return None
            copies += [src[k % len(src)] for k in range(need)]
            done.add(parent)
        for parent, options in subs.items():
            # The first subrequest something can be copied for.
            best = None
            for req in options:
                info = mine[pc.key].get(req.label) or {}
                need = (req.count - info.get("eligible", 0)) if req.mode == "ExactCount" else 0
                if need <= 0:
                    best = []
                    break
                src = _sources(ctx, req, node)
                if src:
                    best = [src[k % len(src)] for k in range(need)]
                    break
            if best is None:
                return None
            copies += best
    return copies


def _slices(ctx, node: str, copies) -> tuple[list[dict], str]:
    cluster = ctx.search.cluster
    by_driver: dict[str, list] = {}
    for s, d in copies:
        by_driver.setdefault((s.get("spec") or {}).get("driver", ""), []).append((s, d))
    pools = {device_id(s, {})[:2] for s in cluster.resource_slices.values()}
    slices, words = [], []
    for driver, items in sorted(by_driver.items()):
        name, n = f"{node}-{driver}-added", 2
        while name in cluster.resource_slices:
            name, n = f"{node}-{driver}-added-{n}", n + 1
        pool, n = f"{node}-added", 2
        while (driver, pool) in pools:
            pool, n = f"{node}-added-{n}", n + 1
        devices, used = [], set()
        for s, d in items:
            base = f"{d.get('name', 'device')}-copy"
            dev_name, n = base, 2
            while dev_name in used:
                dev_name, n = f"{base}-{n}", n + 1
            used.add(dev_name)
            devices.append(copy_device(d, dev_name))
        slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
                       "spec": {"driver": driver, "nodeName": node,
                                "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                                "devices": devices}})
        likes = sorted({"/".join(device_id(s, d)) for s, d in items})
        words.append(f"{len(devices)} device(s) like {', '.join(likes)} (a new ResourceSlice of driver {driver})")
    return slices, f"add {'; '.join(words)} to node {node}: the driver publishes it once the hardware is there"


def _candidate(ctx, node: str):
    from .search import CLUSTER, Candidate
    from .verify import Refused

    copies = _needed(ctx, node)
    if not copies:
        return None
    slices, words = _slices(ctx, node, copies)
    try:
        objects = [("ResourceSlice", s["metadata"]["name"], ctx.search.verifier.admitted(s)) for s in slices]
    except Refused:
        return None
    return Candidate(KIND, CLUSTER, words, changes=[create_change(s) for s in slices], objects=objects,
                     magnitude=len(copies), order=ORDER)


def find(search) -> list:
    from .parts import Context
    from .search import MAX_CANDIDATES

    ctx = Context.of(search)
    found = []
    nothing = False
    for node in dra_nodes(ctx, None):
        cand = _candidate(ctx, node)
        if cand is None:
            nothing = nothing or _needed(ctx, node) is None
            continue
        found.append(cand)
        if len(found) >= 4 * MAX_CANDIDATES:
            break
    if not found and nothing:
        search.add_uncovered(PLUGIN, "no device anywhere matches a request's class and selectors: nothing to copy "
                                     "onto a node")
    found.sort(key=lambda c: c.magnitude)
    fixes = []
    for cand in found[:MAX_CANDIDATES]:
        fix = search.check(cand)
        if fix is not None:
            fixes.append(fix)
            break  # the fewest devices on one node: more nodes only repeat the idea
    return fixes


def parts(ctx, node: str):
    from .parts import Part

    cand = _candidate(ctx, node)
    if cand is None:
        return []
    return [Part(KIND, PLUGIN, cand.side, cand.change, objects=cand.objects, changes=cand.changes,
                 magnitude=cand.magnitude)]
