"""A live cluster as a source: kubeconfig -> the same raw objects fixtures give,
plus the write primitives `bind` needs (binding, eviction, nominated node).

The official `kubernetes` client is used for configuration, authentication and
TLS only. Responses are parsed with json.loads into plain dicts: the generated
model classes are slow on 100,000 pods and drop fields they do not know. The
client is imported inside functions, because importing it costs start-up time
that commands reading fixtures should not pay.
"""

from __future__ import annotations

import gc
import json
import os
import random
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from kschedx.util.errors import ClusterError, InputError
from kschedx.sources.shape import check_document

if TYPE_CHECKING:  # imported where used: `import kschedx.sources.cluster` must stay cheap
    from concurrent.futures import Future, ThreadPoolExecutor

# ---- what is read ------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    kind: str
    api_version: str
    plural: str
    required: bool = False

    @property
    def base_path(self) -> str:
        return "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"

    @property
    def list_path(self) -> str:
        return f"{self.base_path}/{self.plural}"

    @property
    def resource(self) -> str:
        """`plural.group`, as kubectl and RBAC messages name it."""
        group = self.api_version.rpartition("/")[0]
        return f"{self.plural}.{group}" if group else self.plural

    @property
    def field_selector(self) -> str | None:
        """What the lists and watches of this kind leave to the server: terminal
        pods (the scheduler's own informer filter)."""
        return _NOT_TERMINAL if self.kind == "Pod" else None


NODE = Kind("Node", "v1", "nodes", required=True)
POD = Kind("Pod", "v1", "pods", required=True)

# Every kind fixture-format.md lists, required ones first, and the kinds that
# complete them: CSIStorageCapacity (VolumeBinding's capacity check),
# VolumeAttachment (NodeVolumeLimits) and RuntimeClass (admission of POD_FILE pods:
# overhead, node selector, tolerations). Secrets and ConfigMaps
# are deliberately absent: scheduling needs neither, and reading them would
# demand (and expose) far more than a dry run should.
KINDS: tuple[Kind, ...] = (
    NODE,
    POD,
    Kind("Namespace", "v1", "namespaces"),
    Kind("PersistentVolume", "v1", "persistentvolumes"),
    Kind("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
    Kind("Service", "v1", "services"),
    Kind("ReplicationController", "v1", "replicationcontrollers"),
    Kind("ReplicaSet", "apps/v1", "replicasets"),
    Kind("StatefulSet", "apps/v1", "statefulsets"),
    Kind("StorageClass", "storage.k8s.io/v1", "storageclasses"),
    Kind("CSINode", "storage.k8s.io/v1", "csinodes"),
    Kind("CSIDriver", "storage.k8s.io/v1", "csidrivers"),
    Kind("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities"),
    Kind("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments"),
    Kind("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets"),
    Kind("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses"),
    Kind("RuntimeClass", "node.k8s.io/v1", "runtimeclasses"),
    Kind("ResourceSlice", "resource.k8s.io/v1", "resourceslices"),
    Kind("DeviceClass", "resource.k8s.io/v1", "deviceclasses"),
    Kind("ResourceClaim", "resource.k8s.io/v1", "resourceclaims"),
    Kind("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates"),
)

# A guard, not a configuration: no request may ever touch these.
_NEVER_REQUESTED = re.compile(r"/(secrets|configmaps)(/|$)")

# The scheduler's own informer filter: terminal pods hold no resources.
_NOT_TERMINAL = "status.phase!=Succeeded,status.phase!=Failed"
_TERMINAL = ("Succeeded", "Failed")

PAGE_SIZE = 500
_MAX_LIST_RESTARTS = 3  # 410 Gone on a continue token restarts the list, a few times

Progress = Callable[[str, int, bool], None]


@dataclass
class ClusterRead:
    objects: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # about the connection (e.g. TLS off)
    # kind -> why it could not be read (forbidden, not served); what that costs the
    # results is ClusterState's business (kschedx.cluster.PLUGINS_READING).
    unreadable: dict[str, str] = field(default_factory=dict)
    # kind -> the resourceVersion of its list: where a watch of it starts.
    resource_versions: dict[str, str] = field(default_factory=dict)
    # The server's /version (gitVersion, major, minor...), None when it does not answer it.
    version: dict | None = None
    # When the objects were read (Unix seconds): "now" for what depends on time.
    read_at: float = field(default_factory=time.time)


# ---- errors --------------------------------------------------------------------------


class ClusterAPIError(ClusterError):
    """The API server answered with an error Status (after any retries)."""

    def __init__(self, message: str, *, status: int, reason: str = "", api_message: str = "",
                 causes: tuple[dict, ...] = (), retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.api_message = api_message
        self.causes = causes
        self.retry_after = retry_after


class BindConflict(ClusterAPIError):
    """409 on pods/binding: the pod is already bound, being deleted, or was replaced (UID)."""


class EvictionBlocked(ClusterAPIError):
    """The eviction was refused because of a PodDisruptionBudget.

    `api_message` is the server's message, `causes` its DisruptionBudget causes
    (each a dict with `reason` and `message`), `retry_after` its hint in seconds.
    """

    @property
    def budget_messages(self) -> list[str]:
        return [c.get("message", "") for c in self.causes if c.get("reason") == "DisruptionBudget"]


class _Transient(Exception):
    """A failure worth retrying: connection reset, 429, 5xx."""

    def __init__(self, error: ClusterError, retry_after: float | None = None):
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


# ---- transport -------------------------------------------------------------------------


@dataclass
class _Response:
    status: int
    data: bytes


class _Transport:
    """One API server: sends requests through the official client's REST layer,
    retries what is worth retrying, and turns every failure into one clear line."""

    def __init__(self, api_client, *, server: str, context: str | None, request_timeout: float,
                 retry_budget: float):
        self.api_client = api_client
        self.server = server
        self.context = context
        self.request_timeout = request_timeout
        self.retry_budget = retry_budget
        self.auth_notes: list[str] = []  # why credentials may be missing (plugin failures)
        self.namespace = "default"  # the context's namespace (kubectl's default for -n)

    @property
    def where(self) -> str:
        ctx = f' (context "{self.context}")' if self.context else ""
        server = self.server if len(self.server) <= 200 else self.server[:197] + "..."
        return f"cluster {server}{ctx}"

    def request(self, method: str, path: str, *, what: str, query: list | None = None,
                body: dict | None = None, content_type: str = "application/json",
                retry: str = "all", ok: tuple[int, ...] = ()) -> _Response:
        """Send one request; returns 2xx responses and statuses listed in `ok`.

        retry="all" retries connection resets, 429 and 5xx (for reads);
        retry="throttle" retries only 429s that carry no causes, which the API
        server's priority-and-fairness gate sends before handling the request,
        so a write is never repeated after it may have taken effect.
        """
        if _NEVER_REQUESTED.search(path):
            raise ValueError(f"kschedx never requests {path}")
        deadline = time.monotonic() + self.retry_budget
        attempt = 0
        while True:
            try:
                return self._once(method, path, what=what, query=query, body=body,
                                  content_type=content_type, retry=retry, ok=ok)
            except _Transient as t:
                delay = t.retry_after if t.retry_after is not None else _backoff(attempt)
                attempt += 1
                if time.monotonic() + delay > deadline:
                    raise t.error from None
                time.sleep(delay)

    def _once(self, method, path, *, what, query, body, content_type, retry, ok) -> _Response:
        from kubernetes.client.exceptions import ApiException

        headers = {"Accept": "application/json", "Accept-Encoding": "gzip"}
        if body is not None:
            headers["Content-Type"] = content_type
        try:
            m, url, headers, body, post = self.api_client.param_serialize(
                method, path, query_params=query, header_params=headers, body=body,
                auth_settings=["BearerToken"])
            resp = self.api_client.call_api(m, url, headers, body, post,
                                            _request_timeout=(self.request_timeout,
                                                              self.request_timeout))
            try:
                data = resp.read()
            finally:
                resp.response.release_conn()
        except ApiException as e:  # the REST layer wraps TLS failures this way
            raise self._transport_error(e, what) from None
        except Exception as e:  # urllib3 and socket errors, raised as is with retries off
            err = self._transport_error(e, what)
            err.transient = _is_transient(e)
            if _is_reset(e) and retry == "all":
                raise _Transient(err) from None
            raise err from None
        status = resp.status
        if 200 <= status < 300 or status in ok:
            return _Response(status, data)
        err = self._status_error(status, data, what, resp)
        if retry == "all" and status in _RETRIED_STATUSES:
            raise _Transient(err, err.retry_after)
        if retry == "throttle" and status == 429 and not err.causes:
            raise _Transient(err, err.retry_after)
        raise err

    def _status_error(self, status: int, data: bytes, what: str, resp) -> ClusterAPIError:
        reason = api_message = ""
        causes: tuple[dict, ...] = ()
        try:
            st = json.loads(data)
            if isinstance(st, dict) and st.get("kind") == "Status":
                reason = st.get("reason") or ""
                api_message = st.get("message") or ""
                causes = tuple((st.get("details") or {}).get("causes") or ())
        except ValueError:
            pass
        retry_after = _retry_after(resp.getheader("Retry-After"))
        if status == 401:
            why = "; ".join(self.auth_notes) or "expired or invalid token or certificate?"
            text = f"401 Unauthorized: the server rejected the credentials ({why})"
        elif api_message:
            text = f"{status} {reason or _PHRASES.get(status, 'error')}: {api_message}"
        else:
            text = f"{status} {_PHRASES.get(status, resp.reason or 'error')}"
        return ClusterAPIError(f"{self.where}: {what}: {text}", status=status, reason=reason,
                               api_message=api_message, causes=causes, retry_after=retry_after)

    def _transport_error(self, e: BaseException, what: str) -> ClusterError:
        detail = _describe_transport(e, self.request_timeout)
        if len(detail) > 400:  # the client quotes whatever it could not parse, whole
            detail = detail[:397] + "..."
        return ClusterError(f"{self.where}: {what}: {detail}")

    def open_stream(self, path: str, query: list, *, what: str, read_timeout: float) -> "WatchStream":
        """One streamed GET (a watch), through the same REST layer as every other
        request (authentication, the client's token refresh). No retry here: a
        watcher owns its backoff. A transport failure is a ClusterError whose
        `transient` is true when trying again later may work."""
        if _NEVER_REQUESTED.search(path):
            raise ValueError(f"kschedx never requests {path}")
        from kubernetes.client.exceptions import ApiException

        headers = {"Accept": "application/json"}  # watch streams are not compressed
        try:
            m, url, headers, body, post = self.api_client.param_serialize(
                "GET", path, query_params=query, header_params=headers, auth_settings=["BearerToken"])
            resp = self.api_client.call_api(m, url, headers, body, post,
                                            _request_timeout=(self.request_timeout, read_timeout))
        except ApiException as e:
            raise self._transport_error(e, what) from None
        except Exception as e:
            err = self._transport_error(e, what)
            err.transient = _is_transient(e)
            raise err from None
        if not 200 <= resp.status < 300:
            try:
                data = resp.read()
            except Exception:
                data = b""
            finally:
                resp.response.release_conn()
            raise self._status_error(resp.status, data, what, resp)
        return WatchStream(resp.response, self, what)

    def get_json(self, path: str, *, what: str, query: list | None = None, ok=()) -> tuple[int, dict]:
        resp = self.request("GET", path, what=what, query=query, ok=ok)
        return resp.status, self._decode(resp.data, what)

    def _decode(self, data: bytes, what: str):
        try:
            return json.loads(data)
        except ValueError:
            raise ClusterError(f"{self.where}: {what}: the answer is not JSON "
                               "(is the server URL an API server?)") from None


_RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504})


class WatchStream:
    """An open watch: its lines, each one event (JSON), as the server sends them."""

    def __init__(self, response, transport: "_Transport", what: str):
        self._response = response
        self._t = transport
        self.what = what
        self._closed = False

    def lines(self):
        """Each complete line, as bytes. A connection that breaks raises a
        transient ClusterError; the server ending the stream ends the loop."""
        buf = bytearray()
        resp = self._response
        try:
            chunks = (resp.read_chunked(amt=None, decode_content=True) if resp.chunked
                      else resp.stream(1 << 16, decode_content=True))
            for chunk in chunks:
                if not chunk:
                    continue
                buf += chunk
                start = 0
                while True:
                    end = buf.find(b"\n", start)
                    if end < 0:
                        break
                    if end > start:
                        yield bytes(buf[start:end])
                    start = end + 1
                if start:
                    del buf[:start]
        except Exception as e:
            if self._closed:
                return
            err = self._t._transport_error(e, self.what)
            err.transient = True
            raise err from None
        if buf.strip() and not self._closed:
            yield bytes(buf)

    def close(self) -> None:
        """Ends the stream; safe from another thread (it unblocks a reader)."""
        if self._closed:
            return
        self._closed = True
        resp = self._response
        try:
            shutdown = getattr(resp, "shutdown", None)
            if shutdown is not None:
                shutdown()
            else:
                import socket

                sock = getattr(getattr(resp, "_fp", None), "fp", None)
                raw = getattr(sock, "raw", None)
                s = getattr(raw, "_sock", None)
                if s is not None:
                    s.shutdown(socket.SHUT_RDWR)
        except Exception:
            pass
        try:
            resp.release_conn()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

_PHRASES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            405: "Method Not Allowed", 409: "Conflict", 410: "Gone", 422: "Unprocessable Entity",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Unavailable", 504: "Gateway Timeout"}


def _backoff(attempt: int) -> float:
    # 0.2s, 0.4s, 0.8s ... capped at 5s, with jitter so parallel readers spread out.
    return min(0.2 * 2 ** attempt, 5.0) * random.uniform(0.8, 1.2)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _is_transient(e: BaseException) -> bool:
    """A failure a long-running watcher tries again: the server is not there
    (yet), reset the connection or answered too slowly. TLS and name
    resolution failures are not: trying again will not mend them."""
    import urllib3.exceptions as ue

    if isinstance(e, ue.MaxRetryError) and e.reason is not None:
        return _is_transient(e.reason)
    if isinstance(e, (ue.SSLError, ue.NameResolutionError)):
        return False
    return _is_reset(e) or isinstance(e, (ue.NewConnectionError, ue.ConnectTimeoutError,
                                          ue.ReadTimeoutError, ConnectionRefusedError))


def _is_reset(e: BaseException) -> bool:
    import urllib3.exceptions as ue

    if isinstance(e, (ue.NewConnectionError, ue.TimeoutError, ue.SSLError)):
        return False
    return isinstance(e, (ue.ProtocolError, ConnectionResetError, ConnectionAbortedError,
                          BrokenPipeError))


def _describe_transport(e: BaseException, timeout: float) -> str:
    """One line a user can act on, from urllib3's layered exceptions."""
    import ssl

    import urllib3.exceptions as ue

    from kubernetes.client.exceptions import ApiException

    if isinstance(e, ApiException):
        text = str(e.reason or "")
        if text.startswith("SSLError"):
            return "TLS certificate verification failed: " + _tls_detail(text)
        return text.splitlines()[0] if text else f"HTTP {e.status}"
    if isinstance(e, ue.MaxRetryError) and e.reason is not None:
        return _describe_transport(e.reason, timeout)
    if isinstance(e, (ue.SSLError, ssl.SSLError)):
        return "TLS certificate verification failed: " + _tls_detail(str(e))
    if isinstance(e, ue.NameResolutionError):
        host = getattr(e, "_host", None)
        return f"cannot resolve host {host}" if host else "cannot resolve the host name (DNS)"
    if isinstance(e, ue.NewConnectionError):
        text = str(e)
        if "refused" in text.lower():
            return "cannot connect: connection refused (is the API server running and the address right?)"
        if "timed out" in text.lower():
            return f"cannot connect: no answer within {timeout:g}s"
        return "cannot connect: " + _last_part(text)
    if isinstance(e, ue.ConnectTimeoutError):
        return f"cannot connect: no answer within {timeout:g}s"
    if isinstance(e, ue.ReadTimeoutError):
        return f"timed out: no answer within {timeout:g}s (request timeout)"
    if isinstance(e, ue.ProtocolError):
        inner = e.args[1] if len(e.args) > 1 and isinstance(e.args[1], BaseException) else None
        return "connection lost: " + (_describe_os_error(inner) if inner else _last_part(str(e)))
    if isinstance(e, OSError):
        return "connection lost: " + _describe_os_error(e)
    return f"{type(e).__name__}: {e}"


def _describe_os_error(e: BaseException) -> str:
    import http.client

    if isinstance(e, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(e, ConnectionResetError):
        return "connection reset by the server"
    if isinstance(e, http.client.IncompleteRead):
        return "the answer was cut short"
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__


def _tls_detail(text: str) -> str:
    # "... certificate verify failed: IP address mismatch, certificate is not
    # valid for '10.0.0.1'. (_ssl.c:1006)": keep the quoted name.
    m = (re.search(r"certificate verify failed: (.+?)\.?\s*\(_ssl", text)
         or re.search(r"certificate verify failed: ([^(\]\"]+)", text))
    if m:
        return m.group(1).strip() + " (check certificate-authority in the kubeconfig)"
    m = re.search(r"\[SSL: ([A-Z_]+)\]", text)
    if m:
        return m.group(1).lower().replace("_", " ")
    return _last_part(text)


def _last_part(text: str) -> str:
    return text.strip().splitlines()[-1].rsplit(": ", 1)[-1].strip(" ')\"")


# ---- configuration ---------------------------------------------------------------------


def _kubeconfig_paths(kubeconfig: str | None) -> list[str] | None:
    """The files to merge, as kubectl picks them; None means: try in-cluster config."""
    if kubeconfig:
        path = os.path.expanduser(kubeconfig)
        if not os.path.isfile(path):
            raise InputError("no such file", source=kubeconfig)
        return [path]
    env = os.environ.get("KUBECONFIG")
    if env:
        paths = [os.path.expanduser(p) for p in env.split(os.pathsep) if p]
        existing = [p for p in paths if os.path.isfile(p)]
        if not existing:
            raise InputError(f"KUBECONFIG={env} names no existing file")
        return existing
    default = os.path.expanduser("~/.kube/config")
    if os.path.isfile(default):
        return [default]
    return None


def _load_documents(paths: list[str]) -> list[dict]:
    import yaml

    docs = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                doc = yaml.safe_load(f)
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", source=path) from None
        except UnicodeDecodeError as e:
            raise InputError(f"not UTF-8 text ({e.reason} at byte {e.start})", source=path) from None
        except yaml.YAMLError as e:
            from .fixtures import _yaml_error  # the fixtures' wording: line, column, problem

            raise InputError(_yaml_error(path, e).detail.replace("malformed YAML", "not valid YAML"),
                             source=path) from None
        if doc is None:
            doc = {}
        if not isinstance(doc, dict):
            raise InputError("not a kubeconfig (expected a mapping)", source=path)
        check_document(doc, "kubeconfig", path)
        docs.append(doc)
    return docs


@contextmanager
def _captured_log_errors():
    """The client logs a failing credentials plugin (`exec:`) instead of raising, which
    would print a stray line on stderr; keep those lines to explain a later 401."""
    import logging

    notes: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            notes.append(record.getMessage())

    root = logging.getLogger()
    handler = Keep(logging.ERROR)
    root.addHandler(handler)
    try:
        yield notes
    finally:
        root.removeHandler(handler)


def _configure(kubeconfig: str | None, context: str | None):
    """-> (kubernetes Configuration, context name or None for in-cluster, auth notes,
    the context's namespace)."""
    from kubernetes import client
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import KubeConfigLoader, KubeConfigMerger

    cfg = client.Configuration()
    paths = _kubeconfig_paths(kubeconfig)
    if paths is None:
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            from kubernetes.config.incluster_config import load_incluster_config

            try:
                load_incluster_config(client_configuration=cfg)
            except ConfigException as e:
                raise ClusterError(f"in-cluster configuration: {e}") from None
            return cfg, None, [], _in_cluster_namespace()
        raise InputError("no kubeconfig: pass --kubeconfig, set KUBECONFIG, or create "
                         "~/.kube/config (or run inside a pod)")

    docs = _load_documents(paths)
    source = os.pathsep.join(paths)
    # kubectl's merge: the first file that sets a key wins. The client's merger does
    # that for clusters, users and contexts but lets the last current-context win.
    if context is None:
        context = next((d["current-context"] for d in docs if d.get("current-context")), None)
    if not context:
        raise InputError("no current-context; pass --context", source=source)
    names = [c.get("name") for d in docs for c in (d.get("contexts") or []) if isinstance(c, dict)]
    if context not in names:
        known = ", ".join(sorted({n for n in names if n})) or "none"
        raise InputError(f'context "{context}" not found (contexts: {known})', source=source)
    try:
        # The client's merger refuses empty files, which kubectl skips.
        merged = KubeConfigMerger(os.pathsep.join(p for p, d in zip(paths, docs) if d))
        loader = KubeConfigLoader(config_dict=merged.config, active_context=context,
                                  config_base_path=None)
        with _captured_log_errors() as notes:
            loader.load_and_set(cfg)
    except ConfigException as e:
        text = str(e)
        if "exec" in text.lower():  # a credentials plugin failed: the cluster's auth, not the file
            raise ClusterError(f'context "{context}": credentials plugin failed: {text}') from None
        raise InputError(text, source=source) from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InputError(f"invalid kubeconfig: {type(e).__name__}: {e}", source=source) from None
    if not cfg.host:
        cluster = _context_field(docs, context, "cluster")
        what = f'cluster "{cluster}"' if cluster else f'context "{context}"'
        raise InputError(f"invalid configuration: no server found for {what}", source=source)
    cfg.host = _default_server_url(cfg)
    return cfg, context, notes, _context_namespace(docs, context)


def _default_server_url(cfg) -> str:
    """client-go's DefaultServerURL: a server without a scheme gets https://
    when the cluster has TLS settings (a CA, a client certificate, or
    insecure-skip-tls-verify), else http://."""
    host = cfg.host
    if "://" in host:
        return host
    tls = bool(cfg.ssl_ca_cert or cfg.cert_file or not cfg.verify_ssl)
    return ("https://" if tls else "http://") + host


def _context_field(docs: list[dict], context: str, field: str):
    for doc in docs:
        for entry in doc.get("contexts") or ():
            if isinstance(entry, dict) and entry.get("name") == context:
                value = (entry.get("context") or {}).get(field)
                return value if isinstance(value, str) else None
    return None


def _context_namespace(docs: list[dict], context: str) -> str:
    """The context's namespace, as kubectl defaults -n: the first file that
    defines the context wins; no namespace there means "default"."""
    for doc in docs:
        for entry in doc.get("contexts") or ():
            if isinstance(entry, dict) and entry.get("name") == context:
                namespace = (entry.get("context") or {}).get("namespace")
                return namespace if isinstance(namespace, str) and namespace else "default"
    return "default"


SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


def _in_cluster_namespace() -> str:
    """client-go's in-cluster namespace: $POD_NAMESPACE, else the service
    account's namespace file, else "default"."""
    namespace = os.environ.get("POD_NAMESPACE")
    if namespace:
        return namespace
    try:
        with open(SERVICE_ACCOUNT_NAMESPACE, encoding="utf-8") as f:
            namespace = f.read().strip()
    except OSError:
        namespace = ""
    return namespace or "default"


def connect(kubeconfig: str | None = None, context: str | None = None,
            request_timeout: float = 30.0, *, retry_budget: float = 30.0,
            freeze_reads: bool = False, pool_size: int = 8) -> "ClusterConnection":
    """Open a connection as kubectl would: --kubeconfig, else KUBECONFIG (files merged,
    first wins), else ~/.kube/config, else the in-cluster service account.

    `request_timeout` bounds each request; `retry_budget` bounds the total time
    spent waiting between retries of one request. `freeze_reads` is for one-shot
    processes only (see _gc_paused). `pool_size`: connections kept open to the
    server (a watch keeps one per watched kind). No request is sent here.
    """
    from kubernetes import client

    from kschedx import __version__

    cfg, context_name, auth_notes, namespace = _configure(kubeconfig, context)
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
    transport = _Transport(api, server=cfg.host, context=context_name,
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
    def __init__(self, transport: _Transport, warnings: list[str] | None = None, *,
                 freeze_reads: bool = False):
        self._t = transport
        self._warnings = list(warnings or [])
        self.freeze_reads = freeze_reads  # see _gc_paused

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

    def read_objects(self, progress: Progress | None = None, *, full: bool = False) -> ClusterRead:
        """Every kind scheduling reads, from all namespaces.

        Nodes and pods are required: failing to read them raises ClusterError.
        Other kinds that are forbidden or not served become an `unreadable`
        entry. Optional kinds are read in background threads while pods are
        read; `progress` is always called from the calling thread.

        Unless `full`, each page is trimmed to the fields scheduling reads
        (sources/trim.py) as soon as it is parsed, so the bulk of a big cluster
        is never held; managedFields are dropped either way.
        """
        with _gc_paused(self.freeze_reads):
            return self._read_objects(progress, full)

    def _read_objects(self, progress: Progress | None, full: bool) -> ClusterRead:
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
                (k, pool.submit(self._list_all, k, None, full=full, rvs=rvs)) for k in KINDS if not k.required]
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
        kind = next(k for k in KINDS if k.kind == kind_name)
        with _gc_paused():
            return self._list_all(kind, None, full=True)

    def list_pending_pods(self) -> list[dict]:
        """Pods waiting for a node: no spec.nodeName and not terminal."""
        with _gc_paused():
            pods = self._list_all(POD, None, field_selector="spec.nodeName=," + _NOT_TERMINAL,
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

        def fetch(token: str | None) -> _Response:
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


@contextmanager
def _gc_paused(freeze: bool = False):
    """Parsed JSON holds no reference cycles, yet each of the millions of dicts a big
    list creates counts toward the cyclic collector's thresholds: its passes over an
    ever larger heap made reading 3-4x slower. Pause it while reading (refcounting
    still frees what a page drops).

    With `freeze`, what exists afterwards is moved out of the collector's sight
    (gc.freeze): the passes that building the cluster state and the scheduling
    cycles trigger then skip the API objects (explain of one pod on 150,000 pods:
    21 s instead of 24). It is process-wide and permanent (cycles alive at that moment are
    never collected), so only a one-shot command may ask for it: connect()'s
    `freeze_reads`, which the CLI sets and a library user should not."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()


def _adopt_items(raw_items: list, kind: Kind, out: list[dict], *, trim: bool = False) -> None:
    """List items come without kind/apiVersion; add them (first, as kubectl shows them),
    and drop what scheduling never reads but costs memory: managedFields always
    (kubectl hides them too), everything sources/trim.py does not keep when `trim`."""
    from kschedx.sources.trim import trim as trim_object

    k, v = kind.kind, kind.api_version
    is_pod = kind is POD
    append = out.append
    for item in raw_items:
        if is_pod and (item.get("status") or {}).get("phase") in _TERMINAL:
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
    return f"{e.status} {e.reason or _PHRASES.get(e.status, 'error')}" + (
        f": {e.api_message}" if e.api_message else "")
