"""relax-device-selector: a CEL selector of a claim's request excludes the
free devices a node has (drop it, as relax-pod-affinity drops one term;
most devices opened first; never a DeviceClass's selector, which is the
cluster administrator's). relax-device-constraint: a matchAttribute
constraint of a claim that the free devices of a node do not meet
together (drop it)."""

from __future__ import annotations

import re

from . import device_kind
from .claims import (ctx_claims, device_matches, dra_nodes, explained, open_requests, requests_of, selector_true,
                     slice_devices, usable_shape)
from .jsonpatch import pointer

KIND = "relax-device-selector"
ORDER = 8
CONSTRAINT_KIND = "relax-device-constraint"
CONSTRAINT_ORDER = 9
_FALSE = re.compile(r"^request selector #(\d+) is false")


def _excluded(ctx, req, i: int) -> int:
    """Devices of the cluster the request's class and its other selectors
    accept but selector i does not (allocation left aside: an allocated
    device's reason never reaches the selectors)."""
    cluster = ctx.search.cluster
    others = [s for j, s in enumerate(req.selectors) if j != i]
    expr = (req.selectors[i].get("cel") or {}).get("expression", "")
    n = 0
    for s, d in slice_devices(cluster):
        driver = (s.get("spec") or {}).get("driver", "")
        if usable_shape(d) and not selector_true(expr, driver, d) and \
                device_matches(cluster, req.device_class, others, driver, d):
            n += 1
    return n


def options(ctx, node):
    nodes = dra_nodes(ctx, node)
    if not nodes:
        return []
    out = []
    for pc, req in open_requests(ctx):
        if not req.selectors:
            continue
        short = any((explained(ctx.blockers, n).get(pc.key, {}).get(req.label) or {}).get("eligible", 0)
                    < (req.count or 1) for n in nodes)
        if not short:
            continue
        free: dict[int, int] = {}
        for n in nodes:
            for cand in explained(ctx.blockers, n).get(pc.key, {}).get(req.label, {}).get("candidates") or ():
                m = _FALSE.match(cand.get("reason") or "")
                if m:
                    free[int(m.group(1))] = free.get(int(m.group(1)), 0) + 1
        for i, sel in enumerate(req.selectors):
            n_free = free.get(i, 0)
            n_all = n_free or _excluded(ctx, req, i)
            if not n_all:
                continue
            expr = (sel.get("cel") or {}).get("expression", "")
            which = f"{n_free} free device(s)" if n_free else f"{n_all} device(s) of its class"
            words = f"drop selector {i} of request {req.label} of claim {pc.key} ({expr}), which {which} fail"
            # Free devices it excludes first.
            magnitude = 1 / (1 + n_free) if n_free else 1 + 1 / (1 + n_all)
            out.append((magnitude, words, {pc.key: [{"op": "remove", "path": req.pointer("selectors", i)}]}))
    return out


def constraint_options(ctx, node):
    nodes = dra_nodes(ctx, node)
    out = []
    for pc in ctx_claims(ctx):
        if pc.allocated:
            continue
        constraints = ((pc.claim.get("spec") or {}).get("devices") or {}).get("constraints") or []
        if not constraints:
            continue
        reqs = requests_of(pc)
        enough = False
        for n in nodes:
            mine = explained(ctx.blockers, n).get(pc.key, {})
            parents: dict[str, bool] = {}
            for req in reqs:
                info = mine.get(req.label) or {}
                ok = info.get("eligible", 0) >= (req.count or 1)
                parent = req.label.split("/")[0]
                parents[parent] = parents.get(parent, False) or ok
            if parents and all(parents.values()):
                enough = True
                break
        if not enough:
            continue
        for k, c in enumerate(constraints):
            which = ", ".join(c.get("requests") or ()) or "all requests"
            words = (f"drop constraint {k} of claim {pc.key} (matchAttribute {c.get('matchAttribute')} over "
                     f"{which}): the free devices do not share it")
            out.append((1.0 + k / 10, words, {pc.key: [{"op": "remove",
                                                        "path": pointer("spec", "devices", "constraints", k)}]}))
    return out


def find(search) -> list:
    return device_kind.find(search, KIND, ORDER, options)


def parts(ctx, node: str):
    return (device_kind.parts(ctx, node, KIND, options)
            + device_kind.parts(ctx, node, CONSTRAINT_KIND, constraint_options))


class _Constraint:
    """relax-device-constraint's place among the kinds."""

    KIND = CONSTRAINT_KIND

    @staticmethod
    def find(search) -> list:
        return device_kind.find(search, CONSTRAINT_KIND, CONSTRAINT_ORDER, constraint_options)


constraint = _Constraint
