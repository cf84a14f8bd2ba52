"""When NodeVolumeLimits counts an in-tree volume as its CSI driver's volume."""

from __future__ import annotations

from ...storage import csi_translation as tr

def is_csi_migration_on(csi_node: dict | None, plugin_name: str, portworx_needs_annotation: bool = True) -> bool:
    """isCSIMigrationOn, quirks included: EBS, GCE PD, Azure Disk and Cinder
    count as migrated on any node that has a CSINode, whatever its
    migrated-plugins annotation says; Portworx needs the annotation until
    1.35 (its gate, CSIMigrationPortworx, is locked on there; 1.36 removed
    gate and annotation check: not features.portworx_always_migrated);
    the other in-tree plugins never count."""
    if csi_node is None or not plugin_name:
        return False
    if plugin_name in (tr.AWS_EBS, tr.GCE_PD, tr.AZURE_DISK, tr.CINDER):
        return True
    if plugin_name == tr.PORTWORX:
        return not portworx_needs_annotation or plugin_name in tr.migrated_plugins(csi_node)
    return False


def volume_limits(csi_node: dict | None) -> dict[str, int]:
    """Per-driver attach limits from CSINode spec.drivers[].allocatable.count."""
    limits: dict[str, int] = {}
    if csi_node is None:
        return limits
    for d in (csi_node.get("spec") or {}).get("drivers") or ():
        count = (d.get("allocatable") or {}).get("count")
        if count is not None:
            limits[d.get("name", "")] = int(count)
    return limits
