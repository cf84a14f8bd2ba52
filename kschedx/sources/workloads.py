"""Workload manifests -> the pods their controllers would create.

`kschedx simulate deploy.yaml` should just work: a Deployment, ReplicaSet,
StatefulSet, Job, CronJob or DaemonSet in a POD_FILE is expanded into pending
pods the way kube-controller-manager (v1.35) creates them: names, labels,
owner references, StatefulSet ordinals and PersistentVolumeClaims, DaemonSet
pods pinned to each eligible node with the tolerations the controller adds.

Where a controller uses randomness or hashes of Go structs (generated name
suffixes, pod-template-hash), kschedx derives stable values of the same
shape from the object, so reruns give the same names; they do not equal what
a real cluster would generate.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass

from ..util.errors import InputError
from ..api.labels import NodeSelector, SelectorError, selector_from_set
from ..api.taints import find_matching_untolerated_taint
from .admission import object_ref, stable_uid
from .shape import check_shape
from .validation import labels_error, validate_pod_spec, workload_selector_error

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "Job", "CronJob", "DaemonSet")

# utilrand's alphabet: no vowels, no confusable characters.
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


@dataclass
class WorkloadRef:
    """Where an expanded pod came from: the workload as written, and which
    of the pods it expands into (`index`: the replica's place among them, a
    DaemonSet pod's node name). `template_pointer`: the JSON Pointer of its
    pod template. `expansion`: the nodes and objects it was expanded with,
    to expand it again (`expand_again`)."""

    raw: dict
    origin: object
    index: object
    expansion: tuple

    @property
    def kind(self) -> str:
        return self.raw["kind"]

    @property
    def namespace(self) -> str:
        return _namespace(self.raw)

    @property
    def name(self) -> str:
        return self.raw["metadata"]["name"]

    @property
    def api_version(self) -> str:
        return self.raw.get("apiVersion") or ("batch/v1" if self.kind in ("Job", "CronJob") else "apps/v1")

    @property
    def template_pointer(self) -> str:
        return "/spec/jobTemplate/spec/template" if self.kind == "CronJob" else "/spec/template"

    def template(self) -> dict:
        if self.kind == "CronJob":
            return ((self.raw.get("spec") or {}).get("jobTemplate") or {}).get("spec", {}).get("template") or {}
        return (self.raw.get("spec") or {}).get("template") or {}


@dataclass
class WorkloadGroup:
    """One workload of a POD_FILE and the pods it expands into, in the order
    its controller creates them (a StatefulSet's ordinals, a ReplicaSet's or
    Job's replicas one after another, a DaemonSet's pods by node name):
    `explain` places them in that order, each with the ones before it."""

    kind: str
    api_version: str
    namespace: str
    name: str
    origin: object
    pods: list  # the pod objects, then (commands/load.py) their uids

    @property
    def ref(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


def expand_again_all(ref: WorkloadRef, obj: dict) -> tuple[list[dict], list[dict]]:
    """`obj` (the workload of `ref`, changed) expanded as it was: every pod
    in the controller's order, and the other objects created that are not
    in the cluster (a Deployment's new ReplicaSet)."""
    nodes, objects = ref.expansion
    created = _expand(obj, ref.origin, _Context(nodes, objects))
    return [o for o in created if o["kind"] == "Pod"], [o for o in created if o["kind"] == "ReplicaSet"]


def expand_again(ref: WorkloadRef, obj: dict) -> tuple[dict | None, list[dict]]:
    """`obj` (the workload of `ref`, changed) expanded as it was: the pod in
    the place of ref's (None when there is none), and the other objects
    created that are not in the cluster (a Deployment's new ReplicaSet)."""
    nodes, objects = ref.expansion
    created = _expand(obj, ref.origin, _Context(nodes, objects))
    pods = [o for o in created if o["kind"] == "Pod"]
    others = [o for o in created if o["kind"] == "ReplicaSet"]
    if ref.kind == "DaemonSet":
        for p in pods:
            terms = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            if terms["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [ref.index]:
                return p, others
        return None, others
    return (pods[ref.index] if ref.index < len(pods) else None), others


def expand_workloads(objects, nodes, cluster_objects=(), refs: dict | None = None,
                     groups: list | None = None) -> tuple[list, list[str]]:
    """[(obj, origin)] -> ([(obj, origin)] with workloads replaced by what
    their controllers create (pods, ReplicaSets, PVCs), notes).

    `nodes` are the cluster's Node objects (for DaemonSets); `cluster_objects`
    the snapshot's objects (existing PVCs, StorageClasses, DaemonSet pods).
    `refs`, when given, receives each created pod's WorkloadRef by
    "namespace/name" (`explain --fix` patches the workload's template);
    `groups`, when given, a WorkloadGroup per workload (its pods in order).
    """
    out = []
    notes: list[str] = []
    ctx = _Context(nodes, list(cluster_objects) + list(objects))
    total = 0
    expansion = None
    for obj, origin in objects:
        kind = obj.get("kind")
        if kind not in WORKLOAD_KINDS:
            out.append((obj, origin))
            continue
        raw = copy.deepcopy(obj) if refs is not None else None
        created = _expand(obj, origin, ctx)
        if refs is not None:
            if expansion is None:
                # Expanded again with the objects as they are now, its own
                # claims among them (a StatefulSet reuses them).
                expansion = (nodes, [])
            mine = [o for o in created if o["kind"] == "Pod"]
            for i, p in enumerate(mine):
                index = i
                if kind == "DaemonSet":
                    index = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
                        "nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
                refs[f"{p['metadata']['namespace']}/{p['metadata']['name']}"] = WorkloadRef(raw, origin, index,
                                                                                          expansion)
        pods = sum(1 for o in created if o["kind"] == "Pod")
        if groups is not None:
            api = obj.get("apiVersion") or ("batch/v1" if kind in ("Job", "CronJob") else "apps/v1")
            groups.append(WorkloadGroup(kind, api, _namespace(obj), obj["metadata"]["name"], origin,
                                        [o for o in created if o["kind"] == "Pod"]))
        total += pods
        if total > MAX_EXPANDED_PODS:
            raise InputError(f"expanding it brings the pods to create to {total:,}: kschedx expands at most "
                             f"{MAX_EXPANDED_PODS:,} in one run", source=origin, obj=object_ref(obj))
        notes.append(f"{origin}: {object_ref(obj)} expanded into {pods} pod(s)")
        if kind in ("ReplicaSet", "StatefulSet"):
            # Also cluster state: PodTopologySpread's default constraints read
            # the selectors of a pod's ReplicaSet / StatefulSet.
            out.append((obj, origin))
        out.extend((o, origin) for o in created)
    if expansion is not None:
        expansion[1].extend(list(cluster_objects) + out)
    return out, notes


# names.MaxGeneratedNameLength: a name is at most 63 characters, 5 of
# them the random suffix.
MAX_GENERATED_NAME_LENGTH = 58
_DNS1123_SUBDOMAIN_MAX = 253


def generated_name(base: str, seed: str, free=lambda name: True) -> str:
    """What the API server makes of generateName `base`
    (SimpleNameGenerator): the base cut to 58 characters, then 5 characters
    of utilrand's alphabet. kschedx draws them from `seed` (n = 0, 1, ...
    until `free(name)`), so a rerun gives the same name."""
    base = base[:MAX_GENERATED_NAME_LENGTH]
    n = 0
    while True:
        digest = hashlib.sha256(f"{seed}/{n}".encode()).digest()
        name = base + "".join(_ALPHANUMS[b % len(_ALPHANUMS)] for b in digest[:5])
        if free(name):
            return name
        n += 1


def pods_prefix(controller_name: str) -> str:
    """getPodsPrefix: the controller's name and a dash, or its name alone
    when that would not be a valid generateName (longer than a DNS
    subdomain)."""
    prefix = f"{controller_name}-"
    return prefix if len(prefix) <= _DNS1123_SUBDOMAIN_MAX else controller_name


def indexed_pods_prefix(job_name: str, index: int) -> str:
    """podGenerateNameWithIndex: `<job>-<index>-`, the job's name cut so that
    the index survives the API server's cut to 58 characters."""
    append = f"-{index}-"
    prefix = job_name + append
    if len(prefix) > MAX_GENERATED_NAME_LENGTH:
        prefix = prefix[:MAX_GENERATED_NAME_LENGTH - len(append)] + append
    return prefix


class _Context:
    def __init__(self, nodes, objects):
        self.nodes = sorted((n for n in nodes), key=lambda n: n["metadata"]["name"])
        self.existing = {}
        self.storage_classes = []
        self.pods = []
        for obj, _ in objects:
            kind = obj.get("kind")
            meta = obj.get("metadata") or {}
            if kind == "StorageClass":
                self.storage_classes.append(obj)
            elif kind == "Pod":
                self.pods.append(obj)
            if kind and meta.get("name"):
                self.existing[(kind, meta.get("namespace") or "default", meta["name"])] = obj
        self.used_names: set[tuple[str, str]] = set()

    def exists(self, kind, namespace, name) -> bool:
        return (kind, namespace, name) in self.existing

    def generate_name(self, namespace: str, base: str, seed: str) -> str:
        """GenerateName: base + 5 characters, unique within the run."""
        name = generated_name(base, seed, lambda name: (namespace, name) not in self.used_names
                              and not self.exists("Pod", namespace, name))
        self.used_names.add((namespace, name))
        return name

    def default_storage_class(self) -> str | None:
        """DefaultStorageClass admission: the newest default class."""
        defaults = [
            sc for sc in self.storage_classes
            if ((sc.get("metadata") or {}).get("annotations") or {}).get(
                "storageclass.kubernetes.io/is-default-class") == "true"
        ]
        if not defaults:
            return None
        defaults.sort(key=lambda sc: sc["metadata"]["name"])
        defaults.sort(key=lambda sc: sc["metadata"].get("creationTimestamp") or "", reverse=True)
        return defaults[0]["metadata"]["name"]


def _meta(obj, origin) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise InputError("object has no metadata.name", source=origin, obj=object_ref(obj), field="metadata.name")
    return meta


def _template(obj, origin, path="spec.template") -> dict:
    node = obj
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or not isinstance(node.get("spec"), dict):
        raise InputError("has no pod template", source=origin, obj=object_ref(obj), field=path)
    # Checked here, not only in each pod (or ReplicaSet) it makes: the error
    # names the workload and the template's field, which the user wrote.
    ref = f"{obj.get('kind')}/{_namespace(obj)}/{obj['metadata']['name']}"
    check_shape(obj, origin, ref)
    validate_pod_spec(node["spec"], origin, ref, prefix=path + ".")
    labels = (node.get("metadata") or {}).get("labels")
    if labels and labels.__class__ is dict:
        error = labels_error(labels)
        if error is not None:
            raise InputError(error[1], source=origin, obj=ref, field=f"{path}.{error[0]}")
    # The template's pods must be the workload's own: its selector matches them.
    error = workload_selector_error(obj)
    if error is not None:
        raise InputError(error[1], source=origin, obj=ref, field=error[0])
    return node


# Pods one workload may expand into. Kubernetes allows any int32, but a
# cluster holds at most ~150,000 pods, and a typo (replicas: 1000000000)
# would otherwise run out of memory instead of failing in one line.
MAX_PODS_PER_WORKLOAD = 100_000
# And all workloads of one run together (many workloads each under the cap).
MAX_EXPANDED_PODS = 300_000
_INT32_MAX = 2**31 - 1


def _int_field(value, default, origin, obj, field, *, pod_count: bool = False) -> int:
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError(f"must be a non-negative integer, not {value!r}", source=origin, obj=object_ref(obj),
                         field=field)
    if value > _INT32_MAX:
        raise InputError(f"{value} is above the largest int32, {_INT32_MAX}: the API server refuses it",
                         source=origin, obj=object_ref(obj), field=field)
    if pod_count and value > MAX_PODS_PER_WORKLOAD:
        raise InputError(f"{value:,} pods: kschedx expands a workload into at most {MAX_PODS_PER_WORKLOAD:,}",
                         source=origin, obj=object_ref(obj), field=field)
    return value


def _owner(obj, namespace) -> dict:
    meta = obj["metadata"]
    return {
        "apiVersion": obj.get("apiVersion") or "apps/v1",
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta.get("uid") or stable_uid(obj["kind"], namespace, meta["name"]),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _template_hash(template: dict, collision_count: int = 0) -> str:
    """Shape of controller.ComputeHash: a 32-bit FNV-1a, printed in decimal,
    each digit mapped onto the safe alphabet."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    h = 0x811C9DC5
    for b in data + str(collision_count).encode():
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(h))


def _pod_from_template(template: dict, *, name: str, namespace: str, labels: dict, owner: dict,
                       annotations: dict | None = None) -> dict:
    tmeta = template.get("metadata") or {}
    meta = {"name": name, "namespace": namespace, "labels": labels, "ownerReferences": [owner]}
    ann = dict(tmeta.get("annotations") or {})
    ann.update(annotations or {})
    if ann:
        meta["annotations"] = ann
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy.deepcopy(template["spec"]),
            "status": {"phase": "Pending"}}


def _expand(obj, origin, ctx: _Context) -> list[dict]:
    _meta(obj, origin)
    kind = obj["kind"]
    if kind == "Deployment":
        return _deployment(obj, origin, ctx)
    if kind == "ReplicaSet":
        return _replica_set(obj, origin, ctx)
    if kind == "StatefulSet":
        return _stateful_set(obj, origin, ctx)
    if kind == "Job":
        return _job(obj, origin, ctx)
    if kind == "CronJob":
        return _cron_job(obj, origin, ctx)
    return _daemon_set(obj, origin, ctx)


def _namespace(obj) -> str:
    return obj["metadata"].get("namespace") or "default"


def _deployment(obj, origin, ctx) -> list[dict]:
    ns = _namespace(obj)
    spec = obj.get("spec") or {}
    template = _template(obj, origin)
    replicas = _int_field(spec.get("replicas"), 1, origin, obj, "spec.replicas", pod_count=True)
    collision = (obj.get("status") or {}).get("collisionCount") or 0
    pth = _template_hash(template, collision)
    rs_name = f"{obj['metadata']['name']}-{pth}"
    rs_template = copy.deepcopy(template)
    rs_template.setdefault("metadata", {})
    rs_template["metadata"]["labels"] = dict(rs_template["metadata"].get("labels") or {}, **{"pod-template-hash": pth})
    selector = copy.deepcopy(spec.get("selector") or {})
    selector["matchLabels"] = dict(selector.get("matchLabels") or {}, **{"pod-template-hash": pth})
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": rs_name,
            "namespace": ns,
            "labels": dict(rs_template["metadata"]["labels"]),
            "ownerReferences": [_owner(obj, ns)],
        },
        "spec": {"replicas": replicas, "selector": selector, "template": rs_template},
    }
    out = []
    if not ctx.exists("ReplicaSet", ns, rs_name):
        out.append(rs)
    if spec.get("paused"):
        return out
    return out + _replica_set(rs, origin, ctx)


def _replica_set(obj, origin, ctx) -> list[dict]:
    ns = _namespace(obj)
    spec = obj.get("spec") or {}
    template = _template(obj, origin)
    replicas = _int_field(spec.get("replicas"), 1, origin, obj, "spec.replicas", pod_count=True)
    name = obj["metadata"]["name"]
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    owner = _owner(obj, ns)
    return [
        _pod_from_template(template, name=ctx.generate_name(ns, pods_prefix(name), f"{ns}/{name}/{i}"),
                           namespace=ns, labels=dict(labels), owner=owner)
        for i in range(replicas)
    ]


def _stateful_set(obj, origin, ctx) -> list[dict]:
    ns = _namespace(obj)
    spec = obj.get("spec") or {}
    template = _template(obj, origin)
    name = obj["metadata"]["name"]
    replicas = _int_field(spec.get("replicas"), 1, origin, obj, "spec.replicas", pod_count=True)
    start = _int_field((spec.get("ordinals") or {}).get("start"), 0, origin, obj, "spec.ordinals.start")
    revision = f"{name}-{_template_hash(template)}"
    match_labels = (spec.get("selector") or {}).get("matchLabels") or {}
    owner = _owner(obj, ns)
    default_class = ctx.default_storage_class()
    out = []
    for ordinal in range(start, start + replicas):
        pod_name = f"{name}-{ordinal}"
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        labels.update({
            "controller-revision-hash": revision,
            "statefulset.kubernetes.io/pod-name": pod_name,
            "apps.kubernetes.io/pod-index": str(ordinal),
        })
        pod = _pod_from_template(template, name=pod_name, namespace=ns, labels=labels, owner=owner)
        pod["spec"]["hostname"] = pod_name
        if spec.get("serviceName"):
            pod["spec"]["subdomain"] = spec["serviceName"]
        claim_volumes = []
        for i, vct in enumerate(spec.get("volumeClaimTemplates") or ()):
            vmeta = vct.get("metadata") or {}
            if not vmeta.get("name"):
                raise InputError("volume claim template has no name", source=origin, obj=object_ref(obj),
                                 field=f"spec.volumeClaimTemplates[{i}].metadata.name")
            claim_name = f"{vmeta['name']}-{name}-{ordinal}"
            claim_volumes.append({"name": vmeta["name"], "persistentVolumeClaim": {"claimName": claim_name}})
            if ctx.exists("PersistentVolumeClaim", ns, claim_name):
                continue  # the controller reuses an existing claim
            claim = {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": dict(copy.deepcopy(vmeta), name=claim_name, namespace=ns),
                "spec": copy.deepcopy(vct.get("spec") or {}),
                "status": {"phase": "Pending"},
            }
            claim["metadata"]["labels"] = dict(claim["metadata"].get("labels") or {}, **match_labels)
            if "storageClassName" not in claim["spec"] and default_class:
                claim["spec"]["storageClassName"] = default_class
            out.append(claim)
        if claim_volumes:
            names = {v["name"] for v in claim_volumes}
            others = [v for v in pod["spec"].get("volumes") or () if v.get("name") not in names]
            pod["spec"]["volumes"] = claim_volumes + others
        out.append(pod)
    return out


def _job(obj, origin, ctx) -> list[dict]:
    ns = _namespace(obj)
    spec = obj.get("spec") or {}
    template = _template(obj, origin)
    name = obj["metadata"]["name"]
    if spec.get("suspend"):
        return []
    parallelism = _int_field(spec.get("parallelism"), 1, origin, obj, "spec.parallelism")
    completions = spec.get("completions")
    if completions is not None:
        completions = _int_field(completions, 1, origin, obj, "spec.completions")
        active = min(parallelism, completions)
    else:
        active = parallelism
    # Only the pods running at once are created: many completions are fine.
    _int_field(active, 1, origin, obj, "spec.parallelism", pod_count=True)
    uid = obj["metadata"].get("uid") or stable_uid("Job", ns, name)
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    if not spec.get("manualSelector"):
        # The labels the API server puts on the template of a Job with a
        # generated selector.
        labels.update({
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": uid,
            "job-name": name,
        })
    owner = dict(_owner(obj, ns), apiVersion="batch/v1", uid=uid)
    indexed = spec.get("completionMode") == "Indexed"
    out = []
    for i in range(active):
        if indexed:
            pod_labels = dict(labels, **{"batch.kubernetes.io/job-completion-index": str(i)})
            pod = _pod_from_template(template,
                                     name=ctx.generate_name(ns, indexed_pods_prefix(name, i), f"{ns}/{name}/{i}"),
                                     namespace=ns, labels=pod_labels, owner=owner,
                                     annotations={"batch.kubernetes.io/job-completion-index": str(i)})
            pod["spec"]["hostname"] = f"{name}-{i}"
        else:
            pod = _pod_from_template(template, name=ctx.generate_name(ns, pods_prefix(name), f"{ns}/{name}/{i}"),
                                     namespace=ns, labels=dict(labels), owner=owner)
        out.append(pod)
    return out


def _cron_job(obj, origin, ctx) -> list[dict]:
    """The Job of the next run: named <cronjob>-<scheduled time in minutes>.
    kschedx has no clock to schedule by, so the number is derived from the
    CronJob (stable across runs), with the same shape."""
    ns = _namespace(obj)
    spec = obj.get("spec") or {}
    job_template = spec.get("jobTemplate")
    if not isinstance(job_template, dict):
        raise InputError("has no job template", source=origin, obj=object_ref(obj), field="spec.jobTemplate")
    _template(obj, origin, "spec.jobTemplate.spec.template")  # its errors named in the CronJob, suspended or not
    name = obj["metadata"]["name"]
    minutes = 28000000 + int(hashlib.sha256(f"{ns}/{name}".encode()).hexdigest(), 16) % 1000000
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{name}-{minutes}",
            "namespace": ns,
            "labels": dict((job_template.get("metadata") or {}).get("labels") or {}),
            "ownerReferences": [dict(_owner(obj, ns), apiVersion="batch/v1")],
        },
        "spec": copy.deepcopy(job_template.get("spec") or {}),
    }
    if spec.get("suspend"):
        return []
    return _job(job, origin, ctx)


# Tolerations the DaemonSet controller adds to every daemon pod.
_DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)


def add_daemon_tolerations(spec: dict) -> None:
    """AddOrUpdateDaemonPodTolerations: add, or replace one with the same key
    and effect."""
    wanted = list(_DAEMON_TOLERATIONS)
    if spec.get("hostNetwork"):
        wanted.append(("node.kubernetes.io/network-unavailable", "NoSchedule"))
    tols = list(spec.get("tolerations") or [])
    for key, effect in wanted:
        new = {"key": key, "operator": "Exists", "effect": effect}
        for i, t in enumerate(tols):
            if t.get("key") == key and t.get("effect") == effect:
                tols[i] = new
                break
        else:
            tols.append(new)
    spec["tolerations"] = tols


def pin_to_node(spec: dict, node_name: str) -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity
    becomes a single matchFields term on metadata.name."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
    affinity = spec.setdefault("affinity", {}) or {}
    spec["affinity"] = affinity
    node_aff = affinity.setdefault("nodeAffinity", {}) or {}
    affinity["nodeAffinity"] = node_aff
    node_aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}


def node_should_run_daemon_pod(node: dict, spec: dict) -> bool:
    """NodeShouldRunDaemonPod for a new daemon pod: the node name, nodeSelector
    and required node affinity match, and no NoSchedule/NoExecute taint is
    left untolerated."""
    name = node["metadata"]["name"]
    if spec.get("nodeName") and spec["nodeName"] != name:
        return False
    labels = node["metadata"].get("labels") or {}
    try:
        if spec.get("nodeSelector") and not selector_from_set(spec["nodeSelector"]).matches(labels):
            return False
    except SelectorError:
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None and not NodeSelector(required).matches(labels, name):
        return False
    taints = (node.get("spec") or {}).get("taints") or []
    return find_matching_untolerated_taint(taints, spec.get("tolerations"), ("NoSchedule", "NoExecute")) is None


def _daemon_set(obj, origin, ctx) -> list[dict]:
    ns = _namespace(obj)
    template = _template(obj, origin)
    name = obj["metadata"]["name"]
    owner = _owner(obj, ns)
    generation = obj["metadata"].get("generation") or 1
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels.update({"controller-revision-hash": _template_hash(template), "pod-template-generation": str(generation)})
    spec = copy.deepcopy(template["spec"])
    add_daemon_tolerations(spec)
    running = set()
    for pod in ctx.pods:
        meta = pod.get("metadata") or {}
        if (meta.get("namespace") or "default") != ns:
            continue
        for ref in meta.get("ownerReferences") or ():
            if ref.get("kind") == "DaemonSet" and ref.get("name") == name and ref.get("controller"):
                node = (pod.get("spec") or {}).get("nodeName")
                if node:
                    running.add(node)
    out = []
    for node in ctx.nodes:
        node_name = node["metadata"]["name"]
        if node_name in running or not node_should_run_daemon_pod(node, spec):
            continue
        pod = _pod_from_template(dict(template, spec=spec),
                                 name=ctx.generate_name(ns, pods_prefix(name), f"{ns}/{name}/{node_name}"),
                                 namespace=ns, labels=dict(labels), owner=owner)
        pin_to_node(pod["spec"], node_name)
        out.append(pod)
    return out


def daemon_pods_for_node(node: dict, daemon_sets, free=lambda namespace, name: True) -> list[dict]:
    """The pods the DaemonSet controller would create on a new `node`: one for
    each DaemonSet (objects as read) that should run there (nodeSelector,
    required node affinity, taints), pinned to it with the controller's
    tolerations, named as `_daemon_set` names them. `free(namespace, name)`
    says whether a generated name is still free."""
    out = []
    node_name = node["metadata"]["name"]
    for ds in daemon_sets:
        ns = _namespace(ds)
        template = (ds.get("spec") or {}).get("template")
        if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
            continue
        name = ds["metadata"]["name"]
        generation = ds["metadata"].get("generation") or 1
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        labels.update({"controller-revision-hash": _template_hash(template),
                       "pod-template-generation": str(generation)})
        spec = copy.deepcopy(template["spec"])
        add_daemon_tolerations(spec)
        if not node_should_run_daemon_pod(node, spec):
            continue
        pod_name = generated_name(pods_prefix(name), f"{ns}/{name}/{node_name}", lambda n: free(ns, n))
        pod = _pod_from_template(dict(template, spec=spec), name=pod_name, namespace=ns, labels=labels,
                                 owner=_owner(ds, ns))
        pod["metadata"]["uid"] = stable_uid("Pod", ns, pod_name)
        pin_to_node(pod["spec"], node_name)
        out.append(pod)
    return out
