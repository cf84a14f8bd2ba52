"""VolumeBinding: PersistentVolumeClaims bound, or bindable on the node."""

from .volume_binding import VolumeBinding

PLUGIN = VolumeBinding
