"""Cluster-level objects around pods: namespaces."""

from __future__ import annotations

from .core import api_object, metadata

__all__ = ["namespace"]


def namespace(name, labels=None) -> dict:
    return api_object("v1", "Namespace", metadata(name, labels=dict(labels or {})))
