"""A watch run in a thread against the test API server, for the tests of
explain --watch: what it wrote (JSON Lines, or the events and documents a
recording sink saw), and sync() to wait until it has caught up with the
server (every event applied, no pod due)."""

from __future__ import annotations

import io
import json
import threading

from kschedx.api.selection import PodSelection
from kschedx.commands.watch import watch_into
from kschedx.render.watch import WatchHumanSink, WatchJsonlSink
from kschedx.result.sink import ResultSink
from kschedx.sources.cluster import connect
from kschedx.sources.kinds import KINDS


class Recorder(ResultSink):
    """Every piece a sink is handed, in order."""

    def __init__(self):
        self.items: list[tuple[str, dict]] = []
        self.lock = threading.Lock()

    def begin(self, head):
        self.items.append(("begin", head))

    def pod(self, pod):
        with self.lock:
            self.items.append(("pod", pod))

    def event(self, event):
        with self.lock:
            self.items.append(("event", event))

    def end(self, tail):
        self.items.append(("end", tail))

    def events(self, type_=None) -> list[dict]:
        with self.lock:
            return [e for k, e in self.items if k == "event" and (type_ is None or e["type"] == type_)]

    def explained(self) -> list[tuple[dict, dict]]:
        """(Explained event, document) pairs, in order."""
        with self.lock:
            out, last = [], None
            for k, e in self.items:
                if k == "event" and e["type"] == "Explained":
                    last = e
                elif k == "pod":
                    out.append((last, e))
            return out


class Watching:
    def __init__(self, api, *, sink=None, refs=(), selection=None, all_pending=True, settle=0.2,
                 tie_break="name", seed=None, nodes=None, observer=None, config=None, watcher_options=None):
        self.api = api
        self.out = io.StringIO()
        if sink == "jsonl":
            sink = WatchJsonlSink(self.out)
        elif sink == "human":
            sink = WatchHumanSink(out=self.out, color=False)
        self.sink = sink if sink is not None else Recorder()
        self.stop = threading.Event()
        self.notices: list[str] = []
        self.run = None
        self.code = None
        self.error = None
        self._started = threading.Event()
        self.conn = connect(str(api.kubeconfig), request_timeout=5, pool_size=len(KINDS) + 4)
        options = {"timeout_range": (30, 30), "backoff": (0.05, 0.5), "poll_interval": 0.5}
        options.update(watcher_options or {})

        def on_run(run):
            self.run = run
            self._started.set()

        def go():
            try:
                self.code = watch_into(
                    self.sink, self.conn, refs=refs, all_pending=all_pending,
                    selection=selection if selection is not None else PodSelection(None, True, None, None),
                    tie_break=tie_break, seed=seed, config=config, nodes=nodes, settle=settle, observer=observer,
                    stop=self.stop, notice=self.notices.append, watcher_options=options, on_run=on_run)
            except BaseException as e:  # handed to the test
                self.error = e
            finally:
                self._started.set()

        self.thread = threading.Thread(target=go, daemon=True)
        self.thread.start()
        assert self._started.wait(30)
        if self.error is not None:
            raise self.error

    def sync(self, timeout=30.0):
        """Until every change the server has made is applied and explained."""
        assert self.run.sync(self.api.store.resource_version, timeout), "the watch did not catch up"

    def finish(self, timeout=20.0):
        self.stop.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        self.conn.close()
        return self.code

    def lines(self) -> list[dict]:
        return [json.loads(line) for line in self.out.getvalue().splitlines()]
