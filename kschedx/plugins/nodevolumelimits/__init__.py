"""NodeVolumeLimits: CSI attach limits per node (kube-scheduler's CSILimits)."""

from .csi import DECLARATION, CSILimits

__all__ = ["CSILimits", "DECLARATION"]
