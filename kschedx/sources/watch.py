"""Following a live cluster after one read: a watch of every kind read.

kube-scheduler lists once and then follows watches; so does `explain
--watch`. One thread per kind keeps a watch open from the resourceVersion of
its list (sources/cluster.py), and puts what it reads on one bounded queue
for the single consumer (commands/watch.py):

- ADDED, MODIFIED, DELETED: one object each, typed and trimmed like a list's
  items (a pod turning Succeeded or Failed leaves the field selector and
  comes as DELETED, as the scheduler's informer sees it);
- RELIST_BEGIN, RELIST_PAGE, RELIST_END: the kind listed again, page by page,
  when the server no longer has the events since our resourceVersion (410
  Gone); the consumer diffs it against what it holds;
- STATUS: the server lost (once, when the first watch fails) and back (once,
  when the last failing one recovers); WARNING: something said once.

As client-go's reflector does, a dropped connection resumes the watch from
the last resourceVersion seen (bookmarks included): nothing is missed and
nothing listed again; only 410 relists. Failures are retried with
exponential backoff and a cap. The server ends each watch after a random
5-10 minutes; it is reopened at once.
"""

from __future__ import annotations

import json
import queue
import random
import threading
import time
from dataclasses import dataclass, replace

from ..util.errors import ClusterError
from .kinds import Kind, POD
from .transport import ClusterAPIError, WatchStream

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"
RELIST_BEGIN, RELIST_PAGE, RELIST_END = "RELIST_BEGIN", "RELIST_PAGE", "RELIST_END"
STATUS, WARNING, FATAL = "STATUS", "WARNING", "FATAL"

_TERMINAL = ("Succeeded", "Failed")


@dataclass(frozen=True, slots=True)
class WatchEvent:
    kind: str  # "Pod", "Node", ...; "" for STATUS, WARNING and FATAL
    type: str
    obj: dict | None = None  # ADDED/MODIFIED/DELETED: the object, typed and trimmed
    items: list | None = None  # RELIST_PAGE: one page of objects
    rv: str = ""  # the resourceVersion after this event
    # Pods: {"scheduledAt": PodScheduled's lastTransitionTime or None};
    # STATUS: {"up": bool, "error": str, "down_for": seconds}; WARNING, FATAL: {"text": str};
    # RELIST_BEGIN: {"reason": str}
    extra: dict | None = None
    # When the watcher had it (its clock, time.monotonic): how long it waited
    # to be applied (None: not stamped, e.g. made by a test).
    received: float | None = None


class WatchExpired(Exception):
    """The server no longer has the events since our resourceVersion (410 Gone)."""


class Backoff:
    """client-go's reflector backoff: 0.8 s doubling to a cap, with jitter."""

    def __init__(self, initial: float = 0.8, cap: float = 30.0, jitter: float = 0.2):
        self.initial = initial
        self.cap = cap
        self.jitter = jitter
        self._next = initial

    def next(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, self.cap)
        return delay * random.uniform(1 - self.jitter, 1 + self.jitter) if self.jitter else delay

    def reset(self) -> None:
        self._next = self.initial


class Health:
    """Whether the server answers, said once per outage: the first kind to
    fail puts STATUS down, the last failing one to recover STATUS up."""

    def __init__(self, put, clock=time.monotonic):
        self._put = put
        self._clock = clock
        self._lock = threading.Lock()
        self._failing: set[str] = set()
        self._since: float | None = None
        self.outages = 0

    def failed(self, kind: str, error: ClusterError) -> None:
        with self._lock:
            self._failing.add(kind)
            if self._since is None:  # the first failure of an outage
                self._since = self._clock()
                self.outages += 1
                event = WatchEvent("", STATUS, extra={"up": False, "error": str(error), "down_for": 0.0})
            else:
                event = None
        if event is not None:
            self._put(event)

    def ok(self, kind: str) -> None:
        with self._lock:
            if kind not in self._failing:
                return
            self._failing.discard(kind)
            if self._failing or self._since is None:
                return
            down_for = self._clock() - self._since
            self._since = None
        self._put(WatchEvent("", STATUS, extra={"up": True, "error": "", "down_for": down_for}))


class Watcher:
    """One watch per kind, from the resourceVersions of the first read."""

    def __init__(self, conn, kinds: list[Kind], start_rvs: dict[str, str], *, queue_size: int = 20_000,
                 timeout_range: tuple[int, int] = (300, 600), poll_interval: float = 300.0,
                 backoff: tuple[float, float] = (0.8, 30.0), clock=time.monotonic):
        self.conn = conn
        self.kinds = list(kinds)
        self.events: queue.Queue[WatchEvent] = queue.Queue(maxsize=queue_size)
        self.resource_versions: dict[str, str] = {k.kind: start_rvs.get(k.kind, "") for k in self.kinds}
        self.timeout_range = timeout_range
        self.poll_interval = poll_interval
        self.backoff = backoff
        self.clock = clock
        self.health = Health(self._put, clock)
        self.fatal: ClusterError | None = None
        self.relists: dict[str, int] = {}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._streams: dict[str, WatchStream] = {}
        self._lock = threading.Lock()

    # -- life ----------------------------------------------------------------------------
    def start(self) -> None:
        for kind in self.kinds:
            t = threading.Thread(target=self._run, args=(kind,), daemon=True, name=f"kschedx-watch-{kind.plural}")
            self._threads.append(t)
            t.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Ends every watch; threads stuck anyway are daemons and never hold the exit."""
        self._stop.set()
        with self._lock:
            streams = list(self._streams.values())
        for s in streams:
            s.close()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _put(self, event: WatchEvent) -> bool:
        """Onto the queue, waiting while it is full (back-pressure on the
        stream); False once stopped."""
        if event.received is None:
            event = replace(event, received=self.clock())
        while not self._stop.is_set():
            try:
                self.events.put(event, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _sleep(self, seconds: float) -> bool:
        """False when stopped meanwhile."""
        return not self._stop.wait(seconds)

    # -- one kind --------------------------------------------------------------------------
    def _run(self, kind: Kind) -> None:
        backoff = Backoff(*self.backoff)
        backoff.failures = 0
        polling = False
        not_found_said = False
        while not self._stop.is_set():
            # Where the last watch got to, bookmarks included, however it ended.
            rv = self.resource_versions[kind.kind]
            try:
                if polling:
                    if not self._sleep(self.poll_interval):
                        return
                    rv = self._relist(kind, "polled: the role cannot watch")
                    self.health.ok(kind.kind)
                    continue
                rv = self._watch(kind, rv, backoff)
            except WatchExpired as e:
                try:
                    rv = self._relist(kind, str(e))
                    self.health.ok(kind.kind)
                    backoff.reset()
                except ClusterError as err:
                    if self._failed(kind, err, backoff):
                        return
            except ClusterAPIError as e:
                if e.status == 401:
                    return self._fatal(e)
                if e.status == 403 and not polling and not _is_list_forbidden(e):
                    if kind.required:
                        return self._fatal(ClusterAPIError(
                            f"{e}: the role needs the `watch` verb on {kind.resource} "
                            "(deploy/rbac.yaml's kschedx-read has it)", status=403, reason=e.reason,
                            api_message=e.api_message))
                    self._put(WatchEvent("", WARNING, extra={"text": (
                        f"cannot watch {kind.resource} ({e.api_message or 'forbidden'}): listing them "
                        f"every {_duration(self.poll_interval)} instead; grant the `watch` verb "
                        "(deploy/rbac.yaml's kschedx-read has it)")}))
                    polling = True
                    continue
                if e.status == 404:
                    if not not_found_said:
                        not_found_said = True
                        self._put(WatchEvent("", WARNING, extra={"text": (
                            f"{kind.resource} are no longer served by the cluster: kschedx keeps what it "
                            "last read of them")}))
                    if not self._sleep(self.poll_interval):
                        return
                    continue
                if e.status == 410 or _too_large(e):
                    try:
                        rv = self._relist(kind, "410 Gone" if e.status == 410 else "too large resource version")
                        self.health.ok(kind.kind)
                    except ClusterError as err:
                        if self._failed(kind, err, backoff):
                            return
                    continue
                if self._failed(kind, e, backoff):
                    return
            except ClusterError as e:
                if self._failed(kind, e, backoff):
                    return

    def _failed(self, kind: Kind, error: ClusterError, backoff: Backoff) -> bool:
        """A failure worth another try later; True when stopped meanwhile. A
        single failure after a good watch (a pooled connection the server had
        closed, one 503) is not yet an outage: only a second one in a row is."""
        if self._stop.is_set():
            return True
        backoff.failures += 1
        if backoff.failures > 1:
            self.health.failed(kind.kind, error)
        delay = getattr(error, "retry_after", None)
        return not self._sleep(delay if delay else backoff.next())

    def _fatal(self, error: ClusterError) -> None:
        if self.fatal is None:
            self.fatal = error
        self._put(WatchEvent("", FATAL, extra={"text": str(error)}))

    def _watch(self, kind: Kind, rv: str, backoff: Backoff) -> str:
        """One watch, until the server ends it (returns the last resourceVersion)."""
        timeout = random.randint(*self.timeout_range)
        stream = self.conn.open_watch(kind, rv, timeout)
        with self._lock:
            self._streams[kind.kind] = stream
        try:
            if self._stop.is_set():
                return rv
            self.health.ok(kind.kind)
            backoff.reset()
            backoff.failures = 0
            for line in stream.lines():
                ev = json.loads(line)
                type_ = ev.get("type")
                obj = ev.get("object") or {}
                if type_ == "BOOKMARK":
                    rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)
                    self.resource_versions[kind.kind] = rv
                    continue
                if type_ == "ERROR":
                    raise _error_event(obj, self.conn.server, kind)
                if type_ not in (ADDED, MODIFIED, DELETED):
                    continue
                extra = None
                if kind is POD:
                    if (obj.get("status") or {}).get("phase") in _TERMINAL:
                        type_ = DELETED  # the field selector's view: it left the watch
                    extra = {"scheduledAt": _scheduled_at(obj)}
                item = adopt(obj, kind)
                rv = str((item.get("metadata") or {}).get("resourceVersion") or rv)
                if not self._put(WatchEvent(kind.kind, type_, item, rv=rv, extra=extra)):
                    return rv
                self.resource_versions[kind.kind] = rv
            return rv
        finally:
            with self._lock:
                self._streams.pop(kind.kind, None)
            stream.close()

    def _relist(self, kind: Kind, reason: str) -> str:
        self.relists[kind.kind] = self.relists.get(kind.kind, 0) + 1
        self._put(WatchEvent(kind.kind, RELIST_BEGIN, extra={"reason": reason}))

        def page(items):  # trimmed, terminal pods left out (list_pages)
            self._put(WatchEvent(kind.kind, RELIST_PAGE, items=items))

        def restart():
            self._put(WatchEvent(kind.kind, RELIST_BEGIN, extra={"reason": "the list expired; again"}))

        rv = self.conn.list_pages(kind, page, restart)
        self._put(WatchEvent(kind.kind, RELIST_END, rv=rv))
        self.resource_versions[kind.kind] = rv
        return rv


def adopt(obj: dict, kind: Kind) -> dict:
    """A watched object as a list gives it: kind and apiVersion first, trimmed
    to what scheduling reads (sources/trim.py)."""
    from .trim import trim

    item = {"apiVersion": kind.api_version, "kind": kind.kind,
            **{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}}
    return trim(item)


def _scheduled_at(pod: dict) -> str | None:
    """When the pod was bound: its PodScheduled condition's transition time
    (read before trimming, which drops that condition)."""
    for c in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == "PodScheduled" and c.get("status") == "True":
            return c.get("lastTransitionTime")
    return None


def _error_event(status: dict, server: str, kind: Kind) -> Exception:
    code = status.get("code")
    message = status.get("message") or ""
    if code == 410 or status.get("reason") in ("Expired", "Gone"):
        return WatchExpired(f"410 Gone: {message}" if message else "410 Gone")
    causes = tuple((status.get("details") or {}).get("causes") or ())
    if any(c.get("reason") == "ResourceVersionTooLarge" for c in causes if isinstance(c, dict)):
        return WatchExpired(f"too large resource version: {message}")
    return ClusterAPIError(f"cluster {server}: watching {kind.resource}: {code} {status.get('reason') or ''}: "
                           f"{message}", status=int(code or 500), reason=status.get("reason") or "",
                           api_message=message, causes=causes)


def _too_large(e: ClusterAPIError) -> bool:
    return any(c.get("reason") == "ResourceVersionTooLarge" for c in e.causes if isinstance(c, dict))


def _is_list_forbidden(e: ClusterAPIError) -> bool:
    """A 403 for the list verb (a relist), not the watch verb."""
    return 'cannot list resource' in (e.api_message or "")


def _duration(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds // 60)}m"
    return f"{seconds:g}s"
