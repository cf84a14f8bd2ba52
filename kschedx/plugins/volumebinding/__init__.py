"""VolumeBinding: PersistentVolumeClaims bound, or bindable on the node."""

from .volume_binding import DECLARATION, VolumeBinding

__all__ = ["DECLARATION", "VolumeBinding"]
