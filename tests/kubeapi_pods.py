"""Pod subresources of the test API server, with kube-apiserver's semantics.

binding  — pkg/registry/core/pod/storage BindingREST (UID precondition, no node check)
eviction — pkg/registry/core/pod/storage/eviction.go (PDB check, graceful delete)
status   — pods/status PATCH (merge / strategic merge) and PUT
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import kubeapi_status as st
from kubeapi_store import ObjectStore, now_rfc3339

# ---- label selectors (for PodDisruptionBudget.spec.selector) -------------------------


def selector_matches(selector: dict | None, labels: dict) -> bool:
    """metav1.LabelSelector semantics; a nil or empty selector matches nothing here,
    as the eviction handler treats it."""
    if not selector:
        return False
    match_labels = selector.get("matchLabels") or {}
    exprs = selector.get("matchExpressions") or []
    if not match_labels and not exprs:
        return False
    for k, v in match_labels.items():
        if labels.get(k) != v:
            return False
    for e in exprs:
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


# ---- patches -----------------------------------------------------------------------

# Strategic merge patch list merge keys for the fields of PodStatus that are lists.
_MERGE_KEYS = {"conditions": "type", "containerStatuses": "name",
               "initContainerStatuses": "name", "ephemeralContainerStatuses": "name",
               "podIPs": "ip", "hostIPs": "ip", "resourceClaimStatuses": "name"}


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


def strategic_merge_patch(target, patch):
    """The subset of strategic merge patch that pod status patches use."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$"):  # $setElementOrder/..., $retainKeys, $patch: ordering hints
            continue
        if v is None:
            result.pop(k, None)
        elif k in _MERGE_KEYS and isinstance(v, list):
            result[k] = _merge_list(result.get(k) or [], v, _MERGE_KEYS[k])
        else:
            result[k] = strategic_merge_patch(result.get(k), v)
    return result


def _merge_list(current: list, patch: list, key: str) -> list:
    out = [dict(x) for x in current]
    for item in patch:
        if not isinstance(item, dict):
            continue
        idx = next((i for i, x in enumerate(out) if x.get(key) == item.get(key)), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
        elif idx is None:
            out.append({k: v for k, v in item.items() if v is not None})
        else:
            out[idx] = strategic_merge_patch(out[idx], item)
    return out


# ---- pod helpers ---------------------------------------------------------------------


def _is_ready(pod: dict) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def _set_pod_scheduled(pod: dict) -> None:
    # UpdatePodCondition: replaces the condition, keeps the transition time if unchanged.
    status = pod.setdefault("status", {})
    conds = status.setdefault("conditions", [])
    new = {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
           "lastTransitionTime": now_rfc3339()}
    for i, c in enumerate(conds):
        if c.get("type") == "PodScheduled":
            if c.get("status") == "True" and c.get("lastTransitionTime"):
                new["lastTransitionTime"] = c["lastTransitionTime"]
            conds[i] = new
            return
    conds.append(new)


# ---- binding -------------------------------------------------------------------------


def bind(store: ObjectStore, namespace: str, name: str, body: dict) -> tuple[int, bytes]:
    meta = body.get("metadata") or {}
    if meta.get("name") != name:
        raise st.bad_request("name in URL does not match name in Binding object")
    target = body.get("target") or {}
    if target.get("kind") not in (None, "", "Node"):
        raise st.plain_error(500, f'target.kind: Unsupported value: "{target.get("kind")}": '
                                  'supported values: "Node"')
    if not target.get("name"):
        raise st.plain_error(500, "target.name: Required value")
    want_uid = meta.get("uid") or ""
    annotations = meta.get("annotations") or {}

    def change(pod):
        uid = pod["metadata"].get("uid", "")
        if want_uid and want_uid != uid:
            # storage.Preconditions.Check -> InvalidObjError -> InterpretUpdateError: Conflict on pods
            raise st.conflict(
                "pods", "", name,
                f"StorageError: invalid object, Code: 4, Key: /registry/pods/{namespace}/{name}, "
                f"ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in "
                f"precondition: {want_uid}, UID in object meta: {uid}")
        if pod["metadata"].get("deletionTimestamp"):
            raise st.conflict("pods/binding", "", name,
                              f"pod {name} is being deleted, cannot be assigned to a host")
        current = (pod.get("spec") or {}).get("nodeName") or ""
        if current:
            raise st.conflict("pods/binding", "", name,
                              f'pod {name} is already assigned to node "{current}"')
        pod.setdefault("spec", {})["nodeName"] = target["name"]
        if annotations:
            pod["metadata"].setdefault("annotations", {}).update(annotations)
        _set_pod_scheduled(pod)
        return pod

    if store.update("Pod", namespace, name, change) is None:
        raise st.not_found("pods", "", name)
    return 201, st.success_body(201)


# ---- deletion and eviction -----------------------------------------------------------


def delete_pod(store: ObjectStore, namespace: str, name: str, grace: int | None,
               removal_delay: float, preconditions: dict | None = None) -> dict | None:
    """Graceful deletion: a pod on a node stays Terminating until its kubelet confirms
    (here: `removal_delay` seconds later); unscheduled or terminal pods go at once."""
    pod = store.get("Pod", namespace, name)
    if pod is None:
        return None
    want_uid = (preconditions or {}).get("uid")
    if want_uid and want_uid != pod["metadata"].get("uid"):
        # rest.BeforeDelete's precondition check
        raise st.conflict("pods", "", name, f"Precondition failed: UID in precondition: {want_uid}, "
                                            f"UID in object meta: {pod['metadata'].get('uid')}")
    spec, phase = pod.get("spec") or {}, (pod.get("status") or {}).get("phase")
    if grace is None:
        grace = spec.get("terminationGracePeriodSeconds", 30)
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed") or grace == 0:
        store.delete("Pod", namespace, name)
        return pod

    def change(p):
        if not p["metadata"].get("deletionTimestamp"):
            when = datetime.now(timezone.utc) + timedelta(seconds=grace)
            p["metadata"]["deletionTimestamp"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
            p["metadata"]["deletionGracePeriodSeconds"] = grace
        return p

    pod = store.update("Pod", namespace, name, change)
    store.remove_later("Pod", f"{namespace}/{name}", removal_delay)
    return pod


def _can_ignore_pdb(pod: dict) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def evict(store: ObjectStore, namespace: str, name: str, body: dict,
          removal_delay: float) -> tuple[int, bytes]:
    meta = body.get("metadata") or {}
    if meta.get("name") != name:
        raise st.bad_request("name in URL does not match name in Eviction object")
    options = body.get("deleteOptions") or {}
    grace = options.get("gracePeriodSeconds")
    with store.lock:
        pod = store.get("Pod", namespace, name)
        if pod is None:
            raise st.not_found("pods", "", name)
        if not _can_ignore_pdb(pod):
            labels = pod["metadata"].get("labels") or {}
            pdbs = [p for p in store.objects("PodDisruptionBudget", namespace)
                    if selector_matches((p.get("spec") or {}).get("selector"), labels)]
            if len(pdbs) > 1:
                return 500, st.status_body(
                    500, "", "This pod has more than one PodDisruptionBudget, which the "
                             "eviction subresource does not support.")
            if pdbs:
                _check_and_decrement(store, pdbs[0], pod)
        delete_pod(store, namespace, name, grace, removal_delay, options.get("preconditions"))
    return 201, st.success_body(201)


def _check_and_decrement(store: ObjectStore, pdb: dict, pod: dict) -> None:
    spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
    pdb_name = pdb["metadata"]["name"]
    if not _is_ready(pod):
        policy = spec.get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
        healthy, desired = status.get("currentHealthy", 0), status.get("desiredHealthy", 0)
        if policy == "AlwaysAllow" or (healthy >= desired and desired > 0):
            return
    if status.get("observedGeneration", 0) < pdb["metadata"].get("generation", 0):
        raise st.too_many_requests(
            10, "Cannot evict pod as it would violate the pod's disruption budget.",
            [{"reason": "DisruptionBudget",
              "message": f"The disruption budget {pdb_name} is still being processed by the server."}])
    allowed = status.get("disruptionsAllowed", 0)
    if allowed < 0:
        raise st.ApiError(403, "Forbidden", f'poddisruptionbudget.policy "{pdb_name}" is forbidden: '
                                            "pdb disruptions allowed is negative",
                          {"name": pdb_name, "group": "policy", "kind": "poddisruptionbudget"})
    if allowed == 0:
        raise st.too_many_requests(
            0, "Cannot evict pod as it would violate the pod's disruption budget.",
            [{"reason": "DisruptionBudget",
              "message": f"The disruption budget {pdb_name} needs {status.get('desiredHealthy', 0)} "
                         f"healthy pods and has {status.get('currentHealthy', 0)} currently"}])

    def change(p):
        s = p.setdefault("status", {})
        s["disruptionsAllowed"] = s.get("disruptionsAllowed", 0) - 1
        s.setdefault("disruptedPods", {})[pod["metadata"]["name"]] = now_rfc3339()
        return p

    store.update("PodDisruptionBudget", pdb["metadata"]["namespace"], pdb_name, change)


# ---- pods/status ---------------------------------------------------------------------

_PATCH_TYPES = {
    "application/merge-patch+json": merge_patch,
    "application/strategic-merge-patch+json": strategic_merge_patch,
}


def patch_status(store: ObjectStore, namespace: str, name: str, content_type: str,
                 body: bytes) -> tuple[int, dict]:
    apply = _PATCH_TYPES.get(content_type.split(";")[0].strip())
    if apply is None:
        raise st.ApiError(415, "UnsupportedMediaType",
                          f'the body of the request was in an unknown format - accepted media '
                          f'types include: {", ".join(_PATCH_TYPES)}')
    try:
        patch = json.loads(body)
    except ValueError as e:
        raise st.bad_request(f"error decoding patch: {e}") from None

    rv = (patch.get("metadata") or {}).get("resourceVersion")
    return _write_status(store, namespace, name, rv, lambda pod: apply(pod, patch).get("status"))


def put_status(store: ObjectStore, namespace: str, name: str, body: bytes) -> tuple[int, dict]:
    try:
        new = json.loads(body)
    except ValueError as e:
        raise st.bad_request(f"error decoding body: {e}") from None
    if (new.get("metadata") or {}).get("name") != name:
        raise st.bad_request("the name of the object (%s) does not match the name on the URL (%s)"
                             % ((new.get("metadata") or {}).get("name"), name))

    rv = (new.get("metadata") or {}).get("resourceVersion")
    return _write_status(store, namespace, name, rv, lambda pod: new.get("status"))


def _write_status(store: ObjectStore, namespace: str, name: str, rv, new_status) -> tuple[int, dict]:
    """The status subresource: the stored pod keeps everything but its status,
    which becomes new_status(stored pod); a stale resourceVersion conflicts."""

    def change(pod):
        status = new_status(pod)
        if rv and rv != pod["metadata"].get("resourceVersion"):
            raise _modified(name)
        pod["status"] = status or {}
        return pod

    pod = store.update("Pod", namespace, name, change)
    if pod is None:
        raise st.not_found("pods", "", name)
    return 200, pod


def _modified(name: str) -> st.ApiError:
    return st.conflict("pods", "", name, "the object has been modified; please apply your "
                                         "changes to the latest version and try again")
