"""One node's record in a pod's result (result-schema.md `nodes[]`), built
from the runner's NodeResult: the reference that node_dicts.py and
node_text.py reproduce faster."""

from __future__ import annotations

from ..framework.records import NodeResult
from ..framework.status import Status


def status_dict(st: Status, plugin: str | None = None) -> dict:
    d = {"plugin": plugin if plugin is not None else st.plugin, "code": st.code.label, "reasons": list(st.reasons)}
    if st.details:
        d["details"] = st.details
    return d


def node_dict(nr: NodeResult) -> dict:
    filters = []
    for plugin, status, details in nr.filter_rows():
        if status is None:
            fd = {"plugin": plugin, "code": "Success", "reasons": []}
            if details:
                fd["details"] = details
            filters.append(fd)
        else:
            filters.append(status_dict(status, plugin))
    if nr.extender_filters:
        filters.extend(_extender_filter(name, status, details) for name, status, details in nr.extender_filters)
    d = {
        "name": nr.name,
        "feasible": nr.feasible,
        "filters": filters,
        "firstFailure": nr.first_failure,
    }
    if nr.status is not None:
        d["status"] = {"code": nr.status.code.label, "plugin": nr.status.plugin, "reasons": list(nr.status.reasons)}
    rows = nr.score_rows()
    if rows is not None:
        scores = []
        for plugin, raw, normalized, weight, skipped, details in rows:
            sd = {
                "plugin": plugin,
                "raw": raw,
                "normalized": normalized,
                "weight": weight,
                "weighted": normalized * weight,
            }
            if skipped:
                sd["skipped"] = True
            if details:
                sd["details"] = details
            scores.append(sd)
        for name, raw, normalized, weight in nr.extender_scores or ():
            scores.append({"plugin": name, "raw": raw, "normalized": normalized, "weight": weight,
                           "weighted": normalized * weight, "extender": True})
        d["scores"] = scores
        d["totalScore"] = nr.total
    if nr.preemption is not None:
        d["preemption"] = nr.preemption
    return d


def _extender_filter(name: str, status: Status | None, details) -> dict:
    """An extender's filter verdict, shaped like a plugin's and marked."""
    fd = {"plugin": name, "code": "Success", "reasons": []} if status is None else status_dict(status, name)
    fd["extender"] = True
    if details:
        fd["details"] = details
    return fd
