"""The SchedulingResult document (result-schema.md): the one thing renderers,
`bind` and tests consume. Fields are only ever added, never renamed."""

from __future__ import annotations

from ..features import Features, default_features
from ..framework.records import PodResult
from .node_record import status_dict
from ..util.gc_policy import builds_long_lived
from ..api.quantity import BINARY_SI, Quantity
from ..api.resources import CPU, pod_requests

API_VERSION = "kschedx/v1"


def quantity_text(resource: str, milli: int) -> str:
    """A milli-unit amount the way a person writes it: 250m, 2, 512Mi, 1G."""
    if resource == CPU or milli % 1000:
        return str(Quantity.from_milli(milli))
    value = milli // 1000
    return min(str(Quantity.from_int(value, BINARY_SI)), str(Quantity.from_int(value)), key=len)


def requests_dict(pi) -> dict:
    """The pod's effective requests (PodRequests: init containers, sidecars,
    pod-level resources, overhead), which is what NodeResourcesFit compares."""
    return {name: quantity_text(name, m) for name, m in pod_requests(pi.pod).items() if m}


def pod_dict(r: PodResult, mode: str, nodes=None, encoder=None) -> dict:
    """`nodes`: a NodeChoice (--nodes) of the node records to write; every
    other field covers every node. `encoder`: a sink's node_records_encoder,
    which makes `nodes` from the records in place of node_dict's dicts."""
    from .node_dicts import node_dicts

    pi = r.pod_info
    d = {
        "pod": pi.key,
        "uid": pi.uid,
        "priority": pi.priority,
        "requests": requests_dict(pi),
        "schedulerName": pi.spec.get("schedulerName"),
        "status": r.status,
        "selectedNode": r.selected_node,
        "topNodes": list(r.top_nodes),
        "message": r.message,
        "preFilter": [status_dict(s) for s in r.pre_filter],
        "nodeCounts": r.node_counts(),
        "filterSummary": r.filter_summary(),
        "nodes": (node_dicts(r.chosen_nodes(nodes)) if encoder is None else encoder(r.chosen_nodes(nodes))),
        "preemption": r.preemption,
    }
    if r.gate is not None:
        d["gate"] = status_dict(r.gate)
        d["preFilter"] = []
    if r.pre_filter_result is not None:
        d["preFilterResult"] = r.pre_filter_result
    records = getattr(r, "extenders", None)
    notes = list(r.notes) + (records.notes if records is not None else [])
    if notes:
        d["notes"] = notes
    if records is not None and records.calls:
        d["extenders"] = records.document()
    if getattr(r, "sampling", None) is not None:
        d["sampling"] = r.sampling
    if mode == "simulate":
        d["placedNode"] = getattr(r, "placed_node", None)
        if getattr(r, "preempted_by", None):
            # Placed earlier in the run, then evicted by this preemptor.
            d["preemptedBy"] = r.preempted_by
    return d


def version_fields(features: Features | None) -> dict:
    """The head's `reference` (the release reproduced), `kubeVersion` (its
    minor) and `featureGates` (the gates set otherwise than the version's
    defaults, by name; {} when none is)."""
    features = features or default_features()
    return {"reference": {"kubernetes": features.reference}, "kubeVersion": features.version,
            "featureGates": features.changed_gates}


def scheduler_text(doc: dict) -> str:
    """The kube-scheduler a result reproduces, as every output format names
    it: "kube-scheduler v1.37.2", with the feature gates set otherwise than
    the version's defaults ("" for a document that does not say)."""
    release = (doc.get("reference") or {}).get("kubernetes") or doc.get("kubeVersion")
    if not release:
        return ""
    text = f"kube-scheduler {release}"
    gates = doc.get("featureGates") or {}
    if gates:
        text += " with feature gates " + ",".join(f"{k}={'true' if v else 'false'}" for k, v in gates.items())
    return text


def document_head(*, mode: str, tie_break: str, profile: str, not_evaluated: list[str],
                  node_detail: str | None = None, features: Features | None = None) -> dict:
    """Every key of the document before `pods`, in document order.
    `node_detail`: the --nodes choice, when it is not `all`; `features`: the
    version and gates reproduced (the newest version's defaults when None)."""
    head = {
        "apiVersion": API_VERSION,
        "kind": "SchedulingResult",
        "mode": mode,
        "profile": profile,
        "tieBreak": tie_break,
        **version_fields(features),
        "notEvaluated": list(not_evaluated),
    }
    if node_detail is not None:
        head["nodeDetail"] = node_detail
    return head


def document_tail(*, warnings: list[str] | None = None, extra: dict | None = None) -> dict:
    """Every key of the document after `pods`, in document order."""
    tail = {}
    if warnings:
        tail["warnings"] = list(warnings)
    if extra:
        tail.update(extra)
    return tail


def add_source(pod: dict, sources: dict[str, dict] | None) -> dict:
    """Where the pod was read from (file, line), for CI annotations: the
    pod's last key."""
    if sources and pod["uid"] in sources:
        pod["source"] = dict(sources[pod["uid"]])
    return pod


@builds_long_lived
def build_document(results: list[PodResult], *, mode: str, tie_break: str, profile: str,
                   not_evaluated: list[str], warnings: list[str] | None = None, extra: dict | None = None,
                   sources: dict[str, dict] | None = None, features: Features | None = None) -> dict:
    doc = document_head(mode=mode, tie_break=tie_break, profile=profile, not_evaluated=not_evaluated,
                        features=features)
    doc["pods"] = [add_source(pod_dict(r, mode), sources) for r in results]
    doc.update(document_tail(warnings=warnings, extra=extra))
    return doc


def pod_fails(pod: dict) -> bool:
    """A pod that is not schedulable, directly or by preempting: what makes
    the exit code 1, and a failure in the CI report formats."""
    if pod["status"] == "Scheduled":
        return False
    if pod["status"] == "NoProfile":
        # Another scheduler's pod: a finding only when it was asked for.
        return bool(pod.get("askedByName"))
    if pod.get("workload") is not None and pod["status"] == "Unschedulable":
        # A replica explain placed in sequence: it fits when it was placed
        # (by preemption: the preemptor placed on its node after the victims went).
        return not pod.get("placedNode")
    pre = pod.get("preemption") or {}
    return not (pod["status"] == "Unschedulable" and pre.get("nominatedNode"))


def exit_code(doc: dict) -> int:
    """0 when every pod is schedulable (directly or by preempting), else 1."""
    return 1 if any(pod_fails(p) for p in doc["pods"]) else 0


class Tally:
    """What a streamed run still knows about pods already let go: how many
    of each outcome, and the exit code."""

    def __init__(self):
        self.pods = 0
        self.statuses: dict[str, int] = {}
        self.failing = 0

    def add(self, p: dict) -> None:
        self.pods += 1
        self.statuses[p["status"]] = self.statuses.get(p["status"], 0) + 1
        self.failing += pod_fails(p)

    @property
    def exit_code(self) -> int:
        return 1 if self.failing else 0
