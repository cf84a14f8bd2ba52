"""PodDisruptionBudgets as the API server and the disruption controller
compute them (not as preemption reads them: framework/preemption.py).

- The Eviction subresource (pkg/registry/core/pod/storage/eviction.go):
  which budgets guard a pod, whether an eviction is allowed, what a refusal
  says (HTTP 429, 403, 500 and their causes), and the status it writes.
- The disruption controller (pkg/controller/disruption/disruption.go):
  expectedPods, desiredHealthy, currentHealthy and disruptionsAllowed from
  the pods a budget selects and their controllers' scales, and failSafe.
- intstr.GetScaledValueFromIntOrPercent: percentages rounded up.

Statuses are plain dicts in the API's field names; nothing here reads a
clock: "now" is whatever the caller passes (disruptedPods' times).
"""

from __future__ import annotations

from dataclasses import dataclass

from .labels import SelectorError, label_selector

# The DisruptionAllowed condition (policy/v1) and its reasons.
DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS = "SufficientPods"
INSUFFICIENT_PODS = "InsufficientPods"
SYNC_FAILED = "SyncFailed"
ALWAYS_ALLOW = "AlwaysAllow"
# MaxDisruptedPodSize: the Eviction API refuses once this many evictions
# wait for the controller.
MAX_DISRUPTED_POD_SIZE = 2000

# The texts of the Eviction API's answers.
TOO_MANY_REQUESTS = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_BUDGETS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


def scaled_value(value, total: int, round_up: bool = True) -> int:
    """GetScaledValueFromIntOrPercent: an int as it is, "N%" of `total`
    (rounded up, as both budget fields are); ValueError with apimachinery's
    text for anything else."""
    if value is None:
        raise ValueError("nil value for IntOrString")
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError("invalid value for IntOrString: invalid type: neither int nor percentage")
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise ValueError("invalid value for IntOrString: invalid type: string is not a percentage")
    digits = value[:-1]
    try:
        percent = _atoi(digits)
    except ValueError:
        raise ValueError(f'invalid value for IntOrString: invalid value "{value}": strconv.Atoi: parsing '
                         f'"{digits}": invalid syntax') from None
    # math.Ceil(float64(p) * float64(total) / 100): exact in integers for
    # every value a budget holds.
    product = percent * total
    return -(-product // 100) if round_up else product // 100


def _atoi(text: str) -> int:
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        raise ValueError(text)
    return int(text)


def budget_selector(pdb: dict):
    """LabelSelectorAsSelector of the budget's selector, as the Eviction API
    and the disruption controller read it: nil selects nothing, {} every
    pod of the namespace; an invalid selector selects nothing."""
    try:
        return label_selector((pdb.get("spec") or {}).get("selector"))
    except SelectorError:
        return None


def selects(pdb: dict, pod: dict) -> bool:
    """Whether the budget guards the pod (same namespace, selector matches)."""
    meta = pod.get("metadata") or {}
    if (meta.get("namespace") or "default") != ((pdb.get("metadata") or {}).get("namespace") or "default"):
        return False
    sel = budget_selector(pdb)
    return sel is not None and sel.matches(meta.get("labels") or {})


def is_pod_ready(pod: dict) -> bool:
    """podutil.IsPodReady: the Ready condition is True."""
    for c in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def has_ready_condition(pod: dict) -> bool:
    return any(isinstance(c, dict) and c.get("type") == "Ready"
               for c in (pod.get("status") or {}).get("conditions") or ())


def controller_of(obj: dict) -> dict | None:
    """metav1.GetControllerOf: the owner reference with controller: true."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


# -- the disruption controller --------------------------------------------------------
class SyncError(Exception):
    """trySync failed: the controller then writes failSafe's status."""


def expected_pod_count(pdb: dict, pods: list[dict], scale_of) -> tuple[int, int]:
    """getExpectedPodCount: (expectedCount, desiredHealthy). `scale_of(ref,
    namespace)` gives (uid, replicas) of a pod's controller, or raises
    SyncError with the controller's text (getExpectedScale's finders)."""
    spec = pdb.get("spec") or {}
    max_unavailable = spec.get("maxUnavailable")
    min_available = spec.get("minAvailable")
    try:
        if max_unavailable is not None:
            expected = expected_scale(pods, scale_of)
            desired = max(0, expected - scaled_value(max_unavailable, expected))
            return expected, desired
        if min_available is not None:
            if isinstance(min_available, int) and not isinstance(min_available, bool):
                return len(pods), min_available
            expected = expected_scale(pods, scale_of)
            return expected, scaled_value(min_available, expected)
    except ValueError as exc:
        raise SyncError(str(exc)) from None
    return 0, 0


def expected_scale(pods: list[dict], scale_of) -> int:
    """getExpectedScale: the sum of the scales of the pods' controllers, each
    counted once; pods without a controller are left out (the controller
    warns about them)."""
    scales: dict[str, int] = {}
    for pod in pods:
        ref = controller_of(pod)
        if ref is None:
            continue
        if ref.get("uid") in scales:
            continue
        found = scale_of(ref, (pod.get("metadata") or {}).get("namespace") or "default")
        if found is None:
            raise SyncError(f'found no controllers for pod "{pod["metadata"]["name"]}"')
        uid, replicas = found
        scales[uid] = replicas
    return sum(scales.values())


def controller_status(pdb: dict, pods: list[dict], scale_of, *, ready) -> dict:
    """The status the controller's sync writes: `pods` are the pods the
    budget selects (as the controller's pod lister lists them), `ready(pod)`
    whether a pod is Ready. Entries of disruptedPods are kept for pods not
    yet terminating (buildDisruptedPodMap; the run has no clock, so none
    is older than DeletionTimeout). A failed sync is failSafe's status."""
    meta = pdb.get("metadata") or {}
    old = pdb.get("status") or {}
    try:
        expected, desired = expected_pod_count(pdb, pods, scale_of)
    except SyncError as exc:
        return fail_safe(pdb, str(exc))
    disrupted_before = old.get("disruptedPods") or {}
    disrupted = {}
    for pod in pods:
        pmeta = pod.get("metadata") or {}
        if pmeta.get("deletionTimestamp") is not None:
            continue
        if pmeta.get("name") in disrupted_before:
            disrupted[pmeta["name"]] = disrupted_before[pmeta["name"]]
    healthy = 0
    for pod in pods:
        pmeta = pod.get("metadata") or {}
        if pmeta.get("deletionTimestamp") is not None or pmeta.get("name") in disrupted:
            continue
        if ready(pod):
            healthy += 1
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    status = {
        "observedGeneration": meta.get("generation") or 0,
        "disruptedPods": disrupted,
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "conditions": [dict(c) for c in old.get("conditions") or () if isinstance(c, dict)],
    }
    _set_allowed_condition(status)
    return status


def fail_safe(pdb: dict, message: str) -> dict:
    """failSafe: disruptionsAllowed 0 and DisruptionAllowed False, SyncFailed."""
    status = dict(pdb.get("status") or {})
    status["disruptionsAllowed"] = 0
    _set_condition(status, {"type": DISRUPTION_ALLOWED, "status": "False", "reason": SYNC_FAILED,
                            "message": message})
    return status


def _set_allowed_condition(status: dict) -> None:
    """UpdateDisruptionAllowedCondition."""
    if status.get("disruptionsAllowed", 0) > 0:
        _set_condition(status, {"type": DISRUPTION_ALLOWED, "status": "True", "reason": SUFFICIENT_PODS,
                                "message": ""})
    else:
        _set_condition(status, {"type": DISRUPTION_ALLOWED, "status": "False", "reason": INSUFFICIENT_PODS,
                                "message": ""})


def _set_condition(status: dict, condition: dict) -> None:
    """apimeta.SetStatusCondition, without times (the run has no clock)."""
    conditions = [dict(c) for c in status.get("conditions") or () if isinstance(c, dict)]
    for c in conditions:
        if c.get("type") == condition["type"]:
            c.update(status=condition["status"], reason=condition["reason"], message=condition["message"])
            break
    else:
        conditions.append(dict(condition))
    status["conditions"] = conditions


def _condition(status: dict, kind: str) -> dict | None:
    for c in status.get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


# -- the Eviction subresource ------------------------------------------------------------
@dataclass
class Eviction:
    """What the API server answers one eviction.

    outcome: "Evicted" (the budget's status changed: `status`), "Deleted"
    (deleted without touching a budget: `why`), or "Refused" (`code` 429,
    403 or 500, `message` the status' message, `cause` its
    DisruptionBudget cause)."""

    outcome: str
    pdb: str | None = None  # "namespace/name" of the budget read
    why: str = ""
    code: int = 0
    message: str = ""
    cause: str = ""
    status: dict | None = None  # the budget's status as the API server writes it

    @property
    def refused(self) -> bool:
        return self.outcome == "Refused"


def can_ignore_budget(pod: dict) -> bool:
    """canIgnorePDB: a pod Succeeded, Failed or Pending, or already being
    deleted, is deleted without reading any budget."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or (pod.get("metadata") or {}).get(
        "deletionTimestamp") is not None


def evict(pod: dict, budgets: list[tuple[str, dict]], *, ready: bool) -> Eviction:
    """The Eviction API's Create for `pod`, given the budgets of its
    namespace [(key, PodDisruptionBudget with its current status)] and
    whether the pod is Ready. Budgets are not changed: an allowed eviction
    returns the status the API server writes."""
    if can_ignore_budget(pod):
        phase = (pod.get("status") or {}).get("phase")
        why = "already terminating" if (pod.get("metadata") or {}).get("deletionTimestamp") is not None \
            else f"phase {phase}"
        return Eviction("Deleted", why=f"{why}: no budget is read")
    matching = [(key, pdb) for key, pdb in budgets if selects(pdb, pod)]
    if len(matching) > 1:
        return Eviction("Refused", code=500, message=MULTIPLE_BUDGETS,
                        pdb=", ".join(key for key, _ in matching))
    if not matching:
        return Eviction("Deleted", why="no PodDisruptionBudget selects it")
    key, pdb = matching[0]
    spec = pdb.get("spec") or {}
    status = pdb.get("status") or {}
    if not ready:
        if spec.get("unhealthyPodEvictionPolicy") == ALWAYS_ALLOW:
            return Eviction("Deleted", pdb=key, why="not Ready, and the budget's unhealthyPodEvictionPolicy "
                                                    "is AlwaysAllow")
        current, desired = status.get("currentHealthy") or 0, status.get("desiredHealthy") or 0
        if current >= desired > 0:
            return Eviction("Deleted", pdb=key, why=f"not Ready, and the budget has {current} healthy pod(s) "
                                                    f"of the {desired} it needs")
    return check_and_decrement(key, pdb, (pod.get("metadata") or {}).get("name"))


def check_and_decrement(key: str, pdb: dict, pod_name: str, now: str = "") -> Eviction:
    """checkAndDecrement: the budget's answer, and on success its status with
    one disruption fewer and the pod in disruptedPods."""
    meta = pdb.get("metadata") or {}
    name = meta.get("name")
    status = pdb.get("status") or {}
    allowed = status.get("disruptionsAllowed") or 0
    if (status.get("observedGeneration") or 0) < (meta.get("generation") or 0):
        return Eviction("Refused", pdb=key, code=429, message=TOO_MANY_REQUESTS,
                        cause=f"The disruption budget {name} is still being processed by the server.")
    if allowed < 0:
        return Eviction("Refused", pdb=key, code=403,
                        message=f'poddisruptionbudget.policy "{name}" is forbidden: pdb disruptions allowed is '
                                "negative",
                        cause=f"The disruption budget {name} does not allow evicting pods currently: pdb "
                              "disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
        return Eviction("Refused", pdb=key, code=403,
                        message=f'poddisruptionbudget.policy "{name}" is forbidden: DisruptedPods map too big - '
                                "too many evictions not confirmed by PDB controller",
                        cause=f"The disruption budget {name} does not allow evicting pods currently: too many "
                              "pending evictions not confirmed by PDB controller")
    if allowed == 0:
        return Eviction("Refused", pdb=key, code=429, message=TOO_MANY_REQUESTS, cause=refusal_cause(name, status))
    new = dict(status)
    new["disruptionsAllowed"] = allowed - 1
    if new["disruptionsAllowed"] == 0:
        _set_allowed_condition(new)
    new["disruptedPods"] = dict(status.get("disruptedPods") or {}, **{pod_name: now})
    return Eviction("Evicted", pdb=key, status=new)


def refusal_cause(name: str, status: dict) -> str:
    """The DisruptionBudget cause of a 429 when no disruption is allowed:
    the first of checkAndDecrement's four texts that applies."""
    condition = _condition(status, DISRUPTION_ALLOWED)
    false_with_message = condition is not None and condition.get("status") == "False" and condition.get("message")
    if false_with_message and condition.get("reason") == SYNC_FAILED:
        return (f"The disruption budget {name} does not allow evicting pods currently because it failed sync: "
                f"{condition['message']}")
    current, desired = status.get("currentHealthy") or 0, status.get("desiredHealthy") or 0
    if current <= desired:
        return f"The disruption budget {name} needs {desired} healthy pods and has {current} currently"
    if false_with_message:
        return (f"The disruption budget {name} does not allow evicting pods currently ({condition.get('reason')}): "
                f"{condition['message']}")
    return f"The disruption budget {name} does not allow evicting pods currently"
