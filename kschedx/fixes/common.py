"""Small helpers the fix kinds share: JSON Patch operations on the pod as
written, and how taints and quantities read."""

from __future__ import annotations

from .jsonpatch import pointer


def append_ops(obj: dict, path: tuple, items: list) -> list[dict]:
    """Operations adding `items` to the list at `path` of `obj` (created when absent)."""
    node = obj
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            break
    if isinstance(node, list):
        return [{"op": "add", "path": pointer(*path, "-"), "value": item} for item in items]
    return [{"op": "add", "path": pointer(*path), "value": list(items)}]


def ensure_map_ops(obj: dict, path: tuple) -> list[dict]:
    """Operations creating the mappings along `path` that `obj` lacks."""
    ops = []
    node = obj
    for i, key in enumerate(path):
        child = node.get(key) if isinstance(node, dict) else None
        if not isinstance(child, dict):
            ops.append({"op": "add", "path": pointer(*path[: i + 1]), "value": {}})
            node = {}
        else:
            node = child
    return ops


def taint_text(taint: dict) -> str:
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key', '')}{value}:{taint.get('effect', '')}"

