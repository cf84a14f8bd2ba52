"""InterPodAffinity: required pod affinity / anti-affinity (of the incoming
pod and of existing pods) at Filter, preferred terms at Score."""

from .plugin import DECLARATION, InterPodAffinity

__all__ = ["DECLARATION", "InterPodAffinity"]
