"""kubectl drain's part (k8s.io/kubectl pkg/drain, pkg/cmd/drain): the pods of
a node it lists, its filters in their order with their texts, and the lines
it prints. kschedx drains as `kubectl drain --ignore-daemonsets` does (the
flag everyone passes): DaemonSet pods stay.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..api.disruption import controller_of

DAEMON_SET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
EVICT_RETRY = "5s"  # EvictErrorRetryDelay

OKAY, SKIP, WARNING, ERROR = "Okay", "Skip", "Warning", "Error"


@dataclass
class DrainOptions:
    """`--drain` and kubectl drain's flags kschedx follows."""

    nodes: list[str]
    force: bool = False
    delete_emptydir_data: bool = False
    disable_eviction: bool = False

    def document(self) -> dict:
        return {"nodes": list(self.nodes), "force": self.force, "deleteEmptyDirData": self.delete_emptydir_data,
                "disableEviction": self.disable_eviction}


@dataclass
class Listed:
    """A pod of the node as kubectl's filters leave it (PodDelete): whether
    it is deleted (evicted), the last filter's status, and which filter."""

    pod: dict
    delete: bool
    reason: str = OKAY
    message: str = ""
    filter: str = ""  # DaemonSet, Mirror, LocalStorage, Unmanaged

    @property
    def key(self) -> str:
        meta = self.pod["metadata"]
        return f"{meta.get('namespace') or 'default'}/{meta['name']}"


def _finished(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def filter_pods(pods: list[dict], options: DrainOptions, daemon_set) -> list[Listed]:
    """filterPods with makeFilters' filters in order, each pod short-circuited
    at the first filter that does not delete it; the status kept is the last
    filter's (so a warning of an earlier filter is lost when a later one
    returns Okay, as kubectl loses it). `daemon_set(namespace, name)`: the
    DaemonSet's get: None when it exists, else the API's NotFound text.
    (skipDeletedFilter only acts with --skip-wait-for-delete-timeout, which
    kschedx does not take.)"""
    out = []
    for pod in pods:
        status = (True, OKAY, "", "")
        for f in (_daemon_set_filter, _mirror_filter, _local_storage_filter, _unreplicated_filter):
            status = f(pod, options, daemon_set)
            if not status[0]:
                break
        out.append(Listed(pod, *status))
    return out


def _daemon_set_filter(pod, options, daemon_set):
    ref = controller_of(pod)
    if ref is None or ref.get("kind") != "DaemonSet" or ref.get("apiVersion") != "apps/v1":
        return True, OKAY, "", ""
    if _finished(pod):
        return True, OKAY, "", ""
    missing = daemon_set((pod["metadata"].get("namespace") or "default"), ref.get("name"))
    if missing is not None:
        if options.force:
            return True, WARNING, missing, "DaemonSet"
        return False, ERROR, missing, "DaemonSet"
    return False, WARNING, DAEMON_SET_WARNING, "DaemonSet"


def _mirror_filter(pod, options, daemon_set):
    if MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {}):
        return False, SKIP, "", "Mirror"
    return True, OKAY, "", ""


def _local_storage_filter(pod, options, daemon_set):
    if not any(isinstance(v, dict) and v.get("emptyDir") is not None for v in (pod.get("spec") or {}).get("volumes") or ()):
        return True, OKAY, "", ""
    if _finished(pod):
        return True, OKAY, "", ""
    if not options.delete_emptydir_data:
        return False, ERROR, LOCAL_STORAGE_FATAL, "LocalStorage"
    return True, WARNING, LOCAL_STORAGE_WARNING, "LocalStorage"


def _unreplicated_filter(pod, options, daemon_set):
    if _finished(pod):
        return True, OKAY, "", ""
    if controller_of(pod) is not None:
        return True, OKAY, "", ""
    if options.force:
        return True, WARNING, UNMANAGED_WARNING, "Unmanaged"
    return False, ERROR, UNMANAGED_FATAL, "Unmanaged"


def _grouped(listed: list[Listed], reason: str) -> dict[str, list[str]]:
    """Messages and their pods, in the order first met (kubectl groups them
    through a Go map: its order of two messages varies from run to run)."""
    groups: dict[str, list[str]] = {}
    for item in listed:
        if item.reason == reason:
            groups.setdefault(item.message or ("unexpected error" if reason == ERROR else ""), []).append(item.key)
    return groups


def warnings_text(listed: list[Listed]) -> str:
    """PodDeleteList.Warnings: "message: pods; message: pods"."""
    return "; ".join(f"{msg}: {', '.join(pods)}" for msg, pods in _grouped(listed, WARNING).items())


def error_texts(listed: list[Listed]) -> list[str]:
    """PodDeleteList.errors: one "cannot delete <message>: <pods>" per message."""
    return [f"cannot delete {msg}: {', '.join(pods)}" for msg, pods in _grouped(listed, ERROR).items()]


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one error as itself, several in brackets."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def evicting_line(key: str) -> str:
    return f"evicting pod {key}"


def retry_line(namespace: str, name: str, message: str) -> str:
    return f'error when evicting pods/"{name}" -n "{namespace}" (will retry after {EVICT_RETRY}): {message}'


def failed_line(namespace: str, name: str, message: str) -> str:
    return f'error when evicting pods/"{name}" -n "{namespace}": {message}'


def timeout_line(namespace: str, name: str) -> str:
    return f'error when evicting pods/"{name}" -n "{namespace}": global timeout reached: <--timeout>'


def unable_line(node: str, error: str) -> str:
    return f'error: unable to drain node "{node}" due to error: {error}, continuing command...'


@dataclass
class PodReport:
    """One pod of a drained node, for the document."""

    key: str
    action: str  # Stays, Skipped, Refused, NotEvicted, Evicted, Deleted, Blocked, Failed
    reason: str = ""
    round: int | None = None
    budget: dict | None = None
    refusals: list = field(default_factory=list)
    replacement: dict | None = None
    lost: bool = False
    note: str = ""
    entry: object = None  # the run's Entry of its replacement (whatif/play.py)

    def document(self) -> dict:
        d = {"pod": self.key, "action": self.action}
        if self.reason:
            d["reason"] = self.reason
        if self.round is not None:
            d["round"] = self.round
        if self.budget is not None:
            d["budget"] = self.budget
        if self.refusals:
            d["refusals"] = self.refusals
        if self.replacement is not None:
            d["replacement"] = self.replacement
        if self.lost:
            d["lost"] = True
        if self.note:
            d["note"] = self.note
        return d
