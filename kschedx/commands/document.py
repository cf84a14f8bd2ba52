"""The parts of a SchedulingResult document that a run of explain or
simulate writes around its pods: the head (mode, tie-break, profiles), each
pod's document with the workload's own fields (profile, askedByName,
source), and the tail (warnings of the input, the configuration and the
snapshot)."""

from __future__ import annotations

from ..framework.profile import PROFILE_NAME
from ..result.document import add_source, document_head, document_tail, pod_dict
from ..util.gc_policy import pauses_collector
from .load import Workload

@pauses_collector
def pod_document(r, mode: str, workload: Workload, nodes=None, encoder=None) -> dict:
    p = pod_dict(r, mode, nodes, encoder)
    p["profile"] = getattr(r, "profile", PROFILE_NAME)
    if p["status"] == "NoProfile" and r.pod_info.uid in workload.asked:
        p["askedByName"] = True
    return add_source(p, workload.sources)


def head(scheds, mode: str, nodes=None) -> dict:
    head = document_head(mode=mode, tie_break=scheds.tie_break, profile=scheds.primary.profile.name,
                         not_evaluated=scheds.not_evaluated,
                         node_detail=None if nodes is None or nodes.is_all else nodes.text,
                         features=scheds.features)
    if scheds.config is not None:
        head["profiles"] = scheds.profile_names
        head["config"] = scheds.config.source
    return head


def tail(scheds, workload: Workload, extra: dict | None = None) -> dict:
    """What follows the pods: the warnings of the input, of the configuration
    and of the snapshot, and the mode's own closing fields."""
    config_warnings = scheds.config.warnings if scheds.config is not None else []
    return document_tail(warnings=workload.warnings + config_warnings + scheds.snapshot.warnings, extra=extra)
