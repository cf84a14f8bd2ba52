"""A cluster state: the API objects the scheduler reads, after admission.

Built from fixtures or from a live cluster (both produce plain dicts); the
snapshot and the plugins read from here, never from files.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

from ..util.errors import InputError
from ..util.gc_policy import builds_long_lived
from ..sources import read_ahead
from ..sources.fixtures import CLASS_KINDS
from ..sources.snapshot_info import SNAPSHOT_INFO_API_VERSION, SNAPSHOT_INFO_KIND
from ..sources.admission import Admission, object_ref, uid_of
from ..storage.validation import check_pod_volumes, check_storage_object

TERMINAL_PHASES = ("Succeeded", "Failed")

# Pods with equal specs share one admitted spec (Admission.pod); False
# admits every pod on its own (tests compare the two).
SHARE_SPECS = True

# kind -> attribute of ClusterState holding {key: object}
_INDEXED_KINDS = {
    "Namespace": "namespaces",
    "PersistentVolume": "persistent_volumes",
    "PersistentVolumeClaim": "persistent_volume_claims",
    "StorageClass": "storage_classes",
    "CSINode": "csi_nodes",
    "CSIDriver": "csi_drivers",
    "CSIStorageCapacity": "csi_storage_capacities",
    "VolumeAttachment": "volume_attachments",
    "PodDisruptionBudget": "pod_disruption_budgets",
    "PriorityClass": "priority_classes",
    "RuntimeClass": "runtime_classes",
    "Service": "services",
    "ReplicaSet": "replica_sets",
    "StatefulSet": "stateful_sets",
    "ReplicationController": "replication_controllers",
    "ResourceSlice": "resource_slices",
    "DeviceClass": "device_classes",
    "ResourceClaim": "resource_claims",
    "ResourceClaimTemplate": "resource_claim_templates",
    "DeviceTaintRule": "device_taint_rules",
}

# Kinds the volume plugins read, shape-checked on the way in.
_STORAGE_KINDS = frozenset(
    {"PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity",
     "VolumeAttachment"}
)

# Workload kinds are not cluster state for the scheduler, but `simulate`
# expands them into the pods their controllers would create.
WORKLOAD_KINDS = ("Deployment", "DaemonSet", "Job", "CronJob")


def _snapshot_info(state: ClusterState, obj: dict, origin) -> None:
    source = obj.get("source") or {}
    git_version = source.get("gitVersion") if isinstance(source, dict) else None
    if git_version is not None:
        if not isinstance(git_version, str):
            raise InputError("must be a string: the API server's version (/version gitVersion) when the snapshot "
                             "was taken", source=origin, obj=object_ref(obj), field="source.gitVersion")
        state.server_version = state.server_version or git_version
    unreadable = obj.get("unreadableKinds") or {}
    if not isinstance(unreadable, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in unreadable.items()):
        raise InputError("must map kind names to the reason they could not be read", source=origin,
                         obj=object_ref(obj), field="unreadableKinds")
    for kind, why in unreadable.items():
        # What it costs (which plugins run without it) is said by the
        # plugins' declarations: commands/load.py warns.
        state.unreadable_kinds.setdefault(kind, why)


def obj_key(obj: dict) -> str:
    meta = obj["metadata"]
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else meta["name"]


@dataclass
class ClusterState:
    nodes: list[dict] = field(default_factory=list)
    pods: list[dict] = field(default_factory=list)  # non-terminal pods, fixture order
    namespaces: dict[str, dict] = field(default_factory=dict)
    persistent_volumes: dict[str, dict] = field(default_factory=dict)
    persistent_volume_claims: dict[str, dict] = field(default_factory=dict)
    storage_classes: dict[str, dict] = field(default_factory=dict)
    csi_nodes: dict[str, dict] = field(default_factory=dict)
    csi_drivers: dict[str, dict] = field(default_factory=dict)
    csi_storage_capacities: dict[str, dict] = field(default_factory=dict)
    volume_attachments: dict[str, dict] = field(default_factory=dict)
    pod_disruption_budgets: dict[str, dict] = field(default_factory=dict)
    priority_classes: dict[str, dict] = field(default_factory=dict)
    runtime_classes: dict[str, dict] = field(default_factory=dict)
    services: dict[str, dict] = field(default_factory=dict)
    replica_sets: dict[str, dict] = field(default_factory=dict)
    stateful_sets: dict[str, dict] = field(default_factory=dict)
    replication_controllers: dict[str, dict] = field(default_factory=dict)
    resource_slices: dict[str, dict] = field(default_factory=dict)
    device_classes: dict[str, dict] = field(default_factory=dict)
    resource_claims: dict[str, dict] = field(default_factory=dict)
    resource_claim_templates: dict[str, dict] = field(default_factory=dict)
    device_taint_rules: dict[str, dict] = field(default_factory=dict)
    workloads: list[dict] = field(default_factory=list)
    # Kinds that could not be read (live clusters: forbidden), in the order
    # first told; the plugins reading them are reported in notEvaluated
    # (framework/profile.py).
    unreadable_kinds: dict[str, str] = field(default_factory=dict)
    # The API server's version (/version gitVersion) a SnapshotInfo records:
    # the Kubernetes version a run reproduces when none is chosen.
    server_version: str | None = None
    # (the pods as built, their groups): pods of one group have the same
    # PodInfo facts (snapshot.SpecFacts), as a read-ahead found them
    # (sources/read_ahead.py); build_snapshot uses them for the pods still
    # at their place, and None is "no groups".
    facts_groups: tuple | None = None
    # What admission took out of the specs it replaced by shared ones
    # (Admission.replaced): freed with the cluster, not while it loads.
    replaced_specs: list = field(default_factory=list, repr=False, compare=False)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # The Admission the objects went through: a watch admits later ones with it.
    admission: Admission | None = field(default=None, repr=False, compare=False)

    def store(self, kind: str) -> dict:
        """The {key: object} store of an indexed kind (PersistentVolume,
        ResourceSlice...): what `explain --fix` changes for one cycle."""
        return getattr(self, _INDEXED_KINDS[kind])
    # When the objects were read (Unix seconds), if known: a live cluster's
    # read, or a snapshot that records it. DynamicResources' binding timeout
    # of claims waiting for binding conditions is measured against it.
    read_at: float | None = None
    # What derives from the DRA objects alone (state/dra.py DRAObjects),
    # built on first use.
    dra: object = field(default=None, repr=False, compare=False)

    def namespace_labels(self, name: str) -> dict:
        ns = self.namespaces.get(name)
        if ns is None:
            return {}
        return ns["metadata"].get("labels") or {}

    def pending_pods(self) -> list[dict]:
        return [p for p in self.pods if not p["spec"].get("nodeName")]

    def bound_pods(self) -> list[dict]:
        return [p for p in self.pods if p["spec"].get("nodeName")]


@builds_long_lived
def build_cluster(objects, *, extra_pods=None, classes=None) -> ClusterState:
    """(object, origin) pairs -> an admitted ClusterState.

    Objects are admitted in two passes because Priority and RuntimeClass
    admission of pods need the classes, wherever they appear in the input:
    `classes`, when the caller knows them, are those pairs among `objects`,
    in order (fixtures.ObjectList), so that the first pass reads only them.
    A read-ahead of their file (sources/read_ahead.py) answers part of it.
    """
    aheads = read_ahead.take()
    try:
        origin, ahead = next(iter(aheads.items())) if len(aheads) == 1 else (None, None)
        return _build_cluster(objects, origin, ahead, classes)
    finally:
        for ahead in aheads.values():
            ahead.close()


def _build_cluster(objects, ahead_origin, ahead, classes=None) -> ClusterState:
    ahead_of_origin = ahead
    state = ClusterState()
    scanned_count = 0
    seen: dict[tuple, object] = {}
    seen_pods: dict[str, object] = {}
    ignored: dict[str, int] = {}

    classes_pass = Admission({}, {})
    class_origins: dict[tuple, object] = {}
    for obj, origin in objects if classes is None else classes:
        kind = obj["kind"]
        if kind in CLASS_KINDS:
            with _malformed(obj, origin):
                classes_pass.metadata(obj, origin)
            target = state.priority_classes if kind == "PriorityClass" else state.runtime_classes
            name = obj["metadata"]["name"]
            if name in target:
                raise _duplicate(obj, origin, class_origins.get((kind, name)))
            target[name] = obj
            class_origins[(kind, name)] = origin
    admission = Admission(state.priority_classes, state.runtime_classes, share_specs=SHARE_SPECS)

    used_namespaces = set()
    answered = False
    # The read-ahead's current frame of answers (read_ahead.ReadAhead.answers).
    first = size = 0
    keys = reps = oks = uids = facts = ()
    # Per pod of state.pods, the read-ahead's number of the first pod with
    # the same PodInfo facts (-1: none told), for build_snapshot.
    groups = array("i")
    # Each pod is admitted as soon as its metadata is (one pass over 150,000
    # pods, not two), but the errors come as if every object's metadata were
    # checked first: the first error of a pod's admission waits here while
    # the other objects are checked, and no pod is admitted after it.
    deferred: InputError | None = None

    for obj, origin in objects:
        kind = obj["kind"]
        if kind in CLASS_KINDS:
            if kind == "PriorityClass":
                with _malformed(obj, origin):
                    admission.priority_class(obj, origin)
            continue
        if kind == "Pod":
            scanned = origin is ahead_origin
            try:
                # A scanned pod's uid (when it has none) comes with the answers.
                pod_key = admission.pod_metadata(obj, origin, set_uid=not scanned)
            except _MALFORMED as exc:
                raise _malformed_error(obj, origin, exc) from None
            if scanned:
                n = scanned_count
                scanned_count += 1
            else:
                n = -1
            # Pods have a table of their own: they are most objects.
            if pod_key in seen_pods:
                raise _duplicate(obj, origin, seen_pods[pod_key])
            seen_pods[pod_key] = origin
            if deferred is not None:
                continue
            answer = None
            group = -1
            if n >= 0:
                # The read-ahead's answers for this pod, or none from here on:
                # then it is all done here, as without one.
                if ahead is not None:
                    i = n - first
                    if not 0 <= i < size:
                        frame = ahead.answers(n)
                        if frame is None:
                            ahead = None
                        else:
                            first, keys, reps, oks, uids, facts = frame
                            size = len(keys)
                            i = n - first
                    if ahead is not None and keys[i] == pod_key:
                        answer = reps[i], oks[i]
                        group = facts[i]
                        answered = True
                        uid = uids[i]
                        if uid is not None and not obj["metadata"].get("uid"):
                            obj["metadata"]["uid"] = uid
                    else:
                        ahead = None
                if answer is None and not obj["metadata"].get("uid"):
                    obj["metadata"]["uid"] = uid_of(pod_key)
            status = obj.get("status")
            if status.__class__ is dict and status.get("phase") in TERMINAL_PHASES:
                continue
            try:
                if not admission.pod(obj, origin, metadata_done=True, answer=answer):
                    check_pod_volumes(obj, origin)  # a shared spec's volumes were checked with its first pod
            except _MALFORMED as exc:
                deferred = _malformed_error(obj, origin, exc)
                continue
            except InputError as exc:
                deferred = exc
                continue
            state.pods.append(obj)
            groups.append(group)
            used_namespaces.add(obj["metadata"]["namespace"])
            continue
        elif kind == "Node":
            key = ("Node", admit_object(admission, obj, origin))
            state.nodes.append(obj)
        elif kind in _INDEXED_KINDS:
            key = (kind, admit_object(admission, obj, origin))
            getattr(state, _INDEXED_KINDS[kind])[key[1]] = obj
        elif kind in WORKLOAD_KINDS:
            with _malformed(obj, origin):
                admission.metadata(obj, origin)
            key = (kind, obj_key(obj))
            state.workloads.append(obj)
        elif kind == SNAPSHOT_INFO_KIND and obj.get("apiVersion") == SNAPSHOT_INFO_API_VERSION:
            _snapshot_info(state, obj, origin)
            continue
        else:
            ignored[kind] = ignored.get(kind, 0) + 1
            continue
        if key in seen:
            raise _duplicate(obj, origin, seen[key])
        seen[key] = origin

    for kind, count in sorted(ignored.items()):
        # A misspelled kind (`kind: node`) never gets here: strict validation
        # refused it with a did-you-mean (sources/strict.py, schema/kinds.py).
        state.notes.append(f"ignored {count} {kind} object(s): the scheduler does not read them")

    if deferred is not None:
        raise deferred
    state.replaced_specs = admission.replaced
    state.admission = admission
    if answered:
        if not ahead_of_origin.valid():
            raise read_ahead.Void
        state.facts_groups = (tuple(state.pods), groups)
    synthesize_namespaces(state, used_namespaces)
    return state


def admit_object(admission: Admission, obj: dict, origin) -> str:
    """A Node, or an object of a kind ClusterState indexes, admitted as a
    cluster read admits it (the same checks, the same errors); its key.
    PriorityClasses and RuntimeClasses are first admitted by their own pass."""
    kind = obj["kind"]
    with _malformed(obj, origin):
        if kind == "Node":
            admission.node(obj, origin)
            return obj["metadata"]["name"]
        if kind == "Namespace":
            admission.namespace(obj, origin)
        elif kind == "PriorityClass":
            admission.metadata(obj, origin)
            admission.priority_class(obj, origin)
        else:
            admission.metadata(obj, origin)
        if kind in _STORAGE_KINDS:
            check_storage_object(obj, origin)
        if kind in ("PersistentVolumeClaim", "PersistentVolume", "CSIStorageCapacity"):
            _check_storage_quantities(obj, origin)
    return obj_key(obj)


def admit_pod(admission: Admission, pod: dict, origin) -> bool:
    """One pod admitted as a cluster read admits it; False for a terminal pod,
    which a cluster state leaves out."""
    with _malformed(pod, origin):
        admission.pod_metadata(pod, origin)
    status = pod.get("status")
    if status.__class__ is dict and status.get("phase") in TERMINAL_PHASES:
        return False
    try:
        if not admission.pod(pod, origin, metadata_done=True):
            check_pod_volumes(pod, origin)
    except _MALFORMED as exc:
        raise _malformed_error(pod, origin, exc) from None
    return True


def indexed_attribute(kind: str) -> str | None:
    """The ClusterState attribute holding objects of `kind` by key, if any."""
    return _INDEXED_KINDS.get(kind)


def synthesize_namespaces(state: ClusterState, used_by_pods=None) -> None:
    """Namespaces that objects use but the input lacks exist implicitly, as
    the API server would have them: with only the kubernetes.io/metadata.name
    label it sets on every namespace, so namespaceSelectors can select them.
    `used_by_pods`: the namespaces of state.pods, when known."""
    if used_by_pods is None:
        used_by_pods = {p["metadata"].get("namespace", "default") for p in state.pods}
    used = set(used_by_pods)
    for store in (state.persistent_volume_claims, state.resource_claims, state.services):
        used.update(o["metadata"].get("namespace", "default") for o in store.values())
    for name in sorted(used - set(state.namespaces)):
        state.namespaces[name] = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        }


# Errors that mean a field of the wrong shape (a string where a list belongs...).
_MALFORMED = (AttributeError, TypeError, KeyError, IndexError)


def _malformed_error(obj: dict, origin, exc: BaseException) -> InputError:
    """Such a field is bad input like any other: report the object, never a traceback."""
    return InputError(f"malformed object: a field has the wrong type ({exc})", source=origin, obj=object_ref(obj))


class _malformed:
    """The same around a block (pods, which are many, use try/except: cheaper)."""

    __slots__ = ("obj", "origin")

    def __init__(self, obj: dict, origin):
        self.obj = obj
        self.origin = origin

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, _MALFORMED) and not issubclass(exc_type, InputError):
            raise _malformed_error(self.obj, self.origin, exc) from None
        return False


def _duplicate(obj: dict, origin, first) -> InputError:
    """Two objects of one kind and name: say where the first one was."""
    ref = object_ref(obj)
    if first is None:
        return InputError(f"duplicate object: {ref} is defined twice", source=origin, obj=ref)
    return InputError(f"duplicate object: {ref} is also defined in {first}", source=origin, obj=ref)


def _check_storage_quantities(obj: dict, origin) -> None:
    from ..api.quantity import QuantityError, parse_quantity
    from ..sources.admission import check_resource_list

    spec = obj.get("spec") or {}
    ref = object_ref(obj)
    if obj["kind"] == "PersistentVolume" and spec.get("capacity"):
        check_resource_list(spec["capacity"], origin, ref, "spec.capacity")
    if obj["kind"] == "PersistentVolumeClaim":
        res = spec.get("resources") or {}
        if res.get("requests"):
            check_resource_list(res["requests"], origin, ref, "spec.resources.requests")
    if obj["kind"] == "CSIStorageCapacity":
        # CSIStorageCapacity keeps its quantities at the top level, not in a spec.
        for field_name in ("capacity", "maximumVolumeSize"):
            if obj.get(field_name) is not None:
                try:
                    parse_quantity(obj[field_name])
                except QuantityError as exc:
                    raise InputError(f"invalid quantity {obj[field_name]!r}: {exc}", source=origin, obj=ref,
                                     field=field_name) from None
