"""The kubeconfig, as kubectl reads it: --kubeconfig, else KUBECONFIG
(files merged, the first that sets a key wins), else ~/.kube/config, else
the in-cluster service account; the context, its server and namespace, and
the client Configuration made from them.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from ..util.errors import ClusterError, InputError
from .shape import check_document


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


def configure(kubeconfig: str | None, context: str | None):
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

