"""What every output says about `explain --fix`: a change in one line, the
kubectl command that makes it, a fix in one line for the CI formats, and
the search's own words (candidates, combinations, what no kind covers).

Read from the document only (fix.md#in-json-and-yaml)."""

from __future__ import annotations

import json

# Objects whose spec cannot change in place: recreate them with the change.
_RECREATE = {"Pod", "PersistentVolumeClaim", "ResourceClaim", "ResourceClaimTemplate", "Job"}
# kubectl's resource names for the kinds fixes touch.
_RESOURCE = {"PersistentVolume": "persistentvolume", "PersistentVolumeClaim": "persistentvolumeclaim",
             "ResourceClaim": "resourceclaim", "ResourceClaimTemplate": "resourceclaimtemplate",
             "ResourceSlice": "resourceslice", "StatefulSet": "statefulset", "ReplicaSet": "replicaset",
             "DaemonSet": "daemonset", "CronJob": "cronjob", "ReplicationController": "replicationcontroller"}


def ref(target: dict) -> str:
    return f"{target['kind']} {target['namespace'] + '/' if target.get('namespace') else ''}{target['name']}"


def _shell(s: str) -> str:
    """A single-quoted shell word."""
    return "'" + s.replace("'", "'\\''") + "'"


def _resource(kind: str) -> str:
    return _RESOURCE.get(kind, kind.lower())


def change_line(change: dict, ellipsis: str = "…") -> str:
    """One change of a fix in a line: the object and its JSON Patch, short."""
    t = change["target"]
    who = f"then the {change['by']}: " if change.get("by") else ""
    if change["action"] == "create":
        return f"{who}create {ref(t)} (the whole object: -o json or -o yaml)"
    if change["action"] == "delete":
        return f"{who}delete {ref(t)}"
    ops = []
    for op in change.get("patch") or ():
        text = f"{op['op']} {op['path']}"
        if "value" in op:
            value = json.dumps(op["value"], separators=(",", ":"))
            text += " " + (value if len(value) <= 80 else value[:79] + ellipsis)
        ops.append(text)
    recreate = " (recreate it with the change: its spec cannot change in place)" \
        if t["kind"] in _RECREATE and not change.get("by") and t["kind"] != "Pod" else ""
    return f"{who}patch {ref(t)}: " + "; ".join(ops) + recreate


def kubectl_command(change: dict) -> str | None:
    """The kubectl command making a change the user makes on a cluster:
    a patch of a node, a volume or a workload, a deletion. None for what a
    controller does, for objects that must be recreated, and for creations
    (their object: -o yaml, then `kubectl create -f`)."""
    if change.get("by"):
        return None
    t = change["target"]
    ns = f" -n {t['namespace']}" if t.get("namespace") else ""
    if change["action"] == "delete":
        return f"kubectl delete {_resource(t['kind'])}{ns} {t['name']}"
    if change["action"] != "patch" or t["kind"] in _RECREATE:
        return None
    patch = json.dumps(change.get("patch") or [], separators=(",", ":"))
    return f"kubectl patch {_resource(t['kind'])} {t['name']}{ns} --type=json -p {_shell(patch)}"


def owner_line(owner: dict) -> str:
    """A live pod's controller: the object to change instead of the pod."""
    via = f" (via {owner['via']})" if owner.get("via") else ""
    checked = "checked against its template" if owner.get("checked") else (
        f"not checked: {owner.get('why')}" if owner.get("why") else "not checked")
    return f"its controller: change {ref(owner)}{via}'s pod template instead ({checked})"


def owner_command(owner: dict) -> str | None:
    if not owner.get("patch"):
        return None
    return kubectl_command({"action": "patch", "target": owner, "patch": owner["patch"]})


def fix_lines(pod: dict) -> list[str]:
    """`[kind] description (widens: ...)` per fix, for the CI formats."""
    return [f"[{f['kind']}] {f['description']} ({widens_text(f)})" for f in pod.get("fixes") or ()]


def widens_text(fix: dict) -> str:
    """What a fix widens, in one phrase (fix.md#what-a-fix-widens)."""
    entries = fix.get("widens") or []
    if not entries:
        return "widens nothing"
    return "widens: " + "; ".join(e["text"] for e in entries)


def checked_words(pod: dict) -> str:
    """How each fix was checked: one cycle of the pod, or its workload's
    replicas all placed again."""
    w = pod.get("workload")
    if w is not None and "sequences" in (pod.get("fixSearch") or {}):
        return f"each checked by placing all {w['replicas']} replicas again with it, one after another"
    return "each checked by running the scheduling cycle again with it"


def search_words(pod: dict) -> str:
    """"7 candidates, 3 of them combinations, checked"."""
    s = pod.get("fixSearch") or {}
    n = s.get("candidates", 0)
    words = f"{n} candidate{'' if n == 1 else 's'} checked"
    if s.get("combinations"):
        c = s["combinations"]
        words += f" ({'a combination' if n == 1 else str(c) + ' of them combinations' if c > 1 else 'one a combination'})"
    if s.get("stopped") == "enough":
        words += "; stopped at the first fix of each side (a large cluster)"
    return words


def uncovered_lines(pod: dict) -> list[str]:
    return [f"not covered: {u['plugin']}: {u['reason']}" for u in (pod.get("fixSearch") or {}).get("uncovered") or ()]


def advice_lines(pod: dict) -> list[str]:
    return [f"advice ({a['kind']}, not a change kschedx can check): {a['text']}" for a in pod.get("fixAdvice") or ()]
