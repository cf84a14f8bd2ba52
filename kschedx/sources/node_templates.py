"""Node templates (--node-template FILE): a node pool's or node group's node,
as a cloud provider would make it, for "which pool could take this pod" and
"how many nodes of which pool".

A template file holds exactly one Node (its metadata.name names the
template), optionally the ResourceSlices such a node publishes (node-local:
spec.nodeName the template's name, or unset) and Pods bound to it (static
pods every node of the pool runs). A node made from template T is named
T-1, T-2, ... with that name as its kubernetes.io/hostname label and a
fresh uid; its slices get the suffix in their name and pool, and their
nodeName, as cluster-autoscaler sanitizes a template
(simulator/node_info_utils.go createSanitizedNode,
simulator/dynamicresources/utils/sanitize.go); taints that stand for a
node's transient state are dropped (utils/taints SanitizeTaints), with a
warning naming each.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..util.errors import InputError
from .admission import Admission, object_ref, stable_uid
from .fixtures import read_objects

HOSTNAME = "kubernetes.io/hostname"

# SanitizeTaints: cluster-autoscaler's own taints, the node condition taints
# and those of the taint config's startup and status prefixes.
_DROPPED_TAINT_KEYS = frozenset({
    "ToBeDeletedByClusterAutoscaler",
    "DeletionCandidateOfClusterAutoscaler",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/network-unavailable",
    "node.kubernetes.io/pid-pressure",
    "node.cloudprovider.kubernetes.io/uninitialized",
    "node.cloudprovider.kubernetes.io/shutdown",
    "cloud.google.com/impending-node-termination",
    "NodeWithImpairedVolumes",
})
_DROPPED_TAINT_PREFIXES = ("ignore-taint.cluster-autoscaler.kubernetes.io/",
                           "startup-taint.cluster-autoscaler.kubernetes.io/",
                           "status-taint.cluster-autoscaler.kubernetes.io/")


@dataclass
class NodeTemplate:
    """One template: the Node as read (admitted), its node-local slices and
    static pods, and the file it came from."""

    name: str
    node: dict
    slices: list[dict] = field(default_factory=list)
    pods: list[dict] = field(default_factory=list)
    source: str = ""
    warnings: list[str] = field(default_factory=list)

    @property
    def allocatable(self) -> dict:
        return (self.node.get("status") or {}).get("allocatable") or {}


def sanitized_taints(taints) -> tuple[list[dict], list[dict]]:
    """(taints kept, taints dropped) as SanitizeTaints decides."""
    kept, dropped = [], []
    for t in taints or ():
        key = (t.get("key") or "") if isinstance(t, dict) else ""
        if key in _DROPPED_TAINT_KEYS or key.startswith(_DROPPED_TAINT_PREFIXES):
            dropped.append(t)
        else:
            kept.append(t)
    return kept, dropped


def read_templates(paths, priority_classes=None, runtime_classes=None, validation=None,
                   version: str | None = None) -> list[NodeTemplate]:
    """Each --node-template file as a NodeTemplate, in the order given
    (a directory: its files in name order). InputError (exit 3) names the
    file, object and field of anything that is not a template; with
    `validation` (--validate) and `version` each object is first checked as
    the API server would check it (sources/strict.py)."""
    from .fixtures import expand_paths

    admission = Admission(priority_classes or {}, runtime_classes or {})
    out: list[NodeTemplate] = []
    seen: dict[str, str] = {}
    for path in expand_paths(paths):
        objects = read_objects([path], note_duplicates=validation is not None and validation.notes_duplicates)
        file_warnings: list[str] = []
        if validation is not None and version is not None:
            from . import strict

            items = [(obj, origin, part.duplicates) for part in getattr(objects, "files", ())
                     for obj, origin in objects[part.start:part.end]]
            file_warnings = strict.check(items, version, validation.mode)
        label = "<stdin>" if path == "-" else path
        nodes = [(o, origin) for o, origin in objects if o.get("kind") == "Node"]
        if len(nodes) != 1:
            raise InputError(f"holds {len(nodes)} Nodes: a node template is one Node (with, if any, the "
                             "ResourceSlices and static Pods of such a node)", source=label)
        node, origin = nodes[0]
        admission.node(node, origin)
        name = node["metadata"]["name"]
        if name in seen:
            raise InputError(f"node template {name!r} is also given by {seen[name]}: each template needs a name "
                             "of its own (metadata.name)", source=label, obj=object_ref(node),
                             field="metadata.name")
        seen[name] = label
        template = NodeTemplate(name, node, source=label)
        template.warnings.extend(file_warnings)
        alloc = (node.get("status") or {}).get("allocatable") or {}
        if not alloc:
            raise InputError("a node template needs status.allocatable (or status.capacity): what a new node "
                             "offers", source=origin, obj=object_ref(node), field="status.allocatable")
        if str(alloc.get("pods", "0")) in ("0", ""):
            raise InputError("a node template needs status.allocatable.pods above 0: a node without it takes "
                             "no pod", source=origin, obj=object_ref(node), field="status.allocatable.pods")
        if "capacity" not in node["status"]:
            node["status"]["capacity"] = dict(alloc)
        spec = node.get("spec") or {}
        kept, dropped = sanitized_taints(spec.get("taints"))
        if dropped:
            node["spec"] = dict(spec, taints=kept)
            template.warnings.append(
                f"{label}: node template {name}: dropped the taint(s) "
                f"{', '.join(_taint_text(t) for t in dropped)} (a node's transient state, not its pool's: "
                "cluster-autoscaler drops them from templates too)")
        for obj, o_origin in objects:
            kind = obj.get("kind")
            if kind == "Node":
                continue
            if kind == "ResourceSlice":
                admission.metadata(obj, o_origin)
                sspec = obj.get("spec") or {}
                node_name = sspec.get("nodeName")
                if sspec.get("allNodes") or sspec.get("nodeSelector") or (node_name and node_name != name):
                    raise InputError(f"a node template's ResourceSlices are the node's own: spec.nodeName must be "
                                     f"{name!r} (or unset), not another node or a node selector",
                                     source=o_origin, obj=object_ref(obj), field="spec.nodeName")
                pool = (sspec.get("pool") or {}).get("name")
                if not pool:
                    raise InputError("has no pool name", source=o_origin, obj=object_ref(obj),
                                     field="spec.pool.name")
                template.slices.append(obj)
            elif kind == "Pod":
                admission.pod(obj, o_origin)
                bound = (obj.get("spec") or {}).get("nodeName")
                if bound and bound != name:
                    raise InputError(f"a node template's Pods are the static pods of its node: spec.nodeName must "
                                     f"be {name!r} (or unset)", source=o_origin, obj=object_ref(obj),
                                     field="spec.nodeName")
                template.pods.append(obj)
            else:
                raise InputError(f"kind {kind!r} has no place in a node template (a Node, its ResourceSlices and "
                                 "static Pods)", source=o_origin, obj=object_ref(obj))
        out.append(template)
    return out


def _taint_text(t: dict) -> str:
    value = f"={t['value']}" if t.get("value") else ""
    return f"{t.get('key')}{value}:{t.get('effect')}"


def node_name(template: NodeTemplate, taken) -> tuple[str, int]:
    """The first free name T-1, T-2, ... (`taken(name)`: a node has it)."""
    n = 1
    while taken(f"{template.name}-{n}"):
        n += 1
    return f"{template.name}-{n}", n


@dataclass
class MadeNode:
    """A node made from a template: the Node, its slices, its static pods."""

    template: NodeTemplate
    name: str
    node: dict
    slices: list[dict]
    pods: list[dict]


def make_node(template: NodeTemplate, name: str, suffix: int) -> MadeNode:
    """The node `name` of the template, as the autoscalers make one."""
    node = copy.deepcopy(template.node)
    meta = node["metadata"]
    meta["name"] = name
    meta["labels"] = dict(meta.get("labels") or {}, **{HOSTNAME: name})
    meta["uid"] = stable_uid("Node", None, name)
    for key in ("resourceVersion", "creationTimestamp"):
        meta.pop(key, None)
    slices = []
    for s in template.slices:
        s = copy.deepcopy(s)
        smeta = s["metadata"]
        smeta["name"] = f"{smeta['name']}-{suffix}"
        smeta["uid"] = stable_uid("ResourceSlice", None, smeta["name"])
        s["spec"] = dict(s["spec"], nodeName=name,
                         pool=dict(s["spec"]["pool"], name=f"{s['spec']['pool']['name']}-{suffix}"))
        slices.append(s)
    pods = []
    for p in template.pods:
        p = copy.deepcopy(p)
        pmeta = p["metadata"]
        # A static pod's mirror is named after its node.
        pmeta["name"] = f"{pmeta['name']}-{name}"
        pmeta["uid"] = stable_uid("Pod", pmeta.get("namespace"), pmeta["name"])
        p["spec"]["nodeName"] = name
        pods.append(p)
    return MadeNode(template, name, node, slices, pods)
