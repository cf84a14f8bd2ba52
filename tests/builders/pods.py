"""Pods and what goes in them: containers, and the pod of most plugin tests
(`make_pod`: a fresh uid, one container, only the fields a test gives)."""

from __future__ import annotations

import itertools

from .core import AUTO, api_object, metadata, put

__all__ = ["IMAGE", "container", "make_pod", "req_containers", "sidecar"]

IMAGE = "registry.example/app:1"

_uids = itertools.count(1)


def container(name="c", *, requests=None, limits=None, image=None, ports=None, restart_policy=None) -> dict:
    resources = put({}, requests=_copy(requests), limits=_copy(limits))
    return put({"name": name, "image": image or IMAGE}, resources=resources or None,
               ports=[dict(p) for p in ports] if ports is not None else None, restartPolicy=restart_policy)


def sidecar(name="sidecar", **kw) -> dict:
    return container(name, restart_policy="Always", **kw)


def req_containers(*requests) -> list[dict]:
    """One container per request list, named c0, c1, ..."""
    return [container(f"c{i}", requests=r) for i, r in enumerate(requests)]


def make_pod(
    name="pod",
    namespace="default",
    *,
    containers=None,
    init_containers=None,
    node=None,
    priority=None,
    uid=AUTO,
    labels=None,
    tolerations=None,
    node_selector=None,
    affinity=None,
    overhead=None,
    pod_resources=None,
    scheduling_gates=None,
    status=None,
    created=None,
    **spec,
) -> dict:
    """A Pod as stored, without admission: what is given, one default
    container, and a fresh uid unless `uid` says otherwise (None: none).
    Other keyword arguments are spec fields under their API names."""
    spec = put(
        put({}, **spec),
        containers=containers if containers is not None else [container()],
        initContainers=init_containers,
        nodeName=node,
        priority=priority,
        tolerations=tolerations,
        nodeSelector=node_selector,
        affinity=affinity,
        overhead=overhead,
        resources=pod_resources,
        schedulingGates=[{"name": g} for g in scheduling_gates] if scheduling_gates is not None else None,
    )
    meta = metadata(name, namespace, uid=f"uid-{next(_uids)}" if uid is AUTO else uid,
                    labels=_copy(labels), creationTimestamp=created)
    return api_object("v1", "Pod", meta, spec=spec, status=status)


def _copy(d: dict | None) -> dict | None:
    return dict(d) if d is not None else None
