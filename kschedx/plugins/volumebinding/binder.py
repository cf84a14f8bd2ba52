"""The scheduler's volume binder: which claims are bound, which PVs could
bind the others on a node, which could be provisioned there.

Follows volumebinding/binder.go and component-helpers' FindMatchingVolume
of kube-scheduler v1.35. A claim is bound only when the PV controller has
finished (spec.volumeName and the bind-completed annotation). Bound claims
need their PV's node affinity to match the node; claims waiting for their
first consumer need a matching available PV on the node, or a StorageClass
that can provision there (provisioner, allowedTopologies, and
CSIStorageCapacity when the CSI driver asks for capacity tracking).
"""

from __future__ import annotations

import copy

from ...api.labels import SelectorError, label_selector
from ...api.quantity import parse_quantity
from ...storage import csi_translation as tr
from ...storage.objects import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    NOT_SUPPORTED_PROVISIONER,
    ZERO,
    AffinityCache,
    NotFound,
    VolumeNodeAffinity,
    annotations,
    check_access_modes,
    claim_class,
    claim_key,
    claim_selector,
    go_quote,
    is_delay_binding_mode,
    is_fully_bound,
    is_volume_bound_to_claim,
    match_topology_selector_terms,
    meta,
    spec,
    storage_capacity,
    storage_request,
    volume_class,
    volume_mode_mismatch,
)
from ...storage.volumes import EPHEMERAL, INLINE, ephemeral_owner_error, pod_volumes
from .assume_cache import AssumeCache, PVAssumeCache

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


class BinderError(Exception):
    """Something upstream returns as an error: an Error status."""


class BindingInfo:
    __slots__ = ("pv", "pvc")

    def __init__(self, pv: dict, pvc: dict):
        self.pv = pv
        self.pvc = pvc


class DynamicProvision:
    __slots__ = ("pvc", "node_capacity")

    def __init__(self, pvc: dict, node_capacity: dict | None = None):
        self.pvc = pvc
        self.node_capacity = node_capacity


class PodVolumes:
    """What FindPodVolumes decided for one node: PVs to bind, claims to provision."""

    __slots__ = ("static_bindings", "dynamic_provisions")

    def __init__(self, static_bindings=None, dynamic_provisions=None):
        self.static_bindings = static_bindings or []
        self.dynamic_provisions = dynamic_provisions or []


class BoundClaim:
    """A bound claim and its PV (None when the PV does not exist)."""

    __slots__ = ("pvc", "pv", "affinity", "plugin")

    def __init__(self, pvc, pv, affinity, plugin):
        self.pvc = pvc
        self.pv = pv
        self.affinity = affinity
        self.plugin = plugin  # in-tree plugin of the PV, if it could be migrated


class Candidate:
    __slots__ = ("order", "pv", "name", "size", "prebound", "affinity")

    def __init__(self, order, pv, size, prebound, affinity):
        self.order = order
        self.pv = pv
        self.name = meta(pv).get("name", "")
        self.size = size
        self.prebound = prebound
        self.affinity = affinity


class ClaimMatcher:
    """FindMatchingVolume for one claim, with everything that does not depend
    on the node decided once per cycle.

    The PVs that pass the node-independent checks are kept in list order.
    A PV pre-bound to the claim decides alone (the first one met); otherwise
    the smallest PV whose node affinity matches wins, the first on ties.
    Candidates whose affinity is one term starting with `key In (values)`
    are indexed by that label, so local PVs cost O(1) per node.
    """

    def __init__(self, pvc: dict, pvs: list[dict], affinities: AffinityCache, vac_enabled: bool = True):
        """`vac_enabled`: the VolumeAttributesClass gate (settable in 1.35
        only): without it a claim naming a class is an error, and a PV with
        one never matches."""
        self.pvc = pvc
        self.key = claim_key(pvc)
        self.vac_error = None
        self.class_name = claim_class(pvc)
        req = storage_request(pvc)
        self.request = req if req is not None else ZERO
        self.selector_error = None
        try:
            selector = claim_selector(pvc)
        except SelectorError as exc:
            selector = None
            self.selector_error = str(exc)
        self.prebound: list[Candidate] = []
        self.free: list[Candidate] = []  # unconstrained or not indexable
        self.index: dict[str, dict[str, list[Candidate]]] = {}
        claim_vac = spec(pvc).get("volumeAttributesClassName") or ""
        if not vac_enabled and claim_vac:
            self.vac_error = (f"unsupported volumeAttributesClassName is set on claim {self.key} when the "
                              "feature-gate VolumeAttributesClass is disabled")
            return
        if self.selector_error is not None:
            return
        for order, pv in enumerate(pvs):
            prebound = is_volume_bound_to_claim(pv, pvc)
            if spec(pv).get("claimRef") and not prebound:
                continue
            size = storage_capacity(pv)
            if size < self.request:
                continue
            if volume_mode_mismatch(pvc, pv):
                continue
            if (spec(pv).get("volumeAttributesClassName") or "") != claim_vac:
                # Equal names when the gate is on; without it the claim names
                # none, so a PV with a class is skipped.
                continue
            if meta(pv).get("deletionTimestamp"):
                continue
            affinity = affinities.get(pv)
            cand = Candidate(order, pv, size.as_fraction(), prebound, affinity)
            if prebound:
                self.prebound.append(cand)
                continue
            if (pv.get("status") or {}).get("phase") != "Available":
                continue
            if selector is not None and not selector.matches(meta(pv).get("labels") or {}):
                continue
            if volume_class(pv) != self.class_name:
                continue
            if not check_access_modes(pvc, pv):
                continue
            first = _first_in_requirement(affinity)
            if first is None:
                self.free.append(cand)
            else:
                key, values = first
                by_value = self.index.setdefault(key, {})
                for v in values:
                    by_value.setdefault(v, []).append(cand)

    def find(self, node_labels: dict, chosen: set) -> dict | None:
        if self.vac_error is not None:
            raise BinderError(self.vac_error)
        if self.selector_error is not None:
            raise BinderError(f"error creating internal label selector for claim: {self.key}: {self.selector_error}")
        for c in self.prebound:
            if c.name in chosen:
                continue
            return c.pv if c.affinity.matches(node_labels) else None
        best = None
        for c in self._pool(node_labels):
            if c.name in chosen or not c.affinity.matches(node_labels):
                continue
            if best is None or (c.size, c.order) < (best.size, best.order):
                best = c
        return best.pv if best is not None else None

    def _pool(self, node_labels: dict):
        yield from self.free
        for key, by_value in self.index.items():
            v = node_labels.get(key)
            if v is not None:
                yield from by_value.get(v, ())


def _first_in_requirement(affinity: VolumeNodeAffinity):
    """(key, values) of a one-term affinity whose first requirement is In."""
    sel = affinity.selector
    if sel is None or len(sel.terms) != 1:
        return None
    term = sel.terms[0]
    if term.error is not None or term.labels is None or term.labels.nothing or not term.labels.requirements:
        return None
    req = term.labels.requirements[0]
    if req.op != "In":
        return None
    return req.key, req.values


class PodVolumeClaims:
    __slots__ = ("bound", "unbound_delay", "unbound_immediate", "matchers", "bound_checks")

    def __init__(self):
        self.bound: list[dict] = []
        self.unbound_delay: list[dict] = []
        self.unbound_immediate: list[dict] = []
        self.matchers: dict[str, ClaimMatcher] = {}
        self.bound_checks: list[BoundClaim] = []


class VolumeBinder:
    def __init__(self, cluster, vac_enabled: bool = True):
        self.cluster = cluster
        self.vac_enabled = vac_enabled
        self.pv_cache = PVAssumeCache(cluster.persistent_volumes)
        self.pvc_cache = AssumeCache(cluster.persistent_volume_claims, "persistentvolumeclaims")
        self.affinities = AffinityCache()
        self._translated: dict[str, tuple[dict, object]] = {}

    # -- claims of a pod --------------------------------------------------------
    def is_volume_bound(self, pod_info, vol) -> tuple[bool, dict | None]:
        if vol.kind == INLINE:
            return True, None
        key = f"{pod_info.namespace}/{vol.claim_name}"
        try:
            pvc = self.pvc_cache.get(key)
        except NotFound as exc:
            raise BinderError(f"error getting PVC {go_quote(key)}: {exc}") from None
        if vol.kind == EPHEMERAL:
            err = ephemeral_owner_error(pod_info, pvc)
            if err:
                raise BinderError(err)
        return is_fully_bound(pvc), pvc

    def get_pod_volume_claims(self, pod_info) -> PodVolumeClaims:
        claims = PodVolumeClaims()
        for vol in pod_volumes(pod_info):
            bound, pvc = self.is_volume_bound(pod_info, vol)
            if pvc is None:
                continue
            if bound:
                claims.bound.append(pvc)
            elif is_delay_binding_mode(self.cluster, pvc) and not spec(pvc).get("volumeName"):
                claims.unbound_delay.append(pvc)
            else:
                # Immediate claims (and pre-bound ones) must already be bound.
                claims.unbound_immediate.append(pvc)
        for pvc in claims.bound:
            name = spec(pvc).get("volumeName")
            try:
                pv = self.pv_cache.get(name)
            except NotFound:
                claims.bound_checks.append(BoundClaim(pvc, None, None, None))
                continue
            claims.bound_checks.append(BoundClaim(pvc, pv, self.affinities.get(pv), tr.plugin_for_pv(pv)))
        lists = {}
        for pvc in claims.unbound_delay:
            cls = claim_class(pvc)
            if cls not in lists:
                lists[cls] = self.pv_cache.list_pvs(cls)
            claims.matchers[claim_key(pvc)] = ClaimMatcher(pvc, lists[cls], self.affinities, self.vac_enabled)
        return claims

    # -- one node -----------------------------------------------------------------
    def find_pod_volumes(self, pod_info, claims: PodVolumeClaims, node_info, notes: list | None = None):
        """FindPodVolumes: (PodVolumes, conflict reasons) for one node.
        `notes`, when given, collects what decided each claim."""
        pod_volumes_ = PodVolumes()
        bound_ok = True
        unbound_ok = True
        sufficient = True
        pvs_found = True
        labels = node_info.labels

        if claims.bound_checks:
            bound_ok, pvs_found = self.check_bound_claims(claims.bound_checks, node_info, notes)

        if claims.unbound_delay:
            to_match, to_provision = [], []
            early = False
            for pvc in claims.unbound_delay:
                ann = annotations(pvc)
                if ANN_SELECTED_NODE in ann:
                    if ann[ANN_SELECTED_NODE] != node_info.name:
                        unbound_ok = False
                        if notes is not None:
                            notes.append({"claim": claim_key(pvc), "storageClass": claim_class(pvc),
                                          "verdict": f"being provisioned for node {ann[ANN_SELECTED_NODE]}"})
                        early = True
                        break
                    to_provision.append(pvc)
                else:
                    to_match.append(pvc)
            if not early:
                if to_match:
                    unbound_ok, bindings, unmatched = self.find_matching_volumes(claims, to_match, labels, notes)
                    pod_volumes_.static_bindings = bindings
                    to_provision.extend(unmatched)
                if to_provision:
                    unbound_ok, sufficient, provisions = self.check_volume_provisions(to_provision, node_info, notes)
                    pod_volumes_.dynamic_provisions = provisions

        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not sufficient:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return pod_volumes_, reasons

    def check_bound_claims(self, bound: list[BoundClaim], node_info, notes) -> tuple[bool, bool]:
        """(node affinity satisfied, every PV found), stopping at the first
        claim that fails either."""
        csi_node = self.cluster.csi_nodes.get(node_info.name)
        migrated = tr.migrated_plugins(csi_node)
        for bc in bound:
            pv_name = spec(bc.pvc).get("volumeName")
            if bc.pv is None:
                if notes is not None:
                    notes.append({"claim": claim_key(bc.pvc), "persistentVolume": pv_name,
                                  "verdict": "bound to a PersistentVolume that does not exist"})
                return True, False
            affinity = bc.affinity
            translated = False
            if bc.plugin is not None and _migration_on_for_plugin(bc.plugin.name) and bc.plugin.name in migrated:
                affinity = self._translated_affinity(bc.pv)
                translated = True
            if not affinity.matches(node_info.labels):
                if notes is not None:
                    note = {"claim": claim_key(bc.pvc), "persistentVolume": pv_name,
                            "verdict": "PersistentVolume node affinity does not match the node",
                            "nodeAffinity": (spec(bc.pv).get("nodeAffinity") or {}).get("required")}
                    if translated:
                        note["translatedTo"] = bc.plugin.driver
                    notes.append(note)
                return False, True
            if notes is not None:
                notes.append({"claim": claim_key(bc.pvc), "persistentVolume": pv_name,
                              "verdict": "bound; PersistentVolume node affinity matches"})
        return True, True

    def _translated_affinity(self, pv: dict) -> VolumeNodeAffinity:
        name = meta(pv).get("name", "")
        hit = self._translated.get(name)
        if hit is None or hit[0] is not pv:
            try:
                out = VolumeNodeAffinity(tr.translate_pv(pv))
            except tr.TranslationError as exc:
                out = BinderError(f"could not translate pv: {exc}")
            hit = self._translated[name] = (pv, out)
        if isinstance(hit[1], BinderError):
            raise hit[1]
        return hit[1]

    def find_matching_volumes(self, claims: PodVolumeClaims, to_match: list[dict], node_labels: dict, notes):
        """findMatchingVolumes: smallest claims first, each PV used once."""
        # Go's sort.Sort is an insertion sort (stable) up to 12 elements; a pod
        # with more claims of equal size could see them in another order there.
        ordered = sorted(to_match, key=lambda pvc: (storage_request(pvc) or ZERO).as_fraction())
        chosen: set[str] = set()
        found = True
        bindings: list[BindingInfo] = []
        unmatched: list[dict] = []
        for pvc in ordered:
            pv = claims.matchers[claim_key(pvc)].find(node_labels, chosen)
            if pv is None:
                unmatched.append(pvc)
                found = False
                continue
            chosen.add(meta(pv).get("name", ""))
            bindings.append(BindingInfo(pv, pvc))
            if notes is not None:
                notes.append({"claim": claim_key(pvc), "storageClass": claim_class(pvc),
                              "verdict": f"matches available PersistentVolume {meta(pv).get('name', '')}"})
        return found, bindings, unmatched

    def check_volume_provisions(self, to_provision: list[dict], node_info, notes):
        """checkVolumeProvisions: (provisioning possible, enough storage, provisions)."""
        provisions: list[DynamicProvision] = []
        for claim in to_provision:
            key = claim_key(claim)
            class_name = claim_class(claim)
            if not class_name:
                raise BinderError(f"no class for claim {go_quote(key)}")
            sc = self.cluster.storage_classes.get(class_name)
            if sc is None:
                raise BinderError(f"failed to find storage class {go_quote(class_name)}")
            provisioner = sc.get("provisioner") or ""
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                if notes is not None:
                    notes.append({"claim": key, "storageClass": class_name, "provisioner": provisioner,
                                  "verdict": "no available PersistentVolume matches and the class cannot provision one"})
                return False, True, []
            if not match_topology_selector_terms(sc.get("allowedTopologies"), node_info.labels):
                if notes is not None:
                    notes.append({"claim": key, "storageClass": class_name, "provisioner": provisioner,
                                  "verdict": "the class's allowedTopologies exclude this node",
                                  "allowedTopologies": sc.get("allowedTopologies")})
                return False, True, []
            sufficient, capacity = self.has_enough_capacity(provisioner, claim, sc, node_info)
            if not sufficient:
                if notes is not None:
                    notes.append({"claim": key, "storageClass": class_name, "provisioner": provisioner,
                                  "verdict": "no CSIStorageCapacity reachable from this node has room for it",
                                  "requested": (spec(claim).get("resources") or {}).get("requests", {}).get("storage")})
                return True, False, []
            provisions.append(DynamicProvision(claim, capacity))
            if notes is not None:
                notes.append({"claim": key, "storageClass": class_name, "provisioner": provisioner,
                              "verdict": "can be provisioned on this node"})
        return True, True, provisions

    def has_enough_capacity(self, provisioner: str, claim: dict, sc: dict, node_info):
        """(enough, the CSIStorageCapacity that has room) for a new volume."""
        request = storage_request(claim)
        if request is None:
            return True, None
        driver = self.cluster.csi_drivers.get(provisioner)
        if driver is None or not spec(driver).get("storageCapacity"):
            # Not a CSI driver, or one that does not publish capacity.
            return True, None
        size = request.value()
        class_name = meta(sc).get("name", "")
        capacities = getattr(self.cluster, "csi_storage_capacities", {})
        for key in sorted(capacities):
            cap = capacities[key]
            if cap.get("storageClassName") != class_name:
                continue
            if not _capacity_sufficient(cap, size):
                continue
            if not _node_has_access(cap, node_info.labels):
                continue
            return True, cap
        return False, None

    # -- Reserve (simulate) ---------------------------------------------------------
    def are_pod_volumes_bound(self, pod_info) -> bool:
        for vol in pod_volumes(pod_info):
            try:
                bound, _ = self.is_volume_bound(pod_info, vol)
            except BinderError:
                return False
            if not bound:
                return False
        return True

    def assume_pod_volumes(self, pod_info, node_name: str, pv: PodVolumes) -> bool:
        """AssumePodVolumes: true when every claim was already bound."""
        if self.are_pod_volumes_bound(pod_info):
            return True
        new_bindings = []
        for b in pv.static_bindings:
            new_pv, dirty = bind_volume_to_claim(b.pv, b.pvc)
            if dirty:
                self.pv_cache.assume(meta(new_pv)["name"], new_pv)
            new_bindings.append(BindingInfo(new_pv, b.pvc))
        new_provisions = []
        for p in pv.dynamic_provisions:
            clone = copy.deepcopy(p.pvc)
            clone.setdefault("metadata", {}).setdefault("annotations", {})
            if clone["metadata"]["annotations"] is None:
                clone["metadata"]["annotations"] = {}
            clone["metadata"]["annotations"][ANN_SELECTED_NODE] = node_name
            self.pvc_cache.assume(claim_key(clone), clone)
            new_provisions.append(DynamicProvision(clone))
        pv.static_bindings = new_bindings
        pv.dynamic_provisions = new_provisions
        return False

    def revert_assumed_pod_volumes(self, pv: PodVolumes) -> None:
        for b in pv.static_bindings:
            self.pv_cache.restore(meta(b.pv).get("name", ""))
        for p in pv.dynamic_provisions:
            self.pvc_cache.restore(claim_key(p.pvc))


def bind_volume_to_claim(pv: dict, pvc: dict) -> tuple[dict, bool]:
    """GetBindVolumeToClaim: a copy of the PV pointing at the claim."""
    should_set_bound_by_controller = not is_volume_bound_to_claim(pv, pvc)
    clone = copy.deepcopy(pv)
    dirty = False
    ref = spec(pv).get("claimRef") or None
    m = meta(pvc)
    if (ref is None or ref.get("name") != m.get("name") or ref.get("namespace") != m.get("namespace")
            or ref.get("uid") != m.get("uid")):
        clone.setdefault("spec", {})["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": m.get("namespace"),
            "name": m.get("name"),
            "uid": m.get("uid"),
        }
        dirty = True
    if should_set_bound_by_controller:
        ann = clone.setdefault("metadata", {}).setdefault("annotations", {})
        if ann is None:
            ann = clone["metadata"]["annotations"] = {}
        if ANN_BOUND_BY_CONTROLLER not in ann:
            ann[ANN_BOUND_BY_CONTROLLER] = "yes"
            dirty = True
    return clone, dirty


def _migration_on_for_plugin(name: str) -> bool:
    # isCSIMigrationOnForPlugin: Portworx counts (its gate locked on in 1.35, removed in 1.36).
    return name in (tr.AWS_EBS, tr.GCE_PD, tr.AZURE_DISK, tr.CINDER, tr.PORTWORX)


def _capacity_sufficient(cap: dict, size: int) -> bool:
    limit = cap.get("maximumVolumeSize")
    if limit is None:
        limit = cap.get("capacity")
    if limit is None:
        return False
    return parse_quantity(limit).value() >= size


def _node_has_access(cap: dict, node_labels: dict) -> bool:
    topology = cap.get("nodeTopology")
    if topology is None:
        return False
    try:
        return label_selector(topology).matches(node_labels)
    except SelectorError:
        return False
