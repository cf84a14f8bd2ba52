"""Storage rules shared by the volume plugins.

The equivalents of the upstream helper libraries the volume plugins use:
component-helpers/storage/volume (claims, classes, PV matching),
component-helpers/storage/ephemeral (generic ephemeral volumes) and
csi-translation-lib (in-tree volumes seen as CSI volumes).
"""
