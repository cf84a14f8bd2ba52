"""combined: one change to the pod joining what each kind would change, for
a node kept off by several of TaintToleration, NodeAffinity and
NodeResourcesFit at once (no single kind opens it). Proposed only when no
single change to the pod verifies."""

from __future__ import annotations

from .common import append_ops, taint_text
from .jsonpatch import pointer
from ..api.labels import NodeSelector
from .requests import _free, _step, _text, map_ops
from .tolerations import toleration_for, untolerated

KIND = "combined"
ORDER = 6
_POD_SIDE = ("TaintToleration", "NodeAffinity", "NodeResourcesFit")


def _affinity_ops(search, ni) -> tuple[list, list]:
    """Drop the nodeSelector entries the node does not match, and the
    required node affinity when the node matches none of its terms."""
    spec = search.raw_pod.get("spec") or {}
    labels = ni.labels
    ops, words = [], []
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            ops.append({"op": "remove", "path": pointer("spec", "nodeSelector", key)})
            words.append(f"drop nodeSelector {key}={value}")
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required:
        terms = NodeSelector(required) if isinstance(required, dict) else None
        if terms is None or not terms.matches(labels, ni.name):
            ops.append({"op": "remove", "path": pointer("spec", "affinity", "nodeAffinity",
                                                        "requiredDuringSchedulingIgnoredDuringExecution")})
            words.append("drop the required node affinity")
    return ops, words


def _request_ops(search, ni, reasons) -> tuple[list, list] | None:
    from .requests import _Probe

    current = search.pod_info.resource.as_dict()
    by_path: dict[tuple, dict] = {}
    words = []
    for reason in reasons:
        if not reason.startswith("Insufficient "):
            return None
        r = reason[len("Insufficient "):]
        cur = current.get(r, 0)
        step = _step(r, cur)
        amount = min(cur - 1, _free(ni, r)) // step * step
        probe = _Probe(search, r, cur)
        if amount < step or probe.path is None:
            return None
        own = probe.own - (cur - amount)
        if own <= 0:
            return None
        by_path.setdefault(probe.path, dict(probe.requests))[r] = _text(r, own)
        words.append(f"lower the {r} request from {_text(r, cur)} to {_text(r, amount)}")
    ops = []
    for path, requests in by_path.items():
        made = map_ops(search.raw_pod, path[:-1])
        if made is None:
            return None
        ops += made + [{"op": "add", "path": pointer(*path), "value": requests}]
    return ops, words


def find(search) -> list:
    from .search import MAX_CANDIDATES, POD

    if any(f.side == POD for f in search.fixes):
        return []
    b = search.blockers
    tolerations = search.pod_info.spec.get("tolerations")
    candidates = []
    for name in b.only(*_POD_SIDE):
        failing = b.by_node[name]
        if len(failing) < 2:
            continue
        ni = search.snapshot.get(name)
        ops, words = [], []
        if "TaintToleration" in failing:
            taints = untolerated(ni.taints, tolerations)
            if not taints:
                continue
            ops += append_ops(search.raw_pod, ("spec", "tolerations"), [toleration_for(t) for t in taints])
            words.append("tolerate taint " + ", ".join(taint_text(t) for t in taints))
        if "NodeAffinity" in failing:
            made = _affinity_ops(search, ni)
            if not made or not made[0]:
                continue
            ops += made[0]
            words += made[1]
        if "NodeResourcesFit" in failing:
            made = _request_ops(search, ni, failing["NodeResourcesFit"])
            if made is None:
                continue
            ops += made[0]
            words += made[1]
        candidates.append((len(ops), name, ops, words))
        if len(candidates) >= 10 * MAX_CANDIDATES:
            break
    fixes = []
    seen = set()
    for size, name, ops, words in sorted(candidates, key=lambda c: c[0]):
        key = repr(ops)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > MAX_CANDIDATES:
            break
        fix = search.try_pod_patch(KIND, "; ".join(words) + f" (for node {name})", ops, magnitude=size, order=ORDER)
        if fix is not None:
            fixes.append(fix)
            break
    return fixes
