"""Shell completion of namespaces, pending pods and node names, from the
--snapshot on the command line so far or else from the live cluster the
command would read (--kubeconfig / --context, or kubectl's defaults).

Completion must never fail loudly or hang a shell for long: any error
completes nothing, and a cluster gets a short request timeout.
"""

from __future__ import annotations

import os

CLUSTER_TIMEOUT = 3.0  # seconds per request: a shell waits for the answer


def _param(ctx, name: str):
    """A parameter given so far to the command, or to the group before it
    (`kschedx --context prod explain ...`)."""
    while ctx is not None:
        value = ctx.params.get(name)
        if value:
            return value
        ctx = ctx.parent
    return None


def _from_snapshot(paths, kind: str) -> list[dict]:
    from ..sources.fixtures import read_objects

    objects = [o for o, _ in read_objects(paths)]
    if kind == "Pod":
        return [o for o in objects if o.get("kind") == "Pod" and _pending(o)]
    if kind == "Namespace":
        names = {o["metadata"]["name"] for o in objects if o.get("kind") == "Namespace"}
        names |= {(o["metadata"].get("namespace") or "default") for o in objects if o.get("kind") == "Pod"}
        return [{"metadata": {"name": n}} for n in names]
    return [o for o in objects if o.get("kind") == kind]


def _pending(pod: dict) -> bool:
    return (not (pod.get("spec") or {}).get("nodeName")
            and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))


def _from_cluster(ctx, kind: str) -> list[dict]:
    from .connection import ClusterOptions

    options = ClusterOptions(_param(ctx, "kubeconfig"), _param(ctx, "context"), CLUSTER_TIMEOUT)
    with options.connect() as conn:
        if kind == "Pod":
            return conn.list_pending_pods()
        return conn.list_objects(kind)


def objects_for(ctx, kind: str) -> list[dict]:
    """Objects of one kind (pending pods for "Pod") from the command's source."""
    paths = _param(ctx, "snapshot_paths")
    if paths:
        return _from_snapshot(paths, kind)
    return _from_cluster(ctx, kind)


def complete_names(ctx, kind: str, incomplete: str) -> list[str]:
    """Names of Nodes or Namespaces that start with `incomplete`."""
    try:
        names = {o["metadata"]["name"] for o in objects_for(ctx, kind)}
    except Exception:  # a half-typed command line or an unreachable cluster: complete nothing
        return []
    return sorted(n for n in names if n.startswith(incomplete))


def _looks_like_path(incomplete: str) -> bool:
    if incomplete.startswith((".", "/", "~")) or incomplete.endswith((".yaml", ".yml", ".json", ".gz")):
        return True
    head = os.path.dirname(incomplete)
    return bool(head) and os.path.isdir(head)


def complete_pod_argument(ctx, incomplete: str):
    """A POD_FILE (the shell completes paths) or a pending pod: NAMESPACE/NAME,
    and NAME alone in the -n namespace."""
    from click.shell_completion import CompletionItem

    items = [CompletionItem(incomplete, type="file")]
    if _looks_like_path(incomplete):
        return items
    try:
        pods = objects_for(ctx, "Pod")
    except Exception:
        return items
    namespace = _param(ctx, "namespace")
    names = set()
    for pod in pods:
        meta = pod["metadata"]
        ns = meta.get("namespace") or "default"
        names.add(f"{ns}/{meta['name']}")
        if namespace == ns:
            names.add(meta["name"])
    items.extend(CompletionItem(n) for n in sorted(names) if n.startswith(incomplete))
    return items
