"""reduce-request: per resource, the largest request with which the pod fits
somewhere, found by bisection with the real scheduling cycle on a grid of
readable amounts (three significant digits of CPU, at least 10m; memory and
storage in binary steps of about 1/32 of the request).

The first probe is where the nodes' free amounts say the answer is; each
probe is a whole cycle, so the grid is searched, never assumed."""

from __future__ import annotations

from ..api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, milli
from ..result.document import quantity_text
from .jsonpatch import pointer

KIND = "reduce-request"
ORDER = 4
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


class _Probe:
    """The pod with one resource's request set to an amount: which container
    (or the pod-level requests) gives up the difference, and the patch."""

    def __init__(self, search, resource: str, current: int):
        self.search = search
        self.resource = resource
        self.current = current
        spec = search.pod_info.spec
        pod_level = ((spec.get("resources") or {}).get("requests") or {})
        if resource in pod_level:
            self.path = ("spec", "resources", "requests")
            self.requests = dict(pod_level)
        else:
            best, best_amount = None, 0
            for i, c in enumerate(spec.get("containers") or ()):
                amount = milli(((c.get("resources") or {}).get("requests") or {}).get(resource, 0))
                if amount > best_amount:
                    best, best_amount = i, amount
            if best is None:
                self.path = None
                return
            self.path = ("spec", "containers", best, "resources", "requests")
            self.requests = dict(spec["containers"][best]["resources"]["requests"])
            self.container = spec["containers"][best].get("name", str(best))
        self.own = _native(resource, milli(self.requests[resource]))

    def patch(self, amount: int) -> list[dict] | None:
        own = self.own - (self.current - amount)
        if self.path is None or own <= 0:
            return None
        requests = dict(self.requests, **{self.resource: _text(self.resource, own)})
        ops = map_ops(self.search.raw_pod, self.path[:-1])
        if ops is None:
            return None
        return ops + [{"op": "add", "path": pointer(*self.path), "value": requests}]

    def run(self, amount: int):
        """(settable, Fix or None): one cycle with the request at `amount`;
        not settable when init containers or overhead decide the request."""
        patch = self.patch(amount)
        if patch is None:
            return False, None
        pi = self.search.verifier.patched_pod(patch)
        if pi is None or pi.resource.as_dict().get(self.resource, 0) != amount:
            return False, None
        where = "pod-level requests" if self.path[1] == "resources" else f"container {self.container}"
        change = (f"lower the {self.resource} request from {_text(self.resource, self.current)} to "
                  f"{_text(self.resource, amount)} ({where}; the largest that fits, in steps of "
                  f"{_text(self.resource, _step(self.resource, self.current))})")
        return True, self.search.try_pod_patch(KIND, change, patch, magnitude=(self.current - amount) / self.current,
                                               order=ORDER)


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


def find(search) -> list:
    nodes = search.blockers.only("NodeResourcesFit")
    wanted: dict[str, list[str]] = {}
    for name in nodes:
        reasons = search.blockers.reasons(name, "NodeResourcesFit")
        if len(reasons) == 1 and reasons[0].startswith("Insufficient "):
            wanted.setdefault(reasons[0][len("Insufficient "):], []).append(name)
    current = search.pod_info.resource.as_dict()
    fixes = []
    for resource, names in wanted.items():
        cur = current.get(resource, 0)
        step = _step(resource, cur)
        top = (cur - 1) // step  # the largest grid point below the request
        if top < 1 or not search.has_budget(2):
            continue
        probe = _Probe(search, resource, cur)
        if probe.path is None:
            continue
        guess = max(_free(search.snapshot.get(n), resource) for n in names) // step
        # Grid point lo fits (0: taken as fitting, never proposed), hi does not.
        lo, hi, best = 0, top + 1, None
        k = min(max(guess, 1), top)
        first = True
        while hi - lo > 1 and search.has_budget():
            settable, fix = probe.run(k * step)
            if not settable:
                break
            if fix is not None:
                lo, best = k, fix
            else:
                hi = k
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
        reasons = search.blockers.reasons(name, "NodeResourcesFit")
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
                break
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
        probes = {r: _Probe(search, r, current[r]) for r in amounts}
        if any(p.path is None for p in probes.values()):
            continue
        by_path: dict[tuple, dict] = {}
        for r, probe in probes.items():
            own = probe.own - (probe.current - amounts[r])
            if own <= 0:
                break
            by_path.setdefault(probe.path, dict(probe.requests))[r] = _text(r, own)
        else:
            patch = []
            for path, requests in by_path.items():
                ops = map_ops(search.raw_pod, path[:-1])
                if ops is None:
                    break
                patch += ops + [{"op": "add", "path": pointer(*path), "value": requests}]
            else:
                pi = search.verifier.patched_pod(patch)
                if pi is None or any(pi.resource.as_dict().get(r, 0) != a for r, a in amounts.items()):
                    continue
                change = "lower the " + " and the ".join(
                    f"{r} request from {_text(r, current[r])} to {_text(r, a)}" for r, a in amounts.items()) + (
                    f" (what node {name} has free)")
                fix = search.try_pod_patch(KIND, change, patch, magnitude=cut, order=ORDER)
                if fix is not None:
                    fixes.append(fix)
                    break
    return fixes
