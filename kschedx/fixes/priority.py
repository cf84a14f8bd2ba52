"""raise-priority: the lowest PriorityClass of the cluster with which
preemption makes room for the pod, and the pods it would evict. Tried only
when preemption cannot help the pod as it is; the cycle is run with
PostFilter, as kube-scheduler runs it."""

from __future__ import annotations

from ..sources.admission import PREEMPT_LOWER_PRIORITY
from .jsonpatch import pointer

KIND = "raise-priority"
ORDER = 13


def _classes(search):
    pi = search.pod_info
    out = []
    for name, pc in search.snapshot.cluster.priority_classes.items():
        value = pc.get("value", 0)
        if not isinstance(value, int) or value <= pi.priority:
            continue
        if (pc.get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY) != PREEMPT_LOWER_PRIORITY:
            continue
        if name.startswith("system-") and pi.namespace != "kube-system":
            continue  # the API server keeps system classes to kube-system
        out.append((value, name))
    return sorted(out)


def find(search) -> list:
    from .search import MAX_CANDIDATES

    pre = search.pod_doc.get("preemption") or {}
    if pre.get("nominatedNode") or not search.blockers.resolvable:
        return []  # preemption already helps, or no node is one preemption could free
    spec = search.raw_pod.get("spec") or {}
    current = spec.get("priorityClassName")
    fixes = []
    for value, name in _classes(search)[:MAX_CANDIDATES]:
        patch = [{"op": "add", "path": pointer("spec", "priorityClassName"), "value": name}]
        # The API server computes priority and preemptionPolicy from the class.
        patch += [{"op": "remove", "path": pointer("spec", key)} for key in ("priority", "preemptionPolicy")
                  if key in spec]
        was = f" instead of {current}" if current else ""
        fix = search.try_pod_patch(KIND, f"use PriorityClass {name} (priority {value}){was}", patch,
                                   magnitude=value, order=ORDER, preemption=True)
        if fix is not None:
            fixes.append(fix)
            break  # the lowest class that works; higher ones only evict more freely
    return fixes
