"""The pod a controller creates in place of one that was evicted or deleted.

- ReplicaSet, ReplicationController (and a Deployment's pods, through their
  ReplicaSet): a new pod named from generateName `<controller>-`
  (getPodsPrefix), created as soon as the old pod terminates (it no longer
  counts as active: FilterActivePods).
- StatefulSet: a pod of the same name, ordinal and claims, created once the
  old one is gone (a terminating pod still holds its ordinal).
- Job: `<job>-` (Indexed: `<job>-<index>-`, podGenerateNameWithIndex), while
  the old one terminates unless podReplacementPolicy is Failed.
- Any other controller: kubectl drain evicts its pods all the same; the pod
  is made as a ReplicaSet would make it (whether that controller does is its
  own business: the result says so).

The new pod is the old one's object with a new identity ("pod first"): it
carries what admission (webhooks' sidecars, LimitRanger defaults, the
resolved priority) made of the controller's template when the old pod was
created. Its generated name is cut as the API server cuts it (58
characters, then 5 of utilrand's alphabet) with a suffix drawn from the
evicted pod's name, so a rerun names it the same.
"""

from __future__ import annotations

import copy

from .admission import uid_of
from .workloads import generated_name, indexed_pods_prefix, pods_prefix

JOB_INDEX = "batch.kubernetes.io/job-completion-index"

# When the controller creates the new pod (see the module's doc).
WHEN_TERMINATING = "terminating"  # as soon as the old pod has a deletionTimestamp
WHEN_GONE = "gone"  # once the old pod is deleted


def controller_ref(pod: dict) -> dict | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def job_replacement_policy(job: dict | None) -> str:
    """podReplacementPolicy with its default: Failed when a podFailurePolicy
    is set, else TerminatingOrFailed (batch/v1 defaults)."""
    spec = (job or {}).get("spec") or {}
    policy = spec.get("podReplacementPolicy")
    if policy:
        return policy
    return "Failed" if spec.get("podFailurePolicy") else "TerminatingOrFailed"


def when_created(kind: str, job: dict | None = None) -> str:
    if kind == "StatefulSet":
        return WHEN_GONE
    if kind == "Job" and job_replacement_policy(job) == "Failed":
        return WHEN_GONE
    return WHEN_TERMINATING


def generate_name_of(pod: dict, ref: dict) -> str:
    """The generateName the controller gives its new pod."""
    kind, name = ref.get("kind"), ref.get("name") or ""
    if kind == "Job":
        index = ((pod.get("metadata") or {}).get("annotations") or {}).get(JOB_INDEX)
        if index is not None and str(index).isdigit():
            return indexed_pods_prefix(name, int(index))
    return pods_prefix(name)


def replacement_pod(evicted: dict, ref: dict, free, generation: int = 1) -> dict:
    """The controller's new pod for `evicted` (ref: its controller
    reference); `free(namespace, name)` says whether a generated name is
    free; `generation`: how many times this pod's place was taken again in
    the run (a fresh uid each time)."""
    pod = copy.deepcopy(evicted)
    meta = pod["metadata"]
    ns = meta.get("namespace") or "default"
    old_name = meta["name"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                "generateName", "managedFields"):
        meta.pop(key, None)
    if ref.get("kind") == "StatefulSet":
        name = old_name
    else:
        base = generate_name_of(evicted, ref)
        meta["generateName"] = base
        name = generated_name(base, f"{ns}/{base}/replaces/{old_name}", lambda n: free(ns, n))
    meta["name"] = name
    meta["uid"] = uid_of(f"{ns}/{name}" if name != old_name else f"{ns}/{name}#{generation}")
    spec = pod["spec"]
    spec.pop("nodeName", None)
    pod["status"] = {"phase": "Pending"}
    return pod
