"""Talking to one API server: requests through the official client's REST
layer, retried when worth it (connection resets, 429, 5xx), every failure
turned into one clear line (ClusterError and its kinds), and open watches
(WatchStream). The client is imported inside functions: importing it costs
start-up time that commands reading fixtures should not pay.
"""

from __future__ import annotations

import json
import random
import re
import time
from dataclasses import dataclass

from ..util.errors import ClusterError

# A guard, not a configuration: no request may ever touch these.
_NEVER_REQUESTED = re.compile(r"/(secrets|configmaps)(/|$)")


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


class Transient(Exception):
    """A failure worth retrying: connection reset, 429, 5xx."""

    def __init__(self, error: ClusterError, retry_after: float | None = None):
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after



@dataclass
class Response:
    status: int
    data: bytes


class Transport:
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
                retry: str = "all", ok: tuple[int, ...] = ()) -> Response:
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
            except Transient as t:
                delay = t.retry_after if t.retry_after is not None else backoff(attempt)
                attempt += 1
                if time.monotonic() + delay > deadline:
                    raise t.error from None
                time.sleep(delay)

    def _once(self, method, path, *, what, query, body, content_type, retry, ok) -> Response:
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
            err.unanswered = not _before_sending(e)
            if _is_reset(e) and retry == "all":
                raise Transient(err) from None
            raise err from None
        status = resp.status
        if 200 <= status < 300 or status in ok:
            return Response(status, data)
        err = self._status_error(status, data, what, resp)
        if retry == "all" and status in _RETRIED_STATUSES:
            raise Transient(err, err.retry_after)
        if retry == "throttle" and status == 429 and not err.causes:
            raise Transient(err, err.retry_after)
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
            text = f"{status} {reason or PHRASES.get(status, 'error')}: {api_message}"
        else:
            text = f"{status} {PHRASES.get(status, resp.reason or 'error')}"
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

    def __init__(self, response, transport: "Transport", what: str):
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

PHRASES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
            405: "Method Not Allowed", 409: "Conflict", 410: "Gone", 422: "Unprocessable Entity",
            429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
            503: "Service Unavailable", 504: "Gateway Timeout"}


def backoff(attempt: int) -> float:
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


def _before_sending(e: BaseException) -> bool:
    """The request surely never reached the server: no connection was made
    (refused, DNS, connect timeout) or the TLS handshake failed. Anything
    else (a read timeout, a connection lost midway) may come after the server
    got the request, so a write may have taken effect."""
    import ssl

    import urllib3.exceptions as ue

    if isinstance(e, ue.MaxRetryError) and e.reason is not None:
        return _before_sending(e.reason)
    return isinstance(e, (ue.NewConnectionError, ue.ConnectTimeoutError, ue.NameResolutionError,
                          ue.SSLError, ssl.SSLError, ConnectionRefusedError))


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


