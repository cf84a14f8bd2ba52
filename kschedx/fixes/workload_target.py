"""Workloads as the target of a pod-side fix.

A pod expanded from a Deployment, ReplicaSet, StatefulSet, Job, CronJob or
DaemonSet of a POD_FILE is nobody's to patch: its fix patches the
workload's pod template (`/spec/template/spec/...`,
`/spec/jobTemplate/spec/template/spec/...`), and is checked on the pod the
patched workload expands into (sources/workloads.expand_again).

A live pod with a controller keeps its fix (the pod, as the snapshot has
it, is what the cycle checked and what a replay patches) and names the
object to change instead: `owner`, with the patch carried over to that
object's template, and whether it was checked against the template the
snapshot holds (`checked`).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from .jsonpatch import PatchError, apply_patch, parse_pointer, pointer, resolve

_MAPPED = ("/spec/", "/metadata/labels", "/metadata/annotations")


def map_patch(patch: list[dict], template_pointer: str) -> list[dict] | None:
    """A pod patch as a patch of the template at `template_pointer`; None
    when an operation touches what a template does not hold."""
    out = []
    for op in patch:
        path = op.get("path", "")
        if not path.startswith(_MAPPED) and path != "/spec":
            return None
        new = dict(op, path=template_pointer + path)
        if "from" in op:
            if not op["from"].startswith(_MAPPED):
                return None
            new["from"] = template_pointer + op["from"]
        out.append(new)
    return out


def expanded_pod(ref, patch: list[dict]) -> tuple[dict | None, list[dict]]:
    """The pod the workload expands into with the template patched (its
    place among the workload's pods as the original's; None when the patch
    does not apply or leaves no pod in that place), and the objects the
    expansion made that the cluster lacks (a Deployment's new ReplicaSet,
    for another pod-template-hash)."""
    from ..sources.workloads import expand_again

    mapped = map_patch(patch, ref.template_pointer)
    if mapped is None:
        return None, []
    obj = apply_patch(ref.raw, mapped)
    return expand_again(ref, obj)


def workload_change(ref, patch: list[dict]) -> dict:
    return {"action": "patch",
            "target": {"apiVersion": ref.api_version, "kind": ref.kind, "namespace": ref.namespace,
                       "name": ref.name},
            "patch": map_patch(patch, ref.template_pointer)}


# -- live pods: the owner to name ----------------------------------------------------------
@dataclass
class Owner:
    api_version: str
    kind: str
    namespace: str
    name: str
    template_pointer: str
    template: dict | None  # the pod template as the snapshot has it, when it has the object
    via: str | None = None  # "ReplicaSet x": the object the pod names, when another owns it

    def target(self) -> dict:
        return {"apiVersion": self.api_version, "kind": self.kind, "namespace": self.namespace, "name": self.name}


_TEMPLATE_KINDS = {"ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "Job": "batch/v1",
                   "ReplicationController": "v1"}


def find_owner(pod: dict, cluster) -> Owner | None:
    """The controller a live pod's template comes from, as far as the
    snapshot tells: a ReplicaSet's Deployment when the ReplicaSet is there
    and names it."""
    meta = pod.get("metadata") or {}
    ns = meta.get("namespace") or "default"
    ref = next((r for r in meta.get("ownerReferences") or () if r.get("controller")), None)
    if ref is None or ref.get("kind") not in _TEMPLATE_KINDS:
        return None
    kind, name = ref["kind"], ref.get("name", "")
    obj = None
    if kind == "ReplicaSet":
        obj = cluster.replica_sets.get(f"{ns}/{name}")
    elif kind == "StatefulSet":
        obj = cluster.stateful_sets.get(f"{ns}/{name}")
    elif kind == "ReplicationController":
        obj = cluster.replication_controllers.get(f"{ns}/{name}")
    template = ((obj.get("spec") or {}).get("template") if obj is not None else None)
    if obj is not None and kind == "ReplicaSet":
        up = next((r for r in (obj.get("metadata") or {}).get("ownerReferences") or ()
                   if r.get("controller") and r.get("kind") == "Deployment"), None)
        if up is not None:
            return Owner(up.get("apiVersion") or "apps/v1", "Deployment", ns, up.get("name", ""), "/spec/template",
                         template, via=f"ReplicaSet {name}")
    return Owner(ref.get("apiVersion") or _TEMPLATE_KINDS[kind], kind, ns, name, "/spec/template", template)


def rebase(patch: list[dict], source: dict, target: dict) -> list[dict] | None:
    """`patch`, written against `source`, as a patch of `target` making the
    same change: list items are found by value (a template lacks what
    admission added to the pod), missing mappings are created. None when
    that cannot be done."""
    out = []
    src, dst = source, target
    try:
        for op in patch:
            kind, path = op["op"], op["path"]
            tokens = parse_pointer(path)
            parent = tokens[:-1]
            last = tokens[-1] if tokens else None
            src_parent = resolve(src, pointer(*parent)) if tokens else None
            ops = []
            if isinstance(src_parent, list) and last != "-":
                # An item of a list: the same item in the target's list.
                value = src_parent[int(last)]
                dst_parent = resolve(dst, pointer(*parent))
                if kind == "add":
                    j = min(int(last), len(dst_parent))
                    ops = [dict(op, path=pointer(*parent, j))]
                else:
                    matches = [j for j, v in enumerate(dst_parent) if v == value]
                    if not matches:
                        return None
                    ops = [dict(op, path=pointer(*parent, matches[0]))]
            elif isinstance(src_parent, list):  # append
                try:
                    resolve(dst, pointer(*parent))
                    ops = [op]
                except PatchError:
                    ops = _made(dst, parent[:-1]) + [{"op": "add", "path": pointer(*parent),
                                                      "value": [copy.deepcopy(op["value"])]}]
            else:
                if kind == "add":
                    ops = _made(dst, parent) + [op]
                elif kind == "remove" and not _has(dst, path):
                    ops = []  # admission's field (priority...): the template never had it
                else:
                    resolve(dst, path)  # what is replaced is there
                    ops = [op]
            dst = apply_patch(dst, ops)
            src = apply_patch(src, [op])
            out += ops
    except (PatchError, ValueError, KeyError, TypeError, IndexError):
        return None
    return out


def _has(doc, path: str) -> bool:
    try:
        resolve(doc, path)
    except PatchError:
        return False
    return True


def daemon_pod(search) -> bool:
    """A DaemonSet's pod: its controller pins it to its node (node affinity
    on metadata.name), so no change of node affinity is ever its fix."""
    workload = search.verifier.workload
    if workload is not None:
        return workload.kind == "DaemonSet"
    return any(r.get("kind") == "DaemonSet" and r.get("controller")
               for r in (search.pod_info.pod.get("metadata") or {}).get("ownerReferences") or ())


def _made(doc, tokens: list) -> list[dict]:
    """Operations creating the mappings along `tokens` that `doc` lacks."""
    ops = []
    node = doc
    for i, t in enumerate(tokens):
        if isinstance(node, list):
            node = node[int(t)]
            continue
        child = node.get(t) if isinstance(node, dict) else None
        if child is None:
            ops.append({"op": "add", "path": pointer(*tokens[: i + 1]), "value": {}})
            node = {}
        else:
            node = child
    return ops


def owner_document(owner: Owner, raw_pod: dict, patch: list[dict], verifier) -> dict:
    """The `owner` of a fix: the object to change for a live pod, the patch
    of its template, and whether it was checked: the template the snapshot
    holds, patched, gives the pod what the verified patch gave it (in every
    field the patch touches, after admission)."""
    doc = owner.target()
    doc["templatePointer"] = owner.template_pointer
    if owner.via:
        doc["via"] = owner.via
    if owner.template is None:
        mapped = map_patch(patch, owner.template_pointer)
        doc["patch"] = mapped
        doc["checked"] = False
        doc["why"] = f"{owner.kind} {owner.namespace}/{owner.name} is not in the snapshot: the pod's patch, " \
                     "at the template"
        return doc
    template_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": copy.deepcopy(raw_pod.get("metadata") or {}),
                    "spec": copy.deepcopy(owner.template.get("spec") or {})}
    rebased = rebase(patch, raw_pod, template_pod)
    if rebased is None:
        doc["patch"] = map_patch(patch, owner.template_pointer)
        doc["checked"] = False
        doc["why"] = "the patch does not apply to the template as the snapshot has it"
        return doc
    doc["patch"] = map_patch(rebased, owner.template_pointer)
    doc["checked"] = _same_change(verifier, raw_pod, patch, template_pod, rebased)
    if not doc["checked"]:
        doc["why"] = "the template differs from the pod where the patch changes it"
    return doc


def _same_change(verifier, raw_pod, patch, template_pod, rebased) -> bool:
    from ..sources.admission import Admission

    admission = Admission(verifier.cluster.priority_classes, verifier.cluster.runtime_classes)
    try:
        pod = apply_patch(raw_pod, patch)
        made = apply_patch(template_pod, rebased)
        admission.pod(pod, "fix")
        admission.pod(made, "fix")
    except Exception:  # noqa: BLE001 - anything refused: not the same change
        return False
    fields = {parse_pointer(op["path"])[1] for op in patch if op["path"].startswith("/spec/")}
    return all(_compared(pod["spec"], f) == _compared(made["spec"], f) for f in fields)


# Lists the scheduler reads as sets: a taint is tolerated when any toleration
# tolerates it, whatever its place. Admission (DefaultTolerationSeconds)
# appends its not-ready/unreachable tolerations after the pod's own, so a
# live pod with a toleration added at its end and its template with the same
# one added, admitted again, hold the same tolerations in another order.
_SET_FIELDS = frozenset({"tolerations"})


def _compared(spec: dict, field: str):
    """A pod spec field as the scheduler tells it from another."""
    value = spec.get(field)
    if field in _SET_FIELDS and isinstance(value, list):
        return {json.dumps(item, sort_keys=True) for item in value}
    return value
