"""What the CI report formats (junit, github, tap) say about one pod: pass or
fail exactly as the exit code counts it, and the words for either."""

from __future__ import annotations

from ..result.document import pod_fails, scheduler_text

__all__ = ["pod_fails", "outcome", "failure_message", "scheduler_text", "summary"]


def outcome(pod: dict) -> str:
    """One line for a pod that passes: where it goes."""
    pre = pod.get("preemption") or {}
    placed = pod.get("placedNode")
    if pod.get("preemptedBy"):
        return f"placed on {placed or pod.get('selectedNode')}, then preempted by {pod['preemptedBy']}"
    if pod["status"] == "Scheduled":
        replaces = f" (replaces {pod['replacementFor']['pod']})" if pod.get("replacementFor") else ""
        return f"Scheduled on {placed or pod.get('selectedNode')}{replaces}"
    if pod["status"] == "NoProfile":
        return pod.get("message") or "not served by this configuration's profiles"
    victims = len(pre.get("victims") or ())
    if placed:
        return f"placed on {placed} by preempting {victims} pod(s)"
    return f"schedulable by preemption: nominated {pre.get('nominatedNode')}, evicting {victims} pod(s)"


def failure_message(pod: dict) -> str:
    """The exact FailedScheduling message (its status when there is none)."""
    return pod.get("message") or pod["status"]


def summary(doc: dict) -> str:
    from .whatif import checks_summary

    failing = sum(1 for p in doc["pods"] if pod_fails(p))
    total = len(doc["pods"])
    text = f"{failing} of {total} pod(s) cannot be scheduled" if failing else f"all {total} pod(s) can be scheduled"
    return text + checks_summary(doc)
