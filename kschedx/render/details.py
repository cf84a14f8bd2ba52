"""Human sentences for the `details` of a verdict (the `--node` story).

Plugins put structured explanations next to their reasons; renderers turn
them into a few short lines here, so every renderer says the same thing.
Plugins without a dedicated describer get a compact key: value line.
"""

from __future__ import annotations

import json


def detail_lines(plugin: str, details) -> list[str]:
    if not details:
        return []
    describe = _DESCRIBERS.get(plugin)
    if describe is not None:
        try:
            return describe(details)
        except (KeyError, TypeError, AttributeError):
            pass  # an unexpected shape: fall back to the generic form
    return _generic(details)


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


_DESCRIBERS = {
    "VolumeRestrictions": _volume_restrictions,
    "NodeVolumeLimits": _node_volume_limits,
    "VolumeBinding": _volume_binding,
    "VolumeZone": _volume_zone,
}
