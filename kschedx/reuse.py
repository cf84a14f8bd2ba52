"""Identical pods in `explain`: one scheduling cycle, several results.

Pods of one controller differ, for scheduling, only in name and uid. Against
one unchanged snapshot (explain changes nothing between pods) an identical
pod gets the same verdicts and scores, so its result is the earlier pod's
document with its own name, uid and source, and its own tie-break draw made
in its turn (the run's random source sees the same draws as without reuse).

The scheduling key is the pod as scheduling reads it (sources/trim.py's
list, which tests/test_trim.py checks on every golden case: namespace,
labels, annotations, ownerReferences, deletionTimestamp, the spec's
scheduling fields with volumes and containers, the status fields read)
without name, uid, resourceVersion, generation and creationTimestamp (queue
order only). When unsure, pods are not identical:

- pods with generic ephemeral volumes or resourceClaims own per-pod objects
  (a PVC `<pod>-<volume>`, claims reserved for the pod's uid): never shared;
- a pod the nominator holds sees every nominated pod but itself: never shared;
- a cycle that drew at random other than its final tie-break (preemption
  with --tie-break random) is not shared;
- a result naming its pod's name or uid anywhere is not shared;
- profiles with plugins from other distributions (they may read anything):
  no sharing at all.
"""

from __future__ import annotations

import json
from collections import OrderedDict

from .framework.registry import IN_TREE
from .result import add_source
from .sources.trim import trim_pod

# metadata that names one pod, not what it asks of the scheduler.
IDENTITY = frozenset({"name", "generateName", "uid", "resourceVersion", "generation", "creationTimestamp"})
# Keys a pod document sets from its own pod (app._pod_document), the last keys.
OWN_KEYS = ("askedByName", "source")
# Documents kept for later identical pods: queue order keeps a controller's
# pods together, and each kept document is one pod's whole result.
KEPT = 4


def scheduling_key(pi) -> str | None:
    """What every plugin reads of the pod, as one string; None when the pod
    is never shared (see the module doc)."""
    spec = pi.spec
    if spec.get("resourceClaims"):
        return None
    for v in spec.get("volumes") or ():
        if not isinstance(v, dict) or "ephemeral" in v:
            return None
    pod = trim_pod(pi.pod)
    meta = {k: v for k, v in (pod.get("metadata") or {}).items() if k not in IDENTITY}
    # Key order is kept (not sorted): two pods written alike share; others
    # are merely not shared.
    return json.dumps([meta, pod.get("spec"), pod.get("status")], default=repr, separators=(",", ":"))


class Template:
    __slots__ = ("doc", "drawn")

    def __init__(self, doc: dict, drawn: bool):
        self.doc = doc
        self.drawn = drawn  # the selected node was drawn among topNodes


class ResultReuse:
    """The documents of earlier pods, by scheduling key (the last KEPT)."""

    def __init__(self, scheds, workload):
        self.scheds = scheds
        self.workload = workload
        self.enabled = all(name in IN_TREE for fw in scheds.frameworks for name in _plugin_names(fw))
        self.templates: OrderedDict[str, Template] = OrderedDict()
        self.hits = 0

    def key(self, pi) -> str | None:
        if not self.enabled or self.scheds.nominator.is_nominated(pi):
            return None
        return scheduling_key(pi)

    def document(self, key: str | None, pi) -> tuple[dict, bool] | None:
        """An earlier identical pod's document made this pod's, and whether
        its selected node was drawn now; None when there is none."""
        t = self.templates.get(key) if key is not None else None
        if t is None:
            return None
        self.templates.move_to_end(key)
        self.hits += 1
        p = dict(t.doc)
        p["pod"] = pi.key
        p["uid"] = pi.uid
        if t.drawn:
            p["selectedNode"] = self.scheds.rng.choice(p["topNodes"])
        if p["status"] == "NoProfile" and pi.uid in self.workload.asked:
            p["askedByName"] = True
        return add_source(p, self.workload.sources), t.drawn

    def remember(self, key: str | None, pi, drawn: bool, doc: dict, draws: int, own: bool | None = None) -> None:
        """Keep `doc` for later pods of `key` when the cycle can be shared:
        its only random draw (`draws` in all) was the final tie-break, and it
        does not name its pod (`own`: names_own_pod, when known already)."""
        if key is None or draws != (1 if drawn else 0):
            return
        if names_own_pod(doc, pi) if own is None else own:
            return
        shared = {k: v for k, v in doc.items() if k not in OWN_KEYS}
        self.templates[key] = Template(shared, drawn)
        self.templates.move_to_end(key)
        while len(self.templates) > KEPT:
            self.templates.popitem(last=False)


def names_own_pod(doc: dict, pi) -> bool:
    """Whether a pod's document names the pod (its name or uid) anywhere but
    in the fields that are its own. `nodes` may be encoded ahead already
    (render/machine.py EncodedNodes): then its text is searched."""
    rest = {k: v for k, v in doc.items() if k not in OWN_KEYS and k not in ("pod", "uid", "nodes")}
    texts = [json.dumps(rest, default=repr, ensure_ascii=False)]
    nodes = doc.get("nodes")
    encoded = getattr(nodes, "text", None)
    texts.append(encoded if isinstance(encoded, str) else json.dumps(nodes, default=repr, ensure_ascii=False))
    return any(pi.name in text or pi.uid in text for text in texts)


def _plugin_names(fw) -> list[str]:
    return list(fw.profile.plan.plugin_names())
