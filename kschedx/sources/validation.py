"""The API server's validation of the fields the scheduler reads: a pod's
spec and labels, a node's taints and labels, and what it reads of other
kinds (labels, PDB selectors, PersistentVolume node affinity, PriorityClass
values).

A pod the API server refuses never reaches kube-scheduler, so evaluating it
would answer a question no cluster can ask: an unknown selector operator, a
spread constraint with maxSkew 0, an affinity term without topologyKey. Each
is reported as one InputError naming the field, in the API server's terms.
shape.py has already checked the types; this checks values.

Only what is present is visited (no cost for pods without affinity, spread
or tolerations: most of a 150,000-pod snapshot).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..api.labels import _valid_value, label_selector
from ..api.quantity import QuantityError, parse_quantity
from ..api.resources import _DNS1123_SUBDOMAIN, _is_qualified_name, is_extended_resource_name, is_native_resource
from ..api.taints import decimal_int64
from ..util.errors import InputError

NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
TOLERATION_OPERATORS = ("Equal", "Exists")
# Lt and Gt: stored where the API server has TaintTolerationComparisonOperators
# on, so a cluster can hold them whatever kube-scheduler does with them.
COMPARISON_OPERATORS = ("Lt", "Gt")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES = ("Honor", "Ignore")


class _Invalid(Exception):
    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message


def _unsupported(field: str, value, supported) -> _Invalid:
    return _Invalid(field, f"unsupported value {value!r}: supported values: {', '.join(supported)}")


def validate_pod_spec(spec: dict, origin, ref: str, prefix: str = "") -> None:
    """`prefix`: where the spec lies in its object, for a workload's pod
    template ("spec.template."): the error names the field the user wrote."""
    try:
        _tolerations(spec.get("tolerations"))
        selector = spec.get("nodeSelector")
        if selector:
            _node_selector(selector)
        affinity = spec.get("affinity")
        if affinity:
            _affinity(affinity)
        spread = spec.get("topologySpreadConstraints")
        if spread:
            _spread_constraints(spread)
        _resource_names(spec)
        _containers(spec)
        gates = spec.get("schedulingGates")
        if gates:
            _scheduling_gates(gates)
    except _Invalid as e:
        raise InputError(e.message, source=origin, obj=ref, field=prefix + e.field) from None


def labels_error(labels) -> tuple[str, str] | None:
    """ValidateLabels on an object's own labels, as (field, message), or
    None: what other pods' selectors and a node's affinity read. A label the
    API server never stores could otherwise be matched, or fail to be, by a
    selector."""
    try:
        _labels(labels, "metadata.labels", strings_only=True)
    except _Invalid as e:
        return e.field, e.message
    return None


# Workloads whose controller finds its pods by spec.selector, with the word
# the API server's "empty selector" message uses for each (a ReplicaSet's
# says deployment too).
_SELECTING_KINDS = {"Deployment": "deployment", "ReplicaSet": "deployment", "StatefulSet": "statefulset",
                    "DaemonSet": "daemonset"}
_MISMATCH = "`selector` does not match template `labels`"


def workload_selector_error(obj: dict) -> tuple[str, str] | None:
    """The API server's rules for the selector of a workload, as (field,
    message), or None. A controller owns the pods its selector matches: one
    that misses its own template's labels would create pods forever, so
    creating or updating such an object is refused, and none is ever stored.
    A Job's selector is checked only when set by hand (manualSelector): the
    one the API server generates always matches the labels it adds."""
    kind = obj.get("kind")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return None
    try:
        if kind in _SELECTING_KINDS:
            _controller_selector(spec, _SELECTING_KINDS[kind], required=kind != "DaemonSet")
        elif kind == "Job" and spec.get("manualSelector") is True:
            _manual_job_selector(spec)
        elif kind == "CronJob" and isinstance(spec.get("jobTemplate"), dict):
            _cron_job_selector(spec["jobTemplate"].get("spec") or {})
    except _Invalid as e:
        return e.field, e.message
    return None


def _controller_selector(spec: dict, word: str, required: bool) -> None:
    selector = spec.get("selector")
    if selector is None:
        if required:
            raise _Invalid("spec.selector", "required value")
        # A DaemonSet without one selects nothing, its template included.
        raise _Invalid("spec.template.metadata.labels", _MISMATCH)
    _label_selector(selector, "spec.selector")
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        # It would select every pod of the namespace.
        raise _Invalid("spec.selector", f"empty selector is invalid for {word}")
    _selects_template(selector, spec)


def _manual_job_selector(spec: dict) -> None:
    selector = spec.get("selector")
    if selector is None:
        raise _Invalid("spec.selector", "required value")
    _label_selector(selector, "spec.selector")
    _selects_template(selector, spec)  # an empty one selects everything: allowed


def _cron_job_selector(job_spec: dict) -> None:
    """Each Job of a CronJob gets a generated selector: one written in its
    template has no place."""
    if job_spec.get("selector") is not None:
        raise _Invalid("spec.jobTemplate.spec.selector", "`selector` will be auto-generated")
    if job_spec.get("manualSelector") is True:
        raise _Invalid("spec.jobTemplate.spec.manualSelector",
                       'unsupported value true: supported values: "nil", "false"')


def _selects_template(selector: dict, spec: dict) -> None:
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not label_selector(selector).matches(labels):
        raise _Invalid("spec.template.metadata.labels", _MISMATCH)


def validate_object(obj: dict, origin, ref: str) -> None:
    """What the scheduler reads of kinds other than Pod and Node: an
    object's labels (a Namespace's, for namespaceSelector), a PDB's selector
    (a misspelled operator protected nothing: preemption saw no budget to
    violate), a PersistentVolume's node affinity, a PriorityClass's value."""
    try:
        labels = (obj.get("metadata") or {}).get("labels")
        if labels and labels.__class__ is dict:
            error = labels_error(labels)
            if error is not None:
                raise _Invalid(*error)
        kind = obj.get("kind")
        spec = obj.get("spec")
        if kind == "PodDisruptionBudget" and isinstance(spec, dict):
            _disruption_budget(spec)
        elif kind == "PersistentVolume" and isinstance(spec, dict):
            required = (spec.get("nodeAffinity") or {}).get("required")
            if isinstance(required, dict):
                path = "spec.nodeAffinity.required.nodeSelectorTerms"
                terms = required.get("nodeSelectorTerms") or []
                if not terms:
                    raise _Invalid(path, "must have at least one node selector term")
                for i, term in enumerate(terms):
                    if isinstance(term, dict):
                        _node_selector_term(term, f"{path}[{i}]")
        elif kind == "PriorityClass":
            _priority_class(obj)
    except _Invalid as e:
        raise InputError(e.message, source=origin, obj=ref, field=e.field) from None


UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")
_PERCENT = re.compile(r"[0-9]+%")


def _disruption_budget(spec: dict) -> None:
    """ValidatePodDisruptionBudgetSpec. A budget the API server never
    stores would otherwise still answer a drain: "50" (no %) left every
    eviction blocked, "150%" of maxUnavailable let every pod go at once.
    None of these rules is ratcheted for a stored budget (an update is held
    to them as a create is), so none can be in a cluster; only the
    selector's matchExpressions values are, and those are not checked."""
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        raise _Invalid("spec", "minAvailable and maxUnavailable cannot be both set")
    for name in ("minAvailable", "maxUnavailable"):
        value = spec.get(name)
        if value is not None:
            _int_or_percent(value, f"spec.{name}")
    if isinstance(spec.get("selector"), dict):
        _label_selector(spec["selector"], "spec.selector")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        # Misspelled, AlwaysAllow was read as the default IfHealthyBudget.
        raise _unsupported("spec.unhealthyPodEvictionPolicy", policy, UNHEALTHY_POD_EVICTION_POLICIES)


def _int_or_percent(value, path: str) -> None:
    """ValidatePositiveIntOrPercent and IsNotMoreThan100Percent (apps
    validation): a count of pods, or a share of them up to all."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return  # (the shape's to say)
    if isinstance(value, int):
        if value < 0:
            raise _Invalid(path, f"{value}: must be greater than or equal to 0")
        return
    if _PERCENT.fullmatch(value) is None:
        raise _Invalid(path, f"{value!r}: a valid percent string must be a numeric string followed by an ending "
                             "'%' (e.g. '1%' or '93%'); a number of pods is written without quotes")
    digits = value[:-1].lstrip("0")
    if len(digits) > 3 or int(digits or "0") > 100:
        raise _Invalid(path, f"{value!r}: must not be greater than 100%")


# The classes the API server creates, and the most a user-defined one may be worth.
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000


def _priority_class(pc: dict) -> None:
    """ValidatePriorityClass: a value above a billion would outrank the
    system's own pods, and the system- names are the system's."""
    name = (pc.get("metadata") or {}).get("name") or ""
    value = pc.get("value", 0)
    if not isinstance(value, int):
        return  # (the shape's to say)
    if name.startswith("system-"):
        known = SYSTEM_PRIORITY_CLASSES.get(name)
        if known is None:
            why = f"{name} is not a known system priority class"
        elif value != known:
            why = f"value of {name} PriorityClass must be {known}"
        elif pc.get("globalDefault"):
            why = f"globalDefault of {name} PriorityClass must be false"
        else:
            return
        raise _Invalid("metadata.name", f"priority class names with 'system-' prefix are reserved for system use "
                                        f"only. error: {why}")
    if value > HIGHEST_USER_DEFINABLE_PRIORITY:
        raise _Invalid("value", f"{value}: maximum allowed value of a user defined priority is "
                                f"{HIGHEST_USER_DEFINABLE_PRIORITY}")


@lru_cache(maxsize=16384)
def _label_key_ok(key) -> bool:
    return isinstance(key, str) and _is_qualified_name(key)


@lru_cache(maxsize=16384)
def _label_value_ok(value) -> bool:
    return _valid_value(value)


def _labels(labels: dict, path: str, strings_only: bool = False) -> None:
    """`strings_only`: a value that is no string at all is the shape's to report."""
    for key, value in labels.items():
        if strings_only and value.__class__ is not str:
            continue
        if not _label_key_ok(key):
            raise _Invalid(path, f"{key!r}: {_LABEL_NAME_RULE}")
        if not _label_value_ok(value):
            raise _Invalid(f"{path}.{key}", f"{value!r}: {_LABEL_VALUE_RULE}")


def _containers(spec: dict) -> None:
    """validateContainerPorts' numbers (their protocol is an enumeration of
    the pod's shape) and what validateResourceRequirements checks beyond
    names and request <= limit."""
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or ()):
            if not isinstance(c, dict):
                continue
            path = f"spec.{group}[{i}]"
            for j, port in enumerate(c.get("ports") or ()):
                if isinstance(port, dict):
                    _port(port, f"{path}.ports[{j}]")
            res = c.get("resources")
            if isinstance(res, dict):
                _requirements(res, f"{path}.resources")


def _port(port: dict, path: str) -> None:
    number = port.get("containerPort")
    if not number:
        raise _Invalid(f"{path}.containerPort", "required value")
    if not (isinstance(number, int) and 1 <= number <= 65535):
        raise _Invalid(f"{path}.containerPort", f"{number!r}: must be between 1 and 65535, inclusive")
    host = port.get("hostPort")
    if host and not (isinstance(host, int) and 1 <= host <= 65535):
        raise _Invalid(f"{path}.hostPort", f"{host!r}: must be between 1 and 65535, inclusive")


def _quantity(value):
    try:
        return parse_quantity(value)
    except (QuantityError, TypeError, ValueError):
        return None  # reported, with its field, where quantities are checked


def _requirements(res: dict, path: str) -> None:
    """validateResourceRequirements beyond names and request <= limit:
    extended resources and hugepages cannot be overcommitted (a request
    needs an equal limit), extended resources are whole numbers, and
    hugepages come with cpu or memory."""
    requests = res.get("requests")
    limits = res.get("limits")
    requests = requests if isinstance(requests, dict) else {}
    limits = limits if isinstance(limits, dict) else {}
    if not requests and not limits:
        return
    hugepages = cpu_or_memory = False
    for key, rl in (("limits", limits), ("requests", requests)):
        for name, value in rl.items():
            if not isinstance(name, str):
                continue
            huge = name.startswith("hugepages-")
            hugepages = hugepages or huge
            cpu_or_memory = cpu_or_memory or name in ("cpu", "memory")
            if not huge and is_native_resource(name):
                continue
            q = _quantity(value)
            if q is None:
                continue
            if is_extended_resource_name(name) and q.milli_value() % 1000:
                raise _Invalid(f"{path}.{key}.{name}", f"{value!r}: must be an integer")
            if key == "requests":
                if name not in limits:
                    raise _Invalid(f"{path}.limits",
                                   f"limit must be set for {name}: it cannot be overcommitted, its request needs "
                                   "an equal limit")
                limit = _quantity(limits[name])
                if limit is not None and q != limit:
                    raise _Invalid(f"{path}.requests.{name}", f"{value!r} must be equal to {name} limit of "
                                                              f"{limits[name]}")
    if hugepages and not cpu_or_memory:
        raise _Invalid(path, "HugePages require cpu or memory")


def _scheduling_gates(gates) -> None:
    seen = set()
    for i, gate in enumerate(gates):
        name = gate.get("name") if isinstance(gate, dict) else None
        if not _label_key_ok(name):
            raise _Invalid(f"spec.schedulingGates[{i}].name", f"{name!r}: {_LABEL_NAME_RULE}")
        if name in seen:
            raise _Invalid(f"spec.schedulingGates[{i}].name", f"duplicate value {name!r}")
        seen.add(name)


_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_POD_LEVEL_ERROR = 'unsupported value: supported values: "cpu", "hugepages-", "memory"'


@lru_cache(maxsize=4096)
def container_resource_name_error(name) -> str | None:
    """Why the API server refuses `name` as a container's request or limit
    (validateContainerResourceName), or None. A misspelled `cpus` would
    otherwise be a request no plugin checks: the pod asks for nothing it
    meant to."""
    if not isinstance(name, str) or not _is_qualified_name(name):
        return "must be a qualified name (an optional DNS subdomain prefix and '/', then a name)"
    if "/" not in name:
        if name in _CONTAINER_RESOURCES or name.startswith("hugepages-"):
            return None
        return ("must be a standard resource for containers (cpu, memory, ephemeral-storage, hugepages-<size>) "
                "or fully qualified (example.com/gpu)")
    if is_native_resource(name) or is_extended_resource_name(name):
        return None
    return "doesn't follow extended resource name standard"


def _resource_names(spec: dict) -> None:
    """Each container's request and limit names, and the pod's own
    (validatePodResourceName: cpu, memory and hugepages only)."""
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or ()):
            res = c.get("resources") if isinstance(c, dict) else None
            if not isinstance(res, dict):
                continue
            for key in ("limits", "requests"):
                rl = res.get(key)
                for name in rl if isinstance(rl, dict) else ():
                    error = container_resource_name_error(name)
                    if error is not None:
                        raise _Invalid(f"spec.{group}[{i}].resources.{key}.{name}",
                                       f"invalid resource name {name!r}: {error}")
    res = spec.get("resources")
    for key in ("limits", "requests") if isinstance(res, dict) else ():
        rl = res.get(key)
        for name in rl if isinstance(rl, dict) else ():
            if not (name in ("cpu", "memory") or (isinstance(name, str) and name.startswith("hugepages-"))):
                raise _Invalid(f"spec.resources.{key}.{name}", f"invalid resource name {name!r}: {_POD_LEVEL_ERROR}")


def validate_node_spec(spec: dict, origin, ref: str) -> None:
    """validateNodeTaints: a taint with a misspelled effect would otherwise
    be one no plugin reads, and the pod would pass a node the API server
    never stored."""
    taints = spec.get("taints") if spec else None
    if not taints:
        return
    try:
        _taints(taints)
    except _Invalid as e:
        raise InputError(e.message, source=origin, obj=ref, field=e.field) from None


_LABEL_NAME_RULE = ("must be a qualified name: an optional DNS subdomain prefix and '/', then at most 63 "
                    "alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric one")
_LABEL_VALUE_RULE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
                     "or '.', and must start and end with an alphanumeric character, at most 63 characters")


def _taints(taints) -> None:
    seen = set()
    for i, t in enumerate(taints):
        path = f"spec.taints[{i}]"
        key = t.get("key") or ""
        if not _is_qualified_name(key):
            raise _Invalid(f"{path}.key", f"{key!r}: {_LABEL_NAME_RULE}")
        value = t.get("value") or ""
        if not _valid_value(value):
            raise _Invalid(f"{path}.value", f"{value!r}: {_LABEL_VALUE_RULE}")
        effect = t.get("effect") or ""
        if not effect:
            raise _Invalid(f"{path}.effect", f"required value: supported values: {', '.join(TAINT_EFFECTS)}")
        if effect not in TAINT_EFFECTS:
            raise _unsupported(f"{path}.effect", effect, TAINT_EFFECTS)
        if (key, effect) in seen:
            raise _Invalid(path, f"duplicate taint {key}:{effect}: taints must be unique by key and effect pair")
        seen.add((key, effect))


def _node_selector(selector: dict) -> None:
    """ValidateLabels: a key or value no node label can have."""
    for key, value in selector.items():
        if not _is_qualified_name(key):
            raise _Invalid("spec.nodeSelector", f"{key!r}: {_LABEL_NAME_RULE}")
        if not _valid_value(value):
            raise _Invalid(f"spec.nodeSelector.{key}", f"{value!r}: {_LABEL_VALUE_RULE}")


def _tolerations(tolerations) -> None:
    for i, t in enumerate(tolerations or ()):
        path = f"spec.tolerations[{i}]"
        op = t.get("operator") or "Equal"
        if t.get("key") and not _is_qualified_name(t["key"]):
            raise _Invalid(f"{path}.key", f"{t['key']!r}: {_LABEL_NAME_RULE}")
        if op == "Equal" and not _valid_value(t.get("value") or ""):
            raise _Invalid(f"{path}.operator", f"{t.get('value')!r}: {_LABEL_VALUE_RULE}")
        if op in COMPARISON_OPERATORS:
            if decimal_int64(t.get("value") or "") is None:
                raise _Invalid(f"{path}.value", "must be a valid decimal integer in canonical form")
        elif op not in TOLERATION_OPERATORS:
            raise _unsupported(f"{path}.operator", t.get("operator"), TOLERATION_OPERATORS)
        if op == "Exists" and t.get("value"):
            raise _Invalid(f"{path}.operator", "value must be empty when `operator` is 'Exists'")
        if not t.get("key") and op != "Exists":
            raise _Invalid(f"{path}.operator", "operator must be Exists when `key` is empty, which means "
                                               "\"match all values and all keys\"")
        effect = t.get("effect")
        if effect and effect not in TAINT_EFFECTS:
            raise _unsupported(f"{path}.effect", effect, TAINT_EFFECTS)
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            raise _Invalid(f"{path}.effect", "effect must be 'NoExecute' when `tolerationSeconds` is set")


def _affinity(affinity: dict) -> None:
    base = "spec.affinity"
    node = affinity.get("nodeAffinity") or {}
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required:
        path = f"{base}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        terms = required.get("nodeSelectorTerms") or []
        if not terms:
            raise _Invalid(f"{path}.nodeSelectorTerms", "must have at least one node selector term")
        for i, term in enumerate(terms):
            _node_selector_term(term, f"{path}.nodeSelectorTerms[{i}]")
    for i, pref in enumerate(node.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
        path = f"{base}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        _weight(pref, path)
        _node_selector_term(pref.get("preference") or {}, f"{path}.preference")
    for kind in ("podAffinity", "podAntiAffinity"):
        a = affinity.get(kind) or {}
        for i, term in enumerate(a.get("requiredDuringSchedulingIgnoredDuringExecution") or ()):
            _pod_affinity_term(term, f"{base}.{kind}.requiredDuringSchedulingIgnoredDuringExecution[{i}]")
        for i, wt in enumerate(a.get("preferredDuringSchedulingIgnoredDuringExecution") or ()):
            path = f"{base}.{kind}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            _weight(wt, path)
            _pod_affinity_term(wt.get("podAffinityTerm") or {}, f"{path}.podAffinityTerm")


def _weight(obj: dict, path: str) -> None:
    w = obj.get("weight")
    if w is not None and not 1 <= w <= 100:
        raise _Invalid(f"{path}.weight", f"{w!r}: must be in the range 1-100")


def _node_selector_term(term: dict, path: str) -> None:
    for j, req in enumerate(term.get("matchFields") or ()):
        _node_field_requirement(req, f"{path}.matchFields[{j}]")
    for key in ("matchExpressions",):
        for j, req in enumerate(term.get(key) or ()):
            where = f"{path}.{key}[{j}]"
            op = req.get("operator")
            values = req.get("values") or []
            if not _label_key_ok(req.get("key")):
                raise _Invalid(f"{where}.key", f"{req.get('key')!r}: {_LABEL_NAME_RULE}")
            if op not in NODE_SELECTOR_OPERATORS:
                raise _unsupported(f"{where}.operator", op, NODE_SELECTOR_OPERATORS)
            if op in ("In", "NotIn") and not values:
                raise _Invalid(f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'")
            if op in ("Exists", "DoesNotExist") and values:
                raise _Invalid(f"{where}.values", "may not be specified when `operator` is 'Exists' or "
                                                  "'DoesNotExist'")
            if op in ("Gt", "Lt"):
                if len(values) != 1:
                    raise _Invalid(f"{where}.values", "must be specified single value when `operator` is "
                                                      "'Lt' or 'Gt'")
                try:
                    int(values[0])
                except (TypeError, ValueError):
                    raise _Invalid(f"{where}.values[0]", f"{values[0]!r}: must be an integer for 'Lt' or 'Gt'") \
                        from None


def _node_field_requirement(req: dict, where: str) -> None:
    """ValidateNodeFieldSelectorRequirement: metadata.name, In or NotIn, one node name."""
    op = req.get("operator")
    values = req.get("values") or []
    if op not in ("In", "NotIn"):
        raise _unsupported(f"{where}.operator", op, ("In", "NotIn"))
    if len(values) != 1:
        raise _Invalid(f"{where}.values", "must be only one value when `operator` is 'In' or 'NotIn' for node "
                                          "field selector")
    if req.get("key") != "metadata.name":
        raise _Invalid(f"{where}.key", f"{req.get('key')!r}: not a valid field selector key (supported: "
                                       "metadata.name)")
    if not (isinstance(values[0], str) and _is_dns_subdomain(values[0])):
        raise _Invalid(f"{where}.values[0]", f"{values[0]!r}: not a valid node name (a lowercase RFC 1123 "
                                             "subdomain)")


def _is_dns_subdomain(name: str) -> bool:
    return len(name) <= 253 and _DNS1123_SUBDOMAIN.match(name) is not None


def _label_selector(selector, path: str) -> None:
    labels = (selector or {}).get("matchLabels")
    if labels:
        _labels(labels, f"{path}.matchLabels")
    for j, req in enumerate((selector or {}).get("matchExpressions") or ()):
        where = f"{path}.matchExpressions[{j}]"
        op = req.get("operator")
        values = req.get("values") or []
        if not _label_key_ok(req.get("key")):
            raise _Invalid(f"{where}.key", f"{req.get('key')!r}: {_LABEL_NAME_RULE}")
        if op not in LABEL_SELECTOR_OPERATORS:
            raise _Invalid(f"{where}.operator", f"{op!r} is not a valid label selector operator "
                                                f"(supported: {', '.join(LABEL_SELECTOR_OPERATORS)})")
        if op in ("In", "NotIn") and not values:
            raise _Invalid(f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        if op in ("Exists", "DoesNotExist") and values:
            raise _Invalid(f"{where}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")


def _pod_affinity_term(term: dict, path: str) -> None:
    key = term.get("topologyKey")
    if not key:
        raise _Invalid(f"{path}.topologyKey", "can not be empty")
    if not _label_key_ok(key):
        raise _Invalid(f"{path}.topologyKey", f"{key!r}: {_LABEL_NAME_RULE}")
    _label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    _label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for field in ("matchLabelKeys", "mismatchLabelKeys"):
        _label_keys(term, field, f"{path}.{field}")


def _label_keys(obj: dict, field: str, path: str) -> None:
    """matchLabelKeys, mismatchLabelKeys: label names, and only beside a labelSelector."""
    keys = obj.get(field)
    if not keys:
        return
    if obj.get("labelSelector") is None:
        raise _Invalid(path, "must not be specified when labelSelector is not set")
    for i, key in enumerate(keys):
        if not _label_key_ok(key):
            raise _Invalid(f"{path}[{i}]", f"{key!r}: {_LABEL_NAME_RULE}")


def _spread_constraints(constraints) -> None:
    seen = set()
    for i, c in enumerate(constraints):
        path = f"spec.topologySpreadConstraints[{i}]"
        _spread_constraint(c, path)
        pair = (c.get("topologyKey"), c.get("whenUnsatisfiable"))
        if pair in seen:
            # Each {topologyKey, whenUnsatisfiable} is one kind of constraint.
            raise _Invalid(path, f"duplicate constraint {{{pair[0]}, {pair[1]}}}: each topologyKey and "
                                 "whenUnsatisfiable pair may appear once")
        seen.add(pair)


def _spread_constraint(c: dict, path: str) -> None:
    skew = c.get("maxSkew")
    if skew is None or skew <= 0:
        raise _Invalid(f"{path}.maxSkew", f"{skew!r}: must be greater than zero")
    if not c.get("topologyKey"):
        raise _Invalid(f"{path}.topologyKey", "can not be empty")
    when = c.get("whenUnsatisfiable")
    if when not in WHEN_UNSATISFIABLE:
        raise _unsupported(f"{path}.whenUnsatisfiable", when, WHEN_UNSATISFIABLE)
    min_domains = c.get("minDomains")
    if min_domains is not None:
        if min_domains <= 0:
            raise _Invalid(f"{path}.minDomains", f"{min_domains!r}: must be greater than zero")
        if when != "DoNotSchedule":
            raise _Invalid(f"{path}.minDomains", "can only use minDomains if whenUnsatisfiable=DoNotSchedule, "
                                                 f"not {when}")
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        # Misspelled, either was read as neither Honor nor Ignore.
        value = c.get(policy)
        if value is not None and value not in NODE_INCLUSION_POLICIES:
            raise _unsupported(f"{path}.{policy}", value, NODE_INCLUSION_POLICIES)
    _label_selector(c.get("labelSelector"), f"{path}.labelSelector")
    _label_keys(c, "matchLabelKeys", f"{path}.matchLabelKeys")
