"""Human sentences for the `details` of a verdict (the `--node` story).

Amounts are shown as people write them (1500m, 9.6Gi); `-o json` keeps the
integers the scheduler compares.

Plugins put structured explanations next to their reasons; each in-tree
plugin's declaration names the form of its details (result/plugin_details.py),
and DESCRIBERS words each form in a few short lines, so every renderer says
the same thing. Details of any other plugin (and of a form in an unexpected
shape) are shown generically, one "key: value" line per key.
"""

from __future__ import annotations

import json

from ..result.plugin_details import details_form
from . import units


def detail_lines(plugin: str, details) -> list[str]:
    """A verdict's details as lines: in the words of its plugin's form, else generically."""
    if details is None or details == {} or details == []:
        return []
    describe = DESCRIBERS.get(details_form(plugin))
    if describe is None:
        return details_text(details).splitlines()
    try:
        lines = describe(details)
    except (KeyError, TypeError, AttributeError):
        lines = _generic(details)  # an unexpected shape
    return [line.rstrip() for line in lines]


def details_text(details) -> str:
    """`details` as lines "key: value" (one per top-level key)."""
    if details is None or details == {} or details == []:
        return ""
    if isinstance(details, dict):
        return "\n".join(f"{k}: {compact(v)}" for k, v in details.items())
    return compact(details)


def compact(value) -> str:
    """One value in one short line: dicts as k=v, lists comma-joined."""
    if isinstance(value, dict):
        return " ".join(f"{k}={_inner(v)}" for k, v in value.items())
    if isinstance(value, list):
        sep = "; " if any(isinstance(v, (dict, list)) for v in value) else ", "
        return sep.join(compact(v) for v in value)
    return _scalar(value)


def _inner(value) -> str:
    if isinstance(value, dict):
        return "{" + compact(value) + "}"
    if isinstance(value, list):
        return "[" + compact(value) + "]"
    return _scalar(value)


def _scalar(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _generic(details) -> list[str]:
    if isinstance(details, dict):
        return [f"{k}: {_compact(v)}" for k, v in details.items()]
    return [_compact(details)]


def _compact(value) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _volume_restrictions(d: dict) -> list[str]:
    if "readWriteOncePodClaims" in d:
        out = []
        for c in d["readWriteOncePodClaims"]:
            users = ", ".join(c.get("usedBy") or []) or "a pod being added"
            out.append(f"ReadWriteOncePod claim {c['claim']} is in use by {users}")
        return out
    if "usedBy" in d:
        return [f"{d['type']} {d['disk']} (volume {d['volume']}) is already mounted by {d['usedBy']}"]
    if "missing" in d:
        return [f"{d['missing']} {d['claim']} does not exist"]
    return _generic(d)


def _node_volume_limits(d: dict) -> list[str]:
    out = [f"{d['driver']}: {d['attached']} attached + {d['new']} new > limit {d['limit']} (CSINode allocatable.count)"]
    for v in d.get("volumes") or ():
        if v.get("claim"):
            if v.get("persistentVolume"):
                out.append(f"claim {v['claim']} -> PV {v['persistentVolume']} (handle {v.get('volumeHandle')})")
            else:
                out.append(f"claim {v['claim']}: not provisioned yet, counted for class {v.get('storageClass')}")
        else:
            out.append(f"inline {v.get('inTreePlugin')} volume {v['volume']} as {v['driver']} "
                       f"(handle {v.get('volumeHandle')})")
    return out


def _volume_binding(d: dict) -> list[str]:
    out = []
    for c in d.get("claims") or ():
        what = f"claim {c['claim']}"
        if c.get("persistentVolume"):
            what += f" -> PV {c['persistentVolume']}"
        elif c.get("storageClass"):
            what += f" (class {c['storageClass']})"
        out.append(f"{what}: {c.get('verdict', '')}")
    if "missing" in d:
        out.append(f"{d['missing']} {d['claim']} does not exist")
    return out or _generic(d)


def _volume_zone(d: dict) -> list[str]:
    if "label" in d:
        node = "has no such label" if d.get("nodeValue") is None else f"has {d['nodeValue']}"
        return [f"PV {d['persistentVolume']} (claim {d['claim']}) needs {d['label']} in "
                f"[{', '.join(d['volumeValues'])}]; the node {node}"]
    return _generic(d)


# -- resources ----------------------------------------------------------------------
def _node_resources_fit(d: dict) -> list[str]:
    if "insufficient" in d:
        out = []
        for r in d["insufficient"]:
            name = r["resource"]
            free = r["allocatable"] - r["used"]
            fmt = lambda v: units.amount(name, v)  # noqa: E731
            out.append(f"{name}: requests {fmt(r['requested'])}, node has {fmt(free)} free "
                       f"({fmt(r['used'])} of {fmt(r['allocatable'])} allocatable requested by its pods)")
        return out
    if "requestedAfter" in d:
        alloc = d.get("allocatable") or {}
        parts = [f"{name} {_share(name, used, alloc.get(name))}" for name, used in d["requestedAfter"].items()]
        line = "requested with this pod / allocatable: " + ", ".join(parts)
        if "strategy" in d:
            weights = ", ".join(f"{name} {w}" for name, w in (d.get("weights") or {}).items())
            head = f"{d['strategy']}, weights {weights}"
            if d.get("shape"):
                head += "; shape " + ", ".join(f"{p['utilization']}%->{p['score']}" for p in d["shape"])
            line = f"{head}: {line}"
        return [line]
    return _generic(d)


def _share(name: str, used: int, total) -> str:
    text = f"{units.amount(name, used)}/{units.amount(name, total)}" if total is not None else units.amount(name, used)
    if total:
        text += f" ({units.percent(used, total)})"
    return text


def _shares(fractions: dict) -> str:
    parts = []
    for name, frac in fractions.items():
        used, _, total = str(frac).partition("/")
        parts.append(f"{name} {_share(name, int(used), int(total))}")
    return ", ".join(parts)


def _balanced_allocation(d: dict) -> list[str]:
    if "balanceWithoutPod" not in d:
        return ["requested with this pod / allocatable (the closer the shares, the higher the score): "
                + _shares(d["fractions"])]
    # 1.36: the score is the change in balance the pod brings.
    return [f"requested with this pod / allocatable: {_shares(d['fractions'])} (balance {d['balanceWithPod']})",
            f"without it: {_shares(d['fractionsWithoutPod'])} (balance {d['balanceWithoutPod']}); "
            "the score is 50 + (50 + with - without) / 2: a pod that evens the shares out scores above 75"]


def _image_locality(d: dict) -> list[str]:
    return [f"image {i['image']} ({units.size(i['sizeBytes'])}) is present, on {i['nodesWithImage']} node(s) "
            "of the cluster in all" for i in d["images"]]


def _taint_toleration(d: dict) -> list[str]:
    t = d["taint"]
    value = f"={t['value']}" if t.get("value") else ""
    return [f"untolerated taint {t['key']}{value}:{t['effect']}"]


def _node_ports(d: dict) -> list[str]:
    return ["host port(s) already in use on the node: " + ", ".join(d["conflictingPorts"])]


# -- topology spreading ----------------------------------------------------------------
def _pod_topology_spread(d: dict) -> list[str]:
    if d.get("ignored"):
        return [d.get("note") or "ignored"]
    out = []
    for c in d["constraints"]:
        head = (f"{c['topologyKey']} maxSkew {c['maxSkew']} ({c['whenUnsatisfiable']}"
                f"{', system default' if c.get('systemDefault') else ''}) over pods {c.get('labelSelector') or '(none)'}")
        if c.get("missingTopologyKey") or c.get("domain") is None:
            out.append(f"{head}: the node has no {c['topologyKey']} label")
            continue
        if "topologyWeight" in c:  # Score (ScheduleAnyway)
            out.append(f"{head}: {c['matchingPods']} matching pod(s) in {c['domain']}, "
                       f"topology weight {c['topologyWeight']:g}, score {c['score']:g} (lower is better)")
            continue
        if c.get("domainEligible") is False:
            out.append(f"{head}: domain {c['domain']} is excluded by the node inclusion policies")
            continue
        me = " + this pod" if c.get("selfMatch") else ""
        line = (f"{head}: {c['domain']} has {c['matchingPods']}{me}, the emptiest of "
                f"{c.get('eligibleDomains', '?')} domain(s) has {c.get('globalMinimum')}: skew {c.get('skew')} "
                f"{'<=' if c.get('satisfied') else '>'} maxSkew {c['maxSkew']}")
        if c.get("belowMinDomains"):
            line += f"; fewer domains than minDomains {c.get('minDomains')}: the minimum counts as 0"
        out.append(line)
        counts = c.get("domainCounts")
        if counts:
            out.append("  pods per domain: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return out


# -- inter-pod affinity ----------------------------------------------------------------
def _term_head(kind: str, t: dict) -> str:
    ns = ", ".join(t.get("namespaces") or []) or "all namespaces"
    return f"{kind} to pods {t.get('labelSelector') or '(none)'} in {ns} by {t['topologyKey']}"


def _pods(pods, limit: int = 5) -> str:
    names = [f"{p['pod']} on {p['node']}" for p in pods]
    more = f", ... (+{len(names) - limit})" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _inter_pod_affinity(d: dict) -> list[str]:
    out = []
    if "domains" in d:  # Score
        for dom in d["domains"]:
            contributions = ", ".join(f"{p['pod']} ({p['term']} {p['weight']:+d})" for p in dom.get("pods") or ())
            more = dom.get("podTerms", 0) - len(dom.get("pods") or ())
            out.append(f"{dom['topologyKey']}={dom['topologyValue']}: {dom['score']:+d}"
                       + (f" from {contributions}" if contributions else "") + (f", ... (+{more})" if more > 0 else ""))
        return out
    for t in d.get("requiredAffinityTerms") or ():
        line = f"{_term_head('affinity', t)}: {t.get('nodeValue')} has {t.get('matchingPods', 0)} matching pod(s)"
        if t.get("pods"):
            line += f" ({_pods(t['pods'])})"
        out.append(line)
    for t in d.get("requiredAntiAffinityTerms") or ():
        line = f"{_term_head('anti-affinity', t)}: {t.get('nodeValue')} has {t.get('matchingPods', 0)} matching pod(s)"
        if t.get("pods"):
            line += f": {_pods(t['pods'])}"
        out.append(line)
    for p in d.get("existingPods") or ():
        out.append(f"{p['pod']} on {p['node']} has required anti-affinity to this pod by "
                   f"{p['topologyKey']} ({p['topologyKey']}={p['topologyValue']})")
    if "matchingPodsInCluster" in d:
        out.append(f"pods matching the affinity terms in the whole cluster: {d['matchingPodsInCluster']}")
    if d.get("note"):
        out.append(d["note"])
    return out or _generic(d)


def _node_affinity(d: dict) -> list[str]:
    if "addedAffinityWeight" in d:
        return [f"preferred terms matched: scheduler's addedAffinity +{d['addedAffinityWeight']}, "
                f"the pod's own +{d['podAffinityWeight']}"]
    return _generic(d)


def _devices(d: dict) -> list[str]:
    from .dra import dra_lines

    return dra_lines(d, indent="")


# Form (Declaration.details) -> its words.
DESCRIBERS = {
    "node-affinity": _node_affinity,
    "resources": _node_resources_fit,
    "balance": _balanced_allocation,
    "images": _image_locality,
    "taints": _taint_toleration,
    "ports": _node_ports,
    "spread": _pod_topology_spread,
    "pod-affinity": _inter_pod_affinity,
    "volume-restrictions": _volume_restrictions,
    "volume-limits": _node_volume_limits,
    "volume-binding": _volume_binding,
    "volume-zone": _volume_zone,
    "devices": _devices,
}
