"""`kschedx explain --watch`: pending pods explained as they come, for hours.

The cluster is read once, as `explain` reads it, and then followed
(sources/watch.py) into a state kept up to date (state/live.py). Each
pending pod the selection takes is explained `settle` after it appears (a
controller's burst of replicas lands in one batch, where identical pods share
one cycle), and again when something that can change its verdict changes
(the triggers below). A batch is a one-shot `explain` of its pods against the
state at that moment: the same Schedulers, the same runner, the same
documents, handed to the sink one by one. A pod that gets bound, deleted or
finishes is reported once as gone, with what kschedx had predicted for it.

The loop runs in the calling thread; the watches in theirs. `stop` (an
Event) ends it between two events or two pods: the sink then gets the
summary (WatchRun.summary) in its tail.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..features import default_features
from ..framework.dispatch import Schedulers
from ..framework.declaration import traits_of
from ..framework.queue import queue_order
from ..plugins.registry import declarations
from ..result.sink import ResultSink
from ..state.live import Change, LiveCluster
from ..state.types import parse_time
from ..util.errors import ClusterError
from ..util.gc_policy import collector_paused
from ..util.heap import give_back
from .document import head as document_head
from .explain import explainer_for, pod_documents
from .load import Workload
from .reach import Checker, Reach
from .triggers import SELF_ONLY, PodView, Triggers, events_of

# A drain applies the events queued (every one, unless they keep coming for
# longer than a batch may last) before pods due are explained.
DRAIN_EVENTS = 100_000
# Reasons (plugin, reason) kept per pod; label sets for metrics are capped elsewhere.
MAX_REASONS = 32
# Distinct warnings remembered as said.
MAX_SAID = 500


class WatchObserver:
    """What a watch tells besides its output (cli/metrics.py: Prometheus)."""

    def explained(self, doc: dict, seconds: float, trigger: str) -> None:
        pass

    def pending(self, by_status: dict[str, int], by_reason: dict[tuple[str, str], int]) -> None:
        pass

    def gone(self, outcome: str, prediction: str | None) -> None:
        pass

    def event(self, kind: str, type_: str) -> None:
        pass

    def connection(self, up: bool) -> None:
        pass

    def relisted(self, kind: str, reason: str) -> None:
        pass

    def lag(self, events_queued: int, oldest_event_seconds: float, pods_due: int, oldest_due_seconds: float) -> None:
        """How far behind the cluster the watch is, once per loop: events
        waiting to be applied and the age of the oldest; pods due to be
        explained and how long the oldest has been."""

    def staleness(self, seconds: float) -> None:
        """An explanation written: how long after the event that made it due."""


@dataclass(slots=True)
class Verdict:
    """What a pod's last explanation said, kept while it is pending."""

    status: str
    node: str | None  # selectedNode, else the node preemption would nominate
    top: tuple  # topNodes (at most 3)
    plugins: frozenset  # plugins that rejected some node, failed PreFilter, or gate it
    reasons: tuple  # (plugin, reason) pairs
    preempting: bool
    at: str  # when (RFC 3339)
    version: int  # LiveCluster.version then


@dataclass(slots=True)
class Tracked:
    key: str
    uid: str
    first_seen: float
    due: float | None = None
    reason: str | None = None
    explanations: int = 0
    namespace: str = ""
    priority: int = 0
    last: Verdict | None = None
    traits: frozenset = frozenset()  # what the pod's spec asks for that triggers read (traits_of)
    view: PodView | None = None  # what the triggers read of it, made when first asked
    due_since: float | None = None  # the event that first made it due since its last explanation
    reach: Reach | None = None  # what its last explanation's cycle depends on (commands/reach.py)

    def seen(self, pod: dict) -> None:
        """The pod's spec as it is now."""
        self.traits = traits_of(pod)
        self.priority = pod["spec"].get("priority") or 0
        self.view = None

    def view_of(self) -> PodView:
        view = self.view
        if view is None:
            v = self.last
            if v is None:
                view = PodView(self.namespace, self.priority, self.traits)
            else:
                view = PodView(self.namespace, self.priority, self.traits, v.status, v.node, v.top, v.plugins,
                               v.preempting, self.reach)
            self.view = view
        return view


@dataclass
class Summary:
    started: float
    stop_reason: str = ""
    events: dict[str, int] = field(default_factory=dict)
    relists: int = 0
    disconnections: int = 0
    pods: int = 0
    explanations: int = 0
    gone: dict[str, int] = field(default_factory=lambda: {"Bound": 0, "Deleted": 0, "Finished": 0})
    gone_unexplained: int = 0
    predictions: dict[str, int] = field(default_factory=lambda: {"hit": 0, "miss": 0, "unpredicted": 0})
    max_staleness: float = 0.0
    max_events_queued: int = 0
    max_event_age: float = 0.0
    rescored: int = 0  # Reaches whose scores were computed again (and whether it moved the verdict: `rescored_moved`)
    rescored_moved: int = 0
    rescore_skipped: int = 0  # Reaches flagged whose pods were gone or due already: not scored


def _now_text(wall=None) -> str:
    t = datetime.now(timezone.utc) if wall is None else datetime.fromtimestamp(wall(), timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def verdict_of(doc: dict, version: int, at: str) -> Verdict:
    pre = doc.get("preemption") or {}
    node = doc.get("selectedNode") or pre.get("nominatedNode")
    plugins = set(doc.get("filterSummary") or {})
    reasons = [(p, r) for p, rs in (doc.get("filterSummary") or {}).items() for r in rs]
    for s in doc.get("preFilter") or ():
        if s.get("code") not in ("Success", "Skip"):
            plugins.add(s["plugin"])
            reasons.extend((s["plugin"], r) for r in s.get("reasons") or ())
    gate = doc.get("gate")
    if gate:
        plugins.add(gate.get("plugin"))
        reasons.extend((gate.get("plugin"), r) for r in gate.get("reasons") or ())
    return Verdict(doc["status"], node, tuple((doc.get("topNodes") or [])[:3]), frozenset(plugins),
                   tuple(reasons[:MAX_REASONS]), bool(pre), at, version)


# How far a batch may run over its budget to serve every pod it chose
# (the oldest due): cut at its budget, it had left some of them due again,
# batch after batch, behind younger ones (one waited 13 s where batches
# took 2 s). The cost per pod it measures sizes the next batch.
OVERRUN = 2.0


class WatchRun:
    """The loop: events in, triggers, batches of pods explained, gone reports out."""

    def __init__(self, sink: ResultSink, watcher, live: LiveCluster, workload: Workload, *, selected,
                 named: set[str] | None, tie_break: str, seed: int | None, config=None, features=None,
                 sampling: str = "all",
                 nodes=None, reuse: bool = True, settle: float = 2.0, observer: WatchObserver | None = None,
                 stop: threading.Event | None = None, notice=None, clock=time.monotonic, wall=time.time,
                 warnings: list[str] | None = None):
        self.sink = sink
        self.watcher = watcher
        self.live = live
        self.workload = workload
        self.selected = selected  # pod dict -> bool (for names: the named keys)
        self.named = named  # the keys named on the command line, or None
        self.tie_break = tie_break
        self.seed = seed
        self.config = config
        self.features = features if features is not None else live.snapshot.features
        # Which pods an event explains again: from the plugins' declarations (commands/triggers.py).
        self.triggers = Triggers(declarations(self.features), self.features)
        self.sampling = sampling
        self.nodes = nodes
        self.settle = settle
        self.observer = observer or WatchObserver()
        self.stop = stop or threading.Event()
        self.notice = notice or (lambda text: None)
        self.clock = clock
        self.wall = wall
        self.start_warnings = list(warnings or ())
        self.tracked: dict[str, Tracked] = {}
        self.summary = Summary(started=clock())
        self.exit_code = 0
        self.fatal = None  # the cluster error that ended the run
        self.extenders = None
        if config is not None and config.extenders and not config.skip_extenders:
            from ..framework.extenders import Extenders

            self.extenders = Extenders.from_config(config.extenders, config.source)
        # An extender is a service of its own: it sees every pod, in order, once.
        self.reuse = reuse and self.extenders is None
        self.said: set[str] = set()  # warnings said once
        self._sync_target: int | None = None
        self._synced = threading.Event()
        self.batches = 0
        self.head: dict | None = None
        self._window: float | None = None
        # What re-checks a node for a Reach: the last batch's frameworks
        # (None until the first batch, and after a nomination changed: the
        # rules decide meanwhile).
        self.checker: Checker | None = None
        self._flagged: dict = {}  # Reaches with nodes to score again -> since when (Checker.flag)
        self._rescore_at: float | None = None  # when they are scored again (_rescore_time)
        self._reaches: dict = {}  # this batch's Reaches, by scheduling key (or uid)
        self._explain_cost = 0.05  # seconds an explanation takes, on average lately
        # Pods gone since the gauges were last set: they are set once per drain,
        # not per event (on 200 pods and 150 binds a second, 3% of the watch's time).
        self._gauges_stale = False

    # -- for tests and the benchmark ------------------------------------------------------
    def sync(self, rv: int, timeout: float = 30.0) -> bool:
        """Wait until every event up to resourceVersion `rv` is applied and no
        pod is due, nor any node waiting to be scored again."""
        self._synced.clear()
        self._sync_target = int(rv)
        ok = self._synced.wait(timeout)
        self._sync_target = None
        return ok

    def explain_all_now(self) -> None:
        """Every tracked pod due now (tests: a full pass to compare)."""
        now = self.clock()
        for t in self.tracked.values():
            self._due(t, now, "test", settle=0.0)

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> int:
        now = self.clock()
        first = self._schedulers()
        self.head = document_head(first, "explain", self.nodes)
        self.sink.begin(self.head)
        self.sink.event({"type": "Started", "time": _now_text(self.wall), "pending": len(self.live.pending),
                         "selected": len(self.workload.pods), "nodes": len(self.live.snapshot.node_infos)})
        for w in self.start_warnings:
            self._say(w)
        # The first batch: exactly the pods a one-shot explain takes, at once.
        for pi in self.workload.pods:
            t = self._track(pi.pod, now)
            self._due(t, now, "pending", settle=0.0)
        self.workload.pods = []
        self._flush(now, first)
        del first
        events = self.watcher.events
        while not self.stop.is_set():
            now = self.clock()
            wait = 0.5
            next_due = min((t.due for t in self.tracked.values() if t.due is not None), default=None)
            if self._flagged:
                rescore_at = self._rescore_time()
                next_due = rescore_at if next_due is None else min(next_due, rescore_at)
            if next_due is not None:
                wait = max(0.0, min(wait, next_due - now))
            try:
                ev = events.get(timeout=wait) if wait > 0 else events.get_nowait()
            except queue.Empty:
                ev = None
            if ev is not None:
                self._drain(ev)
            if self.watcher.fatal is not None:
                self.summary.stop_reason = "error"
                self.exit_code = 4
                self.fatal = self.watcher.fatal
                break
            if self.stop.is_set():
                break
            self._lag(self.clock())
            self._flush(self.clock())
            self._stale_warnings()
            if self.live.should_compact():
                # What holds the old snapshot goes first: the build freezes what is alive.
                self._forget_reaches()
                self.live.compact()
            if getattr(self.sink, "closed", False):
                self.summary.stop_reason = "stdout closed"
                break
            if self.named is not None and not self.tracked:
                self.summary.stop_reason = "named pods gone"
                break
            self._check_synced()
        if not self.summary.stop_reason:
            self.summary.stop_reason = getattr(self.stop, "reason", None) or "stopped"
        return self.exit_code

    def _check_synced(self) -> None:
        target = self._sync_target
        if target is None or not self.watcher.events.empty():
            return
        if self._flagged or any(t.due is not None for t in self.tracked.values()):
            return  # (a Reach flagged is scored again at its settle, and may make pods due)
        if all(int(rv or 0) >= target for rv in self.watcher.resource_versions.values()):
            self._synced.set()

    def _drain(self, ev) -> None:
        """Every event queued applied before the next batch (a batch explains
        the state as it is now); a stream that never pauses is cut after as
        long as a batch may last, so that pods due are explained too."""
        deadline = self.clock() + max(self.settle, 1.0)
        n = 0
        events = self.watcher.events
        while ev is not None:
            self._event(ev)
            n += 1
            if n >= DRAIN_EVENTS or self.clock() >= deadline or self.stop.is_set():
                break
            try:
                ev = events.get_nowait()
            except queue.Empty:
                ev = None
        if self._gauges_stale:
            self._pending_gauges()

    def _event(self, ev) -> None:
        if ev.type == "STATUS":
            self._connection(ev.extra)
            return
        if ev.type == "WARNING":
            self._say(ev.extra["text"])
            return
        if ev.type == "FATAL":
            return  # watcher.fatal says it
        if ev.type in ("ADDED", "MODIFIED", "DELETED"):
            self.summary.events[ev.kind] = self.summary.events.get(ev.kind, 0) + 1
            self.observer.event(ev.kind, ev.type)
        changes = self.live.apply(ev)
        if ev.type == "RELIST_END":
            self.summary.relists += 1
            self.observer.relisted(ev.kind, "relist")
            self.sink.event({"type": "Relisted", "time": _now_text(self.wall), "objectKind": ev.kind})
        for text in self.live.take_notices():
            self._say(text)
        if changes:
            now = self.clock()
            # A pod is due `settle` after the event reached the watch, not
            # after it was applied: time waited in the queue counts.
            at = ev.received if ev.received is not None and ev.received <= now else now
            self._triggers(changes, at)

    def _connection(self, extra: dict) -> None:
        server = self.watcher.conn.server
        if not extra["up"]:
            self.summary.disconnections += 1
            self.observer.connection(False)
            cap = self.watcher.backoff[1]
            self.notice(f"lost cluster {server}: {_after_colon(extra['error'])}; retrying "
                        f"(every {cap:g}s at most)")
            self.sink.event({"type": "Disconnected", "time": _now_text(self.wall), "error": extra["error"]})
        else:
            self.observer.connection(True)
            self.notice(f"reconnected to cluster {server} after {_duration(extra['down_for'])}")
            self.sink.event({"type": "Reconnected", "time": _now_text(self.wall),
                             "downSeconds": round(extra["down_for"], 1)})

    def _say(self, text: str) -> None:
        if text not in self.said:
            if len(self.said) >= MAX_SAID:
                self.said.clear()  # bounded: a warning said long ago may be said again
            self.said.add(text)
            self.notice(text)

    def _stale_warnings(self) -> None:
        for w in self.live.warnings(now=self.clock()):
            self._say(w)

    # -- which pods, when -----------------------------------------------------------------
    def _track(self, pod: dict, now: float) -> Tracked:
        key = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
        t = self.tracked.get(key)
        if t is None:
            t = self.tracked[key] = Tracked(key, pod["metadata"]["uid"], now, namespace=pod["metadata"]["namespace"])
            t.seen(pod)
        return t

    def _when(self, now: float, settle: float) -> float:
        """When what an event at `now` triggers is due. Bursts coalesce: the
        first trigger opens a window of `settle`, and what comes while it is
        open is explained with it, in one batch."""
        when = now + settle
        window = self._window
        if window is not None and window >= now:
            return min(when, window)
        self._window = when
        return when

    def _due(self, t: Tracked, now: float, reason: str, settle: float | None = None) -> None:
        when = self._when(now, self.settle if settle is None else settle)
        if t.due is None:  # the first trigger of a window sets its reason and time
            t.due, t.reason = when, reason
        elif when < t.due:
            t.due = when
        if t.due_since is None:
            t.due_since = now

    def _triggers(self, changes: list[Change], now: float | None = None) -> None:
        if now is None:
            now = self.clock()
        for c in changes:
            what = c.what
            if c.kind == "Pod":
                key = f"{c.pod['metadata']['namespace']}/{c.pod['metadata']['name']}"
                if what == "pending-added":
                    if self.named is None and self.selected(c.pod):
                        t = self._track(c.pod, now)
                        self._due(t, now, "new")
                    elif self.named is not None and key in self.named and key not in self.tracked:
                        t = self._track(c.pod, now)
                        self._due(t, now, "new")
                    continue
                if what == "pending-changed":
                    self._pending_changed(key, c, now)
                    continue
                if what in ("pending-gone", "bound"):
                    t = self.tracked.pop(key, None)
                    if t is not None:
                        self._gone(t, c)
                    if what == "bound":  # it is on its node now, for the other pods
                        self._each(now, f"pod {key} bound to node {c.node}", events_of(c))
                    continue
                if what == "nomination":
                    # The checker's frameworks hold the nominations of their
                    # batch: the rules decide until the next one.
                    self.checker = None
                if what in ("nomination", "left", "arrived", "pod-changed"):
                    self._each(now, _pod_reason(c, key), events_of(c))
            elif c.kind == "Node":
                verb = {"node-added": "added", "node-removed": "removed", "node-changed": f"changed ({c.detail})",
                        "node-images": "images changed"}.get(what)
                if verb is not None:
                    self._each(now, f"node {c.node} {verb}", events_of(c))
            else:
                self._each(now, f"{c.kind} {c.detail} changed", events_of(c))

    def _each(self, now: float, reason: str, events) -> None:
        """Each tracked pod one of the events explains again is due (commands/triggers.py)."""
        checker = self.checker
        triggers = [self.triggers.trigger(e, checker).wants for e in events]
        if not triggers:
            return
        if checker is not None:
            checker.now, checker.reason = now, reason
        for t in self.tracked.values():
            if t.due is not None:
                continue  # due already (or not explained yet): it will be
            view = t.view
            if view is None:
                view = t.view_of()
            for wants in triggers:
                if wants(view):
                    self._due(t, now, reason)
                    break
        if self._flagged and self._rescore_at is None:
            # The first Reach flagged: scored again with the burst it came
            # in, when its window closes, as the pods the burst made due.
            self._rescore_at = self._when(now, self.settle)

    def _rescore_time(self) -> float:
        """When the Reaches flagged are scored again (some are)."""
        if self._rescore_at is not None:
            return self._rescore_at
        return min(at for at, _ in self._flagged.values()) + self.settle

    def _pending_changed(self, key: str, c: Change, now: float) -> None:
        t = self.tracked.get(key)
        selected = key in self.named if self.named is not None else self.selected(c.pod)
        if t is None:
            if selected:
                t = self._track(c.pod, now)
                self._due(t, now, "selected")
            return
        if not selected:
            del self.tracked[key]
            self.sink.event({"type": "Unselected", "time": _now_text(self.wall), "pod": key,
                             "uid": t.uid})
            return
        t.seen(c.pod)
        if c.detail == "status":
            # Only its status moved (a condition, the nominated node): Gated pods do not care.
            if t.last is not None and t.last.status in SELF_ONLY:
                return
        self._due(t, now, f"changed: {c.detail}")

    # -- explaining -----------------------------------------------------------------------------
    def _schedulers(self) -> Schedulers:
        return Schedulers(self.live.cluster, tie_break=self.tie_break, seed=self.seed, config=self.config,
                          features=self.features, sampling=self.sampling, snapshot=self.live.snapshot,
                          extenders=self.extenders, freeze=False)

    def _rescore(self, now: float, scheds: Schedulers) -> None:
        """The Reaches whose feasible nodes changed are scored again when the
        window of the burst that first changed them closes (`settle` after
        it at the latest: _rescore_time); the pods of those whose verdict
        moved are due now."""
        if not self._flagged or now < self._rescore_time():
            return
        flagged = dict(self._flagged)
        self._flagged.clear()
        self._rescore_at = None
        fresh = Checker(scheds)
        by_reach: dict[int, list[Tracked]] = {}
        for t in self.tracked.values():
            if t.reach is not None and t.reach in flagged:
                by_reach.setdefault(id(t.reach), []).append(t)
        for reach, (since, reason) in flagged.items():
            pods = by_reach.get(id(reach))
            if not pods or all(t.due is not None for t in pods):
                # Its pods are gone (bound, deleted) or due already: a new
                # cycle explains them and makes their Reach; scores computed
                # now could only make them due, and nothing asks this Reach
                # again (a pod due is not put to the triggers).
                self.summary.rescore_skipped += 1
                continue
            self.summary.rescored += 1
            if not reach.rescore(fresh):
                continue
            self.summary.rescored_moved += 1
            for t in by_reach.get(id(reach), ()):
                if t.due is None:
                    t.due_since = since
                self._due(t, now, reason or "node changed", settle=0.0)

    def _flush(self, now: float, scheds: Schedulers | None = None) -> None:
        if self._flagged and now >= self._rescore_time():
            if scheds is None:
                scheds = self._schedulers()
            self._rescore(now, scheds)
        due = [t for t in self.tracked.values() if t.due is not None and t.due <= now]
        if not due:
            return
        if self._window is not None and self._window <= now:
            self._window = None
        budget = max(self.settle, 1.0)
        # Oldest first: the pods due the longest, as many as a batch can
        # explain.
        due.sort(key=lambda t: (t.due_since if t.due_since is not None else t.due, t.key))
        room = max(1, int(budget / max(self._explain_cost, 1e-3)))
        chosen = []
        for t in due:
            pod = self.live.pending_pod(t.key)
            if pod is None:  # gone meanwhile; its Change says so
                t.due = None
                continue
            if len(chosen) < room:
                chosen.append((t.key, pod))
        if not chosen:
            return
        pods = [self.live.snapshot.pod_info(pod) for _, pod in sorted(chosen, key=lambda kp: kp[0])]
        if scheds is None:
            scheds = self._schedulers()
        # "Now" for what depends on time (DynamicResources' binding timeout), as a read sets it.
        self.live.cluster.read_at = self.wall()
        pods = scheds.queue_order(queue_order(pods))
        if not (self.tie_break == "random" and self.seed is not None):
            # The longest due first: each pod is explained against the same
            # state whatever the order, and in queue order a pod due just
            # after a batch began waited for it, then for the pods before it
            # in the next one. (With --seed, the batch draws as a one-shot
            # run of its pods draws: in queue order.)
            waited = {t.key: (t.due_since if t.due_since is not None else t.due) for t in due}
            pods.sort(key=lambda pi: waited[pi.key])
        workload = Workload(self.live.cluster, pods, asked=self._asked(pods))
        explainer = explainer_for(scheds, workload, self.sink, reuse=self.reuse, nodes=self.nodes)
        lowest = min((pi.priority for ni in self.live.snapshot.node_infos for pi in ni.pods), default=0)
        reaches = self._reaches = {}

        def on_cycle(pi, r):
            reaches[explainer.key(pi) or pi.uid] = Reach.of(scheds.framework_for(pi), pi, r, lowest)

        explainer.on_cycle = on_cycle
        started = self.clock()
        documents = pod_documents(explainer, pods, self.sink, 1)
        self.batches += 1
        explained = 0
        # One pause of the cyclic collector for the whole batch: paused for
        # each pod and let go between them, it walked what the batch keeps
        # (documents kept for identical pods, the report's last body) after
        # every pod, some 15% of the watch's time at 5,000 nodes. What the
        # batch leaves is collected once, after it.
        with collector_paused():
            for pi in pods:
                if self.stop.is_set() or self.clock() - started > budget * OVERRUN:
                    break  # the rest stay due: the next batch takes them
                t = self.tracked[pi.key]
                t0 = self.clock()
                doc = next(documents, None)
                if doc is None:
                    break
                seconds = self.clock() - t0
                t.reach = reaches.get(explainer.key(pi) or pi.uid)
                self._explained(t, doc, seconds)
                explained += 1
                del doc
            del documents, explainer
        if explained:
            cost = (self.clock() - started) / explained
            self._explain_cost = 0.5 * self._explain_cost + 0.5 * cost
        self._reaches = {}
        forget = getattr(self.sink, "forget_texts", None)
        if forget is not None:  # a batch's pods share no nodes list with the next's
            forget()
        give_back()  # the batch's lines and results are gone: their pages too
        # The next events' Reaches ask these frameworks (the state is the live one).
        self.checker = Checker(scheds, self._flagged)
        self._pending_gauges()

    def _forget_reaches(self) -> None:
        """The snapshot was built again (label signatures forgotten, new
        NodeInfos and PodInfos): what the Reaches kept is of the old one. The
        rules decide for every pod until it is explained again; nodes kept
        to be scored again make their pods due."""
        now = self.clock()
        flagged, self._flagged = self._flagged, {}
        self._rescore_at = None
        self.checker = None
        for t in self.tracked.values():
            if t.reach is not None and t.reach in flagged:
                self._due(t, now, "cluster read again", settle=0.0)
            t.reach = None
            t.view = None

    def _lag(self, now: float) -> None:
        """How far behind the watch is (observer.lag, the summary's maxima)."""
        events = self.watcher.events
        queued = events.qsize()
        oldest_event = 0.0
        if queued:
            with events.mutex:
                head = events.queue[0] if events.queue else None
            received = getattr(head, "received", None)
            if received is not None:
                oldest_event = max(0.0, time.monotonic() - received)
        due = [t.due_since for t in self.tracked.values() if t.due is not None and t.due_since is not None]
        oldest_due = max(0.0, now - min(due)) if due else 0.0
        s = self.summary
        s.max_events_queued = max(s.max_events_queued, queued)
        s.max_event_age = max(s.max_event_age, oldest_event)
        self.observer.lag(queued, oldest_event, len(due), oldest_due)

    def _asked(self, pods) -> set:
        if self.named is None:
            return set()
        return {pi.uid for pi in pods if pi.key in self.named}

    def _explained(self, t: Tracked, doc: dict, seconds: float) -> None:
        t.explanations += 1
        reason, t.reason, t.due = t.reason, None, None
        if t.due_since is not None:
            stale = max(0.0, self.clock() - t.due_since)
            self.summary.max_staleness = max(self.summary.max_staleness, stale)
            self.observer.staleness(stale)
            t.due_since = None
        at = _now_text(self.wall)
        t.last = verdict_of(doc, self.live.version, at)
        t.view = None
        self.summary.explanations += 1
        if t.explanations == 1:
            self.summary.pods += 1
        self.sink.event({"type": "Explained", "time": at, "pod": t.key, "reason": reason or "",
                         "explanation": t.explanations})
        self.sink.pod(doc)
        self.observer.explained(doc, seconds, _trigger_class(reason))

    def _pending_gauges(self) -> None:
        self._gauges_stale = False
        by_status: dict[str, int] = {}
        by_reason: dict[tuple[str, str], int] = {}
        for t in self.tracked.values():
            if t.last is None:
                continue
            by_status[t.last.status] = by_status.get(t.last.status, 0) + 1
            for pair in set(t.last.reasons):
                by_reason[pair] = by_reason.get(pair, 0) + 1
        self.observer.pending(by_status, by_reason)

    # -- gone ---------------------------------------------------------------------------------
    def _gone(self, t: Tracked, c: Change) -> None:
        pod = c.pod
        if c.what == "bound":
            outcome = "Bound"
        elif c.detail == "finished":
            outcome = "Finished"
        else:
            outcome = "Deleted"
        if t.explanations == 0:
            self.summary.gone_unexplained += 1
            self.observer.gone("Unexplained", None)
            self._gauges_stale = True
            return
        self.summary.gone[outcome] += 1
        v = t.last
        node = c.node if outcome == "Bound" else None
        hit = None
        outcome_key = None
        if outcome == "Bound":
            if v.node is None and v.status in ("Gated", "NoProfile", "Error"):
                outcome_key = "unpredicted"
            else:
                hit = node == v.node or (v.status == "Scheduled" and node in v.top)
                outcome_key = "hit" if hit else "miss"
            self.summary.predictions[outcome_key] += 1
        stale = t.due is not None
        pending_seconds = self._pending_seconds(pod, (c.extra or {}).get("scheduledAt"), t)
        event = {
            "type": "PodGone", "time": _now_text(self.wall), "pod": t.key, "uid": t.uid, "outcome": outcome,
            "node": node, "scheduler": pod["spec"].get("schedulerName"),
            "pendingSeconds": pending_seconds,
            "prediction": {"status": v.status, "node": v.node, "topNodes": list(v.top), "explainedAt": v.at,
                           "explanations": t.explanations, "stale": stale,
                           **({"staleBecause": t.reason} if stale and t.reason else {})},
            "predictionHit": hit,
        }
        self.sink.event(event)
        self.observer.gone(outcome, outcome_key)
        self._gauges_stale = True

    def _pending_seconds(self, pod: dict, scheduled_at, t: Tracked) -> int:
        created = parse_time(pod["metadata"].get("creationTimestamp"))
        scheduled = parse_time(scheduled_at) if scheduled_at else None
        if created is not None and scheduled is not None and scheduled >= created:
            return int((scheduled - created).total_seconds())
        return int(self.clock() - t.first_seen)

    # -- the end ------------------------------------------------------------------------------
    def summary_dict(self) -> dict:
        s = self.summary
        pending: dict[str, int] = {}
        for t in self.tracked.values():
            status = t.last.status if t.last is not None else "Unexplained"
            pending[status] = pending.get(status, 0) + 1
        return {
            "durationSeconds": round(self.clock() - s.started, 1),
            "stopReason": s.stop_reason,
            "events": dict(sorted(s.events.items())),
            "relists": s.relists,
            "disconnections": s.disconnections,
            "pods": s.pods,
            "explanations": s.explanations,
            "gone": dict(s.gone),
            "goneUnexplained": s.gone_unexplained,
            "predictions": dict(s.predictions),
            "lag": {"maxStalenessSeconds": round(s.max_staleness, 1), "maxEventsQueued": s.max_events_queued,
                    "maxEventAgeSeconds": round(s.max_event_age, 1)},
            "pending": dict(sorted(pending.items())),
            "exitCode": self.exit_code,
        }

    def tail(self) -> dict:
        from ..result.document import document_tail

        config_warnings = self.config.warnings if self.config is not None else []
        warnings = list(dict.fromkeys(self.start_warnings + config_warnings + self.live.warnings()))
        return document_tail(warnings=warnings, extra={"watch": self.summary_dict()})


def _pod_reason(c: Change, key: str) -> str:
    """Why pods are due after a change of a bound (or nominated) pod."""
    if c.what == "nomination":
        return f"pod {key} nominated to node {c.node}"
    if c.what == "left":
        return f"pod {key} left node {c.node}"
    if c.what == "arrived":
        return f"pod {key} arrived on node {c.node}"
    if c.detail == "status":
        return f"pod {key} changed"
    return f"pod {key} changed on node {c.node}"


def _trigger_class(reason: str | None) -> str:
    """The kind of trigger, for metrics labels (a small set)."""
    if not reason:
        return "other"
    head = reason.split(" ", 1)[0].rstrip(":")
    return head if head in ("pending", "new", "changed", "selected", "node", "pod", "test") else "object"


def _after_colon(text: str) -> str:
    """A transport error without the 'cluster ...: watching ...:' prefix."""
    parts = text.split(": ", 2)
    return parts[2] if len(parts) == 3 and parts[0].startswith("cluster ") else text


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    m, s = divmod(seconds, 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


def watch_into(sink: ResultSink, conn, *, refs=(), all_pending: bool = False, selection=None, tie_break: str,
               seed: int | None, config=None, choose=None, sampling: str = "all", nodes=None, reuse: bool = True,
               settle: float = 2.0, observer: WatchObserver | None = None, stop: threading.Event | None = None,
               progress=None, notice=None, watcher_options: dict | None = None, on_run=None) -> int:
    """Read the cluster as explain does, then follow it until `stop`: the
    exit code (0; 4 when the cluster failed for good). `on_run(run)` is
    called with the WatchRun before it starts (tests, the benchmark).
    `choose(workload)`: the run's (Features, SchedulerConfig or None) once
    the cluster is read (its version known); without it, `config` and its
    features, else the server version's defaults (the newest when kschedx
    does not reproduce it)."""
    from ..api.selection import PodSelection
    from ..sources.kinds import KINDS
    from ..sources.watch import Watcher
    from ..util.gc_policy import long_running
    from .load import workload_of_read

    # What is built to last (the state, and again at each compaction) is frozen
    # out of the collector's way: collect first, so that no garbage is frozen for good.
    long_running()
    selection = selection or PodSelection()
    read = conn.read_objects(progress)
    workload = workload_of_read(conn, read, (), refs, all_pending, selection=selection)
    if choose is not None:
        features, config = choose(workload)
    else:
        features = config.features if config is not None else None
    if features is None:
        # As explain: the server's version (when kschedx reproduces it), else the newest.
        from ..features.versions import run_version

        version, warning = run_version(None, getattr(workload.cluster, "server_version", None))
        if warning is not None:
            workload.warnings.insert(0, warning)
        features = default_features(version)
    warnings = list(workload.warnings)
    read.objects = []
    live = LiveCluster(workload.cluster, source=f"cluster {conn.server}", features=features)
    named = None
    if refs and not all_pending:
        named = {pi.key for pi in workload.pods}
        matcher = None
    else:
        matcher = selection.matcher(conn.namespace)
    kinds = [k for k in KINDS if k.kind not in read.unreadable]
    watcher = Watcher(conn, kinds, read.resource_versions, **(watcher_options or {}))
    run = WatchRun(sink, watcher, live, workload, selected=matcher, named=named, tie_break=tie_break, seed=seed,
                   config=config, features=features, sampling=sampling, nodes=nodes, reuse=reuse, settle=settle,
                   observer=observer, stop=stop, notice=notice, warnings=warnings)
    if on_run is not None:
        on_run(run)
    watcher.start()
    fatal = None
    try:
        code = run.run()
        fatal = run.fatal
    finally:
        watcher.stop()
    sink.end(run.tail())
    if fatal is not None:
        raise ClusterError(str(fatal))
    return code
