"""What the API server does to an object before the scheduler ever sees it.

Fixtures may be hand-written or come from `kubectl get -o yaml`; either way
the scheduler only ever sees objects after core/v1 defaulting and the
admission plugins that touch scheduling (Priority, DefaultTolerationSeconds,
RuntimeClass). Applying them here keeps every plugin free of "if absent"
special cases, exactly like upstream.
"""

from __future__ import annotations

import hashlib

from ..util.errors import InputError
from ..api.quantity import QuantityError, parse_quantity
from .spec_share import SpecTemplates
from .shape import check_pod_shape_but_spec, check_shape, pod_shape_but_spec_valid
from .validation import (SYSTEM_PRIORITY_CLASSES, labels_error, validate_node_spec, validate_object,
                         validate_pod_spec)

DEFAULT_SCHEDULER_NAME = "default-scheduler"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300

# Kinds that live in a namespace; everything else is cluster-scoped.
NAMESPACED_KINDS = frozenset(
    {
        "Pod",
        "PersistentVolumeClaim",
        "CSIStorageCapacity",
        "PodDisruptionBudget",
        "Service",
        "ReplicaSet",
        "StatefulSet",
        "ReplicationController",
        "Deployment",
        "DaemonSet",
        "Job",
        "CronJob",
        "ResourceClaim",
        "ResourceClaimTemplate",
    }
)


def object_ref(obj: dict) -> str:
    """kind/namespace/name (or kind/name), the way errors name an object."""
    kind = obj.get("kind", "?")
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name") or meta.get("generateName") or "?"
    ns = meta.get("namespace")
    return f"{kind}/{ns}/{name}" if ns else f"{kind}/{name}"


def stable_uid(kind: str, namespace: str | None, name: str) -> str:
    """A UID derived from the object's identity, so reruns give the same result.

    Pods use "namespace/name" (the key kube-scheduler's cache uses for them);
    other kinds are prefixed with the kind so that a PVC and a pod of the same
    name do not share a UID.
    """
    return uid_of(f"{namespace}/{name}" if kind == "Pod" else f"{kind}/{namespace or ''}/{name}")


def uid_of(key: str, _sha1=hashlib.sha1) -> str:
    """stable_uid() of a pod from its "namespace/name" key (made for
    150,000 pods: sha1 is looked up once)."""
    h = _sha1(key.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


class Admission:
    """Applies defaults and admission to objects of one cluster.

    Priority admission needs the cluster's PriorityClasses and RuntimeClass
    admission its RuntimeClasses, so both are given up front.
    """

    def __init__(self, priority_classes: dict[str, dict], runtime_classes: dict[str, dict], *,
                 share_specs: bool = False):
        self.priority_classes = priority_classes
        self.runtime_classes = runtime_classes
        # share_specs: pods whose specs are equal as written share one
        # admitted spec (see pod()); only for a whole cluster read at once,
        # where nothing changes a pod's spec in place afterwards.
        self._specs: SpecTemplates | None = SpecTemplates() if share_specs else None
        self._share = share_specs
        # Admitted specs by the read-ahead's number of the first pod that had it.
        self._by_rep: dict[int, dict] = {}
        self._keyed = self._shared = 0
        # The parsed fields of the specs that took a shared one: freeing
        # 150,000 such trees one at a time costs a tenth of a second while
        # the cluster loads; whoever keeps the cluster keeps these with it
        # (ClusterState.replaced_specs), and a command ends without freeing.
        self.replaced: list = []
        self._keep_replaced = True
        self.classes_changed()

    def classes_changed(self) -> None:
        """The PriorityClasses changed (a watch): the global default again, and
        no spec admitted under the old ones is shared any more."""
        defaults = [pc for pc in self.priority_classes.values() if pc.get("globalDefault")]
        # Upstream picks the lowest-valued class when several claim to be the
        # global default (an API race it tolerates rather than rejects).
        self.global_default = min(defaults, key=lambda pc: int(pc.get("value", 0)), default=None)
        if self._specs is not None and self._specs.by_key:
            self._specs.by_key.clear()

    def go_live(self, spec_limit: int = 1_000) -> None:
        """From here on pods come one at a time, for hours (a watch): what a
        shared spec replaces is freed at once, and the shared specs start
        again when `spec_limit` (at least twice what they are now) is reached."""
        self.replaced = []
        self._keep_replaced = False
        self._by_rep.clear()
        if self._specs is not None:
            self._specs.limit = max(spec_limit, 2 * len(self._specs.by_key))
            self._specs.renew = True

    # -- generic -----------------------------------------------------------
    def metadata(self, obj: dict, origin) -> dict:
        meta = obj.get("metadata")
        if meta is None:
            meta = obj["metadata"] = {}
        if not isinstance(meta, dict):
            raise InputError("metadata must be a mapping", source=origin, obj=object_ref(obj), field="metadata")
        if not meta.get("name"):
            raise InputError("object has no metadata.name", source=origin, obj=object_ref(obj), field="metadata.name")
        if obj["kind"] in NAMESPACED_KINDS and not meta.get("namespace"):
            meta["namespace"] = "default"
        if obj["kind"] not in ("Pod", "Node"):  # those get their whole shape checked below
            ref = object_ref(obj)
            check_shape(obj, origin, ref)
            validate_object(obj, origin, ref)
        if not meta.get("uid"):
            meta["uid"] = stable_uid(obj["kind"], meta.get("namespace"), meta["name"])
        return meta

    def pod_metadata(self, pod: dict, origin, *, set_uid: bool = True) -> str:
        """metadata() for a pod, returning its "namespace/name" key; pods are
        many, so the common case (name and namespace given as strings) takes
        the short way, with the same result. Without `set_uid` that way
        leaves a missing uid to the caller (uid_of the key)."""
        meta = pod.get("metadata")
        if meta.__class__ is dict:
            name = meta.get("name")
            ns = meta.get("namespace")
            if name and ns and name.__class__ is str and ns.__class__ is str:
                key = f"{ns}/{name}"
                if set_uid and not meta.get("uid"):
                    meta["uid"] = uid_of(key)
                return key
        meta = self.metadata(pod, origin)
        return f"{meta['namespace']}/{meta['name']}"

    # -- Pod -----------------------------------------------------------------
    def pod(self, pod: dict, origin, *, metadata_done: bool = False, answer=None) -> bool:
        """Admit a pod in place; True when its spec is now a shared one's
        (equal as written to an earlier pod's, checked and admitted then).
        `answer`: what a read-ahead of the file found (read_ahead.py): the
        number of the first pod of the file with an equal spec as written
        (-1: none can be told), and whether the pod but its spec is well
        shaped."""
        if not metadata_done:
            self.metadata(pod, origin)
        _check_labels(pod, origin)
        spec = pod.get("spec")
        if not isinstance(spec, dict):
            raise InputError("pod has no spec", source=origin, obj=object_ref(pod), field="spec")
        if answer is not None and self._share:
            rep, shape_ok = answer
            admitted = self._by_rep.get(rep)
            if admitted is not None:
                if not shape_ok:
                    check_pod_shape_but_spec(pod, origin, object_ref(pod))
                self._take_shared(spec, admitted)
                return True
            self._admit_pod(pod, spec, origin)
            if rep >= 0:
                self._by_rep[rep] = spec.copy()
            return False
        key = None
        if self._specs is not None:
            admitted, key = self._specs.find(spec, pod)
            self._keyed += 1
            if admitted is not None:
                self._shared += 1
                if not pod_shape_but_spec_valid(pod):
                    check_pod_shape_but_spec(pod, origin, object_ref(pod))
                self._take_shared(spec, admitted)
                return True
        self._admit_pod(pod, spec, origin)
        if key is not None:
            # A copy: a later pod may hold this very spec object (a YAML alias).
            self._specs.add(key, spec.copy())
        if self._keyed >= _GIVE_UP_AFTER and self._shared * 10 < self._keyed:
            # Pods that rarely share: StatefulSet replicas have a hostname of
            # their own, DaemonSet ones name their node. Stop paying for keys.
            self._specs = None
        return False

    def _take_shared(self, spec: dict, admitted: dict) -> None:
        """A spec equal to an earlier pod's as written is admitted as that one
        was (admission reads nothing else of the pod that the key leaves
        out), and its checks passed there."""
        node_name = spec.get("nodeName")
        # Its own volumes, as written: equal to the shared spec's but for
        # service-account volume names (spec_share), and admission leaves
        # volumes as they are.
        volumes = spec.get("volumes")
        # What the spec held is kept, not freed here (see `replaced`).
        if self._keep_replaced:
            self.replaced.extend(spec.values())
        spec.clear()
        spec.update(admitted)
        if node_name is not None:
            spec["nodeName"] = node_name
        if volumes is not None:
            spec["volumes"] = volumes

    def _admit_pod(self, pod: dict, spec: dict, origin) -> None:
        ref = object_ref(pod)
        check_shape(pod, origin, ref)  # first: a mapping where a list belongs is a type error, not "no containers"
        if not isinstance(spec.get("containers"), list) or not spec["containers"]:
            raise InputError("pod has no containers", source=origin, obj=ref, field="spec.containers")
        validate_pod_spec(spec, origin, ref)
        spec.setdefault("schedulerName", DEFAULT_SCHEDULER_NAME)
        for group in ("initContainers", "containers"):
            for i, c in enumerate(spec.get(group) or []):
                if not isinstance(c, dict):
                    raise InputError("container must be a mapping", source=origin, obj=ref, field=f"spec.{group}[{i}]")
                self._container(c, origin, ref, f"spec.{group}[{i}]", spec.get("hostNetwork"))
        if spec.get("resources"):
            self._pod_level_resources(spec, origin, ref)
        self._runtime_class(spec, origin, ref)
        if spec.get("overhead"):
            check_resource_list(spec["overhead"], origin, ref, "spec.overhead")
        self._priority(spec, origin, ref)
        self._default_tolerations(spec)
        labels = (pod.get("metadata") or {}).get("labels") or {}
        _merge_pod_affinity_label_keys(spec, labels)
        _merge_spread_label_keys(spec, labels)

    def _container(self, c: dict, origin, ref: str, path: str, host_network) -> None:
        res = c.get("resources")
        if res:
            if not isinstance(res, dict):
                raise InputError("resources must be a mapping", source=origin, obj=ref, field=f"{path}.resources")
            limits = res.get("limits")
            if limits:
                check_resource_list(limits, origin, ref, f"{path}.resources.limits")
                requests = res.get("requests")
                if requests is None:
                    requests = res["requests"] = {}
                check_resource_list(requests, origin, ref, f"{path}.resources.requests")
                for k, v in limits.items():
                    requests.setdefault(k, v)
                    if parse_quantity(requests[k]) > parse_quantity(v):
                        # ValidateResourceRequirements: the API server refuses the pod.
                        raise InputError(f"{requests[k]!r} must be less than or equal to {k} limit of {v}",
                                         source=origin, obj=ref, field=f"{path}.resources.requests.{k}")
            if res.get("requests"):
                check_resource_list(res["requests"], origin, ref, f"{path}.resources.requests")
        for j, port in enumerate(c.get("ports") or []):
            if not isinstance(port, dict):
                raise InputError("port must be a mapping", source=origin, obj=ref, field=f"{path}.ports[{j}]")
            port.setdefault("protocol", "TCP")
            if host_network and not port.get("hostPort"):
                port["hostPort"] = port.get("containerPort", 0)

    def _pod_level_resources(self, spec: dict, origin, ref: str) -> None:
        res = spec["resources"]
        for key in ("limits", "requests"):
            if res.get(key):
                check_resource_list(res[key], origin, ref, f"spec.resources.{key}")
        limits = res.get("limits") or {}
        if not limits:
            return
        # defaultPodRequests: pod-level requests come from the containers'
        # aggregate for cpu/memory, else from the pod-level limits.
        from ..api.resources import aggregate_container_requests  # local: avoids an import cycle

        requests = dict(res.get("requests") or {})
        for name, milli in aggregate_container_requests(spec).items():
            if name not in requests and name in ("cpu", "memory"):
                requests[name] = f"{milli}m"
        for name, value in limits.items():
            if name not in requests and (name in ("cpu", "memory") or name.startswith("hugepages-")):
                requests[name] = value
        if requests:
            res["requests"] = requests

    def _runtime_class(self, spec: dict, origin, ref: str) -> None:
        name = spec.get("runtimeClassName")
        if not name:
            return
        rc = self.runtime_classes.get(name)
        if rc is None:
            # The RuntimeClass admission plugin rejects such a pod; a stored pod
            # whose class was deleted later is still legal and keeps its overhead.
            return
        fixed = (rc.get("overhead") or {}).get("podFixed")
        if fixed and not spec.get("overhead"):
            spec["overhead"] = dict(fixed)
        sched = rc.get("scheduling") or {}
        if sched.get("nodeSelector"):
            merged = dict(sched["nodeSelector"])
            merged.update(spec.get("nodeSelector") or {})
            spec["nodeSelector"] = merged
        for tol in sched.get("tolerations") or []:
            tols = spec.setdefault("tolerations", [])
            if tol not in tols:
                tols.append(tol)

    def _priority(self, spec: dict, origin, ref: str) -> None:
        cls_name = spec.get("priorityClassName")
        pc = None
        if cls_name:
            if cls_name in SYSTEM_PRIORITY_CLASSES and cls_name not in self.priority_classes:
                pc = {"value": SYSTEM_PRIORITY_CLASSES[cls_name]}
            else:
                pc = self.priority_classes.get(cls_name)
            # Priority admission runs when a pod is created: a stored pod (read from a
            # cluster) keeps its spec.priority even if its class was deleted since, or
            # could not be read.
            if pc is None and spec.get("priority") is None:
                raise InputError(
                    f"no PriorityClass with name {cls_name} was found (add it to the fixture, or set spec.priority)",
                    source=origin,
                    obj=ref,
                    field="spec.priorityClassName",
                )
        elif self.global_default is not None:
            pc = self.global_default
            spec["priorityClassName"] = pc["metadata"]["name"]
        if spec.get("priority") is None:
            spec["priority"] = int(pc.get("value", 0)) if pc else 0
        elif not isinstance(spec["priority"], int) or isinstance(spec["priority"], bool):
            raise InputError("must be an integer", source=origin, obj=ref, field="spec.priority")
        if not spec.get("preemptionPolicy"):
            spec["preemptionPolicy"] = (pc or {}).get("preemptionPolicy") or PREEMPT_LOWER_PRIORITY

    @staticmethod
    def _default_tolerations(spec: dict) -> None:
        tols = spec.get("tolerations") or []
        not_ready = unreachable = False
        for t in tols:
            key = t.get("key") or ""
            effect = t.get("effect") or ""
            if effect not in ("", "NoExecute"):
                continue
            if key in ("", NOT_READY_TAINT):
                not_ready = True
            if key in ("", UNREACHABLE_TAINT):
                unreachable = True
        added = list(tols)
        for key, present in ((NOT_READY_TAINT, not_ready), (UNREACHABLE_TAINT, unreachable)):
            if not present:
                added.append(
                    {
                        "key": key,
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
                    }
                )
        if len(added) != len(tols):
            spec["tolerations"] = added

    # -- Node ----------------------------------------------------------------
    def node(self, node: dict, origin) -> None:
        self.metadata(node, origin)
        ref = object_ref(node)
        check_shape(node, origin, ref)
        validate_node_spec(node.get("spec"), origin, ref)
        _check_labels(node, origin)
        status = node.get("status")
        if status is None:
            status = node["status"] = {}
        cap = status.get("capacity")
        if cap:
            check_resource_list(cap, origin, ref, "status.capacity")
        if status.get("allocatable") is None and cap is not None:
            status["allocatable"] = dict(cap)
        elif status.get("allocatable"):
            check_resource_list(status["allocatable"], origin, ref, "status.allocatable")

    # -- Namespace -----------------------------------------------------------
    def namespace(self, ns: dict, origin) -> None:
        meta = self.metadata(ns, origin)
        labels = meta.get("labels") or {}
        labels["kubernetes.io/metadata.name"] = meta["name"]
        meta["labels"] = labels

    def priority_class(self, pc: dict, origin) -> None:
        self.metadata(pc, origin)
        if not isinstance(pc.get("value", 0), int):
            raise InputError("must be an integer", source=origin, obj=object_ref(pc), field="value")


# Sharing stops when fewer than one in ten of the first this many pods shared.
_GIVE_UP_AFTER = 2_000


def _merge_label_keys(selector: dict, keys, operator: str, labels: dict) -> None:
    """Append `key <operator> (value)` for each key the pod has a label for.

    A pod read back from a cluster already carries the expressions the API
    server appended at creation; appending only missing ones keeps such pods
    unchanged, while hand-written pods get what the API server would add.
    """
    exprs = selector.get("matchExpressions")
    for key in keys or ():
        if key not in labels:
            continue
        expr = {"key": key, "operator": operator, "values": [labels[key]]}
        if exprs is None:
            exprs = selector["matchExpressions"] = []
        if not any(e.get("key") == key and e.get("operator") == operator and e.get("values") == [labels[key]]
                   for e in exprs if isinstance(e, dict)):
            exprs.append(expr)


def _merge_pod_affinity_label_keys(spec: dict, labels: dict) -> None:
    """The pod strategy's PrepareForCreate (MatchLabelKeysInPodAffinity, GA):
    matchLabelKeys become `key in (value)` and mismatchLabelKeys `key notin
    (value)` in the term's labelSelector, unless that selector is absent
    (it matches nothing either way). The scheduler reads only the selector."""
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict):
        return
    for kind in ("podAffinity", "podAntiAffinity"):
        a = affinity.get(kind)
        if not isinstance(a, dict):
            continue
        terms = [t.get("podAffinityTerm") for t in a.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
                 if isinstance(t, dict)]
        terms += list(a.get("requiredDuringSchedulingIgnoredDuringExecution") or ())
        for term in terms:
            if not isinstance(term, dict) or not isinstance(term.get("labelSelector"), dict):
                continue
            if not term.get("matchLabelKeys") and not term.get("mismatchLabelKeys"):
                continue
            _merge_label_keys(term["labelSelector"], term.get("matchLabelKeys"), "In", labels)
            _merge_label_keys(term["labelSelector"], term.get("mismatchLabelKeys"), "NotIn", labels)


def _merge_spread_label_keys(spec: dict, labels: dict) -> None:
    """PrepareForCreate with MatchLabelKeysInPodTopologySpreadSelectorMerge
    (beta, on): a constraint's matchLabelKeys become `key in (value)` in its
    labelSelector. PodTopologySpread merges them again itself (harmless)."""
    for c in spec.get("topologySpreadConstraints") or ():
        if isinstance(c, dict) and c.get("matchLabelKeys") and isinstance(c.get("labelSelector"), dict):
            _merge_label_keys(c["labelSelector"], c["matchLabelKeys"], "In", labels)


def _check_labels(obj: dict, origin) -> None:
    labels = (obj.get("metadata") or {}).get("labels")
    if labels and labels.__class__ is dict:  # (another shape: check_shape says so)
        error = labels_error(labels)
        if error is not None:
            raise InputError(error[1], source=origin, obj=object_ref(obj), field=error[0])


def check_resource_list(rl, origin, ref: str, path: str) -> None:
    """Every value must be a valid quantity; the error names the exact field."""
    if not isinstance(rl, dict):
        raise InputError("must be a mapping of resource name to quantity", source=origin, obj=ref, field=path)
    for name, value in rl.items():
        try:
            q = parse_quantity(value)
        except QuantityError as exc:
            raise InputError(f"invalid quantity {value!r}: {exc}", source=origin, obj=ref, field=f"{path}.{name}") from None
        if q.sign() < 0:
            # The API server's validation (ValidateNonnegativeQuantity): such an
            # object is never stored, so kube-scheduler never sees it.
            raise InputError(f"invalid quantity {value!r}: must be greater than or equal to 0", source=origin,
                             obj=ref, field=f"{path}.{name}")
