"""use-device-class: a claim's request names a DeviceClass that does not
exist (the nearest existing names: mig-1g.gpu.example.com ->
gpu.example.com), or one whose devices are all taken or excluded while a
compatible class has free ones. Compatible: the classes share a selector
(in practice the driver check), so a GPU request never gets a NIC class."""

from __future__ import annotations

import re

from ..config import names
from . import device_kind
from .claims import dra_nodes, edit_op, explained, free_matching, near_classes, open_requests

KIND = "use-device-class"
ORDER = 10
_MISSING = re.compile(r"^request (\S+): device class (\S+) does not exist$")


def _expressions(cls: dict) -> set[str]:
    return {(s.get("cel") or {}).get("expression", "") for s in (cls.get("spec") or {}).get("selectors") or ()}


def options(ctx, node):
    cluster = ctx.search.cluster
    out = []
    st = ctx.blockers.pre_filter.get(names.DynamicResources) or {}
    missing = {}
    for reason in st.get("reasons") or ():
        m = _MISSING.match(reason)
        if m:
            missing[m.group(1)] = m.group(2)
    nodes = dra_nodes(ctx, node) if not missing else []
    for pc, req in open_requests(ctx):
        current = req.device_class
        if missing.get(req.label) == current:
            classes = near_classes(cluster, current)
            why = "does not exist"
        elif current in cluster.device_classes and nodes:
            short = False
            for n in nodes:
                info = explained(ctx.blockers, n).get(pc.key, {}).get(req.label)
                if info is not None and info.get("eligible", 0) < (req.count or 1):
                    short = True
            if not short:
                continue
            mine = _expressions(cluster.device_classes[current])
            scored = []
            for name, cls in cluster.device_classes.items():
                if name == current or not (mine & _expressions(cls)):
                    continue
                free = free_matching(ctx.search, name, req.selectors)
                if free >= (req.count or 1):
                    scored.append((-free, name))
            classes = [name for _, name in sorted(scored)]
            why = "has no device free for it"
        else:
            continue
        for rank, name in enumerate(classes[:3]):
            ops = [edit_op(req.spec, req.pointer("deviceClassName"), "deviceClassName", name)]
            words = (f"request {req.label} of claim {pc.key}: DeviceClass {name} instead of {current} "
                     f"(which {why})")
            out.append((1.0 + rank / 10, words, {pc.key: ops}))
    return out


def find(search) -> list:
    return device_kind.find(search, KIND, ORDER, options)


def parts(ctx, node: str):
    return device_kind.parts(ctx, node, KIND, options)
