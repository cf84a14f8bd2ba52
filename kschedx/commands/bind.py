"""`kschedx bind`: schedule one pending pod of a live cluster, then bind it.

plan()    fresh snapshot -> one scheduling cycle -> the decision: the node, the
          victims to evict first (with --preempt), or why not.
execute() (evict the victims through the Eviction API -> set the pod's
          status.nominatedNodeName -> wait until the victims are gone ->
          re-check the fit on a fresh snapshot) -> re-read the pod and the
          node -> POST pods/binding with the pod's UID.

Nothing is ever bound twice: the binding is sent once, never retried after it
may have taken effect, and only after the pod was re-read unchanged (same UID,
same resourceVersion, still without a node) and the node was seen to exist.
Any surprise is a ClusterError (exit 4) that says what was already done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..util.errors import ClusterError, InputError, UsageError

DEFAULT_SCHEDULER = "default-scheduler"


@dataclass
class BindPlan:
    key: str  # namespace/name
    pod: dict  # the pod as the snapshot read it
    doc: dict  # the SchedulingResult of the cycle (this pod only)
    node: str | None = None  # where the pod would be bound
    victims: list[dict] = field(default_factory=list)  # pods to evict first (as read)
    refusal: str | None = None  # why the pod cannot be bound; None when it can
    notes: list[str] = field(default_factory=list)
    # The extender that binds this pod instead of the DefaultBinder (its
    # bindVerb; framework/extenders.py), with the Extenders it belongs to.
    binder: object = None
    extenders: object = None
    # The version and gates, and the configuration, the cycle ran with (the
    # re-check after a preemption runs with the same).
    features: object = None
    config: object = None

    @property
    def bindable(self) -> bool:
        return self.refusal is None and self.node is not None

    @property
    def result(self) -> dict:
        return self.doc["pods"][0]

    def describe(self) -> list[str]:
        """The decision, in a few lines for people."""
        lines = [f"note: {n}" for n in self.notes]
        if not self.bindable:
            lines.append(f"not bindable: {self.refusal}")
        elif self.victims:
            lines.append(f"decision: preempt {len(self.victims)} pod(s) on node {self.node}, then bind "
                         f"{self.key} to it:")
            lines.extend(f"  evict {_key(v)} (priority {v['spec'].get('priority') or 0})" for v in self.victims)
        else:
            lines.append(f"decision: bind {self.key} to node {self.node}")
        if self.bindable and self.binder is not None:
            lines.append(f"binder: extender {self.binder.name} (its bindVerb {self.binder.bind_verb!r}) binds the "
                         "pod, as kube-scheduler lets it; it is called only with --yes")
        return lines

    def question(self) -> str:
        if self.victims:
            return f"Evict {len(self.victims)} pod(s) and bind {self.key} to node {self.node}?"
        return f"Bind {self.key} to node {self.node}?"

    def summary(self, *, bound: bool, dry_run: bool, outcome: "BindOutcome | None" = None) -> dict:
        """The `bind` section added to the SchedulingResult document."""
        out = {
            "pod": self.key,
            "node": self.node,
            "bindable": self.bindable,
            "reason": self.refusal,
            "victims": [_key(v) for v in self.victims],
            "evicted": list(outcome.evicted) if outcome else [],
            "dryRun": dry_run,
            "bound": bound,
            "notes": list(self.notes) + (list(outcome.notes) if outcome else []),
        }
        if self.binder is not None:
            out["binder"] = self.binder.name  # the extender that binds, instead of pods/binding
        return out


@dataclass
class BindOutcome:
    node: str
    evicted: list[str] = field(default_factory=list)
    binder: str | None = None  # the extender that bound the pod, None for the pods/binding API
    # What was done although its request got no answer, as the pod read again
    # showed it (one line each, for people).
    notes: list[str] = field(default_factory=list)


def _key(pod: dict) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


def split_ref(ref: str) -> tuple[str, str]:
    ns, _, name = ref.rpartition("/")
    return ns or "default", name


def _where(conn) -> str:
    ctx = f' (context "{conn.context_name}")' if conn.context_name else ""
    return f"cluster {conn.server}{ctx}"


# ---- plan ------------------------------------------------------------------------------------


def plan(conn, ref: str, *, node: str | None = None, preempt: bool = False, tie_break: str = "random",
         seed: int | None = None, progress=None, config=None, sampling: str = "all", features=None,
         choose=None) -> BindPlan:
    """Read the cluster, run the cycle for the pod, decide. Writes nothing.
    `choose(workload)` -> (features, config), when given, chooses the version
    and configuration once the cluster is read (its version known)."""
    from .explain import explain
    from .load import load_workload_from_cluster

    ns, name = split_ref(ref)
    key = f"{ns}/{name}"
    # A cheap look first: a wrong name or a bound pod should not cost a full read.
    _check_pending(conn, key, conn.get_pod(ns, name))
    try:
        workload = load_workload_from_cluster(conn, (), [key], progress=progress)
    except InputError as e:  # bound or deleted while the cluster was read
        raise ClusterError(f"{_where(conn)}: {e}") from None
    if choose is not None:
        features, config = choose(workload)
    if node is not None and not any(n["metadata"]["name"] == node for n in workload.cluster.nodes):
        raise UsageError(f"no node named {node!r} in {_where(conn)}")
    doc = explain(workload, tie_break=tie_break, seed=seed, config=config, sampling=sampling, features=features)
    pods_by_key = {_key(p): p for p in workload.cluster.pods}
    result = doc["pods"][0]
    p = BindPlan(key, pods_by_key[key], doc, features=features, config=config)
    _decide(p, result, node, preempt, pods_by_key)
    scheduler = result.get("schedulerName") or DEFAULT_SCHEDULER
    if scheduler == DEFAULT_SCHEDULER and p.bindable:
        p.notes.append(f"{key} has schedulerName {scheduler}: a running kube-scheduler may bind it "
                       "first (then this bind stops with a conflict, and nothing is bound twice)")
    if doc.get("notEvaluated"):
        p.notes.append("the result is incomplete: " + ", ".join(doc["notEvaluated"]) +
                       " not evaluated, so kube-scheduler might decide otherwise")
    _binder(p, config)
    return p


def _binder(p: BindPlan, config) -> None:
    """extendersBinding: the first extender with a bindVerb interested in the
    pod binds it instead of the DefaultBinder."""
    if config is None or not config.extenders:
        return
    from ..framework.extenders import Extenders

    exts = Extenders.from_config(config.extenders, config.source)
    binder = exts.binder_for(p.pod)
    if binder is None:
        return
    if config.skip_extenders:
        p.notes.append(f"--skip-extenders: extender {binder.name}, the binder of this pod, is not called; "
                       "kschedx binds through the API as the DefaultBinder does")
        return
    p.binder, p.extenders = binder, exts


def _decide(p: BindPlan, r: dict, node: str | None, preempt: bool, pods_by_key: dict) -> None:
    status = r["status"]
    pre = r.get("preemption") or {}
    nominated = pre.get("nominatedNode")
    if status == "Gated":
        p.refusal = "the pod has scheduling gates: kube-scheduler does not try it until they are removed"
        return
    if status == "Error":
        p.refusal = f"the scheduling cycle failed: {r.get('message')}"
        return
    if status == "NoProfile":
        p.refusal = r.get("message") or "no profile of the configuration serves the pod's schedulerName"
        return
    if node is not None:
        verdict = next((n for n in r["nodes"] if n["name"] == node), None)
        if verdict is not None and verdict["feasible"]:
            p.node = node
            if r.get("selectedNode") and r["selectedNode"] != node:
                p.notes.append(f"kube-scheduler would choose node {r['selectedNode']}; binding to {node} as asked")
            return
        if nominated == node and status == "Unschedulable":
            _preemption(p, pre, preempt, pods_by_key)
            return
        p.refusal = f"node {node} does not pass every Filter: {_failure(verdict)}"
        return
    if status == "Scheduled":
        p.node = r["selectedNode"]
        return
    if nominated:
        _preemption(p, pre, preempt, pods_by_key)
        return
    p.refusal = f"unschedulable: {r.get('message')}"


def _preemption(p: BindPlan, pre: dict, preempt: bool, pods_by_key: dict) -> None:
    victims = pre.get("victims") or []
    nominated = pre["nominatedNode"]
    names = ", ".join(v["pod"] for v in victims)
    if not preempt:
        p.refusal = (f"no node fits now; preemption would make room on node {nominated} by evicting "
                     f"{len(victims)} pod(s) ({names}): pass --preempt to do it")
        return
    missing = [v["pod"] for v in victims if v["pod"] not in pods_by_key]
    if missing:  # the evaluator only picks pods of the snapshot: a bug if this happens
        raise ClusterError(f"preemption victims not in the snapshot: {', '.join(missing)}")
    p.node = nominated
    p.victims = [pods_by_key[v["pod"]] for v in victims]


def _failure(verdict: dict | None) -> str:
    if verdict is None:
        return "the node was not evaluated"
    failed = [f for f in verdict["filters"] if f["code"] not in ("Success", "Skip")]
    if not failed:
        return verdict.get("firstFailure") or "rejected"
    return "; ".join(f"{f['plugin']}: {', '.join(f['reasons']) or f['code']}" for f in failed)


def _check_pending(conn, key: str, current: dict | None, *, uid: str | None = None,
                   resource_version: str | None = None) -> dict:
    """The pod as it is now must still be the pod we planned for, and unbound."""
    where = _where(conn)
    if current is None:
        raise ClusterError(f"{where}: pod {key} not found (deleted?)")
    meta = current["metadata"]
    if uid is not None and meta.get("uid") != uid:
        raise ClusterError(f"{where}: pod {key} was deleted and re-created (UID {uid} is now "
                           f"{meta.get('uid')}): not bound")
    node = (current.get("spec") or {}).get("nodeName")
    if node:
        raise ClusterError(f"{where}: pod {key} is already bound to node {node}")
    phase = (current.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise ClusterError(f"{where}: pod {key} has finished ({phase})")
    if meta.get("deletionTimestamp"):
        raise ClusterError(f"{where}: pod {key} is being deleted")
    if resource_version is not None and meta.get("resourceVersion") != resource_version:
        raise ClusterError(f"{where}: pod {key} changed since it was read (resourceVersion "
                           f"{resource_version} -> {meta.get('resourceVersion')}): not bound; run again")
    return current


# ---- execute ---------------------------------------------------------------------------------


def execute(conn, p: BindPlan, *, timeout: float = 120.0, events: Callable[[str], None] | None = None,
            wait_progress=None, tie_break: str = "random", seed: int | None = None, config=None,
            sampling: str = "all") -> BindOutcome:
    """Carry out a bindable plan. Raises ClusterError, saying what was done, on any conflict.
    The fit is checked again with the plan's version and configuration
    (`config` when given)."""
    from ..sources.transport import EvictionBlocked

    if not p.bindable:
        raise ValueError("execute() needs a bindable plan")
    say = events or (lambda _m: None)
    ns, name = split_ref(p.key)
    meta = p.pod["metadata"]
    uid, rv = meta.get("uid"), meta.get("resourceVersion")
    outcome = BindOutcome(p.node)
    where = _where(conn)

    if p.victims:
        _check_pending(conn, p.key, conn.get_pod(ns, name), uid=uid, resource_version=rv)
        for victim in p.victims:
            vkey = _key(victim)
            try:
                evicted = conn.evict_pod(victim)
            except EvictionBlocked as e:
                budgets = "; ".join(e.budget_messages) or e.api_message
                raise ClusterError(f"{where}: evicting {vkey} was refused by a PodDisruptionBudget "
                                   f"({budgets}); {_done(outcome)}; {p.key} not bound") from None
            except ClusterError as e:
                if not _unsettled(e):
                    raise ClusterError(f"{e}; {_done(outcome)}; {p.key} not bound") from None
                outcome.notes.append(_settle_eviction(conn, victim, e, outcome, p.key))
                say(outcome.notes[-1])
                outcome.evicted.append(vkey)
                continue
            outcome.evicted.append(vkey)
            say(f"evicted {vkey}" if evicted else f"{vkey} was already gone")
        # What kube-scheduler records after a preemption: the pod is nominated to the
        # node, so that schedulers count it there while the victims terminate.
        try:
            conn.set_nominated_node(p.pod, p.node)
        except ClusterError as e:
            raise ClusterError(f"{e}; {_done(outcome)}; {p.key} not bound") from None
        say(f"nominated node {p.node} for {p.key}")
        left = conn.wait_pods_gone(p.victims, timeout, progress=wait_progress)
        if left:
            raise ClusterError(f"{where}: {len(left)} evicted pod(s) still terminating after {timeout:g}s "
                               f"({', '.join(_key(v) for v in left)}); {p.key} stays nominated to node "
                               f"{p.node}, not bound; run again later")
        say("the evicted pods are gone; checking the fit again")
        rv = _recheck_fit(conn, p, tie_break=tie_break, seed=seed, outcome=outcome,
                          config=config if config is not None else p.config, sampling=sampling)

    # Right before the write: the pod unchanged and unbound, the node present.
    current = _check_pending(conn, p.key, conn.get_pod(ns, name), uid=uid, resource_version=rv)
    if not conn.node_exists(p.node):
        raise ClusterError(f"{where}: node {p.node} no longer exists; {_done(outcome)}; {p.key} not bound")
    if p.binder is not None and _extender_binds(p, current, say, where, outcome):
        return outcome
    try:
        conn.bind_pod(current, p.node)
    except ClusterError as e:
        if not _unsettled(e):
            raise ClusterError(f"{e}; {_done(outcome)}; {p.key} not bound") from None
        outcome.notes.append(_settle_binding(conn, p, uid, e, outcome))
        say(outcome.notes[-1])
    return outcome


# ---- a write without a clear answer ------------------------------------------------------------


def _unsettled(e: ClusterError) -> bool:
    """Whether a failed write may have taken effect all the same. An HTTP 4xx
    is the server refusing it: nothing was written. A 5xx, a timeout or a
    connection lost after sending leaves it unknown (kube-apiserver may have
    stored it before failing to answer, or may store it still)."""
    from ..sources.transport import ClusterAPIError

    if isinstance(e, ClusterAPIError):
        return e.status >= 500
    return e.unanswered


def _cause(conn, e: ClusterError) -> str:
    """The error without its leading "cluster URL: ", for a second error in the same line."""
    text, prefix = str(e), f"{_where(conn)}: "
    return text[len(prefix):] if text.startswith(prefix) else text


def _check_cmd(key: str, field: str) -> str:
    ns, name = split_ref(key)
    return f"kubectl get pod {name} -n {ns} -o jsonpath='{{{field}}}'"


def _settle_binding(conn, p: BindPlan, uid: str | None, e: ClusterError, outcome: BindOutcome) -> str:
    """The binding got no clear answer: read the pod once (never send the
    binding again, it may have taken effect) and go by what it shows. When
    the pod is bound to the planned node, returns a line saying so; raises
    ClusterError otherwise."""
    ns, name = split_ref(p.key)
    try:
        now = conn.get_pod(ns, name)
    except ClusterError as again:
        raise ClusterError(f"{e}; reading the pod again failed too ({_cause(conn, again)}); {_done(outcome)}; "
                           f"{p.key} may or may not be bound to node {p.node}: check with "
                           f"{_check_cmd(p.key, '.spec.nodeName')}") from None
    if now is None or (uid and now["metadata"].get("uid") != uid):
        raise ClusterError(f"{e}; read again, pod {p.key} is gone (deleted{' and re-created' if now else ''}); "
                           f"{_done(outcome)}; {p.key} not bound") from None
    node = (now.get("spec") or {}).get("nodeName")
    if node == p.node:
        # The pod is where kschedx meant to put it: that is what `bind` is for,
        # whoever's request did it (a kube-scheduler may have chosen the same node).
        return (f"the binding request got no clear answer ({_cause(conn, e)}), but {p.key}, read again, "
                f"is bound to node {p.node}")
    if node:
        raise ClusterError(f"{e}; read again, {p.key} is bound to node {node}, not {p.node} (by another "
                           f"scheduler?); {_done(outcome)}") from None
    raise ClusterError(f"{e}; read again, {p.key} is not bound (a request still in the server may yet bind "
                       f"it: check with {_check_cmd(p.key, '.spec.nodeName')}); {_done(outcome)}") from None


def _settle_eviction(conn, victim: dict, e: ClusterError, outcome: BindOutcome, key: str) -> str:
    """An eviction got no clear answer: read the victim once (never evict it
    again) and go by what it shows. When it is gone or being deleted, it
    counts as evicted (bind goes on) and a line saying so is returned; raises
    ClusterError otherwise."""
    meta = victim["metadata"]
    vkey = _key(victim)
    ns, name = split_ref(vkey)
    try:
        now = conn.get_pod(ns, name)
    except ClusterError as again:
        raise ClusterError(f"{e}; reading {vkey} again failed too ({_cause(conn, again)}); {vkey} may or may "
                           f"not have been evicted: check with {_check_cmd(vkey, '.metadata.deletionTimestamp')}; "
                           f"{_done(outcome, besides=vkey)}; {key} not bound") from None
    gone = now is None or now["metadata"].get("uid") != meta.get("uid")
    if gone or now["metadata"].get("deletionTimestamp"):
        return (f"evicting {vkey} got no clear answer ({_cause(conn, e)}), but read again it is "
                f"{'gone' if gone else 'being deleted'}: evicted")
    raise ClusterError(f"{e}; read again, {vkey} is still there, not being deleted (a request still in the "
                       f"server may yet evict it); {_done(outcome, besides=vkey)}; {key} not bound") from None


def _extender_binds(p: BindPlan, pod: dict, say, where: str, outcome: BindOutcome) -> bool:
    """The binder extender's bind verb (ExtenderBindingArgs with the pod's
    name, namespace and UID). False when an ignorable binder failed: the
    DefaultBinder binds then, as upstream falls back to the Bind plugins."""
    from ..extenders.client import ExtenderError
    from ..extenders.wire import DecodeError

    ext = p.binder
    try:
        p.extenders.bind(ext, pod, p.node)
    except (ExtenderError, DecodeError) as e:
        if ext.ignorable:
            say(f"extender {ext.name} failed to bind ({e}); it is ignorable: binding through the API as the "
                "DefaultBinder does")
            return False
        raise ClusterError(f"{where}: extender {ext.name} failed to bind {p.key} to node {p.node}: {e}; "
                           f"{_done(outcome)}; the binding may or may not have taken effect") from None
    outcome.binder = ext.name
    return True


def _recheck_fit(conn, p: BindPlan, *, tie_break, seed, outcome: BindOutcome, config=None,
                 sampling: str = "all") -> str | None:
    """After the victims left: a fresh snapshot, the cycle again, and the node
    must pass every Filter. Returns the pod's resourceVersion in that snapshot."""
    from .explain import explain
    from .load import load_workload_from_cluster

    where = _where(conn)
    try:
        workload = load_workload_from_cluster(conn, (), [p.key])
    except InputError as e:
        raise ClusterError(f"{where}: {e}; {_done(outcome)}; not bound") from None
    doc = explain(workload, tie_break=tie_break, seed=seed, config=config, sampling=sampling,
                  features=None if config is not None else p.features)
    verdict = next((n for n in doc["pods"][0]["nodes"] if n["name"] == p.node), None)
    if verdict is None or not verdict["feasible"]:
        raise ClusterError(f"{where}: after the preemption node {p.node} does not fit {p.key}: "
                           f"{_failure(verdict)}; {_done(outcome)}; {p.key} stays nominated, not bound")
    pod = next(q for q in workload.cluster.pods if _key(q) == p.key)
    if pod["metadata"].get("uid") != p.pod["metadata"].get("uid"):
        raise ClusterError(f"{where}: pod {p.key} was deleted and re-created; {_done(outcome)}; not bound")
    return pod["metadata"].get("resourceVersion")


def _done(outcome: BindOutcome, *, besides: str | None = None) -> str:
    """What was evicted, for a message that says what was already done;
    `besides` is a victim whose eviction is in doubt (the message says so)."""
    if not outcome.evicted:
        return "no other pod was evicted" if besides else "nothing was evicted"
    return f"already evicted: {', '.join(outcome.evicted)}"
