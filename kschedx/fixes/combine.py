"""combined: changes joined for a node that no single change opens.

A **part** opens one plugin on one node (a toleration for its taints, the
requests cut to what it has free, a device copied onto it...); each kind
module that has parts gives them (`parts(ctx, node[, plugin])`). A join is
one part per plugin failing on a node, its changes made together and
checked by one cycle:

- **pod join**: only changes to the pod's side (what `combined` always
  did), when no single change to the pod verifies;
- **mixed join**: any parts, when no change at all verifies;
- **chained**: on top of a single change that ran and did not place the
  pod, what its own cycle shows still blocks (a plugin stops at the first
  thing it finds: the pod's own pod affinity hides the anti-affinity of
  pods already there; a missing DeviceClass hides that the class's devices
  are all taken);
- **last resort**: a pod a Filter keeps off some node never ends without a
  candidate checked: every part any kind has for its least blocked node.

Candidates are checked smallest first (objects the user touches, the pod's
side before the cluster's, the parts' sizes, fewer parts, node order), and
the search stops at the first that verifies: a join is proposed only when
no single change does, so one suffices.
"""

from __future__ import annotations

import itertools
import json

from ..config import names
from .parts import Context, Part
from .search import CLUSTER, POD, Candidate, candidate_key

KIND = "combined"
ORDER_POD = 14
ORDER_CLUSTER = 8
# Cycles each stage may spend, and parts per plugin a join chooses from.
MAX_JOIN_CYCLES = 6
MAX_CHAINS = 3
PARTS_PER_PLUGIN = 2
# Nodes looked at for joins (the least blocked first).
MAX_NODES = 64


def _providers() -> dict:
    from . import (create_pv, device_class, device_count, device_selector, free_devices, free_rwop_claim,
                   host_port, node_affinity, node_labels, node_taints, pod_affinity, remove_pods, requests,
                   resource_slice, spread, tolerations)

    def removal(plugin):
        return lambda ctx, node: remove_pods.parts(ctx, node, plugin)

    # plugin -> ((side, parts function), ...)
    return {
        names.TaintToleration: ((POD, tolerations.parts), (CLUSTER, node_taints.parts)),
        names.NodeUnschedulable: ((CLUSTER, node_taints.parts),),
        names.NodeAffinity: ((POD, node_affinity.parts), (CLUSTER, node_labels.parts)),
        names.NodeResourcesFit: ((POD, requests.parts), (CLUSTER, removal(names.NodeResourcesFit))),
        names.NodePorts: ((POD, host_port.parts), (CLUSTER, removal(names.NodePorts))),
        names.InterPodAffinity: ((POD, pod_affinity.parts), (CLUSTER, removal(names.InterPodAffinity))),
        names.PodTopologySpread: ((POD, spread.parts),),
        names.VolumeRestrictions: ((CLUSTER, free_rwop_claim.parts),),
        names.VolumeBinding: ((CLUSTER, create_pv.parts),),
        names.DynamicResources: ((POD, device_count.parts), (POD, device_selector.parts), (POD, device_class.parts),
                             (CLUSTER, resource_slice.parts), (CLUSTER, free_devices.parts)),
    }


_PROVIDERS: dict | None = None


def providers() -> dict:
    global _PROVIDERS
    if _PROVIDERS is None:
        _PROVIDERS = _providers()
    return _PROVIDERS


def parts_for(ctx: Context, node: str, plugin: str, sides=(POD, CLUSTER)) -> list[Part]:
    """The smallest parts of each side that open `plugin` on `node`."""
    out = []
    for side in sides:
        found = []
        for where, provider in providers().get(plugin, ()):
            if where == side:
                found += [p for p in provider(ctx, node) if p.side == side and plugin in p.opens()]
        found.sort(key=lambda p: p.magnitude)
        out += found[:PARTS_PER_PLUGIN]
    return out


def _openable(plugin: str, sides) -> bool:
    return any(where in sides for where, _ in providers().get(plugin, ()))


def join(parts: list[Part], node: str | None, base: Candidate | None = None) -> Candidate:
    """The parts (on top of `base`) as one candidate: pod patches in turn,
    claim and node patches merged per object, everything else together."""
    cand = Candidate(KIND, POD, "")
    words = []
    pieces = [base] if base is not None else []
    for p in pieces + parts:
        if p.pod_patch:
            cand.pod_patch = (cand.pod_patch or []) + list(p.pod_patch)
        for key, ops in p.claim_edits.items():
            cand.claim_edits[key] = cand.claim_edits.get(key, []) + list(ops)
        for name, ops in p.node_patches.items():
            cand.node_patches[name] = cand.node_patches.get(name, []) + list(ops)
        cand.objects += [o for o in p.objects if o not in cand.objects]
        cand.removed += [pi for pi in p.removed if all(pi.uid != q.uid for q in cand.removed)]
        cand.new_nodes += p.new_nodes
        for change in p.changes:
            _add_change(cand.changes, change)
        if isinstance(p, Part):
            words.append(p.words)
        else:
            words.append(p.change)
            cand.apply += tuple(p.apply)
        cand.magnitude = cand.magnitude + p.magnitude if cand.change else p.magnitude
        cand.change = "; ".join(words)
    kinds = []
    for p in pieces + parts:
        for k in (p.parts or [p.kind]) if isinstance(p, Candidate) else [p.kind]:
            if k not in kinds:
                kinds.append(k)
    cand.parts = kinds
    sides = [p.side for p in pieces + parts]
    cand.side = POD if all(s == POD for s in sides) else CLUSTER
    cand.order = ORDER_POD if cand.side == POD else ORDER_CLUSTER
    if node is not None:
        cand.change += f" (for node {node})"
    cand.joined = (list(parts), node, base)
    return cand


def _add_change(changes: list, change: dict) -> None:
    """A node's patches from two parts are one change of that node."""
    for c in changes:
        if c["action"] == "patch" == change["action"] and c["target"] == change["target"] \
                and c.get("by") == change.get("by"):
            c["patch"] = c["patch"] + change["patch"]
            return
        if c == change:
            return
    changes.append(dict(change))


def _user_objects(cand: Candidate) -> int:
    return ((1 if cand.pod_patch else 0) + len(cand.claim_edits) + len(cand.node_patches) + len(cand.removed)
            + len(cand.new_nodes) + sum(1 for c in cand.changes if c["action"] == "create" and not c.get("by")))


def _key(cand: Candidate) -> str:
    return json.dumps([cand.pod_patch, cand.claim_edits, cand.node_patches, cand.changes], sort_keys=True,
                      default=str)


def _joins(ctx: Context, sides, *, min_plugins: int = 2, max_plugins: int = 3, base=None) -> list[Candidate]:
    b = ctx.blockers
    order = {name: i for i, name in enumerate(b.by_node)}
    nodes = []
    for failing, group in b.groups().items():
        if min_plugins <= len(failing) <= max_plugins and all(_openable(p, sides) for p in failing):
            nodes += group[:MAX_NODES]
    nodes = sorted(nodes, key=lambda n: (len(b.by_node[n]), order[n]))[:MAX_NODES]
    found: dict[str, tuple] = {}
    for node in nodes:
        failing = list(b.by_node[node])
        options = []
        for plugin in failing:
            opts = parts_for(ctx, node, plugin, sides)
            if not opts:
                break
            options.append(opts)
        else:
            for combo in itertools.product(*options):
                chosen = []
                for p in combo:
                    if all((p.kind, p.words) != (q.kind, q.words) for q in chosen):
                        chosen.append(p)
                if not set(failing) <= frozenset().union(*(p.opens() for p in chosen)):
                    continue
                cand = join(chosen, node, base)
                key = _key(cand)
                rank = (_user_objects(cand), any(p.side == CLUSTER for p in chosen),
                        sum(p.magnitude for p in chosen), len(chosen), order[node])
                if key not in found or rank < found[key][0]:
                    found[key] = (rank, cand)
    return [cand for _, cand in sorted(found.values(), key=lambda rc: rc[0])]


def _check(search, candidates, limit: int) -> bool:
    tried = 0
    for cand in candidates:
        if tried >= limit or search.done():
            break
        before = search.tried
        fix = search.check(cand, combination=True)
        tried += search.tried - before
        if fix is not None:
            fix = smallest(search, cand, fix)
            if not any(f.changes == fix.changes for f in search.fixes):
                search.fixes.append(fix)
            return True
    return False


def smallest(search, cand: Candidate, fix):
    """The verified join `cand` (its Fix `fix`) without every part it does
    not need: each part left out in turn (the largest first), the join of
    the others checked; one that verifies replaces it, and is made smaller
    again. A join is proposed only when no part of it can go: a single part
    left is its own kind's fix (not `combined`). The change a chain starts
    from stays (it alone did not place the pod)."""
    while cand.joined is not None:
        parts, node, base = cand.joined
        if len(parts) + (base is not None) < 2:
            break
        smaller = None
        for i in sorted(range(len(parts)), key=lambda i: -parts[i].magnitude):
            if not search.has_budget():
                return fix
            rest = parts[:i] + parts[i + 1:]
            if base is None and not _could_open(search.blockers, rest):
                continue  # no node fails only what the rest opens: it cannot place the pod
            trial = _single(rest[0], node) if len(rest) == 1 and base is None else join(rest, node, base)
            if candidate_key(trial) in search.failed:
                continue  # checked already (a single change of its kind): it does not place the pod
            found = search.check(trial, combination=True)
            if found is not None:
                smaller = (trial, found)
                break
        if smaller is None:
            break
        cand, fix = smaller
    return fix


# A Filter plugin whose verdict other fields of the pod change too: its
# node inclusion policies read the pod's node affinity and tolerations.
_INDIRECT = frozenset({names.PodTopologySpread})


def _could_open(blockers, parts: list[Part]) -> bool:
    """Whether some node fails only plugins the parts open (a part changes
    the verdicts of the plugins it opens and of none other, but for
    _INDIRECT): else the parts cannot place the pod, and need no cycle."""
    opened = frozenset().union(*(p.opens() for p in parts)) | _INDIRECT
    return any(failing and failing <= opened for failing in blockers.groups())


def _single(part: Part, node: str | None) -> Candidate:
    """One part as the fix of its own kind."""
    from .kinds import kind_order

    cand = Candidate(part.kind, part.side, part.words, pod_patch=list(part.pod_patch) if part.pod_patch else None,
                     magnitude=part.magnitude, order=kind_order(part.kind))
    cand.claim_edits = {k: list(v) for k, v in part.claim_edits.items()}
    cand.node_patches = {k: list(v) for k, v in part.node_patches.items()}
    cand.objects = list(part.objects)
    cand.removed = list(part.removed)
    cand.new_nodes = list(part.new_nodes)
    for change in part.changes:
        _add_change(cand.changes, change)
    return cand


def pod_join(search) -> None:
    """Changes to the pod joined, when no single change to the pod verifies."""
    if any(f.side == POD for f in search.fixes):
        return
    _check(search, _joins(Context.of(search), (POD,)), MAX_JOIN_CYCLES)


def mixed_join(search) -> None:
    """Any parts joined (the cluster's among them), when nothing verifies."""
    if search.fixes:
        return
    cands = [c for c in _joins(Context.of(search), (POD, CLUSTER)) if c.side == CLUSTER]
    _check(search, cands, MAX_JOIN_CYCLES)


def chained(search) -> None:
    """On top of the single changes that did not place the pod, what their
    own cycles show still blocks it (one or two plugins on a node)."""
    if search.fixes:
        return
    attempts = sorted((a for a in search.attempts if not a.candidate.parts),
                      key=lambda a: (a.candidate.side != POD, a.candidate.order, a.candidate.magnitude))
    seen_kinds = set()
    chains = 0
    for attempt in attempts:
        if chains >= MAX_CHAINS or search.done():
            break
        cand = attempt.candidate
        if cand.kind in seen_kinds:
            continue
        seen_kinds.add(cand.kind)
        blockers = attempt.blockers()
        if blockers is None or blockers.pre_filter and not any(blockers.by_node.values()):
            continue
        ctx = _chained_context(search, cand, blockers)
        if ctx is None:
            continue
        chains += 1
        found = _joins(ctx, (POD, CLUSTER), min_plugins=1, max_plugins=2, base=cand)
        if _check(search, found, 2):
            return


def _chained_context(search, cand: Candidate, blockers) -> Context | None:
    from .jsonpatch import PatchError, apply_patch

    raw, pi = search.raw_pod, search.pod_info
    if cand.pod_patch:
        try:
            raw = apply_patch(search.raw_pod, cand.pod_patch)
        except PatchError:
            return None
        pi = search.verifier.patched_pod(cand.pod_patch)
        if pi is None:
            return None
    return Context(search, raw, pi, blockers, cand)


def last_resort(search) -> None:
    """A pod a Filter keeps off some node, and no candidate yet: every part
    any kind has for its least blocked nodes, joined (plugins without one
    are named in fixSearch.uncovered)."""
    b = search.blockers
    if search.tried or not b.filter_failures():
        return
    ctx = Context.of(search)
    order = {name: i for i, name in enumerate(b.by_node)}
    nodes = sorted((n for s, group in b.groups().items() if s for n in group[:MAX_NODES]),
                   key=lambda n: (len(b.by_node[n]), order[n]))
    candidates: dict[str, Candidate] = {}
    bare: set[str] = set()
    for node in nodes[:MAX_NODES]:
        chosen = []
        for plugin in b.by_node[node]:
            opts = parts_for(ctx, node, plugin)
            if opts:
                if not any(plugin in p.opens() for p in chosen):
                    chosen.append(opts[0])
            else:
                bare.add(plugin)
        if chosen:
            cand = join(chosen, node)
            candidates.setdefault(_key(cand), cand)
        if len(candidates) >= MAX_CANDIDATES_LAST:
            break
    _check(search, list(candidates.values()), MAX_CANDIDATES_LAST)
    for plugin in sorted(bare):
        search.add_uncovered(plugin, "no change kschedx knows opens it on any node")


MAX_CANDIDATES_LAST = 3
