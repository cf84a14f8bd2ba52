"""HTTPExtender: one configured extender, called as kube-scheduler v1.35.4
calls it (pkg/scheduler/extender.go).

- POST `<urlPrefix without trailing slashes>/<verb>`, `Content-Type:
  application/json`, the body one of wire.py's documents; only `200` is a
  reply, any other code is the error "failed VERB with extender at URL URL,
  code N"; the reply's first JSON value is decoded.
- `httpTimeout` bounds the whole request (0: 5s, as NewHTTPExtender sets it).
- TLS as client-go's TLSConfigFor builds it from `tlsConfig`: `enableHTTPS`
  without a CA means `insecure`; a CA and `insecure` together is an error;
  files are read when the extender is built; TLS 1.2 at least. The scheme
  of `urlPrefix` decides whether TLS is used at all, as in Go.
- Transport failures are worded as Go's net/http words them (`Post "URL":
  dial tcp 127.0.0.1:80: connect: connection refused`, `... context deadline
  exceeded (Client.Timeout exceeded while awaiting headers)`) where the cause
  is the same; the text of rarer socket and TLS errors is Python's.

Only the standard library, imported when an extender is built. Proxies
from the environment are not used.
"""

from __future__ import annotations

import base64
import binascii
import os
import tempfile
import time

from . import wire

DEFAULT_TIMEOUT_SECONDS = 5.0


class ExtenderError(Exception):
    """A call failed; str() is the error kube-scheduler would meet."""


class ExtenderConfigError(Exception):
    """The extender cannot be built (kube-scheduler would not start): the
    message, and the field of `extenders[i]` it concerns."""

    def __init__(self, message: str, field: str = ""):
        super().__init__(message)
        self.field = field


def _duration_seconds(text) -> float | None:
    """httpTimeout: 0 means the 5s default; a negative one, no timeout."""
    from ..config.pluginargs import parse_duration

    try:
        ns = parse_duration(text if isinstance(text, str) else "0s")
    except ValueError as e:
        raise ExtenderConfigError(str(e), "httpTimeout") from None
    if ns == 0:
        return DEFAULT_TIMEOUT_SECONDS
    if ns < 0:
        return None
    return ns / 1e9


class HTTPExtender:
    """The fields of one `extenders[i]`, with its transport."""

    def __init__(self, cfg: dict):
        self.config = cfg
        self.url_prefix = cfg.get("urlPrefix") or ""
        self.filter_verb = cfg.get("filterVerb") or ""
        self.prioritize_verb = cfg.get("prioritizeVerb") or ""
        self.preempt_verb = cfg.get("preemptVerb") or ""
        self.bind_verb = cfg.get("bindVerb") or ""
        self.weight = int(cfg.get("weight") or 0)
        self.node_cache_capable = bool(cfg.get("nodeCacheCapable"))
        self.ignorable = bool(cfg.get("ignorable"))
        self.managed_resources = {m.get("name", "") for m in cfg.get("managedResources") or ()}
        self.timeout = _duration_seconds(cfg.get("httpTimeout"))
        self._ssl_context = _tls_context(cfg)

    @property
    def name(self) -> str:
        """Extender.Name(): its URL prefix."""
        return self.url_prefix

    def is_filter(self) -> bool:
        return bool(self.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.prioritize_verb)

    def supports_preemption(self) -> bool:
        return bool(self.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.bind_verb)

    def is_interested(self, pod: dict) -> bool:
        """IsInterested: without managedResources, every pod; else a pod whose
        containers or init containers request or limit one of them."""
        if not self.managed_resources:
            return True
        spec = pod.get("spec") or {}
        for key in ("containers", "initContainers"):
            for c in spec.get(key) or ():
                res = c.get("resources") or {}
                for part in ("requests", "limits"):
                    if any(name in self.managed_resources for name in res.get(part) or ()):
                        return True
        return False

    def url(self, verb: str) -> str:
        return self.url_prefix.rstrip("/") + "/" + verb

    # -- the one HTTP exchange -------------------------------------------------
    def send(self, verb: str, payload):
        """POST the payload to the verb; the reply's first JSON value."""
        return wire.first_value(self._post(self.url(verb), verb, wire.encode(payload)))

    def _post(self, url: str, verb: str, body: bytes) -> bytes:
        import http.client
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as e:
            raise ExtenderError(f'parse "{url}": {e}') from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise ExtenderError(f'Post "{url}": unsupported protocol scheme "{parts.scheme}"')
        host = parts.hostname
        if not host:
            raise ExtenderError(f'Post "{url}": http: no Host in request URL')
        tls = scheme == "https"
        port = port or (443 if tls else 80)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout

        def remaining() -> float | None:
            if deadline is None:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            return left

        awaiting = "Client.Timeout exceeded while awaiting headers"
        sock = None
        try:
            try:
                sock = _dial(url, host, port, remaining)
                if tls:
                    sock = self._handshake(url, sock, host, remaining)
                conn = http.client.HTTPConnection(host, port)
                conn.sock = sock
                path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                sock.settimeout(remaining())
                conn.request("POST", path, body=body, headers={
                    "Content-Type": "application/json", "User-Agent": "kschedx", "Accept": "application/json"})
                sock.settimeout(remaining())
                resp = conn.getresponse()
            except TimeoutError:
                raise ExtenderError(f'Post "{url}": context deadline exceeded ({awaiting})') from None
            except (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError,
                    BrokenPipeError):
                raise ExtenderError(f'Post "{url}": EOF') from None
            except http.client.HTTPException as e:
                raise ExtenderError(f'Post "{url}": {e}') from None
            except OSError as e:
                raise ExtenderError(f'Post "{url}": {e.strerror or e}') from None
            if resp.status != 200:
                raise ExtenderError(f"failed {verb} with extender at URL {url}, code {resp.status}")
            try:
                sock.settimeout(remaining())
                return resp.read()
            except TimeoutError:
                raise ExtenderError("context deadline exceeded (Client.Timeout or context cancellation while "
                                    "reading body)") from None
            except (http.client.HTTPException, OSError):
                raise ExtenderError("unexpected EOF") from None
        finally:
            if sock is not None:
                try:
                    sock.close()
                except OSError:
                    pass

    def _handshake(self, url: str, sock, host: str, remaining):
        import ssl

        ctx = self._ssl_context
        if ctx is None:
            ctx = ssl.create_default_context()
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        server_name = ((self.config.get("tlsConfig") or {}).get("serverName")) or host
        try:
            sock.settimeout(remaining())
            return ctx.wrap_socket(sock, server_hostname=server_name)
        except ssl.SSLCertVerificationError as e:
            raise ExtenderError(f'Post "{url}": tls: failed to verify certificate: x509: '
                                f"{_x509_reason(e, server_name)}") from None
        except ssl.SSLError as e:
            raise ExtenderError(f'Post "{url}": tls: {e.reason or e}') from None


def _dial(url: str, host: str, port: int, remaining):
    """net.Dial("tcp", host:port): every address of the host in turn; the
    error names the last one tried, as Go's does."""
    import socket

    addr_text = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise ExtenderError(f'Post "{url}": dial tcp: lookup {host}: no such host') from None
    last = None
    for family, type_, proto, _, sockaddr in infos:
        ip = sockaddr[0]
        addr_text = f"[{ip}]:{port}" if family == socket.AF_INET6 else f"{ip}:{port}"
        s = socket.socket(family, type_, proto)
        try:
            s.settimeout(remaining())
            s.connect(sockaddr)
            return s
        except TimeoutError:
            s.close()
            raise
        except ConnectionRefusedError:
            last = "connect: connection refused"
        except OSError as e:
            last = f"connect: {(e.strerror or str(e)).lower()}"
        s.close()
    raise ExtenderError(f'Post "{url}": dial tcp {addr_text}: {last or "no address"}')


def _x509_reason(e, server_name: str) -> str:
    msg = (getattr(e, "verify_message", "") or "").lower()
    if "mismatch" in msg:
        return f"certificate is not valid for {server_name}"
    if "expired" in msg or "not yet valid" in msg:
        return "certificate has expired or is not yet valid"
    if "issuer" in msg or "self-signed" in msg or "self signed" in msg or "unknown ca" in msg:
        return "certificate signed by unknown authority"
    return msg or str(e)


# -- TLS configuration (client-go's TLSConfigFor) -----------------------------------------
def _bytes_field(tls: dict, key: str) -> bytes:
    value = tls.get(key) or ""
    if not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ExtenderConfigError("illegal base64 data", f"tlsConfig.{key}") from None


def _read(path: str, key: str) -> bytes:
    try:
        with open(os.path.normpath(path), "rb") as f:
            return f.read()
    except OSError as e:
        raise ExtenderConfigError(f"open {path}: {(e.strerror or str(e)).lower()}", f"tlsConfig.{key}") from None


def _tls_context(cfg: dict):
    """The ssl.SSLContext of the extender's transport, or None for the
    defaults (system roots) when no TLS option is set."""
    tls = cfg.get("tlsConfig") or {}
    insecure = bool(tls.get("insecure"))
    ca_data = _bytes_field(tls, "caData")
    cert_data = _bytes_field(tls, "certData")
    key_data = _bytes_field(tls, "keyData")
    ca_file, cert_file, key_file = (tls.get("caFile") or ""), (tls.get("certFile") or ""), (tls.get("keyFile") or "")
    has_ca = bool(ca_file or ca_data)
    if cfg.get("enableHTTPS") and not has_ca:
        insecure = True
    has_cert_auth = bool((cert_data or cert_file) and (key_data or key_file))
    if not (has_ca or has_cert_auth or insecure or tls.get("serverName")):
        return None
    if has_ca and insecure:
        raise ExtenderConfigError("specifying a root certificates file with the insecure flag is not allowed",
                                  "tlsConfig")
    if not ca_data and ca_file:
        ca_data = _read(ca_file, "caFile")
    if not cert_data and cert_file:
        cert_data = _read(cert_file, "certFile")
    if not key_data and key_file:
        key_data = _read(key_file, "keyFile")

    import ssl

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif ca_data:
        # Only these CAs, as Go's RootCAs; PEM that does not parse leaves the
        # pool empty (every server then fails verification), as Go's does.
        try:
            ctx.load_verify_locations(cadata=ca_data.decode("ascii", "replace"))
        except ssl.SSLError:
            pass
    else:
        ctx.load_default_certs()
    if has_cert_auth:
        with tempfile.TemporaryDirectory(prefix="kschedx-extender-") as tmp:
            cert_path, key_path = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
            for path, data in ((cert_path, cert_data), (key_path, key_data)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
            try:
                ctx.load_cert_chain(cert_path, key_path)
            except ssl.SSLError as e:
                raise ExtenderConfigError(f"tls: {e.reason or e}: the client certificate and key do not load",
                                          "tlsConfig") from None
    return ctx
