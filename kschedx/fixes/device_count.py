"""reduce-device-count: a claim's request asks for more devices than any
node has for it: the most some node has (`count`), or an `allocationMode:
All` request (which fails while any matching device is taken) turned into
that many. Never below 1, never an adminAccess request."""

from __future__ import annotations

from . import device_kind
from .claims import dra_nodes, edit_op, explained, open_requests

KIND = "reduce-device-count"
ORDER = 7


def options(ctx, node):
    nodes = dra_nodes(ctx, node)
    if not nodes:
        return []
    out = []
    for pc, req in open_requests(ctx):
        if req.spec.get("adminAccess"):
            continue
        eligible = [explained(ctx.blockers, n).get(pc.key, {}).get(req.label, {}).get("eligible")
                    for n in nodes]
        eligible = [e for e in eligible if isinstance(e, int)]
        if not eligible:
            continue
        best = max(max(eligible), 1)
        if req.mode == "ExactCount":
            if req.count <= 1 or best >= req.count:
                continue
            ops = [edit_op(req.spec, req.pointer("count"), "count", best)]
            words = f"request {req.label} of claim {pc.key}: {best} device(s) instead of {req.count}"
            magnitude = (req.count - best) / req.count
        elif req.mode == "All":
            ops = [edit_op(req.spec, req.pointer("allocationMode"), "allocationMode", "ExactCount"),
                   edit_op(req.spec, req.pointer("count"), "count", best)]
            words = (f"request {req.label} of claim {pc.key}: {best} device(s) (allocationMode ExactCount) "
                     "instead of All")
            magnitude = 0.5
        else:
            continue
        out.append((magnitude, words, {pc.key: ops}))
    return out


def find(search) -> list:
    return device_kind.find(search, KIND, ORDER, options)


def parts(ctx, node: str):
    return device_kind.parts(ctx, node, KIND, options)
