"""In-tree volumes seen as the CSI volumes they migrate to (csi-translation-lib).

Only what scheduling reads is translated: the CSI driver, the volume handle
(the identity NodeVolumeLimits counts) and the PV's node affinity, whose
zone keys move to the driver's topology key (VolumeBinding checks it).
Azure File and vSphere have translators upstream, but no scheduler path
turns their migration on, so they are only recognised here.
"""

from __future__ import annotations

import copy
import re
from urllib.parse import urlparse

from .objects import meta, spec

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
MULTI_ZONE_DELIMITER = "__"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"

GCE_PD = "kubernetes.io/gce-pd"
AWS_EBS = "kubernetes.io/aws-ebs"
CINDER = "kubernetes.io/cinder"
AZURE_DISK = "kubernetes.io/azure-disk"
AZURE_FILE = "kubernetes.io/azure-file"
VSPHERE = "kubernetes.io/vsphere-volume"
PORTWORX = "kubernetes.io/portworx-volume"


class TranslationError(Exception):
    pass


class InTreePlugin:
    __slots__ = ("name", "driver", "source", "topology_key")

    def __init__(self, name: str, driver: str, source: str, topology_key: str | None):
        self.name = name
        self.driver = driver
        self.source = source  # the volume source field, in PVs and in pod volumes
        self.topology_key = topology_key


# A volume has one source, so the lookup order never matters for valid objects.
IN_TREE_PLUGINS = (
    InTreePlugin(GCE_PD, "pd.csi.storage.gke.io", "gcePersistentDisk", "topology.gke.io/zone"),
    InTreePlugin(AWS_EBS, "ebs.csi.aws.com", "awsElasticBlockStore", "topology.ebs.csi.aws.com/zone"),
    InTreePlugin(CINDER, "cinder.csi.openstack.org", "cinder", "topology.cinder.csi.openstack.org/zone"),
    InTreePlugin(AZURE_DISK, "disk.csi.azure.com", "azureDisk", None),
    InTreePlugin(AZURE_FILE, "file.csi.azure.com", "azureFile", None),
    InTreePlugin(VSPHERE, "csi.vsphere.vmware.com", "vsphereVolume", None),
    InTreePlugin(PORTWORX, "pxd.portworx.com", "portworxVolume", None),
)
_BY_NAME = {p.name: p for p in IN_TREE_PLUGINS}


def plugin_for_pv(pv: dict) -> InTreePlugin | None:
    """IsPVMigratable / GetInTreePluginNameFromSpec for a PV."""
    s = spec(pv)
    for p in IN_TREE_PLUGINS:
        if s.get(p.source) is not None:
            return p
    return None


def plugin_for_inline(volume: dict) -> InTreePlugin | None:
    """IsInlineMigratable / GetInTreePluginNameFromSpec for a pod volume."""
    for p in IN_TREE_PLUGINS:
        if volume.get(p.source) is not None:
            return p
    return None


def plugin_by_name(name: str) -> InTreePlugin | None:
    """IsMigratableIntreePluginByName + GetCSINameFromInTreeName."""
    return _BY_NAME.get(name)


def migrated_plugins(csi_node: dict | None) -> frozenset:
    """The in-tree plugins the CSINode says were migrated to CSI drivers."""
    if csi_node is None:
        return frozenset()
    value = (meta(csi_node).get("annotations") or {}).get(MIGRATED_PLUGINS_ANNOTATION)
    if not value:
        return frozenset()
    return frozenset(value.split(","))


# -- volume handles -----------------------------------------------------------

_AWS_VOLUME = re.compile(r"^vol-[^/]*$")


def ebs_volume_id(kubernetes_id: str) -> str:
    """KubernetesVolumeIDToEBSVolumeID: aws://<zone>/<id>, aws:///<id> or <id>."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    url = urlparse(kubernetes_id)
    aws_id = url.path.strip("/")
    if not _AWS_VOLUME.match(aws_id):
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


def _gce_region_from_zones(zones: list[str]) -> str:
    if not zones:
        raise TranslationError("no zones specified")
    regions = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(f"zone in unexpected format, expected: {{locale}}-{{region}}-{{zone}}, got: {zone}")
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        raise TranslationError(f"multiple or no regions gotten from zones, got: {sorted(regions)}")
    return next(iter(regions))


def _azure_disk_kind_error(source: dict) -> str | None:
    kind = source.get("kind")
    if kind is not None and str(kind).lower() != "managed":
        return f"kind({kind}) is not supported in csi migration"
    return None


def inline_handle(plugin: InTreePlugin, volume: dict) -> str:
    """The CSI volume handle TranslateInTreeInlineVolumeToCSI produces."""
    src = volume.get(plugin.source) or {}
    if plugin.name == GCE_PD:
        return f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{src.get('pdName', '')}"
    if plugin.name == AWS_EBS:
        try:
            return ebs_volume_id(src.get("volumeID", ""))
        except TranslationError as exc:
            raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {exc}") from None
    if plugin.name in (CINDER, PORTWORX):
        return src.get("volumeID", "")
    if plugin.name == AZURE_DISK:
        err = _azure_disk_kind_error(src)
        if err:
            raise TranslationError(err)
        return src.get("diskURI", "")
    raise TranslationError(f"could not find in-tree plugin translation logic for {volume.get('name', '')!r}")


# -- persistent volumes ---------------------------------------------------------

def translate_pv(pv: dict) -> dict:
    """TranslateInTreePVToCSI: a copy of the PV with a `csi` source and the
    node affinity the CSI driver's topology key expresses."""
    plugin = plugin_for_pv(pv)
    if plugin is None:
        raise TranslationError(f"could not find in-tree plugin translation logic for {meta(pv).get('name', '')!r}")
    out = copy.deepcopy(pv)
    s = out.setdefault("spec", {})
    src = s.get(plugin.source) or {}
    if plugin.name == GCE_PD:
        handle = _gce_pv_handle(out, src)
    elif plugin.name == AWS_EBS:
        try:
            handle = ebs_volume_id(src.get("volumeID", ""))
        except TranslationError as exc:
            raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID {exc}") from None
    elif plugin.name in (CINDER, PORTWORX):
        handle = src.get("volumeID", "")
    elif plugin.name == AZURE_DISK:
        err = _azure_disk_kind_error(src)
        if err:
            raise TranslationError(err)
        handle = src.get("diskURI", "")
    else:
        raise TranslationError(f"no scheduler translation for {plugin.name}")
    if plugin.topology_key is not None:
        _translate_topology(out, plugin.topology_key)
    del s[plugin.source]
    s["csi"] = {"driver": plugin.driver, "volumeHandle": handle}
    return out


def _gce_pv_handle(pv: dict, src: dict) -> str:
    labels = meta(pv).get("labels") or {}
    zones_label = labels.get(LABEL_BETA_ZONE) or labels.get(LABEL_ZONE) or ""
    zones = zones_label.split(MULTI_ZONE_DELIMITER)
    pd = src.get("pdName", "")
    if len(zones) == 1 and zones[0]:
        return f"projects/UNSPECIFIED/zones/{zones[0]}/disks/{pd}"
    if len(zones) > 1:
        try:
            region = _gce_region_from_zones(zones)
        except TranslationError as exc:
            raise TranslationError(f"failed to get region from zones: {exc}") from None
        return f"projects/UNSPECIFIED/regions/{region}/disks/{pd}"
    return f"projects/UNSPECIFIED/zones/UNSPECIFIED/disks/{pd}"


def _terms(pv: dict):
    na = spec(pv).get("nodeAffinity") or {}
    required = na.get("required") or {}
    return required.get("nodeSelectorTerms") or []


def _key_exists(pv: dict, key: str) -> bool:
    return any(r.get("key") == key for t in _terms(pv) for r in (t.get("matchExpressions") or ()))


def _topology_labels(pv: dict) -> tuple[str, str]:
    """getTopologyLabel: GA or beta keys, whichever the PV already uses."""
    if _key_exists(pv, LABEL_ZONE):
        return LABEL_ZONE, LABEL_REGION
    if _key_exists(pv, LABEL_BETA_ZONE):
        return LABEL_BETA_ZONE, LABEL_BETA_REGION
    labels = meta(pv).get("labels") or {}
    if LABEL_ZONE in labels:
        return LABEL_ZONE, LABEL_REGION
    if LABEL_BETA_ZONE in labels:
        return LABEL_BETA_ZONE, LABEL_BETA_REGION
    return LABEL_ZONE, LABEL_REGION


def _topology_values(pv: dict, key: str) -> list[str]:
    values = set()
    for t in _terms(pv):
        for r in t.get("matchExpressions") or ():
            if r.get("key") == key:
                values.update(r.get("values") or ())
    return sorted(values)


def _replace_topology(pv: dict, old: str, new: str) -> None:
    for t in _terms(pv):
        for r in t.get("matchExpressions") or ():
            if r.get("key") == old:
                r["key"] = new


def _add_topology(pv: dict, key: str, zones: list[str]) -> None:
    filtered = sorted({z.strip() for z in zones if z.strip()})
    if not filtered:
        return  # upstream returns an error here that its caller ignores
    s = pv.setdefault("spec", {})
    na = s.get("nodeAffinity")
    if na is None:
        na = s["nodeAffinity"] = {}
    req = na.get("required")
    if req is None:
        req = na["required"] = {}
    if not req.get("nodeSelectorTerms"):
        req["nodeSelectorTerms"] = [{}]
    for t in req["nodeSelectorTerms"]:
        t.setdefault("matchExpressions", [])
        if t["matchExpressions"] is None:
            t["matchExpressions"] = []
        t["matchExpressions"].append({"key": key, "operator": "In", "values": list(filtered)})


def _translate_topology(pv: dict, csi_key: str) -> None:
    """translateTopologyFromInTreeToCSI."""
    zone_label, region_label = _topology_labels(pv)
    if _topology_values(pv, zone_label):
        _replace_topology(pv, zone_label, csi_key)
    else:
        labels = meta(pv).get("labels") or {}
        if zone_label in labels:
            _add_topology(pv, csi_key, labels[zone_label].split(MULTI_ZONE_DELIMITER))
    if region_label == LABEL_BETA_REGION and _topology_values(pv, region_label):
        _replace_topology(pv, region_label, LABEL_REGION)
