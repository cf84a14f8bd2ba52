"""The scheduling framework: the plugin interface, Status, CycleState, the
runner of the extension points, profiles and the plugin registry, one
framework per profile (dispatch.py) and the placement step of simulate."""
