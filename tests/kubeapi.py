"""A small HTTPS Kubernetes API server for tests and benchmarks.

It speaks the real REST paths and JSON of the kinds kschedx reads (lists with
limit/continue pagination, watches, GET of one object, pods/binding, pods/eviction,
pods/status PATCH/PUT, DELETE), with kube-apiserver's Status bodies, bearer-token
authentication, per-path fault injection and a request log.

Watches (`?watch=true`) stream chunked JSON events from the store's history
(kubeapi_store.ObjectStore): ADDED, MODIFIED, DELETED, BOOKMARK every
`bookmark_interval` when asked for, an ERROR event with a 410 Status for a
resourceVersion too old, and a clean end after `timeoutSeconds` (at most
`max_watch_seconds`). drop_watches(), watch_error(), pause_serving() and
resume_serving() make the failures a long-running watcher must survive. Objects live in
memory, pre-serialized (see kubeapi_store), so 150,000 pods list quickly.

    server = KubeAPIServer(make_server_material(tmp))
    server.start()
    server.add({"kind": "Node", "metadata": {"name": "n1"}})
    server.inject(r"/api/v1/pods", status=403, times=1)
    path = server.write_kubeconfig(tmp / "kubeconfig")
"""

from __future__ import annotations

import gzip
import json
import re
import socket
import ssl
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import yaml

import kubeapi_pods as pods
import kubeapi_status as st
from kubeapi_store import (BY_KIND, BY_PATH, RESOURCES, ContinueExpired, FieldSelectorError,
                           ObjectStore, Resource, TooOld, dumps, parse_field_selector)
from kubeapi_tls import TLSMaterial

_CORE = re.compile(
    r"/api/(?P<version>v1)(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)"
    r"(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?/?")
_GROUP = re.compile(
    r"/apis/(?P<group>[^/]+)/(?P<version>[^/]+)(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)"
    r"(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?/?")

# kube-apiserver compresses answers above 128 KiB for clients that accept gzip
# (APIResponseCompression), at the fastest level.
_GZIP_THRESHOLD = 128 * 1024

_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass
class Route:
    group_version: str
    namespace: str | None
    plural: str
    name: str | None
    sub: str | None

    @property
    def group(self) -> str:
        return self.group_version.rpartition("/")[0]


def parse_route(path: str) -> Route | None:
    m = _CORE.fullmatch(path)
    if m:
        gv = m["version"]
    else:
        m = _GROUP.fullmatch(path)
        if not m:
            return None
        gv = f'{m["group"]}/{m["version"]}'
    return Route(gv, m["ns"], m["plural"], m["name"], m["sub"])


def verb_for(method: str, route: Route | None, query: dict) -> str:
    if method == "GET":
        if query.get("watch") in ("true", "1"):
            return "watch"
        return "get" if route and route.name else "list"
    return _VERBS.get(method, method.lower())


def rbac_allows(rules: list[dict], verb: str, group: str, plural: str, sub: str) -> bool:
    """RBAC's rule match (resourceNames and nonResourceURLs aside): any rule naming
    the group, the resource (or resource/subresource) and the verb, or `*`."""
    resource = f"{plural}/{sub}" if sub else plural
    for rule in rules:
        groups, resources, verbs = (rule.get("apiGroups") or [], rule.get("resources") or [],
                                    rule.get("verbs") or [])
        if (("*" in groups or group in groups) and ("*" in verbs or verb in verbs)
                and ("*" in resources or resource in resources
                     or (sub and f"{plural}/*" in resources))):
            return True
    return False


@dataclass
class Fault:
    """What to do instead of (or before) answering requests whose path matches.

    `path` is a regular expression matched against the whole URL path (no query).
    `status` answers with kube-apiserver's Status for that code; `delay` sleeps
    first (a slow server); `reset` closes the connection without an answer.
    `times` limits how many requests the fault applies to (None: all).
    `watch`: True applies only to watch requests, False only to other ones.
    `after`: the request is carried out first (a binding stored, a pod
    evicted), then the delay, reset or status replaces the answer: a write
    that took effect although the client never heard so.
    """

    path: str
    status: int | None = None
    method: str | None = None
    times: int | None = None
    delay: float = 0.0
    retry_after: int | None = None
    message: str | None = None
    reset: bool = False
    watch: bool | None = None
    after: bool = False
    hits: int = 0

    def matches(self, method: str, path: str, is_watch: bool = False) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.watch is not None and self.watch != is_watch:
            return False
        if self.method and self.method.upper() != method:
            return False
        return re.fullmatch(self.path, path) is not None


@dataclass
class RequestRecord:
    method: str
    path: str
    query: dict
    status: int | None = None
    content_type: str | None = None
    body: bytes = b""


class _TLSHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, address, handler, ssl_context: ssl.SSLContext, api: "KubeAPIServer"):
        super().__init__(address, handler)
        self.ssl_context = ssl_context
        self.api = api

    def finish_request(self, request, client_address):
        # The TLS handshake runs here, in the connection's thread, so a slow or
        # failing client never blocks accept().
        request.settimeout(30)
        try:
            tls = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as e:
            self.api.tls_failures.append(str(e))
            request.close()
            return
        self.api.connections += 1
        with self.api._lock:
            self.api._sockets.add(tls)
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            with self.api._lock:
                self.api._sockets.discard(tls)
            try:
                tls.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        # Client disconnects and TLS failures are expected in tests; stay quiet.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kschedx-test-apiserver"
    # Headers and body go out in two writes; without this, Nagle's algorithm and the
    # client's delayed ACK add ~40 ms to every answer.
    disable_nagle_algorithm = True
    server: _TLSHTTPServer

    def log_message(self, format, *args):  # noqa: A002 - silence per-request stderr lines
        pass

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_PATCH(self):
        self._dispatch("PATCH")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        api = self.server.api
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        record = RequestRecord(method, url.path, query, content_type=self.headers.get("Content-Type"),
                               body=body)
        api._log(record)
        api.store.reap()
        try:
            code, payload, headers = api._handle(method, url.path, query, body, self.headers, record)
        except _Reset:
            record.status = None
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        except Exception:  # a bug in the test server: answer 500 and keep it for the test
            api.internal_errors.append(traceback.format_exc())
            err = st.internal_error("test server bug")
            code, payload, headers = err.code, err.body(), {}
        record.status = code
        if isinstance(payload, _WatchRequest):
            api._serve_watch(self, payload)
            return
        if (api.gzip and len(payload) > _GZIP_THRESHOLD
                and "gzip" in (self.headers.get("Accept-Encoding") or "")):
            payload = gzip.compress(payload, compresslevel=1)
            headers = {**headers, "Content-Encoding": "gzip"}
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(payload)
        except OSError:
            self.close_connection = True


class _Reset(Exception):
    pass


@dataclass
class _WatchRequest:
    resource: Resource
    namespace: str | None
    rv: int | None  # None: from the current state (resourceVersion "" or "0")
    terms: list
    timeout: float
    bookmarks: bool


class _OpenWatch:
    """A watch being served: the test's handle to break it."""

    def __init__(self, kind: str, handler):
        self.kind = kind
        self.handler = handler
        self.error: int | None = None  # send an ERROR event with this code, then end
        self.dropped = False

    def drop(self) -> None:
        self.dropped = True
        try:
            self.handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def version_info(git_version: str, major: str | None = None, minor: str | None = None) -> dict:
    """/version as an API server answers it (apimachinery version.Info)."""
    m = re.match(r"v(\d+)\.(\d+)", git_version)
    major = major if major is not None else (m.group(1) if m else "")
    minor = minor if minor is not None else (m.group(2) if m else "")
    return {"major": major, "minor": minor, "emulationMajor": major, "emulationMinor": minor,
            "minCompatibilityMajor": major, "minCompatibilityMinor": str(max(int(re.sub(r"\D", "", minor) or 1) - 1, 0)),
            "gitVersion": git_version, "gitCommit": "0" * 40, "gitTreeState": "clean",
            "buildDate": "2026-05-14T00:00:00Z", "goVersion": "go1.25.9", "compiler": "gc",
            "platform": "linux/amd64"}


class KubeAPIServer:
    def __init__(self, tls: TLSMaterial, *, token: str = "kschedx-test-token", user: str = "x",
                 removal_delay: float = 0.2, host: str = "127.0.0.1", gzip: bool = True,
                 watch_history: int = 1000, bookmark_interval: float = 1.0,
                 max_watch_seconds: float = 3600.0):
        self.tls = tls
        self.bookmark_interval = bookmark_interval
        self.max_watch_seconds = max_watch_seconds
        self._watches: list[_OpenWatch] = []
        self._sockets: set = set()
        self._port: int | None = None
        self._reaper: threading.Thread | None = None
        self._stopping = threading.Event()
        self.token = token
        self.user = user  # the name RBAC denials mention
        self.removal_delay = removal_delay  # how long evicted/deleted bound pods stay Terminating
        self.host = host
        self.gzip = gzip
        self.store = ObjectStore(watch_history)
        self.requests: list[RequestRecord] = []
        self.internal_errors: list[str] = []
        self.tls_failures: list[str] = []  # handshakes that failed (e.g. client distrusts the CA)
        self.connections = 0  # TLS connections accepted: shows whether clients reuse them
        self.disabled_groups: set[str] = set()
        self.rules: list[dict] | None = None  # RBAC PolicyRules; None allows everything
        # What GET /version answers (apimachinery version.Info); None: 404.
        self.version: dict | None = version_info("v1.36.2")
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._httpd: _TLSHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.kubeconfig: Path | None = None

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> "KubeAPIServer":
        self._serve(self._port or 0)
        if self._reaper is None:
            # Terminating pods go away on time even when no request comes.
            self._reaper = threading.Thread(target=self._reap, daemon=True, name="kubeapi-test-reaper")
            self._reaper.start()
        return self

    def _serve(self, port: int) -> None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.tls.server_cert, self.tls.server_key)
        self._httpd = _TLSHTTPServer((self.host, port), _Handler, ctx, self)
        self._port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True,
                                        name="kubeapi-test-server")
        self._thread.start()

    def _reap(self) -> None:
        while not self._stopping.wait(0.1):
            self.store.reap()

    def stop(self) -> None:
        self._stopping.set()
        self._close_all()

    def _close_all(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def pause_serving(self) -> None:
        """The server goes away: every connection is closed, nothing listens on its port."""
        self._close_all()

    def resume_serving(self) -> None:
        """The server comes back on the same port."""
        if self._httpd is None:
            self._serve(self._port)

    # ---- watches -------------------------------------------------------------------------

    def open_watches(self, kind: str | None = None) -> int:
        with self._lock:
            return sum(1 for w in self._watches if kind is None or w.kind == kind)

    def drop_watches(self, kind: str | None = None) -> int:
        """Break the connection of every open watch (of one kind): mid-stream, no end chunk."""
        with self._lock:
            watches = [w for w in self._watches if kind is None or w.kind == kind]
        for w in watches:
            w.drop()
        return len(watches)

    def watch_error(self, code: int = 410, kind: str | None = None) -> int:
        """Every open watch (of one kind) gets an ERROR event with this code, then ends."""
        with self._lock:
            watches = [w for w in self._watches if kind is None or w.kind == kind]
            for w in watches:
                w.error = code
        with self.store.cond:
            self.store.cond.notify_all()
        return len(watches)

    def _serve_watch(self, handler, req: _WatchRequest) -> None:
        store = self.store
        kind = req.resource.kind
        watch = _OpenWatch(kind, handler)
        handler.close_connection = True
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("Connection", "close")
        handler.end_headers()
        type_head = (b'{"kind":"' + kind.encode() + b'","apiVersion":"'
                     + req.resource.group_version.encode() + b'"')

        def send(type_: str, raw: bytes) -> None:
            obj = type_head + (b"," + raw[1:] if raw != b"{}" else b"}")
            line = b'{"type":"' + type_.encode() + b'","object":' + obj + b"}\n"
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))

        with self._lock:
            self._watches.append(watch)
        try:
            with store.lock:
                rv = req.rv
                if rv is None:
                    initial = store.current(kind, req.namespace, req.terms)
                    rv = store.resource_version
                else:
                    initial = []
            for raw in initial:
                send("ADDED", raw)
            handler.wfile.flush()
            deadline = time.monotonic() + min(req.timeout, self.max_watch_seconds)
            last_bookmark = time.monotonic()
            while not self._stopping.is_set() and not watch.dropped:
                now = time.monotonic()
                if now >= deadline:
                    break
                with store.cond:
                    error = watch.error
                    message = None
                    events = []
                    if error is None:
                        try:
                            events = store.events_since(kind, rv, req.namespace, req.terms)
                        except TooOld as e:
                            error = 410
                            message = str(e)
                        current = store.resource_version
                        bookmark_due = req.bookmarks and now - last_bookmark >= self.bookmark_interval
                        if not events and error is None and not bookmark_due:
                            store.cond.wait(min(0.05, max(0.0, deadline - now)))
                            continue
                if error is not None:
                    if error == 410:
                        status = st.ApiError(410, "Expired", message or f"too old resource version: "
                                                                        f"{rv} ({store.resource_version})")
                    else:
                        status = st.ApiError(error, "", f"injected watch error {error}")
                    send("ERROR", status.body())
                    handler.wfile.flush()
                    break
                for erv, type_, raw in events:
                    send(type_, raw)
                    rv = erv
                if req.bookmarks and time.monotonic() - last_bookmark >= self.bookmark_interval:
                    rv = max(rv, current)
                    send("BOOKMARK", b'{"metadata":{"resourceVersion":"' + str(rv).encode() + b'"}}')
                    last_bookmark = time.monotonic()
                handler.wfile.flush()
            if not watch.dropped:
                handler.wfile.write(b"0\r\n\r\n")
                handler.wfile.flush()
        except OSError:
            pass
        finally:
            with self._lock:
                self._watches.remove(watch)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    # ---- objects ---------------------------------------------------------------------

    def add(self, *objs: dict) -> list[dict]:
        """Store objects as given (each with `kind`); returns them as stored."""
        return self.store.put_many(objs)

    def get(self, kind: str, namespace: str | None, name: str) -> dict | None:
        return self.store.get(kind, namespace, name)

    def objects(self, kind: str) -> list[dict]:
        return self.store.objects(kind)

    def delete(self, kind: str, namespace: str | None, name: str) -> bool:
        return self.store.delete(kind, namespace, name)

    def authorize(self, rules: list[dict] | None) -> None:
        """Allow only what these RBAC PolicyRules (a ClusterRole's `rules`) allow, and
        deny the rest as the API server's RBAC authorizer does; None allows everything."""
        self.rules = rules

    def disable_group(self, group_version: str) -> None:
        """Answer 404 for every path of a group/version, as an older cluster does."""
        self.disabled_groups.add(group_version)

    # ---- faults and the request log -----------------------------------------------------

    def inject(self, path: str, status: int | None = None, *, method: str | None = None,
               times: int | None = None, delay: float = 0.0, retry_after: int | None = None,
               message: str | None = None, reset: bool = False, watch: bool | None = None,
               after: bool = False) -> Fault:
        fault = Fault(path, status, method, times, delay, retry_after, message, reset, watch, after)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def _log(self, record: RequestRecord) -> None:
        with self._lock:
            self.requests.append(record)

    def paths(self) -> Counter:
        """Requests per URL path."""
        with self._lock:
            return Counter(r.path for r in self.requests)

    def request_count(self, path: str | None = None, method: str | None = None) -> int:
        """Requests whose path fully matches the regular expression `path`."""
        with self._lock:
            return sum(1 for r in self.requests
                       if (path is None or re.fullmatch(path, r.path))
                       and (method is None or r.method == method))

    def _take_fault(self, method: str, path: str, is_watch: bool = False) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.matches(method, path, is_watch):
                    fault.hits += 1
                    return fault
        return None

    # ---- kubeconfig --------------------------------------------------------------------

    def write_kubeconfig(self, path: Path, *, context: str = "kschedx-test",
                         cluster: str = "kschedx-test", user: str = "kschedx-test",
                         server: str | None = None, ca_data: str | None = None,
                         token: str | None = None, namespace: str = "default") -> Path:
        """A kubeconfig with the CA inline, a token user and one context, made current."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": cluster, "cluster": {
                "server": server or self.url,
                "certificate-authority-data": ca_data or self.tls.ca_data_b64()}}],
            "users": [{"name": user, "user": {"token": token or self.token}}],
            "contexts": [{"name": context, "context": {"cluster": cluster, "user": user,
                                                         "namespace": namespace}}],
            "current-context": context,
        }
        path = Path(path)
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path

    # ---- request handling ----------------------------------------------------------------

    def _handle(self, method, path, query, body, headers, record):
        route = parse_route(path)
        try:
            fault = self._take_fault(method, path, query.get("watch") in ("true", "1"))
            if fault is not None and not fault.after:
                self._apply_fault(fault, method, route, query)
            answer = self._answer(method, path, route, query, body, headers)
            if fault is not None and fault.after:
                self._apply_fault(fault, method, route, query)
            return answer
        except st.ApiError as err:
            extra = {"Retry-After": str(err.retry_after)} if err.retry_after else {}
            return err.code, err.body(), extra

    def _apply_fault(self, fault: Fault, method, route, query) -> None:
        if fault.delay:
            time.sleep(fault.delay)
        if fault.reset:
            raise _Reset()
        if fault.status is not None:
            raise self._fault_error(fault, method, route, query)

    def _answer(self, method, path, route, query, body, headers):
        scheme, _, token = (headers.get("Authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or token.strip() != self.token:  # scheme is case-insensitive
            raise st.unauthorized()
        if route is not None and self.rules is not None:
            verb = verb_for(method, route, query)
            if not rbac_allows(self.rules, verb, route.group, route.plural, route.sub or ""):
                raise st.forbidden(user=self.user, verb=verb, resource=route.plural,
                                   subresource=route.sub or "", group=route.group,
                                   namespace=route.namespace, name=route.name)
        if path == "/version" and method == "GET":
            # Readable by everyone (system:public-info-viewer): no RBAC rule applies.
            if self.version is None:
                raise st.path_not_found()
            return 200, json.dumps(self.version).encode(), {}
        if route is None or route.group_version in self.disabled_groups:
            raise st.path_not_found()
        resource = BY_PATH.get((route.group_version, route.plural))
        if resource is None or (route.namespace and not resource.namespaced):
            raise st.path_not_found()
        return self._route(method, route, resource, query, body, headers)

    def _fault_error(self, fault: Fault, method: str, route: Route | None, query: dict) -> st.ApiError:
        code = fault.status
        if code == 401:
            return st.unauthorized()
        if code == 403:
            if route is None:
                return st.ApiError(403, "Forbidden", fault.message or "forbidden")
            err = st.forbidden(user=self.user, verb=verb_for(method, route, query),
                               resource=route.plural, subresource=route.sub or "",
                               group=route.group, namespace=route.namespace, name=route.name)
            if fault.message:
                err.message = fault.message
            return err
        if code == 404:
            return st.path_not_found()
        if code == 429:
            return st.too_many_requests(fault.retry_after, fault.message)
        if code == 500:
            return st.internal_error(fault.message or "injected failure")
        if code == 503:
            return st.service_unavailable(fault.message, fault.retry_after)
        if code == 410:
            return st.expired("")
        return st.ApiError(code, "", fault.message or f"injected status {code}",
                           retry_after=fault.retry_after)

    def _route(self, method, route: Route, resource: Resource, query, body, headers):
        if method == "GET" and route.name is None:
            return self._list(route, resource, query)
        if method == "GET" and route.sub is None:
            raw = self.store.get_raw(resource.kind, route.namespace, route.name)
            if raw is None:
                raise st.not_found(route.plural, route.group, route.name)
            return 200, _with_type(resource, raw), {}
        if method == "DELETE" and route.sub is None and route.name:
            return self._delete(route, resource, query, body)
        if resource.kind == "Pod" and route.name and route.namespace:
            if method == "POST" and route.sub == "binding":
                code, payload = pods.bind(self.store, route.namespace, route.name, _json(body))
                return code, payload, {}
            if method == "POST" and route.sub == "eviction":
                code, payload = pods.evict(self.store, route.namespace, route.name, _json(body),
                                           self.removal_delay)
                return code, payload, {}
            if route.sub == "status" and method == "PATCH":
                code, pod = pods.patch_status(self.store, route.namespace, route.name,
                                              headers.get("Content-Type") or "", body)
                return code, _with_type(resource, dumps(pod)), {}
            if route.sub == "status" and method == "PUT":
                code, pod = pods.put_status(self.store, route.namespace, route.name, body)
                return code, _with_type(resource, dumps(pod)), {}
        if route.sub and route.sub not in ("binding", "eviction", "status"):
            raise st.path_not_found()
        raise st.ApiError(405, "MethodNotAllowed",
                          f"the server does not allow this method on the requested resource")

    def _list(self, route: Route, resource: Resource, query):
        if query.get("watch") in ("true", "1"):
            return 200, self._watch_request(route, resource, query), {}
        if query.get("labelSelector"):
            raise st.bad_request("labelSelector is not supported by the test server")
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            raise st.bad_request(f'invalid limit "{query.get("limit")}"') from None
        try:
            page = self.store.list_page(resource, route.namespace, limit=limit if limit > 0 else None,
                                        continue_token=query.get("continue") or None,
                                        field_selector=query.get("fieldSelector"))
        except ContinueExpired as e:
            raise st.expired(str(e)) from None
        except FieldSelectorError as e:
            raise st.bad_request(str(e)) from None
        except ValueError as e:
            raise st.bad_request(str(e)) from None
        return 200, page.body, {}

    def _watch_request(self, route: Route, resource: Resource, query) -> _WatchRequest:
        if query.get("labelSelector"):
            raise st.bad_request("labelSelector is not supported by the test server")
        try:
            terms = parse_field_selector(resource, query.get("fieldSelector"))
        except FieldSelectorError as e:
            raise st.bad_request(str(e)) from None
        text = query.get("resourceVersion") or ""
        try:
            rv = int(text) if text not in ("", "0") else None
        except ValueError:
            raise st.bad_request(f'invalid resource version "{text}"') from None
        if rv is not None and rv > self.store.resource_version:
            raise st.ApiError(504, "Timeout", f"Too large resource version: {rv}, current: "
                                              f"{self.store.resource_version}",
                              {"causes": [{"reason": "ResourceVersionTooLarge",
                                           "message": "Too large resource version"}],
                               "retryAfterSeconds": 1})
        try:
            timeout = float(query.get("timeoutSeconds") or 1800)
        except ValueError:
            raise st.bad_request("invalid timeoutSeconds") from None
        return _WatchRequest(resource, route.namespace, rv, terms, timeout,
                             query.get("allowWatchBookmarks") in ("true", "1"))

    def _delete(self, route: Route, resource: Resource, query, body):
        options = _json(body) if body else {}
        grace = options.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
        grace = int(grace) if grace not in (None, "") else None
        if resource.kind == "Pod":
            pod = pods.delete_pod(self.store, route.namespace, route.name, grace, self.removal_delay,
                                  options.get("preconditions"))
            if pod is None:
                raise st.not_found(route.plural, route.group, route.name)
            return 200, _with_type(resource, dumps(pod)), {}
        obj = self.store.get(resource.kind, route.namespace, route.name)
        if obj is None or not self.store.delete(resource.kind, route.namespace, route.name):
            raise st.not_found(route.plural, route.group, route.name)
        return 200, _with_type(resource, dumps(obj)), {}


def _with_type(resource: Resource, raw: bytes) -> bytes:
    # Stored items lack kind/apiVersion (list items travel that way); single objects carry them.
    head = b'{"kind":"' + resource.kind.encode() + b'","apiVersion":"' + resource.group_version.encode() + b'"'
    return head + (b"," + raw[1:] if raw != b"{}" else b"}")


def _json(body: bytes) -> dict:
    try:
        value = json.loads(body or b"{}")
    except ValueError as e:
        raise st.bad_request(f"error decoding body: {e}") from None
    if not isinstance(value, dict):
        raise st.bad_request("the body must be a JSON object")
    return value


__all__ = ["KubeAPIServer", "Fault", "RequestRecord", "RESOURCES", "BY_KIND", "parse_route"]
