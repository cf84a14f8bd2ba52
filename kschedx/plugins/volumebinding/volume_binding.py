"""VolumeBinding: claims must be bound, or bindable on the node.

PreFilter rejects a pod whose claims are missing, lost, being deleted, not
owned (generic ephemeral volumes) or unbound with Immediate binding. Filter
runs the binder on each node. Score needs the StorageCapacityScoring
feature gate (alpha and off in v1.35 and v1.36, beta and on from v1.37):
without it PreScore returns Skip; with it the plugin scores how full each
node's volumes would be, through the args' `shape` (static bindings by the
PV's capacity, else dynamic provisions by the node's CSIStorageCapacity).
Reserve/Unreserve assume the node's decisions in the binder's caches, for
`simulate`.
"""

from __future__ import annotations

from ...config import names
from ...config.pluginargs import checked_plugin_args
from ...framework.declaration import Declaration, reads
from ...framework.events import ActionType as A, CSI_DRIVER, CSI_NODE, CSI_STORAGE_CAPACITY, NODE, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, Register, STORAGE_CLASS
from ...framework.interface import MAX_NODE_SCORE, EventReach, Plugin, PluginError, features_of
from ...framework.status import Code, Status
from ...api.quantity import parse_quantity
from ...config.pluginargs import MAX_CUSTOM_PRIORITY_SCORE
from ..helper.shape_score import broken_linear_function
from ...storage.objects import claim_class, claim_key, go_quote, meta, spec
from ...storage.volumes import EPHEMERAL, INLINE, ephemeral_owner_error, pod_volumes
from .binder import BinderError, PodVolumeClaims, VolumeBinder

NAME = names.VolumeBinding
STATE_KEY = NAME
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

MAX_UTILIZATION = 100


class StateData:
    """Shared by reference between clones, as upstream's Clone returns itself."""

    __slots__ = ("all_bound", "pod_volumes_by_node", "claims", "has_static_bindings")

    def __init__(self, claims: PodVolumeClaims | None = None):
        self.all_bound = False
        self.pod_volumes_by_node: dict = {}
        self.claims = claims
        self.has_static_bindings = False

    def clone(self):
        return self


class _Rejected(Exception):
    def __init__(self, message: str, details: dict):
        super().__init__(message)
        self.details = details


class VolumeBinding(Plugin):
    name = NAME

    def __init__(self, handle, args=None):
        features = features_of(handle)
        super().__init__(handle, checked_plugin_args(self.name, args, features))
        # Upstream's PreBind waits this long for the PV controller; offline
        # placement never waits, so it is only carried.
        self.bind_timeout_seconds = self.args["bindTimeoutSeconds"]
        self.binder = VolumeBinder(handle.cluster, features.enable_volume_attributes_class)
        self.capacity_scoring = features.enable_storage_capacity_scoring
        self.scorer = None  # only built when StorageCapacityScoring is on
        if self.capacity_scoring:
            scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
            self.scorer = build_scorer([(p.get("utilization", 0), p.get("score", 0) * scale)
                                        for p in self.args.get("shape") or ()])

    def cluster_objects_changed(self, kinds: frozenset):
        """The binder's index of PVs by class is rebuilt while PVs differ."""
        if "PersistentVolume" not in kinds:
            return None
        cache = self.binder.pv_cache
        saved = cache._by_class
        cache._by_class = None

        def restore():
            cache._by_class = saved

        return restore

    # -- PreFilter ---------------------------------------------------------------
    def pre_filter(self, state, pod_info, nodes):
        try:
            has_pvc = self._pod_has_pvcs(pod_info)
        except _Rejected as exc:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc), details=exc.details)
        if not has_pvc:
            state.write(STATE_KEY, StateData())
            return None, Status(Code.SKIP)
        try:
            claims = self.binder.get_pod_volume_claims(pod_info)
        except BinderError as exc:
            return None, Status.as_error(str(exc))
        if claims.unbound_immediate:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNBOUND_IMMEDIATE, details={
                "claims": [_immediate_note(self.handle.cluster, pvc) for pvc in claims.unbound_immediate],
            })
        state.write(STATE_KEY, StateData(claims))
        return None, None

    def _pod_has_pvcs(self, pod_info) -> bool:
        """podHasPVCs, with its errors (the API objects, not the assumed ones)."""
        cluster = self.handle.cluster
        has_pvc = False
        for vol in pod_volumes(pod_info):
            if vol.kind == INLINE:
                continue
            has_pvc = True
            name = vol.claim_name
            claim = f"{pod_info.namespace}/{name}"
            pvc = cluster.persistent_volume_claims.get(claim)
            if pvc is None:
                if vol.kind == EPHEMERAL:
                    raise _Rejected(
                        f"waiting for ephemeral volume controller to create the persistentvolumeclaim {go_quote(name)}",
                        {"claim": claim, "volume": vol.name, "missing": "PersistentVolumeClaim"})
                raise _Rejected(f"persistentvolumeclaim {go_quote(name)} not found",
                                {"claim": claim, "missing": "PersistentVolumeClaim"})
            if (pvc.get("status") or {}).get("phase") == "Lost":
                pv = spec(pvc).get("volumeName") or ""
                raise _Rejected(
                    f"persistentvolumeclaim {go_quote(name)} bound to non-existent persistentvolume {go_quote(pv)}",
                    {"claim": claim, "persistentVolume": pv})
            if meta(pvc).get("deletionTimestamp"):
                raise _Rejected(f"persistentvolumeclaim {go_quote(name)} is being deleted", {"claim": claim})
            if vol.kind == EPHEMERAL:
                err = ephemeral_owner_error(pod_info, pvc)
                if err:
                    raise _Rejected(err, {"claim": claim, "volume": vol.name})
        return has_pvc

    # -- Filter ------------------------------------------------------------------
    def filter(self, state, pod_info, node_info):
        data = state.read(STATE_KEY)
        if data is None or data.claims is None:
            return Status.as_error("not found")
        try:
            volumes, reasons = self.binder.find_pod_volumes(pod_info, data.claims, node_info)
        except BinderError as exc:
            return Status.as_error(str(exc))
        if reasons:
            notes: list = []
            self.binder.find_pod_volumes(pod_info, data.claims, node_info, notes)
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons, details={"claims": notes})
        data.pod_volumes_by_node[node_info.name] = volumes
        data.has_static_bindings = data.has_static_bindings or bool(volumes.static_bindings)
        return None

    # -- Score ---------------------------------------------------------------------
    def pre_score(self, state, pod_info, nodes):
        if self.scorer is None:
            return Status(Code.SKIP)
        data = state.read(STATE_KEY)
        if data is None:
            return Status.as_error("not found")
        if data.has_static_bindings or self.capacity_scoring:
            return None
        return Status(Code.SKIP)

    def score(self, state, pod_info, node_info) -> int:
        if self.scorer is None:
            return 0
        data = state.read(STATE_KEY)
        if data is None:
            raise PluginError("not found")
        volumes = data.pod_volumes_by_node.get(node_info.name)
        if volumes is None:
            return 0
        return self.scorer(class_resources(volumes, self.capacity_scoring))

    def event_reach(self, state, pod_info):
        """A pod with no claim: nothing (its Filter is skipped, and with
        capacity scoring on, v1.37's default, its score is 0 on every node).
        A pod with claims: PVs, classes and capacities anywhere, so None
        (every event may move it)."""
        data = state.read(STATE_KEY)
        if data is not None and data.claims is None:
            return EventReach()
        return None

    # -- Reserve (simulate) ---------------------------------------------------------
    def reserve(self, state, pod_info, node_name: str):
        data = state.read(STATE_KEY)
        if data is None:
            return Status.as_error("not found")
        volumes = data.pod_volumes_by_node.get(node_name)
        if volumes is None:
            data.all_bound = True  # the pod references no claim
            return None
        data.all_bound = self.binder.assume_pod_volumes(pod_info, node_name, volumes)
        return None

    def unreserve(self, state, pod_info, node_name: str) -> None:
        data = state.read(STATE_KEY)
        if data is None:
            return
        volumes = data.pod_volumes_by_node.get(node_name)
        if volumes is not None:
            self.binder.revert_assumed_pod_volumes(volumes)


def _value(q) -> int:
    return parse_quantity(q).value() if q is not None else 0


def class_resources(volumes, capacity_scoring: bool) -> dict:
    """Score's classResourceMap: {storage class: [requested, capacity]} of the
    static bindings (their PVs' capacity), or with StorageCapacityScoring and
    no static binding, of the dynamic provisions that have a
    CSIStorageCapacity (its capacity; several claims of a class add their
    requests to the one capacity)."""
    out: dict[str, list[int]] = {}
    if volumes.static_bindings or not capacity_scoring:
        for b in volumes.static_bindings:
            r = out.setdefault(claim_class(b.pvc) or "", [0, 0])
            r[0] += _value(((spec(b.pvc).get("resources") or {}).get("requests") or {}).get("storage"))
            r[1] += _value((spec(b.pv).get("capacity") or {}).get("storage"))
    else:
        for p in volumes.dynamic_provisions:
            if p.node_capacity is None:
                continue
            r = out.setdefault(spec(p.pvc).get("storageClassName") or "", [0, 0])
            r[1] = _value(p.node_capacity.get("capacity"))
            r[0] += _value(((spec(p.pvc).get("resources") or {}).get("requests") or {}).get("storage"))
    return out


def build_scorer(shape):
    """buildScorerFunction: each class scored by the shape at its
    utilization (full when over or without capacity), the mean of the
    classes rounded half away from zero."""
    raw = broken_linear_function(shape)

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(classes: dict) -> int:
        if not classes:
            return 0
        total = sum(class_score(req, cap) for req, cap in classes.values())
        return _round_half_away(total, len(classes))

    return scorer


def _round_half_away(num: int, den: int) -> int:
    """math.Round(float64(num) / float64(den)) for the small integers here."""
    q, r = divmod(abs(num), den)
    if 2 * r >= den:
        q += 1
    return q if num >= 0 else -q


def _immediate_note(cluster, pvc: dict) -> dict:
    note = {"claim": claim_key(pvc), "storageClass": claim_class(pvc) or None}
    pv = spec(pvc).get("volumeName")
    if pv:
        note["persistentVolume"] = pv
        note["verdict"] = "pre-bound to a PersistentVolume but not yet bound by the PV controller"
    elif not note["storageClass"]:
        note["verdict"] = "no StorageClass: Immediate binding"
    elif note["storageClass"] not in cluster.storage_classes:
        note["verdict"] = "StorageClass does not exist: treated as Immediate binding"
    else:
        note["verdict"] = "Immediate binding and not bound yet"
    return note


DECLARATION = Declaration(
    name=names.VolumeBinding,
    factory=VolumeBinding,
    points=frozenset({"preFilter", "filter", "reserve", "preBind", "preScore", "score"}),
    reads=(reads(PERSISTENT_VOLUME, STORAGE_CLASS, CSI_NODE, CSI_DRIVER, CSI_STORAGE_CAPACITY, pods=("volumes",)),
           reads(PERSISTENT_VOLUME_CLAIM, pods=("volumes",), same_namespace=True)),
    events=(Register(STORAGE_CLASS, A.Add | A.Update), Register(PERSISTENT_VOLUME_CLAIM, A.Add | A.Update),
            Register(PERSISTENT_VOLUME, A.Add | A.Update), Register(NODE, A.Add | A.UpdateNodeLabel),
            Register(CSI_NODE, A.Add | A.Update), Register(CSI_DRIVER, A.Update),
            Register(CSI_STORAGE_CAPACITY, A.Add | A.Update)),
    # Its args' defaulting reads StorageCapacityScoring (config/pluginargs.py).
    gates=frozenset({"StorageCapacityScoring", "VolumeAttributesClass"}),
    details="volume-binding",
)
