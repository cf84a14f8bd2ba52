"""DefaultBinder: binds through the pods/binding subresource.

In explain and simulate nothing is written; `kschedx bind` performs the
POST itself through the cluster source, exactly as this plugin does upstream.
"""

from __future__ import annotations

from ..config import names
from ..framework.declaration import Declaration
from ..framework.interface import Plugin


def binding_for(pod: dict, node_name: str) -> dict:
    meta = pod["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": meta["name"], "namespace": meta.get("namespace", "default"), "uid": meta.get("uid")},
        "target": {"kind": "Node", "name": node_name},
    }


class DefaultBinder(Plugin):
    name = names.DefaultBinder

    def bind(self, state, pod_info, node_name: str) -> dict:
        return binding_for(pod_info.pod, node_name)


DECLARATION = Declaration(
    name=names.DefaultBinder,
    factory=DefaultBinder,
    points=frozenset({"bind"}),
)
