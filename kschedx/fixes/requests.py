"""reduce-request: per resource, the largest request with which the pod fits
somewhere, found by bisection with the real scheduling cycle on a grid of
readable amounts (three significant digits of CPU, at least 10m; memory and
storage in binary steps of about 1/32 of the request).

The first probe is where the nodes' free amounts say the answer is; each
probe is a whole cycle, so the grid is searched, never assumed."""

from __future__ import annotations

from ..config import names
from ..api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, milli, to_milli_list
from ..result.document import quantity_text
from .jsonpatch import pointer

KIND = "reduce-request"
ORDER = 6
_BYTES = (MEMORY, EPHEMERAL_STORAGE)


def _step(resource: str, current: int) -> int:
    if resource == CPU:
        return max(10, 10 ** max(0, len(str(current)) - 3))
    if resource in _BYTES:
        return max(1 << 20, 1 << max(0, current.bit_length() - 6))
    return 1


def _native(resource: str, milli_value: int) -> int:
    return milli_value if resource == CPU else -(-milli_value // 1000)


def _text(resource: str, native: int) -> str:
    return quantity_text(resource, native if resource == CPU else native * 1000)


def _free(ni, resource: str) -> int:
    alloc, used = ni.allocatable.as_dict(), ni.requested.as_dict()
    return alloc.get(resource, 0) - used.get(resource, 0)


def overcommits(resource: str) -> bool:
    """Whether a request may be below its limit: cpu, memory and
    ephemeral-storage; an extended resource's or hugepages' request must
    equal its limit (the API server refuses the pod otherwise)."""
    return resource in (CPU, MEMORY, EPHEMERAL_STORAGE)


def droppable(resource: str) -> bool:
    """A request kschedx may propose to drop when no node has any of it:
    extended resources, hugepages, ephemeral-storage (never cpu or memory)."""
    return resource not in (CPU, MEMORY)


class _Place:
    """One requests mapping the cut may lower: the pod level, a container,
    an init container or a sidecar (an init container with restartPolicy
    Always), with its requests as admitted (limits defaulted in)."""

    def __init__(self, path: tuple, who: str, resources: dict, resource: str, sidecar: bool = False):
        self.path = path + ("resources", "requests")
        self.who = who
        self.sidecar = sidecar
        self.requests = dict(resources.get("requests") or {})
        limits = resources.get("limits") or {}
        # The limit follows where it must equal the request.
        self.limits = dict(limits) if not overcommits(resource) and resource in limits else None
        self.own = _native(resource, milli(self.requests.get(resource, 0)))


def _places(spec: dict, resource: str) -> tuple[list, list]:
    """(the containers and sidecars, whose requests add up; the init
    containers in their order, sidecars included: the largest of each one's
    request with the sidecars started before it is the pod's floor)."""
    summed, inits = [], []
    for i, c in enumerate(spec.get("containers") or ()):
        summed.append(_Place(("spec", "containers", i), f"container {c.get('name', i)}",
                             c.get("resources") or {}, resource))
    for i, c in enumerate(spec.get("initContainers") or ()):
        sidecar = c.get("restartPolicy") == "Always"
        place = _Place(("spec", "initContainers", i),
                       f"{'sidecar' if sidecar else 'init'} container {c.get('name', i)}",
                       c.get("resources") or {}, resource, sidecar)
        inits.append(place)
        if sidecar:
            summed.append(place)
    return summed, inits


def _unit(resource: str) -> int:
    """The level several containers are lowered to is rounded to it, for
    readable amounts (10m of cpu, 1Mi of memory or storage)."""
    return 10 if resource == CPU else (1 << 20 if resource in _BYTES else 1)


def _level(owns: list[int], total: int, unit: int) -> list[int] | None:
    """The amounts lowered to a common level (the smaller ones kept) so that
    they add up to `total`; what the rounding of the level leaves goes to
    the largest. None when one would reach zero."""
    order = sorted(range(len(owns)), key=lambda i: owns[i])
    out, left = list(owns), total
    for k, i in enumerate(order):
        capped = order[k:]
        if owns[i] * len(capped) <= left:
            left -= owns[i]
            continue
        level = left // len(capped)
        if level >= unit:
            level = level // unit * unit
        if level <= 0:
            return None
        rest = left - level * len(capped)
        for j in reversed(capped):
            out[j] = level + min(rest, owns[j] - level)
            rest -= out[j] - level
        return out
    return out


class _Probe:
    """The pod with one resource's request set to an amount: which of its
    requests (the pod level's, or the containers', init containers' and
    sidecars') give up the difference, and the patch (the limit follows the
    request where they must be equal)."""

    def __init__(self, search, resource: str, current: int, pod_info=None, raw_pod=None):
        self.search = search
        self.pod_info = pod_info if pod_info is not None else search.pod_info
        self.raw_pod = raw_pod if raw_pod is not None else search.raw_pod
        self.resource = resource
        self.current = current
        spec = self.pod_info.spec
        resources = spec.get("resources") or {}
        if resource in (resources.get("requests") or {}):
            self.pod_level = _Place(("spec",), "pod-level requests", resources, resource)
            self.summed, self.inits = [], []
        else:
            self.pod_level = None
            self.summed, self.inits = _places(spec, resource)
        overhead = to_milli_list(spec.get("overhead")).get(resource, 0)
        self.overhead = _native(resource, overhead) if overhead else 0
        self.path = True if self.pod_level or any(p.own for p in self.summed + self.inits) else None

    def plan(self, amount: int) -> list[tuple] | None:
        """[(place, its new amount)] giving the pod `amount` of the resource;
        None when no positive requests do."""
        if self.pod_level is not None:
            own = self.pod_level.own - (self.current - amount)
            return [(self.pod_level, own)] if own > 0 else None
        total = amount - self.overhead
        new = self._summed(total)
        if new is None:
            return None
        # Init containers (with the sidecars started before them) above
        # the new amount would set the pod's request: they come down to it.
        running = 0
        for place in self.inits:
            if place.sidecar:
                running += new.get(place, place.own)
            elif place.own + running > total:
                if total - running <= 0:
                    return None
                new[place] = total - running
        return [(p, new[p]) for p in self.summed + self.inits if p in new] or None

    def _summed(self, total: int) -> dict | None:
        """The containers' and sidecars' new amounts adding up to at most
        `total`: the largest alone gives up the difference when it can keep
        some, else they are lowered to a common level."""
        owns = [p.own for p in self.summed]
        cut = sum(owns) - total
        if cut <= 0:
            return {}
        largest = max(range(len(owns)), key=lambda i: (owns[i], -i))
        if owns[largest] - cut > 0:
            return {self.summed[largest]: owns[largest] - cut}
        levels = _level(owns, total, _unit(self.resource))
        if levels is None:
            return None
        return {p: v for p, v in zip(self.summed, levels) if v != p.own}

    def values(self, plan) -> dict:
        """{path: the mapping written there} with the resource at each place's new amount."""
        out = {}
        for place, own in plan:
            out[place.path] = dict(place.requests, **{self.resource: _text(self.resource, own)})
            if place.limits is not None:
                out[place.path[:-1] + ("limits",)] = dict(place.limits, **{self.resource: _text(self.resource, own)})
        return out

    def words(self, plan, amount: int) -> tuple[str, str]:
        """("lower the cpu request ...", what to add in parentheses): each
        place's own amounts, and the pod's total when they are not it."""
        r = self.resource
        if len(plan) == 1 and plan[0][0].own == self.current:
            place, own = plan[0]
            return f"lower the {r} request from {_text(r, self.current)} to {_text(r, own)}", place.who
        each = [f"{place.who} from {_text(r, place.own)} to {_text(r, own)}" for place, own in plan]
        return (f"lower the {r} request of " + " and of ".join(each),
                f"pod total {_text(r, self.current)} -> {_text(r, amount)}")

    def named(self, plan, amount: int) -> str:
        """The words in one clause, naming where the cut is made unless the
        pod has a single place to make it."""
        lower, where = self.words(plan, amount)
        if where != plan[0][0].who:
            return f"{lower} ({where})"
        if len(self.summed) + len(self.inits) <= 1:
            return lower
        r = self.resource
        return f"lower the {r} request of {where} from {_text(r, self.current)} to {_text(r, plan[0][1])}"

    def run(self, amount: int):
        """(settable, Fix or None): one cycle with the request at `amount`;
        not settable when no requests of the pod make that amount."""
        plan = self.plan(amount)
        patch = None if plan is None else write_ops(self.raw_pod, self.values(plan))
        if patch is None:
            return False, None
        pi = self.search.verifier.patched_pod(patch)
        if pi is None or pi.resource.as_dict().get(self.resource, 0) != amount:
            return False, None
        lower, where = self.words(plan, amount)
        change = (f"{lower} ({where}; the largest that fits, in steps of "
                  f"{_text(self.resource, _step(self.resource, self.current))})")
        return True, self.search.try_pod_patch(KIND, change, patch, magnitude=(self.current - amount) / self.current,
                                               order=ORDER)


def write_ops(raw_pod: dict, values: dict) -> list[dict] | None:
    """Operations writing each {path: mapping} into the pod as written."""
    ops: list[dict] = []
    made: set = set()
    for path, value in values.items():
        more = map_ops(raw_pod, path[:-1])
        if more is None:
            return None
        for op in more:
            if op["path"] not in made:
                made.add(op["path"])
                ops.append(op)
        ops.append({"op": "add", "path": pointer(*path), "value": value})
    return ops


def drop_ops(raw_pod: dict, resource: str) -> list[dict]:
    """Remove the resource from every request and limit of the pod as written."""
    ops = []
    spec = raw_pod.get("spec") or {}
    places = [(("spec",), spec)]
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or ()):
            if isinstance(c, dict):
                places.append((("spec", field, i), c))
    for where, obj in places:
        res = obj.get("resources") if isinstance(obj, dict) else None
        if not isinstance(res, dict):
            continue
        for k in ("requests", "limits"):
            if isinstance(res.get(k), dict) and resource in res[k]:
                ops.append({"op": "remove", "path": pointer(*where, "resources", k, resource)})
    return ops


def map_ops(obj, path: tuple) -> list[dict] | None:
    """Operations creating the mappings of `path` that `obj` lacks (list
    indexes along it must exist); None when the path cannot be made."""
    ops = []
    node = obj
    for i, key in enumerate(path):
        if isinstance(node, list):
            if not isinstance(key, int) or key >= len(node):
                return None
            node = node[key]
        elif isinstance(node, dict):
            if key not in node:
                ops.append({"op": "add", "path": pointer(*path[: i + 1]), "value": {}})
                node = {}
            else:
                node = node[key]
        else:
            return None
    return ops if isinstance(node, dict) else None


def reachable(search, resource: str) -> str | None:
    """A node that has the pod's request of the resource free and whose
    resources are not what keeps the pod off it (other kinds may open it):
    then dropping the request is never proposed. None when there is none."""
    cache = search.__dict__.setdefault("_reachable", {})
    if resource not in cache:
        need = search.pod_info.resource.as_dict().get(resource, 0)
        cache[resource] = next((ni.name for ni in search.snapshot.node_infos
                                if _free(ni, resource) >= need
                                and names.NodeResourcesFit not in search.blockers.by_node.get(ni.name, {})), None)
    return cache[resource]


def _drop(search, resource: str, raw_pod=None, pod_info=None):
    """The drop of a resource the pod can have nowhere (no node has it free
    but where other requests do not fit either), when the API server takes
    the pod without it: (ops, words) or None."""
    raw_pod = raw_pod if raw_pod is not None else search.raw_pod
    if not droppable(resource) or reachable(search, resource) is not None:
        return None
    ops = drop_ops(raw_pod, resource)
    if not ops:
        return None
    return ops, (f"drop the {resource} request" + (" and limit" if any("/limits/" in op["path"] for op in ops)
                                                    else "") + f" (no node has it free where the pod's other "
                                                               "requests fit)")


def find(search) -> list:
    nodes = search.blockers.only(names.NodeResourcesFit)
    wanted: dict[str, list[str]] = {}
    for name in nodes:
        reasons = search.blockers.reasons(name, names.NodeResourcesFit)
        if len(reasons) == 1 and reasons[0].startswith("Insufficient "):
            wanted.setdefault(reasons[0][len("Insufficient "):], []).append(name)
    current = search.pod_info.resource.as_dict()
    fixes = []
    for resource, short_of in wanted.items():
        cur = current.get(resource, 0)
        step = _step(resource, cur)
        top = (cur - 1) // step  # the largest grid point below the request
        free = max(_free(search.snapshot.get(n), resource) for n in short_of)
        if free < step or top < 1:
            # Not one step of it anywhere: the request itself is the change.
            dropped = _drop(search, resource)
            if dropped is not None and search.has_budget():
                ops, words = dropped
                fix = search.try_pod_patch(KIND, words, ops, magnitude=1.0, order=ORDER)
                if fix is not None:
                    fixes.append(fix)
            continue
        if not search.has_budget(2):
            continue
        probe = _Probe(search, resource, cur)
        if probe.path is None:
            continue
        guess = free // step
        # Grid point lo fits (0: taken as fitting, never proposed), hi does not.
        lo, hi, best = 0, top + 1, None
        k = min(max(guess, 1), top)
        first = True
        while hi - lo > 1 and search.has_budget():
            settable, fix = probe.run(k * step)
            if fix is not None:
                lo, best = k, fix
            else:
                hi = k  # does not fit, or no requests make it: a smaller amount neither
            # The free amounts are usually right: check the neighbour above first.
            k = lo + 1 if first and fix is not None else (lo + hi) // 2
            first = False
        if best is not None:
            fixes.append(best)
    if not fixes:
        fixes.extend(_several(search, nodes, current))
    return fixes


def _several(search, nodes, current) -> list:
    """Nodes short of several resources at once: every request cut to what
    one node has free (on each resource's grid), for the nodes needing the
    smallest cut; one cycle each."""
    from .search import MAX_CANDIDATES

    options = []
    for name in nodes:
        reasons = search.blockers.reasons(name, names.NodeResourcesFit)
        if len(reasons) < 2 or not all(r.startswith("Insufficient ") for r in reasons):
            continue
        ni = search.snapshot.get(name)
        amounts = {}
        for reason in reasons:
            r = reason[len("Insufficient "):]
            cur = current.get(r, 0)
            step = _step(r, cur)
            amount = min(cur - 1, _free(ni, r)) // step * step
            if amount < step:
                if not droppable(r):
                    break
                amount = 0  # dropped
            amounts[r] = amount
        else:
            cut = max((current[r] - a) / current[r] for r, a in amounts.items())
            options.append((cut, name, amounts))
    fixes = []
    seen = set()
    for cut, name, amounts in sorted(options, key=lambda o: o[0]):
        key = tuple(sorted(amounts.items()))
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > MAX_CANDIDATES or not search.has_budget():
            break
        made = cut_ops(search, amounts)
        if made is None:
            continue
        patch, words = made
        pi = search.verifier.patched_pod(patch)
        if pi is None or any(pi.resource.as_dict().get(r, 0) != a for r, a in amounts.items()):
            continue
        change = joined(words) + f" (what node {name} has free)"
        fix = search.try_pod_patch(KIND, change, patch, magnitude=cut, order=ORDER)
        if fix is not None:
            fixes.append(fix)
            break
    return fixes


def joined(words: list[str]) -> str:
    """"lower the cpu request from 2 to 1 and the memory request from 4Gi to
    2Gi": lowerings in one sentence, drops after it."""
    lower = [w[len("lower the "):] for w in words if w.startswith("lower the ")]
    rest = [w for w in words if not w.startswith("lower the ")]
    return "; ".join((["lower the " + " and the ".join(lower)] if lower else []) + rest)


def cut_ops(search, amounts: dict, pod_info=None, raw_pod=None):
    """(patch, words) setting each resource's request to its amount (0:
    dropped, with its limit); None when the pod as written cannot take it."""
    pod_info = pod_info if pod_info is not None else search.pod_info
    raw_pod = raw_pod if raw_pod is not None else search.raw_pod
    current = pod_info.resource.as_dict()
    values: dict[tuple, dict] = {}
    drops, words = [], []
    for r, amount in amounts.items():
        if amount == 0:
            dropped = _drop(search, r, raw_pod)
            if dropped is None:
                return None
            drops += dropped[0]
            words.append(dropped[1])
            continue
        probe = _Probe(search, r, current[r], pod_info, raw_pod)
        if probe.path is None:
            return None
        plan = probe.plan(amount)
        if plan is None:
            return None
        for path, value in probe.values(plan).items():
            merged = values.setdefault(path, dict(value))
            merged[r] = value[r]
        words.append(probe.named(plan, amount))
    patch = write_ops(raw_pod, values) if values else []
    if patch is None:
        return None
    # Drops of a mapping another operation writes whole are taken by it.
    written = {op["path"] for op in patch if op["op"] == "add"}
    drops = [op for op in drops if op["path"].rsplit("/", 1)[0] not in written]
    for path, value in values.items():
        for r in list(value):
            if amounts.get(r) == 0:
                del value[r]
    return patch + drops, words


def parts(ctx, node: str):
    """The requests cut to what the node has free (dropped when it has none)."""
    from .parts import Part
    from .search import POD

    reasons = ctx.blockers.reasons(node, names.NodeResourcesFit)
    if not reasons or not all(r.startswith("Insufficient ") for r in reasons):
        return []
    ni = ctx.search.snapshot.get(node)
    current = ctx.pod_info.resource.as_dict()
    amounts = {}
    for reason in reasons:
        r = reason[len("Insufficient "):]
        cur = current.get(r, 0)
        if not cur:
            return []
        step = _step(r, cur)
        amount = min(cur - 1, _free(ni, r)) // step * step
        if amount < step:
            if not droppable(r):
                return []
            amount = 0
        amounts[r] = amount
    made = cut_ops(ctx.search, amounts, ctx.pod_info, ctx.raw_pod)
    if made is None:
        return []
    patch, words = made
    cut = max((current[r] - a) / current[r] for r, a in amounts.items())
    return [Part(KIND, names.NodeResourcesFit, POD, joined(words), pod_patch=patch, magnitude=cut)]
