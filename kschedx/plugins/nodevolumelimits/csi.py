"""NodeVolumeLimits (CSILimits): attachable volumes per CSI driver and node.

A volume counts under its CSI driver with a unique name `driver/handle`:
PVC -> PV -> `csi` source; an in-tree PV or inline volume counts as the CSI
driver it migrates to (see utils.is_csi_migration_on); a claim with no PV
yet counts under its StorageClass's provisioner, once per claim. A volume
already used on the node (or attached there, per VolumeAttachments) is not
counted twice. The limit is the CSINode's `allocatable.count` for the
driver; a driver without one is unlimited.
"""

from __future__ import annotations

import secrets
from collections import Counter

from ...config import names
from ...framework.declaration import Declaration, reads
from ...framework.events import ActionType as A, CSI_DRIVER, CSI_NODE, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, POD, Register, STORAGE_CLASS, VOLUME_ATTACHMENT
from ...framework.interface import Plugin, features_of
from ...framework.status import Code, Status
from ...storage import csi_translation as tr
from ...storage.objects import NotFound, claim_class, get_pvc, spec
from ...storage.volumes import EPHEMERAL, INLINE, ephemeral_owner_error, pod_volumes
from .utils import is_csi_migration_on, volume_limits

NAME = names.NodeVolumeLimits
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"


class _LookupError(Exception):
    """The new pod's claim is missing: UnschedulableAndUnresolvable."""


class _Failure(Exception):
    """Any other error: an Error status, the cycle stops."""


class CSILimits(Plugin):
    name = NAME

    def __init__(self, handle, args=None):
        super().__init__(handle, args)
        features = features_of(handle)
        self.portworx_needs_annotation = not features.portworx_always_migrated
        # VolumeLimitScaling (alpha): a new volume's CSI driver must be installed on the node.
        self.volume_limit_scaling = features.enable_volume_limit_scaling
        self.driver_opts_in = features.volume_limit_scaling_reads_prevent_pod_scheduling
        # Claims without a PV are counted under a made-up handle; upstream
        # prefixes it with a random string so it cannot equal a real handle.
        self.random_volume_id_prefix = secrets.token_hex(16)
        self._existing: dict[tuple, dict | _Failure] = {}
        self._by_node: dict[str, tuple] = {}
        self._translated: dict[str, tuple[dict, object]] = {}
        self._attachments: dict[str, dict[str, str]] | None = None

    # -- PreFilter ---------------------------------------------------------------
    def pre_filter(self, state, pod_info, nodes):
        for v in pod_volumes(pod_info):
            if v.kind != INLINE or tr.plugin_for_inline(v.source) is not None:
                return None, None
        return None, Status(Code.SKIP)

    # -- Filter ------------------------------------------------------------------
    def filter(self, state, pod_info, node_info):
        if not pod_info.spec.get("volumes"):
            return None
        cluster = self.handle.cluster
        csi_node = cluster.csi_nodes.get(node_info.name)

        new_volumes: dict[str, str] = {}
        try:
            self.attachable_volumes(pod_info, csi_node, True, new_volumes)
        except _LookupError as exc:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, str(exc))
        except _Failure as exc:
            return Status.as_error(str(exc))
        if not new_volumes:
            return None

        if self.volume_limit_scaling:
            # Go ranges over the new volumes' map: the first driver found
            # missing is named; kschedx checks them in name order.
            for driver in sorted(set(new_volumes.values())):
                if not self._driver_installed(driver, csi_node):
                    return Status(Code.UNSCHEDULABLE, f"{driver} CSI driver is not installed on the node")

        limits = volume_limits(csi_node)
        if not limits:
            return None

        attached = self._attached_volumes(node_info, csi_node)
        if isinstance(attached, _Failure):
            return Status.as_error(str(attached))

        attached_count: Counter = Counter()
        for unique, driver in attached.items():
            new_volumes.pop(unique, None)  # a volume shared with a running pod is attached once
            attached_count[driver] += 1
        for unique, driver in self._node_attachments(node_info.name).items():
            if unique not in attached:
                attached_count[driver] += 1

        new_count = Counter(new_volumes.values())
        # Go ranges over a map here; only the first exceeded driver is
        # explained, so check drivers in name order for a stable answer.
        for driver in sorted(new_count):
            limit = limits.get(driver)
            if limit is None:
                continue
            if attached_count[driver] + new_count[driver] > limit:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
                              details=self._explain(pod_info, csi_node, driver, limit,
                                                    attached_count[driver], new_volumes))
        return None

    def _attached_volumes(self, node_info, csi_node):
        """The volumes of the pods on the node, by unique name. What a pod
        counts depends only on the cluster's storage objects (fixed for a run:
        VolumeBinding keeps its assumptions to itself) and on how the node's
        CSINode enables migration; the node's generation changes with its pods."""
        migration = (csi_node is not None, tr.PORTWORX in tr.migrated_plugins(csi_node))
        hit = self._by_node.get(node_info.name)
        if hit is not None and hit[0] == node_info.generation and hit[1] == migration:
            return hit[2]
        attached: dict[str, str] = {}
        for existing in node_info.pods:
            if not existing.pod["spec"].get("volumes"):
                continue  # attaches nothing (most pods)
            got = self._existing_volumes(existing, migration, csi_node)
            if isinstance(got, _Failure):
                attached = got
                break
            attached.update(got)
        self._by_node[node_info.name] = (node_info.generation, migration, attached)
        return attached

    def _existing_volumes(self, pod_info, migration, csi_node):
        key = (pod_info.uid, migration)
        got = self._existing.get(key)
        if got is None:
            vols: dict[str, str] = {}
            try:
                self.attachable_volumes(pod_info, csi_node, False, vols)
                got = vols
            except (_Failure, _LookupError) as exc:
                got = _Failure(str(exc))
            self._existing[key] = got
        return got

    def _explain(self, pod_info, csi_node, driver, limit, attached, new_volumes) -> dict:
        described: dict[str, dict] = {}
        self.attachable_volumes(pod_info, csi_node, True, {}, described)
        return {
            "driver": driver,
            "limit": limit,
            "attached": attached,
            "new": sum(1 for d in new_volumes.values() if d == driver),
            "volumes": [described[u] for u in sorted(new_volumes) if new_volumes[u] == driver and u in described],
        }

    # -- counting ----------------------------------------------------------------
    def attachable_volumes(self, pod_info, csi_node, new_pod: bool, result: dict, described: dict | None = None):
        """filterAttachableVolumes: add `driver/handle -> driver` for each
        volume of the pod that attaches through a CSI driver."""
        cluster = self.handle.cluster
        for vol in pod_volumes(pod_info):
            if vol.kind == INLINE:
                self._inline_volume(vol, csi_node, result, described)
                continue
            name = vol.claim_name
            if not name:
                raise _Failure("PersistentVolumeClaim had no name")
            try:
                pvc = get_pvc(cluster, pod_info.namespace, name)
            except NotFound as exc:
                if new_pod:
                    raise _LookupError(f"looking up PVC {pod_info.namespace}/{name}: {exc}") from None
                continue  # an existing pod's missing claim is not counted
            if vol.kind == EPHEMERAL:
                err = ephemeral_owner_error(pod_info, pvc)
                if err:
                    raise _Failure(err)
            driver, handle, pv_name = self._csi_driver_info(csi_node, pvc)
            if not driver or not handle:
                continue
            unique = f"{driver}/{handle}"
            result[unique] = driver
            if described is not None:
                entry = {"volume": vol.name, "claim": f"{pod_info.namespace}/{name}", "persistentVolume": pv_name,
                         "driver": driver}
                if pv_name:
                    entry["volumeHandle"] = handle
                else:
                    # Not provisioned yet: counted once under its class's driver.
                    entry["storageClass"] = claim_class(pvc)
                described[unique] = entry

    def _driver_installed(self, driver: str, csi_node: dict | None) -> bool:
        """checkCSIDriverOnNode: a driver without a CSIDriver object may not
        be a CSI driver (allowed); from 1.36 only a CSIDriver with
        spec.preventPodSchedulingIfMissing asks for the check; then the
        node's CSINode must list it."""
        csi_driver = self.handle.cluster.csi_drivers.get(driver)
        if csi_driver is None:
            return True
        if self.driver_opts_in and not (csi_driver.get("spec") or {}).get("preventPodSchedulingIfMissing"):
            return True
        if csi_node is None:
            return False
        return any(d.get("name") == driver for d in (csi_node.get("spec") or {}).get("drivers") or ())

    def _inline_volume(self, vol, csi_node, result, described):
        plugin = tr.plugin_for_inline(vol.source)
        if plugin is None or not is_csi_migration_on(csi_node, plugin.name, self.portworx_needs_annotation):
            return
        try:
            handle = tr.inline_handle(plugin, vol.source)
        except tr.TranslationError as exc:
            raise _Failure(f"converting volume({vol.name}) from inline to csi: {exc}") from None
        unique = f"{plugin.driver}/{handle}"
        result[unique] = plugin.driver
        if described is not None:
            described[unique] = {"volume": vol.name, "inTreePlugin": plugin.name, "driver": plugin.driver,
                                 "volumeHandle": handle}

    def _csi_driver_info(self, csi_node, pvc) -> tuple[str, str, str | None]:
        """getCSIDriverInfo: (driver, handle, PV name or None)."""
        pv_name = spec(pvc).get("volumeName") or ""
        if not pv_name:
            return (*self._csi_driver_info_from_class(csi_node, pvc), None)
        pv = self.handle.cluster.persistent_volumes.get(pv_name)
        if pv is None:
            # Deleted, or pre-bound to a PV that does not exist yet: count it
            # by its class, as upstream does.
            return (*self._csi_driver_info_from_class(csi_node, pvc), None)
        csi = spec(pv).get("csi")
        if csi is None:
            plugin = tr.plugin_for_pv(pv)
            if plugin is None or not is_csi_migration_on(csi_node, plugin.name, self.portworx_needs_annotation):
                return "", "", pv_name
            translated = self._translate(pv)
            if translated is None:
                return "", "", pv_name
            csi = translated["spec"]["csi"]
        return csi.get("driver", ""), csi.get("volumeHandle", ""), pv_name

    def _translate(self, pv: dict) -> dict | None:
        name = pv["metadata"]["name"]
        hit = self._translated.get(name)
        if hit is not None and hit[0] is pv:
            return hit[1]
        try:
            out = tr.translate_pv(pv)
        except tr.TranslationError:
            out = None
        self._translated[name] = (pv, out)
        return out

    def _csi_driver_info_from_class(self, csi_node, pvc) -> tuple[str, str]:
        """getCSIDriverInfoFromSC: an unbound claim counts under its class's
        provisioner (or the CSI driver of a migrated in-tree provisioner)."""
        sc_name = claim_class(pvc)
        if not sc_name:
            return "", ""
        sc = self.handle.cluster.storage_classes.get(sc_name)
        if sc is None:
            return "", ""
        m = pvc["metadata"]
        handle = f"{self.random_volume_id_prefix}-{m.get('namespace', '')}/{m['name']}"
        provisioner = sc.get("provisioner") or ""
        plugin = tr.plugin_by_name(provisioner)
        if plugin is not None:
            if not is_csi_migration_on(csi_node, provisioner, self.portworx_needs_annotation):
                return "", ""
            return plugin.driver, handle
        return provisioner, handle

    def _node_attachments(self, node_name: str) -> dict[str, str]:
        """getNodeVolumeAttachmentInfo, indexed once per run."""
        if self._attachments is None:
            cluster = self.handle.cluster
            index: dict[str, dict[str, str]] = {}
            for va in getattr(cluster, "volume_attachments", {}).values():
                s = spec(va)
                attacher = s.get("attacher") or ""
                pv_name = (s.get("source") or {}).get("persistentVolumeName")
                if not attacher or not pv_name:
                    continue
                pv = cluster.persistent_volumes.get(pv_name)
                if pv is None or spec(pv).get("csi") is None:
                    continue
                handle = spec(pv)["csi"].get("volumeHandle", "")
                index.setdefault(s.get("nodeName") or "", {})[f"{attacher}/{handle}"] = attacher
            self._attachments = index
        return self._attachments.get(node_name, {})


DECLARATION = Declaration(
    name=names.NodeVolumeLimits,
    factory=CSILimits,
    points=frozenset({"preFilter", "filter"}),
    reads=(reads(PERSISTENT_VOLUME, STORAGE_CLASS, CSI_NODE, CSI_DRIVER, VOLUME_ATTACHMENT, pods=("volumes",)),
           reads(PERSISTENT_VOLUME_CLAIM, pods=("volumes",), same_namespace=True)),
    events=(Register(CSI_NODE, A.Add), Register(CSI_NODE, A.Update), Register(POD, A.Delete),
            Register(PERSISTENT_VOLUME_CLAIM, A.Add), Register(VOLUME_ATTACHMENT, A.Delete)),
    gates=frozenset({"VolumeLimitScaling"}),
    details="volume-limits",
)
