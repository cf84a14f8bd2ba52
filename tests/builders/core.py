"""What every builder shares: the object envelope and its optional fields."""

from __future__ import annotations

__all__ = ["AUTO", "api_object", "metadata", "owner_reference", "put", "served"]


class _Auto:
    def __repr__(self):
        return "AUTO"


AUTO = _Auto()
"""A field the builder fills in itself (a fresh uid, say); None leaves it out."""


def put(obj: dict, **fields) -> dict:
    """Sets the fields that are given (not None), in order; returns obj."""
    for key, value in fields.items():
        if value is not None:
            obj[key] = value
    return obj


def metadata(name: str, namespace: str | None = None, **fields) -> dict:
    return put({"name": name}, namespace=namespace, **fields)


def api_object(api_version: str, kind: str, meta: dict, **fields) -> dict:
    """{apiVersion, kind, metadata, ...fields}, fields as given (None: left out)."""
    return put({"apiVersion": api_version, "kind": kind, "metadata": meta}, **fields)


def served(api_version: str, kind: str, meta: dict, **fields) -> dict:
    """api_object as the test API server serves it: kind first."""
    return {"kind": kind, **api_object(api_version, kind, meta, **fields)}


def owner_reference(kind: str, name: str, uid: str, api_version: str = "v1") -> dict:
    """A controller owner reference."""
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True}
