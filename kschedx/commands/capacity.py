"""kschedx capacity: how many more replicas of a pod fit, and what stops them.

Copies of each pod template are placed one after another by the simulate
step (simulation.Simulation: the whole pipeline, every placement applied to
the snapshot and its indexes in place), so each copy sees the copies before
it: spreading, anti-affinity, ports and volumes all count. The first copy
that is not placed ends the count; its FailedScheduling message, and the
plugin and reason that reject it on the most nodes, say why.

Each pod template is counted on its own, on a fresh snapshot of the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import names
from ..util.errors import InputError, UsageError
from ..framework.queue import queue_order
from ..result.document import API_VERSION, requests_dict, version_fields
from ..state.types import PodInfo
from ..sources.admission import stable_uid

KIND = "CapacityResult"
COPY_INFIX = "-capacity-"
# A guard, not a limit anyone should meet: copies are placed until one does
# not fit, and a cluster holds at most ~150,000 pods.
DEFAULT_MAX = 1_000_000

# Why the count stopped (the document's `stop`).
STOP_UNSCHEDULABLE = "Unschedulable"  # a copy fits on no node
STOP_PREEMPTION = "NeedsPreemption"  # a copy would fit only by evicting pods (preemption not allowed)
STOP_MAX = "Max"  # --max copies placed
STOP_GATED = "Gated"  # the pod has scheduling gates: no copy is ever tried
STOP_ERROR = "Error"  # a plugin failed
STOP_NO_PROFILE = "NoProfile"  # no profile of --config serves the pod's schedulerName

# Controllers whose pods are replicas of one template (DaemonSet pods are
# pinned one per node: not a question of capacity).
_REPLICA_OWNERS = ("ReplicaSet", "StatefulSet", "Job", "ReplicationController")


@dataclass
class Options:
    max: int | None = None
    min: int = 1
    allow_preemption: bool = False
    with_pending: bool = False
    # --drain (whatif.drain.DrainOptions): the count assumes these nodes drained.
    drain: object = None

    def check(self) -> None:
        if self.max is not None and self.max < 1:
            raise UsageError(f"--max must be at least 1 (copies to place at most), not {self.max}")
        if self.min < 0:
            raise UsageError(f"--min must be 0 or more, not {self.min}")
        if self.max is not None and self.min > self.max:
            raise UsageError(f"--min {self.min} is above --max {self.max}: the exit code could never be 0")


@dataclass
class Template:
    """One pod template: the pod its copies are made of, and what to call it."""

    pod: PodInfo
    workload: str | None  # "Deployment shop/web" when the pod came from a workload


def templates_of(workload) -> list[Template]:
    """The workload's pods, one per template: the pods a controller made from
    one template count once (the first in queue order), every other pod is
    a template of its own. A DaemonSet, or a workload that made no pod, is
    refused: there is no replica to count."""
    refuse_workloads_without_pods(workload.notes)
    cluster = workload.cluster
    out: list[Template] = []
    seen: set = set()
    for pi in workload.pods:
        owner = _controller(pi.pod)
        asked = owner is not None and pi.uid in workload.asked
        if asked:
            _refuse_uncountable(workload, pi, owner)
        if asked and owner.get("kind") in _REPLICA_OWNERS:
            key = (owner.get("kind"), pi.namespace, owner.get("name"))
            if key in seen:
                continue
            seen.add(key)
            out.append(Template(pi, _workload_name(cluster, pi.namespace, owner)))
        else:
            out.append(Template(pi, None))
    return out


_NO_PODS = " expanded into 0 pod(s)"


def refuse_workloads_without_pods(notes) -> None:
    """A POD_FILE workload that made no pod has no template to count. The
    notes ("<file>: Kind/ns/name expanded into N pod(s)") are all that is
    left of it: a suspended Job leaves no object behind."""
    for note in notes:
        if note.endswith(_NO_PODS):
            source, _, ref = note[: -len(_NO_PODS)].rpartition(": ")
            if ref.startswith("DaemonSet/"):
                # (no node to run on: the DaemonSet is what capacity cannot count)
                raise _daemon_set_error(source or None, ref)
            raise InputError("makes no pod (zero replicas, suspended or paused): no pod template to count; set "
                             "replicas to 1 or more (capacity does not use the number)", source=source or None,
                             obj=ref)


def _refuse_uncountable(workload, pi: PodInfo, owner: dict) -> None:
    """A pod of a POD_FILE DaemonSet, or of a StatefulSet with claim
    templates: the error names the workload the user wrote, in its file,
    not the pod kschedx made of it."""
    kind = owner.get("kind")
    ref = f"{kind}/{pi.namespace}/{owner.get('name')}"
    # (none for a pending pod named from the snapshot or cluster, or read from stdin)
    source = (workload.sources.get(pi.uid) or {}).get("file")
    if kind == "DaemonSet":
        raise _daemon_set_error(source, ref)
    if kind == "StatefulSet":
        sts = workload.cluster.stateful_sets.get(f"{pi.namespace}/{owner.get('name')}") or {}
        if (sts.get("spec") or {}).get("volumeClaimTemplates"):
            raise InputError("each replica would need PersistentVolumeClaims of its own, which capacity does not "
                             "create; count a copy of its pod template without them, or use simulate with the "
                             "replicas you plan", source=source, obj=ref, field="spec.volumeClaimTemplates")


def _daemon_set_error(source, ref: str) -> InputError:
    return InputError("runs one pod per eligible node: capacity counts replicas (give a Pod, Deployment, "
                      "ReplicaSet, StatefulSet or Job)", source=source, obj=ref)


def _controller(pod: dict) -> dict | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def _workload_name(cluster, namespace: str, owner: dict) -> str:
    kind, name = owner.get("kind"), owner.get("name")
    if kind == "ReplicaSet":
        rs = cluster.replica_sets.get(f"{namespace}/{name}")
        parent = _controller(rs) if rs is not None else None
        if parent is not None and parent.get("kind") == "Deployment":
            kind, name = "Deployment", parent.get("name")
    return f"{kind} {namespace}/{name}"


def copy_pod(template: dict, i: int) -> dict:
    """Copy number i of a pod: its own name (NAME-capacity-i) and uid, pending
    and nominated nowhere, with no ResourceClaims made for it yet. Spec and
    labels are shared with the template (nothing changes them in place)."""
    meta = template["metadata"]
    ns = meta.get("namespace", "default")
    name = f"{meta['name']}{COPY_INFIX}{i}"
    new_meta = {k: v for k, v in meta.items() if k not in ("name", "uid", "generateName", "resourceVersion")}
    new_meta.update(name=name, uid=stable_uid("Pod", ns, name))
    status = {k: v for k, v in (template.get("status") or {}).items()
              if k not in ("nominatedNodeName", "resourceClaimStatuses", "conditions")}
    return dict(template, metadata=new_meta, status=status)


def capacity(workload, options: Options, *, tie_break: str = "random", seed: int | None = None,
             config=None, progress=None, sampling: str = "all", failures: list | None = None,
             features=None) -> dict:
    """The CapacityResult document of the workload's pod templates.
    `config`, `features`: as for explain_into.
    `sampling` as for simulate: "upstream" carries node sampling's start
    index from each copy's cycle to the next. `failures`, when a list, gets
    the SchedulingResult pod (every node's verdicts) of each template's first
    copy that does not fit (for --report)."""
    options.check()
    templates = templates_of(workload)
    doc = None
    results = []
    for t in templates:
        head, result = count_template(workload, t, options, tie_break=tie_break, seed=seed, config=config,
                                      progress=progress, sampling=sampling, failures=failures, features=features)
        doc = doc or head
        results.append(result)
    doc["templates"] = results
    warnings = workload.warnings + (config.warnings if config is not None else []) + doc.pop("_warnings")
    if warnings:
        doc["warnings"] = warnings
    doc["exitCode"] = exit_code(doc, options.min)
    if options.drain is not None and any((t.get("drain") or {}).get("outcome") != "Drained"
                                         for t in doc["templates"]):
        doc["exitCode"] = 1
    return doc


def exit_code(doc: dict, minimum: int) -> int:
    """0 when every template has at least `minimum` copies placed, else 1."""
    return 0 if all(t["count"] >= minimum for t in doc["templates"]) else 1


def count_template(workload, template: Template, options: Options, *, tie_break: str, seed: int | None,
                   config=None, progress=None, sampling: str = "all",
                   failures: list | None = None, features=None) -> tuple[dict, dict]:
    """Place copies of one template on a fresh snapshot until one is not
    placed (or --max is reached): (document head, the template's result)."""
    from ..framework.dispatch import new_schedulers

    cluster = workload.cluster
    scheds = new_schedulers(cluster, tie_break=tie_break, seed=seed, config=config, sampling=sampling,
                            features=features)
    for fw in scheds.frameworks:
        # A copy placed by preemption takes kschedx's choice; what else kube-
        # scheduler's candidate search could reach is never reported here.
        fw.preemption_search = False
    head = _head(scheds, options)
    head["_warnings"] = list(scheds.snapshot.warnings)
    drained = play = pending_summary = None
    if options.drain is not None:
        from .whatif import drained_for_capacity

        # The pending pods go through the drain's run, not after it: they
        # compete with the drained pods' new pods in one scheduling queue,
        # as in simulate --drain (a higher-priority pending pod may take the
        # room a new pod needed, and the drain's answer says so).
        pending = pending_pods(workload, scheds) if options.with_pending else []
        drained, play = drained_for_capacity(workload, scheds, options.drain, pending)
        head["_warnings"] += drained.pop("warnings", [])
        if options.with_pending:
            # (bound when the drain ends: one a later drained node evicted,
            # or a preemption deleted, holds no room)
            pending_summary = {"pods": len(pending),
                               "placed": sum(pi.uid in scheds.snapshot.pod_infos for pi in pending)}
    try:
        return _count(workload, template, options, scheds, head, cluster, progress, failures, drained,
                      pending_summary)
    finally:
        if play is not None:
            play.close()


def pending_pods(workload, scheds) -> list[PodInfo]:
    """--with-pending: the cluster's pending pods but the ones counted
    (POD_FILE's, or named), in queue order."""
    own = set(workload.asked) | {pi.uid for pi in workload.pods}
    return scheds.queue_order(queue_order(
        [PodInfo(p) for p in workload.cluster.pending_pods() if p["metadata"]["uid"] not in own]))


def _count(workload, template: Template, options: Options, scheds, head, cluster, progress, failures, drained,
           pending_summary=None):
    from ..result.node_group import node_group
    from ..plugins.dynamicresources.controller import instantiate_pod_claims
    from ..framework.simulation import Simulation

    sim = Simulation(scheds)
    source_pod = template.pod
    if options.with_pending and pending_summary is None:
        # (with --drain the drain's run placed them already)
        pending = pending_pods(workload, scheds)
        placed = 0
        for pi in pending:
            placed += sim.step(pi).placed_node is not None
        pending_summary = {"pods": len(pending), "placed": placed}

    snapshot = scheds.snapshot
    before = _usage(snapshot)
    limit = options.max if options.max is not None else DEFAULT_MAX
    per_node: dict[str, int] = {}
    count = 0
    by_preemption = 0
    victims: list[str] = []
    added_claims: list[str] = []
    failure = None
    stop = STOP_MAX
    try:
        while count < limit:
            pod = copy_pod(source_pod.pod, count + 1)
            if (pod.get("spec") or {}).get("resourceClaims"):
                before_keys = set(cluster.resource_claims)
                instantiate_pod_claims(pod, cluster.resource_claim_templates, cluster.resource_claims)
                added_claims.extend(k for k in cluster.resource_claims if k not in before_keys)
            pi = PodInfo(pod)
            r = sim.step(pi, preempt=options.allow_preemption,
                         settle=None if failures is None else (lambda r: r.status != "Scheduled"))
            node = r.placed_node
            if node is None:
                failure = r
                stop = _stop_reason(r)
                break
            count += 1
            per_node[node] = per_node.get(node, 0) + 1
            if r.status != "Scheduled":
                by_preemption += 1
                victims.extend(v.key for v in r.victims)
            if progress is not None:
                progress(count, options.max)
        after = _usage(snapshot)
        result = {
            "template": source_pod.key,
            "workload": template.workload,
            "priority": source_pod.priority,
            "requests": requests_dict(source_pod),
            "count": count,
            "perNode": {ni.name: per_node[ni.name] for ni in snapshot.node_infos if ni.name in per_node},
            "stop": stop,
            "status": failure.status if failure is not None else None,
            "message": failure.message if failure is not None else None,
            "limitedBy": limited_by(failure, snapshot.num_nodes()) if failure is not None else None,
        }
        if failure is not None and stop == STOP_PREEMPTION:
            pre = failure.preemption or {}
            result["preemption"] = {"nominatedNode": pre.get("nominatedNode"), "victims": pre.get("victims") or []}
        if options.allow_preemption:
            result["placedByPreemption"] = by_preemption
            result["victims"] = victims
        if pending_summary is not None:
            result["pending"] = pending_summary
        if drained is not None:
            result["drain"] = drained
        chart = chart_resource(result["limitedBy"], source_pod)
        result["chartResource"] = chart
        result["utilization"] = [
            {
                "node": ni.name,
                "nodeGroup": node_group(ni.name, ni.labels),
                "copies": per_node.get(ni.name, 0),
                "allocatable": _resources(ni.allocatable, len_pods=ni.allocatable.allowed_pod_number, extra=chart),
                "before": before[ni.name] if chart in before[ni.name] else dict(before[ni.name], **{chart: 0}),
                "after": after[ni.name] if chart in after[ni.name] else dict(after[ni.name], **{chart: 0}),
            }
            for ni in snapshot.node_infos
        ]
        source = workload.sources.get(source_pod.uid)
        if source:
            result["source"] = dict(source)
        if failures is not None and failure is not None:
            from ..result.document import pod_dict

            failures.append(pod_dict(failure, "explain"))
        return head, result
    finally:
        for key in added_claims:
            cluster.resource_claims.pop(key, None)


def _stop_reason(r) -> str:
    if r.status == "Gated":
        return STOP_GATED
    if r.status == "Error":
        return STOP_ERROR
    if r.status == "NoProfile":
        return STOP_NO_PROFILE
    if r.status == "Unschedulable" and r.nominated_node:
        return STOP_PREEMPTION
    return STOP_UNSCHEDULABLE


def _head(scheds, options: Options) -> dict:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "profile": scheds.primary.profile.name,
        "tieBreak": scheds.tie_break,
        **version_fields(scheds.features),
        "notEvaluated": list(scheds.not_evaluated),
        "options": {"max": options.max, "min": options.min, "allowPreemption": options.allow_preemption,
                    "withPending": options.with_pending,
                    **({"drain": options.drain.document()} if options.drain is not None else {})},
    }


def _resources(res, *, len_pods: int, extra: str) -> dict:
    out = {"cpu": res.milli_cpu, "memory": res.memory, "pods": len_pods}
    if extra not in out:
        out[extra] = _amount(res, extra)
    return out


def _amount(res, name: str) -> int:
    if name == "cpu":
        return res.milli_cpu
    if name == "memory":
        return res.memory
    if name == "ephemeral-storage":
        return res.ephemeral_storage
    return res.scalar.get(name, 0)


def _usage(snapshot) -> dict[str, dict]:
    """Requested cpu (millicores), memory (bytes), pods and extended resources per node."""
    out = {}
    for ni in snapshot.node_infos:
        req = ni.requested
        u = {"cpu": req.milli_cpu, "memory": req.memory, "pods": len(ni.pods)}
        if req.ephemeral_storage:
            u["ephemeral-storage"] = req.ephemeral_storage
        for name, q in req.scalar.items():
            if q:
                u[name] = q
        out[ni.name] = u
    return out


_FIT = names.NodeResourcesFit


def resource_of_reason(plugin: str, reason: str) -> str | None:
    """The resource a NodeResourcesFit reason names ("Insufficient memory" ->
    memory, "Too many pods" -> pods); None for any other reason."""
    if plugin != _FIT:
        return None
    if reason == "Too many pods":
        return "pods"
    if reason.startswith("Insufficient "):
        return reason[len("Insufficient "):]
    return None


def limited_by(r, num_nodes: int) -> dict | None:
    """What rejects the copy that does not fit, on the most nodes: the plugin
    kube-scheduler reports for each node (its first failure) and each of its
    reasons, counted over nodes. `reasons` lists every (plugin, reason) with
    its node count, most nodes first; the first is the limit."""
    if r.status == "Gated" and r.gate is not None:
        return _limit([(r.gate.plugin, r.gate.message() or "gated", num_nodes)], num_nodes)
    rejected = next((st for st in r.pre_filter if not st.is_success() and not st.is_skip()), None)
    if rejected is not None:
        return _limit([(rejected.plugin, reason, num_nodes) for reason in rejected.reasons], num_nodes)
    counts: dict[tuple[str, str], int] = {}
    order: dict[tuple[str, str], int] = {}
    for nr in r.nodes:
        if nr.feasible or nr.status is None:
            continue
        plugin = nr.first_failure or nr.status.plugin or "?"
        for reason in nr.status.reasons:
            key = (plugin, reason)
            counts[key] = counts.get(key, 0) + 1
            order.setdefault(key, len(order))
    if not counts:
        return None
    ranked = sorted(counts, key=lambda k: (-counts[k], order[k]))
    return _limit([(p, reason, counts[(p, reason)]) for p, reason in ranked], num_nodes)


def _limit(rows, num_nodes: int) -> dict:
    reasons = []
    for plugin, reason, n in rows:
        entry = {"plugin": plugin, "reason": reason, "nodes": n}
        resource = resource_of_reason(plugin, reason)
        if resource is not None:
            entry["resource"] = resource
        reasons.append(entry)
    first = reasons[0]
    out = {"plugin": first["plugin"], "resource": first.get("resource"), "reason": first["reason"],
           "nodes": first["nodes"], "totalNodes": num_nodes, "reasons": reasons}
    return out


def chart_resource(limit: dict | None, pod: PodInfo) -> str:
    """The resource the chart shows: the limiting one, else cpu or memory
    (the first the pod requests), else its first other request, else pods."""
    if limit is not None and limit.get("resource"):
        return limit["resource"]
    requests = requests_dict(pod)
    for name in ("cpu", "memory"):
        if name in requests:
            return name
    return next(iter(requests), "pods")
