"""What the CI report formats (junit, github, tap) say: one case per pod
given alone and one per workload explain judged as a whole, each passing or
failing exactly as the exit code counts it, and the words for either."""

from __future__ import annotations

from dataclasses import dataclass

from ..result.document import pod_fails, scheduler_text
from .fixes import fix_lines

__all__ = ["pod_fails", "outcome", "failure_message", "scheduler_text", "summary", "Case", "cases"]


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


@dataclass
class Case:
    """One test case: a pod given alone, or a workload whose replicas
    explain placed one after another (`pods`: its replicas' documents)."""

    name: str
    fails: bool
    status: str  # a failing case's type: its (first failing) pod's status
    message: str  # a failing case's: the FailedScheduling message
    text: str  # a passing case's: where it goes
    source: dict | None
    fixes: list[str] | None = None  # with --fix: one line per verified fix
    workload: bool = False
    pools: str = ""  # with --node-template: which node pools could take it

    @property
    def title(self) -> str:
        """The case's name and verdict, in a few words."""
        return f"{self.name} {self.status_words}"

    status_words: str = ""


def cases(doc: dict) -> list[Case]:
    """The document's cases in evaluation order: each pod without a
    `workload`, and each workload once, where its first replica is."""
    out: list[Case] = []
    groups: dict[tuple, list] = {}
    for pod in doc["pods"]:
        w = pod.get("workload")
        if w is None:
            fails = pod_fails(pod)
            out.append(Case(pod["pod"], fails, pod["status"], failure_message(pod) if fails else "",
                            "" if fails else outcome(pod), pod.get("source"),
                            fix_lines(pod) if fails and "fixes" in pod else None,
                            status_words=f"is {pod['status']}", pools=_pools(pod) if fails else ""))
            continue
        key = (w["kind"], w["namespace"], w["name"])
        if key not in groups:
            groups[key] = []
            out.append(key)  # filled in below
        groups[key].append(pod)
    return [c if isinstance(c, Case) else _workload_case(c, groups[c]) for c in out]


def _workload_case(key: tuple, pods: list[dict]) -> Case:
    kind, ns, name = key
    n = pods[0]["workload"]["replicas"]
    placed = [p for p in pods if p.get("placedNode")]
    failing = next((p for p in pods if pod_fails(p)), None)
    first = next((p for p in pods if not p.get("placedNode")), None)
    title = f"{kind} {ns}/{name}"
    source = pods[0].get("source")
    if failing is None and first is None:
        nodes = len({p["placedNode"] for p in placed})
        by = sum(1 for p in placed if p["status"] != "Scheduled")
        text = f"all {n} replica(s) placed, on {nodes} node(s)" + (f", {by} by preempting" if by else "")
        return Case(title, False, "Scheduled", "", text, source, workload=True,
                    status_words=f"places all {n} replica(s)")
    culprit = failing or first
    r = culprit["workload"]["replica"]
    message = (f"{len(placed)} of {n} replica(s) placed; replica {r} ({culprit['pod']}) is not: "
               f"{failure_message(culprit)}")
    return Case(title, failing is not None, culprit["status"], message, message, source,
                fix_lines(culprit) if "fixes" in culprit else None,
                workload=True, status_words=f"places {len(placed)} of {n} replica(s)", pools=_pools(culprit))


def _pools(pod: dict) -> str:
    if not pod.get("templates"):
        return ""
    from .whatif import templates_summary

    return templates_summary(pod)


def summary(doc: dict) -> str:
    from .whatif import checks_summary

    all_cases = cases(doc)
    workloads = [c for c in all_cases if c.workload]
    pods = [c for c in all_cases if not c.workload]
    parts = []
    if workloads:
        failing = sum(c.fails for c in workloads)
        parts.append(f"{failing} of {len(workloads)} workload(s) cannot place every replica" if failing
                     else f"all {len(workloads)} workload(s) place every replica")
    if pods or not workloads:
        failing = sum(c.fails for c in pods)
        parts.append(f"{failing} of {len(pods)} pod(s) cannot be scheduled" if failing
                     else f"all {len(pods)} pod(s) can be scheduled")
    return "; ".join(parts) + checks_summary(doc)
