"""DynamicResources (DRA): structured-parameters device allocation, as
kube-scheduler v1.35 does it with its default feature gates.

Modules: plugin (the extension points), claims (a pod's claims and the
run's shared DRA state), allocator (the structured allocator), cel (CEL
selectors, as k8s.io/dynamic-resource-allocation/cel).
"""

from .plugin import DECLARATION, DynamicResources

__all__ = ["DECLARATION", "DynamicResources"]
