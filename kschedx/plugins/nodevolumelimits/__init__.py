"""NodeVolumeLimits: CSI attach limits per node (kube-scheduler's CSILimits)."""

from .csi import CSILimits

PLUGIN = CSILimits
