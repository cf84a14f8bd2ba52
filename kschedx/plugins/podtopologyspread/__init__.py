"""PodTopologySpread: DoNotSchedule constraints at Filter, ScheduleAnyway
constraints (or the system defaults) at Score."""

from .plugin import DECLARATION, PodTopologySpread

__all__ = ["DECLARATION", "PodTopologySpread"]
