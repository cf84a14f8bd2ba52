"""What a fix widens: how far it lets the pod (or other pods) go beyond
what was asked, read from its changes. Fixes that widen less rank first.

Levels, least first:

- none: nothing widened: capacity or a missing object added (a node like
  an existing one, a volume, devices), a taint tolerated that is there for
  pods asking for what this pod asks for (ExtendedResourceToleration's
  rule: the taint's key is an extended resource the pod requests);
- softer: the pod asks for less or prefers what it required: smaller
  requests, looser spreading, anti-affinity made a preference;
- placement: a placement rule dropped or changed: a nodeSelector entry, a
  required node affinity, pod affinity or anti-affinity, a host port, a
  zone, a device selector or class, a node's labels;
- reserved: onto nodes reserved for others (a taint tolerated), or other
  pods preempted;
- others: other pods' nodes or pods changed for everyone: a taint removed,
  a node uncordoned, pods deleted;
- gives-up: the pod gives up what it asked for and cannot do without: a
  request of an extended resource or hugepages dropped.
"""

from __future__ import annotations

from ..api.resources import CPU, EPHEMERAL_STORAGE, MEMORY, milli, qos_class
from ..config import names
from .jsonpatch import PatchError, apply_patch, parse_pointer, resolve

LEVELS = ("none", "softer", "placement", "reserved", "others", "gives-up")
NONE, SOFTER, PLACEMENT, RESERVED, OTHERS, GIVES_UP = range(len(LEVELS))

ZONE_KEYS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
             "failure-domain.beta.kubernetes.io/region")
# Taints the node lifecycle controller and kubectl cordon/drain put on nodes.
_CONDITION_TAINTS = {
    "node.kubernetes.io/unschedulable": "cordoned",
    "node.kubernetes.io/not-ready": "not ready",
    "node.kubernetes.io/unreachable": "unreachable",
    "node.kubernetes.io/memory-pressure": "under memory pressure",
    "node.kubernetes.io/disk-pressure": "under disk pressure",
    "node.kubernetes.io/pid-pressure": "under PID pressure",
    "node.kubernetes.io/network-unavailable": "without a network",
    "node.cloudprovider.kubernetes.io/uninitialized": "not initialized by its cloud provider",
    "node.cloudprovider.kubernetes.io/shutdown": "shut down",
}
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
# Kinds whose change is a claim's (written to a ResourceClaim or its template).
_CLAIM_KINDS = {
    "reduce-device-count": (SOFTER, "devices", "asks for fewer devices than before"),
    "relax-device-selector": (PLACEMENT, "devices", "accepts devices its selector excluded"),
    "relax-device-constraint": (PLACEMENT, "devices", "accepts devices that do not share an attribute it required"),
    "use-device-class": (PLACEMENT, "devices", "takes devices of another DeviceClass"),
    "use-storage-class": (PLACEMENT, "storage", "takes a volume of another StorageClass"),
}


class Widening:
    """A fix's widening: its level and what it widens, in words."""

    def __init__(self):
        self.level = NONE
        self.entries: list[dict] = []

    def add(self, level: int, kind: str, text: str) -> None:
        self.level = max(self.level, level)
        entry = {"kind": kind, "level": LEVELS[level], "text": text}
        if entry not in self.entries:
            self.entries.append(entry)

    @property
    def name(self) -> str:
        return LEVELS[self.level]


def widening(search, kind: str, parts, pod_patch, changes: list[dict], verified: dict) -> Widening:
    """What the fix (its kind, the kinds it joins, the patch of the pod as
    written, every change) widens."""
    w = Widening()
    if pod_patch:
        _pod(w, search, pod_patch, verified)
    for change in changes:
        if change.get("by"):
            continue  # what a controller then does follows from the user's change
        target = change["target"]
        if target["kind"] == "Node" and change["action"] == "patch":
            _node(w, search, target["name"], change["patch"])
        elif target["kind"] == "Pod" and change["action"] == "delete":
            w.add(OTHERS, "pods", f"deletes pod {target['namespace']}/{target['name']}")
        elif target["kind"] in ("ResourceClaim", "ResourceClaimTemplate", "PersistentVolumeClaim") \
                and change["action"] in ("patch", "create"):
            for k in parts or [kind]:
                if k in _CLAIM_KINDS:
                    level, what, text = _CLAIM_KINDS[k]
                    w.add(level, what, text)
    return w


# -- the pod -------------------------------------------------------------------------------
def _pod(w: Widening, search, patch: list[dict], verified: dict) -> None:
    doc = search.raw_pod
    requested = _requests(search.pod_info)
    ops = list(patch)
    for i, op in enumerate(ops):
        path = op.get("path", "")
        try:
            tokens = parse_pointer(path)
            before = resolve(doc, path) if op["op"] in ("remove", "replace") else _maybe(doc, path)
        except (PatchError, ValueError, KeyError, IndexError, TypeError):
            tokens, before = [], None
        _pod_op(w, search, op, tokens, before, ops[i + 1:], requested, verified)
        try:
            doc = apply_patch(doc, [op])
        except PatchError:
            break
    _qos(w, search.raw_pod, doc, patch)


def _maybe(doc, path: str):
    try:
        return resolve(doc, path)
    except PatchError:
        return None


def _requests(pi) -> dict:
    return pi.resource.as_dict()


def _pod_op(w, search, op, tokens, before, later, requested, verified) -> None:
    t = [str(x) for x in tokens]
    value = op.get("value")
    if t[:2] == ["spec", "tolerations"]:
        tols = value if isinstance(value, list) else [value]
        for tol in tols:
            if isinstance(tol, dict):
                _toleration(w, search, tol, requested)
    elif t[:2] == ["spec", "nodeSelector"]:
        sel = before if len(t) > 2 else None
        key = t[2] if len(t) > 2 else None
        if key is None:
            w.add(PLACEMENT, "selector", "drops its nodeSelector")
        elif op["op"] == "remove":
            if key in ZONE_KEYS:
                w.add(PLACEMENT, "zone", f"may leave {_zone_word(key)} {sel} (drops nodeSelector {key}={sel})")
            else:
                w.add(PLACEMENT, "selector", f"may run on nodes without {key}={sel} (drops it from its nodeSelector)")
        else:
            if key in ZONE_KEYS:
                w.add(PLACEMENT, "zone", f"moves from {_zone_word(key)} {sel} to {value}")
            else:
                w.add(PLACEMENT, "selector", f"nodeSelector {key}={sel} becomes {key}={value}")
    elif t[:3] == ["spec", "affinity", "nodeAffinity"]:
        _node_affinity(w, op, t, before, value)
    elif t[:3] == ["spec", "affinity", "podAntiAffinity"] or t[:3] == ["spec", "affinity", "podAffinity"]:
        _pod_affinity(w, op, t, before, later)
    elif t[:2] == ["spec", "topologySpreadConstraints"]:
        if len(t) > 3 and t[3] == "maxSkew":
            w.add(SOFTER, "spread", f"spreads less evenly (maxSkew {before or 1} -> {value})")
        elif len(t) > 3 and t[3] == "whenUnsatisfiable":
            w.add(SOFTER, "spread", "spreading becomes a preference (whenUnsatisfiable: ScheduleAnyway)")
        elif len(t) > 3 and t[3] == "minDomains":
            pass  # goes with whenUnsatisfiable
        else:
            w.add(PLACEMENT, "spread", "drops a topology spread constraint")
    elif "hostPort" in t:
        w.add(PLACEMENT, "host-port", f"no longer opens host port {before} on its node (the containerPort stays)")
    elif "resources" in t and ("requests" in t or "limits" in t):
        _resources(w, op, t, _admitted(search, op, t, before), value)
    elif t[:2] == ["spec", "priorityClassName"] or t[:2] == ["spec", "priority"]:
        victims = verified.get("victims") or []
        if victims:
            w.add(RESERVED, "preemption", f"preempts {len(victims)} pod(s) of lower priority "
                                          f"({', '.join(v['pod'] for v in victims[:3])}{', ...' if len(victims) > 3 else ''})")
        elif t[:2] == ["spec", "priorityClassName"]:
            w.add(RESERVED, "preemption", f"takes PriorityClass {value}: it may preempt pods of lower priority")
    elif t[:2] == ["spec", "volumes"] or t[:2] == ["spec", "resourceClaims"]:
        pass  # a claim's change, read from the claim
    elif tokens:
        w.add(PLACEMENT, "spec", f"changes {op.get('path')}")


def _toleration(w, search, tol: dict, requested: dict) -> None:
    from ..api.taints import tolerations_tolerate_taint
    from .common import taint_text

    own = search.pod_info.spec.get("tolerations")
    hit: dict[str, list[str]] = {}
    found: dict[str, dict] = {}
    # Only where TaintToleration kept the pod off: elsewhere it tolerates every taint.
    kept_off = {n for failing, group in search.blockers.groups().items() if names.TaintToleration in failing
                for n in group}
    for ni in search.snapshot.node_infos:
        if ni.name not in kept_off:
            continue
        for taint in ni.taints:
            if taint.get("effect") not in ("NoSchedule", "NoExecute"):
                continue
            if tolerations_tolerate_taint([tol], taint) and not tolerations_tolerate_taint(own, taint):
                text = taint_text(taint)
                hit.setdefault(text, []).append(ni.name)
                found[text] = taint
    for text, nodes in hit.items():
        key = found[text].get("key", "")
        where = f"{len(nodes)} node(s) ({', '.join(nodes[:3])}{', ...' if len(nodes) > 3 else ''})"
        if key in requested and _extended(key):
            continue  # the taint keeps off pods that do not ask for the resource this one asks for
        if key in _CONDITION_TAINTS:
            w.add(RESERVED, "taint", f"runs on {where} {_CONDITION_TAINTS[key]} (tolerates taint {text})")
        else:
            w.add(RESERVED, "taint", f"tolerates taint {text}, which reserves {where} for other pods")


def _extended(resource: str) -> bool:
    return "/" in resource and not resource.startswith(("kubernetes.io/", "requests."))


def _zone_word(key: str) -> str:
    return "region" if key.endswith("/region") else "zone"


def _node_affinity(w, op, t, before, value) -> None:
    if op["op"] == "replace" and t and t[-1] == "values":
        w.add(PLACEMENT, "zone", f"its required node affinity {', '.join(map(str, before or ()))} becomes "
                                 f"{', '.join(map(str, value or ()))}")
        return
    if op["op"] != "remove":
        w.add(PLACEMENT, "node-affinity", "changes its required node affinity")
        return
    keys = []
    if isinstance(before, dict) and "key" in before:
        keys = [before.get("key")]
        text = f"drops the requirement {before.get('key')} {before.get('operator')} of its required node affinity"
    else:
        text = "drops its required node affinity"
        for term in (before or {}).get("nodeSelectorTerms") or () if isinstance(before, dict) else ():
            keys += [r.get("key") for r in term.get("matchExpressions") or ()]
    if any(k in ZONE_KEYS for k in keys):
        w.add(PLACEMENT, "zone", f"may leave the zone(s) it required ({text.replace('drops', 'it drops', 1)})")
    else:
        w.add(PLACEMENT, "node-affinity", f"may run on nodes it excluded ({text.replace('drops', 'it drops', 1)})")


_DOMAINS = {"kubernetes.io/hostname": "node", "topology.kubernetes.io/zone": "zone",
            "topology.kubernetes.io/region": "region"}


def _terms(terms) -> tuple[str, str]:
    """(the pods the terms select, the domain they are counted in: a node, a zone...)."""
    pods, domains = [], []
    for term in terms:
        if not isinstance(term, dict):
            continue
        sel = term.get("labelSelector") or {}
        labels = [f"{k}={v}" for k, v in (sel.get("matchLabels") or {}).items()]
        labels += [f"{e.get('key')} {e.get('operator')}" for e in sel.get("matchExpressions") or ()]
        pods.append(", ".join(labels) or "any pod")
        key = term.get("topologyKey")
        domains.append(_DOMAINS.get(key, f"{key} domain"))
    return "; ".join(pods) or "its terms", " or ".join(dict.fromkeys(domains)) or "domain"


def _pod_affinity(w, op, t, before, later) -> None:
    anti = t[2] == "podAntiAffinity"
    if op["op"] != "remove":
        if len(t) > 3 and t[3] == _PREFERRED:
            return  # the other half of a required term made preferred
        w.add(PLACEMENT, "pod-affinity", "changes its pod affinity")
        return
    pods, domain = _terms(before if isinstance(before, list) else [before])
    soft = any(o.get("op") == "add" and o.get("path", "").startswith(f"/spec/affinity/{t[2]}/{_PREFERRED}")
               for o in later)
    if anti:
        if soft:
            w.add(SOFTER, "anti-affinity", f"keeping apart from pods {pods} becomes a preference: it may share a "
                                           f"{domain} with them when no other has room")
        else:
            w.add(PLACEMENT, "anti-affinity", f"may share a {domain} with pods {pods} (its required anti-affinity "
                                              "dropped)")
    elif soft:
        w.add(SOFTER, "pod-affinity", f"running in a {domain} with pods {pods} becomes a preference")
    else:
        w.add(PLACEMENT, "pod-affinity", f"may run in a {domain} without pods {pods} (its required pod affinity "
                                         "dropped)")


def _admitted(search, op, t, before):
    """The requests mapping an operation writes, as the API server stored it:
    a request left out where a limit is set is the limit (a container
    setting only limits asks for them), and the cut is from that."""
    if t[-1] != "requests" or op["op"] not in ("add", "replace"):
        return before
    try:
        stored = resolve(search.pod_info.pod, op["path"])
    except (PatchError, ValueError, KeyError, IndexError, TypeError):
        return before
    return stored if isinstance(stored, dict) else before


def _qos(w, before: dict, after: dict, patch: list[dict]) -> None:
    """A request cut that changes the pod's QoS class (requests below
    limits: Guaranteed becomes Burstable) changes how the kubelet treats it."""
    if not any("/resources" in op.get("path", "") for op in patch):
        return
    try:
        was, becomes = qos_class(before["spec"]), qos_class(after["spec"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return
    if was == becomes:
        return
    why = {"Burstable": "requests below limits: the kubelet evicts it before Guaranteed pods under node pressure "
                        "and gives it no exclusive CPUs"}.get(becomes)
    w.add(SOFTER, "qos", f"its QoS class becomes {becomes} (was {was}" + (f"; {why})" if why else ")"))


def _resources(w, op, t, before, value) -> None:
    limits = "limits" in t
    if op["op"] == "remove":
        resource = t[-1] if t[-1] not in ("requests", "limits") else None
        if limits or resource is None:
            return  # a limit goes with its request
        if resource in (CPU, MEMORY, EPHEMERAL_STORAGE):
            w.add(SOFTER, "requests", f"asks for no {resource}")
        else:
            w.add(GIVES_UP, "requests", f"gives up its {resource} request: the pod would run without {resource}")
        return
    if limits or not isinstance(value, dict):
        return
    old = before if isinstance(before, dict) else {}
    for resource, amount in value.items():
        if resource in old and _less(amount, old[resource]):
            w.add(SOFTER, "requests", f"asks for less {resource} ({old[resource]} -> {amount})")
    for resource in old:
        if resource not in value and resource not in (CPU, MEMORY, EPHEMERAL_STORAGE):
            w.add(GIVES_UP, "requests", f"gives up its {resource} request: the pod would run without {resource}")


def _less(a, b) -> bool:
    try:
        return milli(a) < milli(b)
    except (ValueError, TypeError):
        return False


# -- the cluster -----------------------------------------------------------------------------
def _node(w, search, name: str, patch: list[dict]) -> None:
    from .common import taint_text

    ni = search.snapshot.get(name)
    node = ni.node if ni is not None else {}
    taints = (node.get("spec") or {}).get("taints") or []
    for op in patch:
        t = [str(x) for x in _tokens(op.get("path", ""))]
        if t[:2] == ["spec", "taints"] and op["op"] == "remove" and len(t) > 2:
            i = int(t[2]) if t[2].isdigit() else -1
            taint = taints[i] if 0 <= i < len(taints) else {}
            key = taint.get("key", "")
            if key == "node.kubernetes.io/unschedulable":
                continue  # said with the uncordon
            w.add(OTHERS, "taint", _taint_removed(name, key, taint_text(taint)))
        elif t[:2] == ["spec", "unschedulable"]:
            w.add(OTHERS, "cordon", f"uncordons node {name} (someone cordoned it: maintenance or a drain)")
        elif t[:2] == ["metadata", "labels"]:
            labels = op.get("value") if len(t) == 2 else {t[2]: op.get("value")}
            for k, v in (labels or {}).items():
                w.add(PLACEMENT, "node-labels", f"labels node {name} {k}={v}: every pod selecting {k}={v} may go "
                                                "there too")


def _taint_removed(name: str, key: str, text: str) -> str:
    # A condition's taint reserves nothing: it marks the node unfit, and its controller owns it.
    if key in _CONDITION_TAINTS:
        return (f"opens node {name}, {_CONDITION_TAINTS[key]}, to every pod: removes taint {text}, which a "
                "controller sets from the node's state")
    return f"opens node {name} to every pod: removes taint {text}, which reserves it"


def _tokens(path: str) -> list:
    try:
        return parse_pointer(path)
    except (PatchError, ValueError):
        return []
