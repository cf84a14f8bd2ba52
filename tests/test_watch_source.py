"""sources/watch.py against the local test API server (tests/kubeapi.py),
through the official client as kschedx uses it: list then watch from the
list's resourceVersion, bookmarks, resuming after a dropped connection,
relisting after 410 Gone, backoff and one notice per outage, 403 and 401."""

from __future__ import annotations

import queue
import time

import pytest

from builders import api_node, api_pod
from cluster_scenarios import no_ambient_config, small_cluster  # noqa: F401 (fixture)
from kschedx.sources.cluster import connect
from kschedx.sources.kinds import KINDS, NODE, POD
from kschedx.sources.watch import RELIST_BEGIN, RELIST_END, RELIST_PAGE, STATUS, WARNING, Watcher

FAST = {"timeout_range": (30, 30), "backoff": (0.05, 0.4), "poll_interval": 0.3}


@pytest.fixture
def api(kube_api):
    kube_api.bookmark_interval = 0.1
    small_cluster(kube_api)
    return kube_api


def start(api, kinds=(NODE, POD), watched=None, **options):
    conn = connect(str(api.kubeconfig), request_timeout=5, pool_size=len(KINDS) + 4)
    read = conn.read_objects()
    watcher = Watcher(conn, list(kinds), read.resource_versions, **{**FAST, **options})
    watcher.start()
    wait_for(lambda: api.open_watches() >= (len(kinds) if watched is None else watched), timeout=20)
    return watcher, read


def wait_for(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    raise AssertionError("timed out")


def take(watcher, n=None, timeout=5.0, until=None) -> list:
    """Events from the queue: n of them, or until `until(events)`, or those within timeout."""
    out = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            out.append(watcher.events.get(timeout=0.05))
        except queue.Empty:
            pass
        if n is not None and len(out) >= n:
            break
        if until is not None and until(out):
            break
    return out


def objects(events, kind="Pod"):
    return [(e.type, e.obj["metadata"]["name"]) for e in events if e.kind == kind and e.obj is not None]


def watch_requests(api, plural="pods"):
    return [r for r in api.requests if r.path.endswith(f"/{plural}") and r.query.get("watch") == "true"]


def list_requests(api, plural="pods"):
    return [r for r in api.requests if r.path.endswith(f"/{plural}") and r.query.get("watch") != "true"]


def test_list_then_watch_from_the_lists_resource_version(api):
    watcher, read = start(api, kinds=KINDS)
    try:
        first = watch_requests(api)[0]
        assert first.query["resourceVersion"] == read.resource_versions["Pod"]
        assert first.query["allowWatchBookmarks"] == "true"
        assert first.query["fieldSelector"] == "status.phase!=Succeeded,status.phase!=Failed"
        assert "fieldSelector" not in watch_requests(api, "nodes")[0].query
        api.add(api_pod("new", cpu="1"))
        api.store.update("Pod", "default", "new", lambda p: {**p, "spec": {**p["spec"], "nodeName": "n1"}})
        api.delete("Pod", "default", "new")
        api.add(api_node("n9"))
        events = take(watcher, until=lambda ev: len(objects(ev)) >= 3 and objects(ev, "Node"))
        assert objects(events) == [("ADDED", "new"), ("MODIFIED", "new"), ("DELETED", "new")]
        assert objects(events, "Node") == [("ADDED", "n9")]
        rvs = [int(e.rv) for e in events if e.kind == "Pod"]
        assert rvs == sorted(rvs) and rvs[-1] == int(api.store.resource_version) - 1
        # Objects come as a list gives them: typed and trimmed.
        added = next(e.obj for e in events if e.kind == "Pod")
        assert added["kind"] == "Pod" and added["apiVersion"] == "v1"
        assert "managedFields" not in added["metadata"]
        assert not [p for p in api.paths() if "secret" in p or "configmap" in p]
    finally:
        watcher.stop()


def test_bookmarks_advance_and_a_dropped_connection_resumes_without_a_relist(api):
    watcher, read = start(api)
    try:
        api.add(api_node("n9"))  # a Pod watch sees nothing of it, but its bookmarks move on
        target = api.store.resource_version
        wait_for(lambda: int(watcher.resource_versions["Pod"]) >= target)
        assert api.drop_watches("Pod") == 1
        api.add(api_pod("after-drop"))
        events = take(watcher, until=lambda ev: objects(ev))
        assert objects(events) == [("ADDED", "after-drop")]
        resumed = watch_requests(api)[-1]
        assert int(resumed.query["resourceVersion"]) >= target
        assert len(list_requests(api)) == 1  # the first read only
        assert not [e for e in events if e.type == RELIST_BEGIN]
    finally:
        watcher.stop()


def test_410_on_an_open_watch_relists_and_the_relist_has_what_was_missed(api):
    watcher, read = start(api)
    try:
        api.pause_serving()
        api.add(api_pod("made-while-away"))
        api.delete("Pod", "default", "web")
        api.store.compact()
        api.resume_serving()
        # Both kinds were compacted away: wait for both relists (their order is the threads').
        events = take(watcher, until=lambda ev: {e.kind for e in ev if e.type == RELIST_END} >= {"Pod", "Node"},
                      timeout=30)
        types = [e.type for e in events if e.kind == "Pod"]
        assert types[0] == RELIST_BEGIN and RELIST_END in types
        listed = {p["metadata"]["name"] for e in events if e.type == RELIST_PAGE for p in e.items}
        assert "made-while-away" in listed and "web" not in listed
        assert watcher.relists == {"Pod": 1, "Node": 1}
    finally:
        watcher.stop()


def test_an_error_event_410_relists_that_kind(api):
    watcher, read = start(api)
    try:
        assert api.watch_error(410, "Pod") == 1
        events = take(watcher, until=lambda ev: any(e.type == RELIST_END for e in ev))
        assert [e.type for e in events if e.kind == "Pod"][0] == RELIST_BEGIN
        assert watcher.relists == {"Pod": 1}
    finally:
        watcher.stop()


def test_http_410_on_the_watch_request_relists(api):
    api.inject(r"/api/v1/pods", status=410, watch=True, times=1)
    watcher, read = start(api, kinds=(POD,))
    try:
        events = take(watcher, until=lambda ev: any(e.type == RELIST_END for e in ev))
        assert any(e.type == RELIST_END for e in events)
        assert watcher.relists == {"Pod": 1}
    finally:
        watcher.stop()


def test_a_relist_whose_continue_token_expires_starts_again(api, monkeypatch):
    from kschedx.sources import cluster as cluster_source

    monkeypatch.setattr(cluster_source, "PAGE_SIZE", 2)
    for i in range(6):
        api.add(api_pod(f"x{i}"))
    watcher, read = start(api, kinds=(POD,))
    expired = {"done": False}
    original = api.store.list_page

    def expiring(resource, namespace, **kw):
        if kw.get("continue_token") and not expired["done"]:
            expired["done"] = True
            api.store.expire_snapshots()
        return original(resource, namespace, **kw)

    monkeypatch.setattr(api.store, "list_page", expiring)
    api.watch_error(410, "Pod")
    try:
        events = take(watcher, until=lambda ev: any(e.type == RELIST_END for e in ev))
        begins = [e for e in events if e.type == RELIST_BEGIN]
        assert len(begins) == 2  # the consumer starts its diff again
        after = events[events.index(begins[-1]):]
        names = sorted(p["metadata"]["name"] for e in after if e.type == RELIST_PAGE for p in e.items)
        assert names == sorted(["big", "web", "busy-1", "busy-2", "tolerant"] + [f"x{i}" for i in range(6)])
    finally:
        watcher.stop()


def test_events_across_dropped_connections_are_neither_lost_nor_repeated(api):
    watcher, read = start(api, kinds=(POD,))
    try:
        made = []
        for i in range(30):
            api.add(api_pod(f"s{i:02d}"))
            made.append(("ADDED", f"s{i:02d}"))
            if i % 7 == 3:
                api.drop_watches()
        events = take(watcher, until=lambda ev: len(objects(ev)) >= 30, timeout=15)
        assert objects(events) == made
        assert len(list_requests(api)) == 1
    finally:
        watcher.stop()


def test_a_server_gone_for_a_while_is_said_once_and_back_once(api):
    watcher, read = start(api)
    try:
        api.pause_serving()
        api.drop_watches()
        time.sleep(2.0)  # several backoffs of every kind's watch
        api.resume_serving()
        events = take(watcher, until=lambda ev: any(e.type == STATUS and e.extra["up"] for e in ev), timeout=10)
        statuses = [e.extra["up"] for e in events if e.type == STATUS]
        assert statuses == [False, True]
        down = next(e for e in events if e.type == STATUS)
        assert "cannot connect" in down.extra["error"] or "connection" in down.extra["error"]
        # The requests while it was away came further and further apart, up to the cap.
        assert watcher.health.outages == 1
    finally:
        watcher.stop()


def test_the_backoff_doubles_to_its_cap():
    from kschedx.sources.watch import Backoff

    b = Backoff(0.8, 30.0, jitter=0)
    assert [b.next() for _ in range(8)] == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    b.reset()
    assert b.next() == 0.8


def test_the_server_ending_a_watch_reopens_it_at_once(api):
    api.max_watch_seconds = 0.3
    watcher, read = start(api, kinds=(POD,))
    try:
        time.sleep(1.5)
        assert len(watch_requests(api)) >= 3
        assert len(list_requests(api)) == 1
        assert list(watcher.events.queue) == []
    finally:
        watcher.stop()


def read_role_without(verb):
    from test_rbac import roles

    return [{**r, "verbs": [v for v in r["verbs"] if v != verb]} for r in roles()["kschedx-read"]]


def test_a_kind_the_role_cannot_watch_is_listed_again_every_poll(api):
    rules = read_role_without("watch") + [{"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["watch"]}]
    api.authorize(rules)
    watcher, read = start(api, kinds=(NODE, POD, next(k for k in KINDS if k.kind == "Service")), watched=2)
    try:
        events = take(watcher, until=lambda ev: sum(e.type == RELIST_END for e in ev) >= 2, timeout=10)
        warnings = [e.extra["text"] for e in events if e.type == WARNING]
        assert len(warnings) == 1 and "cannot watch services" in warnings[0] and "watch" in warnings[0]
        assert all(e.kind == "Service" for e in events if e.type == RELIST_END)
        assert watcher.fatal is None
    finally:
        watcher.stop()


def test_pods_the_role_cannot_watch_end_the_watch(api):
    api.authorize(read_role_without("watch"))
    conn = connect(str(api.kubeconfig), request_timeout=5)
    read = conn.read_objects()
    watcher = Watcher(conn, [NODE, POD], read.resource_versions, **FAST)
    watcher.start()
    try:
        wait_for(lambda: watcher.fatal is not None)
        assert watcher.fatal.status == 403
        assert "`watch` verb" in str(watcher.fatal) and "deploy/rbac.yaml" in str(watcher.fatal)
    finally:
        watcher.stop()


def test_401_on_a_new_watch_ends_the_watch(api):
    watcher, read = start(api, kinds=(POD,))
    try:
        api.token = "rotated"
        api.drop_watches()
        wait_for(lambda: watcher.fatal is not None)
        assert watcher.fatal.status == 401
    finally:
        watcher.stop()


def test_a_pod_that_finishes_leaves_the_watch(api):
    watcher, read = start(api, kinds=(POD,))
    try:
        api.store.update("Pod", "default", "busy-1",
                         lambda p: {**p, "status": {**p["status"], "phase": "Succeeded"}})
        events = take(watcher, until=lambda ev: objects(ev))
        assert objects(events) == [("DELETED", "busy-1")]
    finally:
        watcher.stop()


def test_bind_time_comes_with_the_pod(api):
    watcher, read = start(api, kinds=(POD,))
    try:
        from kschedx.sources.cluster import connect as connect_

        conn = connect_(str(api.kubeconfig))
        pod = next(o for o in conn.read_objects().objects if o["metadata"]["name"] == "web")
        conn.bind_pod(pod, "n3")
        events = take(watcher, until=lambda ev: objects(ev))
        assert events[0].extra["scheduledAt"]  # PodScheduled's time, read before trimming
        assert "conditions" not in (events[0].obj.get("status") or {}) or all(
            c["type"] != "PodScheduled" for c in events[0].obj["status"]["conditions"])
    finally:
        watcher.stop()
