"""A live cluster as a source: the connection (connect), the read of every
kind as the same raw objects fixtures give (paginated lists, in parallel),
watches opened, and the write primitives `bind` needs (binding, eviction,
nominated node).

The official `kubernetes` client is used for configuration, authentication and
TLS only (kubeconfig.py, transport.py). Responses are parsed with json.loads
into plain dicts: the generated model classes are slow on 100,000 pods and
drop fields they do not know. The client is imported inside functions,
because importing it costs start-up time that commands reading fixtures
should not pay.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..util.errors import ClusterError
from ..util.gc_policy import collector_paused
from .kinds import CONTROLLER_KINDS, KINDS, NODE, NOT_TERMINAL, POD, TERMINAL, Kind
from .kubeconfig import configure
from .transport import PHRASES, BindConflict, ClusterAPIError, EvictionBlocked, Response, Transport, WatchStream

if TYPE_CHECKING:  # imported where used: `import kschedx.sources.cluster` must stay cheap
    from concurrent.futures import Future, ThreadPoolExecutor

PAGE_SIZE = 500
_MAX_LIST_RESTARTS = 3  # 410 Gone on a continue token restarts the list, a few times

Progress = Callable[[str, int, bool], None]


@dataclass
class ClusterRead:
    objects: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # about the connection (e.g. TLS off)
    # kind -> why it could not be read (forbidden, not served); what that costs the
    # results is the plugins' declarations' business (the readers of the kind).
    unreadable: dict[str, str] = field(default_factory=dict)
    # kind -> the resourceVersion of its list: where a watch of it starts.
    resource_versions: dict[str, str] = field(default_factory=dict)
    # The server's /version (gitVersion, major, minor...), None when it does not answer it.
    version: dict | None = None
    # When the objects were read (Unix seconds): "now" for what depends on time.
    read_at: float = field(default_factory=time.time)



def connect(kubeconfig: str | None = None, context: str | None = None,
            request_timeout: float = 30.0, *, retry_budget: float = 30.0,
            freeze_reads: bool = False, pool_size: int = 8) -> "ClusterConnection":
    """Open a connection as kubectl would: --kubeconfig, else KUBECONFIG (files merged,
    first wins), else ~/.kube/config, else the in-cluster service account.

    `request_timeout` bounds each request; `retry_budget` bounds the total time
    spent waiting between retries of one request. `freeze_reads` is for one-shot
    processes only (util/gc_policy.py collector_paused: its reads are frozen). `pool_size`: connections kept open to the
    server (a watch keeps one per watched kind). No request is sent here.
    """
    from kubernetes import client

    from kschedx import __version__

    cfg, context_name, auth_notes, namespace = configure(kubeconfig, context)
    cfg.retries = False  # retries are ours: urllib3's would retry timeouts and hide causes
    from warnings import filterwarnings

    # urllib3 warns (FutureWarning) about URLs it cannot parse; the request then
    # fails and the error says what went wrong, in one line.
    filterwarnings("ignore", category=FutureWarning, module=r"urllib3\b")
    cfg.connection_pool_maxsize = pool_size
    warnings = []
    if not cfg.verify_ssl:
        import urllib3

        # urllib3 would print a warning on every request; say it once instead.
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        warnings.append(f"TLS verification is off for {cfg.host} (insecure-skip-tls-verify)")
    api = client.ApiClient(configuration=cfg)
    api.user_agent = f"kschedx/{__version__}"
    transport = Transport(api, server=cfg.host, context=context_name,
                           request_timeout=request_timeout, retry_budget=retry_budget)
    transport.auth_notes = auth_notes
    transport.namespace = namespace
    return ClusterConnection(transport, warnings, freeze_reads=freeze_reads)


# ---- reading --------------------------------------------------------------------------

_CONTINUE = re.compile(rb'"continue":"([A-Za-z0-9_\-+/=.]+)"')


def _peek_continue(data: bytes) -> str | None:
    """The list's continue token, read from the metadata that precedes the items."""
    end = data.find(b'"items":', 0, 8192)
    if end < 0:
        return None
    m = _CONTINUE.search(data, 0, end)
    return m.group(1).decode("ascii") if m else None


class ClusterConnection:
    def __init__(self, transport: Transport, warnings: list[str] | None = None, *,
                 freeze_reads: bool = False):
        self._t = transport
        self._warnings = list(warnings or [])
        self.freeze_reads = freeze_reads  # reads frozen: util/gc_policy.py collector_paused

    @property
    def server(self) -> str:
        return self._t.server

    @property
    def context_name(self) -> str | None:
        """The kubeconfig context in use; None with in-cluster configuration."""
        return self._t.context

    @property
    def namespace(self) -> str:
        """The namespace kubectl would default -n to: the context's, or the pod's in-cluster."""
        return self._t.namespace

    def close(self) -> None:
        self._t.api_client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def server_version(self) -> dict | None:
        """GET /version (apimachinery version.Info: gitVersion, major, minor...),
        or None when the server does not answer it (403, 404, not JSON): the
        version kschedx reproduces is then chosen otherwise."""
        try:
            status, info = self._t.get_json("/version", what="the server's version", ok=(403, 404))
        except ClusterAPIError as e:
            if e.status == 401:
                raise
            return None
        except ClusterError:
            return None
        return info if status == 200 and isinstance(info, dict) else None

    # -- lists

    def read_objects(self, progress: Progress | None = None, *, full: bool = False,
                     controllers: bool = False) -> ClusterRead:
        """Every kind scheduling reads, from all namespaces; with
        `controllers`, also the pods' controllers (kinds.CONTROLLER_KINDS).

        Nodes and pods are required: failing to read them raises ClusterError.
        Other kinds that are forbidden or not served become an `unreadable`
        entry. Optional kinds are read in background threads while pods are
        read; `progress` is always called from the calling thread.

        Unless `full`, each page is trimmed to the fields scheduling reads
        (sources/trim.py) as soon as it is parsed, so the bulk of a big cluster
        is never held; managedFields are dropped either way.
        """
        with collector_paused(self.freeze_reads):
            return self._read_objects(progress, full, controllers)

    def _read_objects(self, progress: Progress | None, full: bool, controllers: bool = False) -> ClusterRead:
        from concurrent.futures import ThreadPoolExecutor

        result = ClusterRead(warnings=list(self._warnings))
        rvs = result.resource_versions
        # Nodes first, alone: an unreachable, slow or unauthorised cluster fails there,
        # before any background request exists that would hold up the exit.
        result.objects.extend(self._list_all(NODE, progress, full=full, rvs=rvs))
        result.version = self.server_version()
        pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kschedx-read")
        try:
            futures: list[tuple[Kind, Future]] = [
                (k, pool.submit(self._list_all, k, None, full=full, rvs=rvs))
                for k in KINDS + (CONTROLLER_KINDS if controllers else ()) if not k.required]
            result.objects.extend(self._list_all(POD, progress, full=full, rvs=rvs))
            for kind, fut in futures:
                try:
                    items = fut.result()
                except ClusterAPIError as e:
                    if e.status == 401:
                        raise
                    result.unreadable[kind.kind] = _unreadable_reason(e)
                    if progress:
                        progress(kind.kind, 0, True)
                    continue
                result.objects.extend(items)
                if progress:
                    progress(kind.kind, len(items), True)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        result.read_at = time.time()
        return result

    def list_objects(self, kind_name: str) -> list[dict]:
        """Every object of one kind KINDS lists (all namespaces), untrimmed."""
        kind = next(k for k in KINDS + CONTROLLER_KINDS if k.kind == kind_name)
        with collector_paused():
            return self._list_all(kind, None, full=True)

    def list_pending_pods(self) -> list[dict]:
        """Pods waiting for a node: no spec.nodeName and not terminal."""
        with collector_paused():
            pods = self._list_all(POD, None, field_selector="spec.nodeName=," + NOT_TERMINAL,
                                  full=True)
        return [p for p in pods if not (p.get("spec") or {}).get("nodeName")]

    def _list_all(self, kind: Kind, progress: Progress | None, *,
                  field_selector: str | None = None, full: bool = True,
                  rvs: dict[str, str] | None = None) -> list[dict]:
        if field_selector is None:
            field_selector = kind.field_selector
        for _ in range(_MAX_LIST_RESTARTS):
            items: list[dict] = []
            rv = self._list_pages(kind, progress, field_selector, full, items.extend)
            if rv is not None:
                if rvs is not None:
                    rvs[kind.kind] = rv
                return items
        raise ClusterError(f"{self._t.where}: listing {kind.resource}: the list kept expiring "
                           f"(410 Gone) before it could be read")

    def list_pages(self, kind: Kind, on_page: Callable[[list[dict]], None],
                   on_restart: Callable[[], None] | None = None) -> str:
        """One kind listed again (a watch's relist): each page, trimmed, handed to
        `on_page` as soon as it is read and not kept here, so a relist of 150,000
        pods never holds two copies of them. The collector is left alone: this
        runs in a watcher's thread while the main one works. A list whose continue
        token expires starts again (`on_restart` is told). Returns the list's
        resourceVersion."""
        for _ in range(_MAX_LIST_RESTARTS):
            rv = self._list_pages(kind, None, kind.field_selector, False, on_page)
            if rv is not None:
                return rv
            if on_restart is not None:
                on_restart()
        raise ClusterError(f"{self._t.where}: listing {kind.resource}: the list kept expiring "
                           f"(410 Gone) before it could be read")

    def open_watch(self, kind: Kind, resource_version: str, timeout_seconds: int) -> "WatchStream":
        """A watch of every object of `kind` from `resource_version` on, with
        bookmarks, ended by the server after `timeout_seconds` (one attempt:
        the caller retries). Errors raise ClusterAPIError (an error status) or
        ClusterError with `transient` set (the server could not be reached or
        dropped the connection)."""
        query = [("watch", "true"), ("allowWatchBookmarks", "true"),
                 ("resourceVersion", resource_version), ("timeoutSeconds", int(timeout_seconds))]
        if kind.field_selector:
            query.append(("fieldSelector", kind.field_selector))
        return self._t.open_stream(kind.list_path, query, what=f"watching {kind.resource}",
                                   read_timeout=timeout_seconds + self._t.request_timeout)

    def _list_pages(self, kind: Kind, progress, field_selector, full: bool,
                    on_page: Callable[[list[dict]], None]) -> str | None:
        """All pages of one list, each handed to `on_page`; the list's
        resourceVersion, or None when a continue token expired (410)."""
        from concurrent.futures import ThreadPoolExecutor

        what = f"listing {kind.resource}"

        def fetch(token: str | None) -> Response:
            query = [("limit", PAGE_SIZE)]
            if field_selector:
                query.append(("fieldSelector", field_selector))
            if token:
                query.append(("continue", token))
            return self._t.request("GET", kind.list_path, what=what, query=query,
                                   ok=(410,) if token else ())

        count = 0
        rv = None
        prefetcher: ThreadPoolExecutor | None = None
        try:
            resp = fetch(None)
            while True:
                if resp.status == 410:
                    return None
                # While this page is parsed, the next one is fetched (and decompressed) in
                # another thread: socket reads and zlib release the GIL, so the network and
                # the server's work overlap json.loads. The continue token is taken from the
                # page's head, which the server writes before the items.
                guess = _peek_continue(resp.data)
                pending: Future | None = None
                if guess:
                    if prefetcher is None:
                        prefetcher = ThreadPoolExecutor(1, thread_name_prefix="kschedx-prefetch")
                    pending = prefetcher.submit(fetch, guess)
                data, resp = resp.data, None
                page = self._t._decode(data, what)
                del data
                items: list[dict] = []
                _adopt_items(page.get("items") or [], kind, items, trim=not full)
                meta = page.get("metadata") or {}
                token = meta.get("continue")
                if rv is None:  # every page of a list carries the list's resourceVersion
                    rv = str(meta.get("resourceVersion") or "")
                del page
                count += len(items)
                on_page(items)
                del items
                if progress:
                    progress(kind.kind, count, not token)
                if not token:
                    return rv
                # A wrong guess (never seen from a real server) only costs a request.
                resp = pending.result() if pending is not None and token == guess else fetch(token)
        finally:
            if prefetcher is not None:
                prefetcher.shutdown(wait=True, cancel_futures=True)

    # -- single objects

    def get_pod(self, namespace: str, name: str) -> dict | None:
        status, pod = self._t.get_json(f"/api/v1/namespaces/{namespace}/pods/{name}",
                                       what=f"reading pod {namespace}/{name}", ok=(404,))
        return None if status == 404 else _typed(pod, POD)

    def node_exists(self, name: str) -> bool:
        resp = self._t.request("GET", f"/api/v1/nodes/{name}", what=f"reading node {name}",
                               ok=(404,))
        return resp.status != 404

    # -- writes

    def bind_pod(self, pod: dict, node_name: str) -> None:
        """POST a v1 Binding as kube-scheduler's DefaultBinder does (the UID makes the
        server refuse a pod that was deleted and re-created under the same name)."""
        meta = pod["metadata"]
        ns, name = meta.get("namespace") or "default", meta["name"]
        binding = {"kind": "Binding", "apiVersion": "v1",
                   "metadata": {"name": name, "namespace": ns, **({"uid": meta["uid"]} if meta.get("uid") else {})},
                   "target": {"kind": "Node", "name": node_name}}
        try:
            self._t.request("POST", f"/api/v1/namespaces/{ns}/pods/{name}/binding",
                            what=f"binding pod {ns}/{name} to node {node_name}", body=binding,
                            retry="throttle")
        except ClusterAPIError as e:
            if e.status == 409:
                raise BindConflict(str(e), status=e.status, reason=e.reason,
                                   api_message=e.api_message, causes=e.causes) from None
            raise

    def evict_pod(self, pod: dict, *, grace_period_seconds: int | None = None) -> bool:
        """POST a policy/v1 Eviction. True when evicted, False when the pod was already gone.

        A PodDisruptionBudget refusal raises EvictionBlocked. The pod's UID is sent
        as a delete precondition so a re-created namesake is never evicted.
        """
        meta = pod["metadata"]
        ns, name = meta.get("namespace") or "default", meta["name"]
        options: dict = {}
        if meta.get("uid"):
            options["preconditions"] = {"uid": meta["uid"]}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        eviction = {"kind": "Eviction", "apiVersion": "policy/v1",
                    "metadata": {"name": name, "namespace": ns}}
        if options:
            eviction["deleteOptions"] = options
        try:
            resp = self._t.request("POST", f"/api/v1/namespaces/{ns}/pods/{name}/eviction",
                                   what=f"evicting pod {ns}/{name}", body=eviction,
                                   retry="throttle", ok=(404,))
        except ClusterAPIError as e:
            budget = any(c.get("reason") == "DisruptionBudget" for c in e.causes)
            if budget or (e.status == 500 and "PodDisruptionBudget" in e.api_message):
                raise EvictionBlocked(str(e), status=e.status, reason=e.reason,
                                      api_message=e.api_message, causes=e.causes,
                                      retry_after=e.retry_after) from None
            raise
        return resp.status != 404

    def set_nominated_node(self, pod: dict, node_name: str | None) -> dict:
        """Set (or with None, clear) status.nominatedNodeName through pods/status, with the
        strategic merge patch kube-scheduler sends. Returns the updated pod."""
        meta = pod["metadata"]
        ns, name = meta.get("namespace") or "default", meta["name"]
        resp = self._t.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}/status",
                               what=f"setting the nominated node of pod {ns}/{name}",
                               body={"status": {"nominatedNodeName": node_name}},
                               content_type="application/strategic-merge-patch+json",
                               retry="throttle")
        return _typed(self._t._decode(resp.data, "patching pod status"), POD)

    def wait_pods_gone(self, pods: list[dict], timeout: float,
                       progress: Callable[[int, int], None] | None = None,
                       poll_interval: float = 0.5) -> list[dict]:
        """Poll until every pod is gone (deleted, or replaced by one with another UID).

        Returns the pods still present when `timeout` ran out (empty when all went).
        `progress(gone, total)` is called after each round.
        """
        waiting = list(pods)
        total = len(waiting)
        deadline = time.monotonic() + timeout
        while True:
            still = []
            for p in waiting:
                meta = p["metadata"]
                current = self.get_pod(meta.get("namespace") or "default", meta["name"])
                if current is not None and (not meta.get("uid")
                                            or current["metadata"].get("uid") == meta["uid"]):
                    still.append(p)
            waiting = still
            if progress:
                progress(total - len(waiting), total)
            if not waiting or time.monotonic() >= deadline:
                return waiting
            time.sleep(min(poll_interval, max(0.0, deadline - time.monotonic())))


def _adopt_items(raw_items: list, kind: Kind, out: list[dict], *, trim: bool = False) -> None:
    """List items come without kind/apiVersion; add them (first, as kubectl shows them),
    and drop what scheduling never reads but costs memory: managedFields always
    (kubectl hides them too), everything sources/trim.py does not keep when `trim`."""
    from kschedx.sources.trim import trim as trim_object

    k, v = kind.kind, kind.api_version
    is_pod = kind is POD
    append = out.append
    for item in raw_items:
        if is_pod and (item.get("status") or {}).get("phase") in TERMINAL:
            continue
        item = {"apiVersion": v, "kind": k, **item}
        if trim:
            item = trim_object(item)
        else:
            meta = item.get("metadata")
            if meta:
                meta.pop("managedFields", None)
        append(item)


def _typed(obj: dict, kind: Kind) -> dict:
    obj.setdefault("kind", kind.kind)
    obj.setdefault("apiVersion", kind.api_version)
    (obj.get("metadata") or {}).pop("managedFields", None)
    return obj


def _unreadable_reason(e: ClusterAPIError) -> str:
    if e.status == 403:
        return f"forbidden: {e.api_message}" if e.api_message else "forbidden"
    if e.status == 404:
        return "not served by this cluster"
    return f"{e.status} {e.reason or PHRASES.get(e.status, 'error')}" + (
        f": {e.api_message}" if e.api_message else "")
