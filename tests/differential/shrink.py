"""The smallest case that keeps a difference.

A difference found on a random cluster is shrunk by removing what does not
matter to it, as long as it stays: whole objects first (in halves, then one
by one: the pending pods last, so that the pod that shows it stays), then the
configuration, then fields of each object (keys of mappings and items of
lists, at any depth; never a kind, an apiVersion or a name). A step is kept
when both programs still take the case and still differ in the same way
(one of the first difference's kinds, e.g. "filter InterPodAffinity"), in
the same mode. The result is usually a handful of objects of a few fields.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from . import Outcome, check
from .generate import Case

# What the API server requires, so that a shrunk case stays one it would
# accept: the keys of an object's top level by kind, the keys of a mapping
# by the name of the field that holds it (the nearest name above it: a
# list's items are named by the list), and the lists that cannot be empty.
TOP = {"apiVersion", "kind", "metadata"}
TOP_BY_KIND = {
    "Pod": {"spec"}, "PersistentVolume": {"spec"}, "PersistentVolumeClaim": {"spec"},
    "StorageClass": {"provisioner"}, "ResourceSlice": {"spec"}, "ResourceClaim": {"spec"},
    "ResourceClaimTemplate": {"spec"}, "PriorityClass": {"value"}, "RuntimeClass": {"handler"},
    "CSIStorageCapacity": {"storageClassName"}, "CSINode": {"spec"}, "ReplicaSet": {"spec"},
    "StatefulSet": {"spec"}, "CSIDriver": {"spec"},
}
REQUIRED = {
    "metadata": {"name"},
    "containers": {"name", "image"}, "initContainers": {"name", "image"},
    "matchExpressions": {"key", "operator", "values"}, "matchFields": {"key", "operator", "values"},
    "matchLabelExpressions": {"key", "values"},
    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms", "topologyKey"},
    "preferredDuringSchedulingIgnoredDuringExecution": {"weight", "podAffinityTerm", "preference"},
    "podAffinityTerm": {"topologyKey"},
    "topologySpreadConstraints": {"maxSkew", "topologyKey", "whenUnsatisfiable"},
    "defaultConstraints": {"maxSkew", "topologyKey", "whenUnsatisfiable"},
    "taints": {"key", "effect"}, "tolerations": {"key", "operator"},
    "ports": {"containerPort", "port"}, "volumes": {"name", "persistentVolumeClaim"},
    "persistentVolumeClaim": {"claimName"}, "schedulingGates": {"name"},
    "resourceClaims": {"name", "resourceClaimName", "resourceClaimTemplateName"},
    "claims": {"name"}, "requests": {"name", "exactly", "firstAvailable"},
    "exactly": {"deviceClassName"}, "firstAvailable": {"name", "deviceClassName"},
    "cel": {"expression"}, "selectors": {"cel"},
    "devices": {"name", "requests", "results"}, "results": {"request", "driver", "pool", "device"},
    "pool": {"name", "generation", "resourceSliceCount"}, "reservedFor": {"resource", "name", "uid"},
    "allocation": {"devices"},
    "ownerReferences": {"apiVersion", "kind", "name", "uid"}, "claimRef": {"name", "namespace"},
    "local": {"path"}, "csi": {"driver", "volumeHandle"}, "drivers": {"name", "nodeID"},
    "nodeAffinity": {"required"}, "required": {"nodeSelectorTerms"},
    "resources": {"name", "weight"}, "shape": {"utilization", "score"},
    "pluginConfig": {"name", "args"}, "enabled": {"name"}, "disabled": {"name"}, "profiles": {"schedulerName"},
    "images": {"names"}, "overhead": {"podFixed"}, "handler": set(),
    "template": {"metadata"}, "selector": set(),
}
REQUIRED_SPEC = {
    "Pod": {"containers"}, "PersistentVolume": {"capacity", "accessModes", "local", "csi"},
    "PersistentVolumeClaim": {"accessModes", "resources"}, "ResourceSlice": {"driver", "pool", "nodeName"},
    "ResourceClaimTemplate": {"spec"}, "ReplicaSet": {"selector", "template"},
    "StatefulSet": {"selector", "template", "serviceName"}, "CSINode": {"drivers"},
}
REQUIRED_PATHS = {
    ("PersistentVolumeClaim", ("spec", "resources", "requests")),
    ("PersistentVolumeClaim", ("spec", "resources", "requests", "storage")),
    ("ReplicaSet", ("spec", "template", "metadata", "labels")),
    ("StatefulSet", ("spec", "template", "metadata", "labels")),
}
NONEMPTY = {"containers", "nodeSelectorTerms", "values", "accessModes", "requests", "firstAvailable", "names",
            "results", "resources", "profiles", "matchExpressions", "matchFields", "matchLabelExpressions"}
# At most this many checks per shrink (each runs both programs).
BUDGET = 1500


class _Shrinker:
    def __init__(self, outcome: Outcome, log=None):
        self.best = outcome
        self.version = outcome.version
        self.mode = outcome.mode
        self.want = outcome.categories()
        self.log = log
        self.checks = 0

    def holds(self, case: Case) -> Outcome | None:
        if self.checks >= BUDGET:
            return None
        self.checks += 1
        try:
            out = check(case, self.version, modes=(self.mode,))
        except Exception:  # noqa: BLE001 - a shrunk case either keeps the difference or is dropped
            return None
        if out.differs and out.categories() & self.want:
            return out
        return None

    def accept(self, out: Outcome) -> None:
        self.best = out
        if self.log:
            self.log(f"shrink: {len(out.case.objects)} objects, {_size(out.case)} fields")

    def try_case(self, case: Case) -> bool:
        out = self.holds(case)
        if out is not None:
            self.accept(out)
            return True
        return False

    # -- objects ------------------------------------------------------------------

    def objects(self) -> None:
        """Objects away in halves, quarters... then one by one; the pending
        pods last (the other objects are the most likely to be noise)."""
        chunk = max(1, len(self.best.case.objects) // 2)
        while chunk >= 1:
            ids = [id(o) for o in sorted(self.best.case.objects, key=_pending)]
            i = 0
            while i < len(ids):
                drop = set(ids[i:i + chunk])
                kept = [o for o in self.best.case.objects if id(o) not in drop]
                if kept and self.try_case(replace(self.best.case, objects=kept)):
                    del ids[i:i + chunk]
                else:
                    i += chunk
            chunk //= 2

    def config(self) -> None:
        case = self.best.case
        if case.config is None:
            return
        if self.try_case(replace(case, config=None)):
            return
        self.fields_of(lambda c: c.config, lambda c, v: replace(c, config=v))

    # -- fields -------------------------------------------------------------------

    def fields(self) -> None:
        for index in range(len(self.best.case.objects)):
            def get(c, i=index):
                return c.objects[i]

            def put(c, value, i=index):
                objs = list(c.objects)
                objs[i] = value
                return replace(c, objects=objs)

            self.fields_of(get, put)

    def fields_of(self, get, put) -> None:
        """Every path of the value `get(case)` tried for removal, parents
        before children (a whole subtree goes at once)."""
        failed: set = set()
        progress = True
        while progress:
            progress = False
            current = get(self.best.case)
            for path in _paths(current):
                if path in failed or not _removable(current, path, current.get("kind")):
                    continue
                value = copy.deepcopy(current)
                if not _remove(value, path):
                    continue
                if self.try_case(put(self.best.case, value)):
                    progress = True
                    break
                failed.add(path)

    def run(self) -> Outcome:
        self.objects()
        self.config()
        self.fields()
        self.objects()  # a field gone may make an object useless
        return self.best


def shrink(outcome: Outcome, log=None) -> Outcome:
    """The smallest case found that keeps `outcome`'s difference (the
    outcome itself when nothing can go)."""
    if not outcome.differs or outcome.mode is None:
        return outcome
    return _Shrinker(outcome, log).run()


def _removable(root, path, kind=None) -> bool:
    """Whether the API server still takes `root` without `path`."""
    last = path[-1]
    names = [k for k in path[:-1] if isinstance(k, str)]
    context = names[-1] if names else None
    if (kind, tuple(k for k in path if isinstance(k, str))) in REQUIRED_PATHS:
        return False
    if len(path) == 1 and kind is not None:
        return last not in TOP | TOP_BY_KIND.get(kind, set())
    if context == "spec" and len(names) == 1 and kind is not None and last in REQUIRED_SPEC.get(kind, ()):
        return False
    if isinstance(last, str) and last in REQUIRED.get(context, ()):
        return False
    if isinstance(last, int):
        parent = root
        for key in path[:-1]:
            parent = parent[key]
        if context in NONEMPTY and len(parent) <= 1:
            return False
    return True


def _pending(obj: dict) -> int:
    return 1 if obj.get("kind") == "Pod" and not (obj.get("spec") or {}).get("nodeName") else 0


def _paths(value, prefix=()):
    """Every key path in `value`, parents before children."""
    if isinstance(value, dict):
        for k in list(value):
            yield prefix + (k,)
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i in range(len(value)):
            yield prefix + (i,)
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def _remove(value, path) -> bool:
    for key in path[:-1]:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return False
    last = path[-1]
    try:
        del value[last]
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _size(case: Case) -> int:
    return sum(1 for o in case.objects for _ in _paths(o))
