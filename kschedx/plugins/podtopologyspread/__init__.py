"""PodTopologySpread: DoNotSchedule constraints at Filter, ScheduleAnyway
constraints (or the system defaults) at Score."""

from .plugin import PodTopologySpread

PLUGIN = PodTopologySpread

__all__ = ["PodTopologySpread", "PLUGIN"]
