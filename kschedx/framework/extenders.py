"""The configured extenders in the scheduling cycle, as schedule_one.go,
preemption.go and scheduler.go of kube-scheduler v1.35.4 use them.

- Order: non-ignorable extenders first, then the ignorable ones, each group
  in configuration order (buildExtenders).
- Filter (findNodesThatPassExtenders): after the Filter plugins, each
  interested extender in turn gets the nodes still feasible; its
  FailedAndUnresolvableNodes / FailedNodes become those nodes' statuses (the
  first map wins); what it returns is the next extender's input. Without
  nodeCacheCapable the reply's Node objects *replace* the feasible nodes: a
  node rebuilt from its object alone has no pods and no image states, and
  the Score plugins of v1.35.4 see it so (kubernetes/kubernetes#141781);
  kschedx does the same, and says so in a note.
- Prioritize (prioritizeNodes), only with two or more feasible nodes: each
  interested prioritizer's score of a node counts score * weight *
  (MaxNodeScore / MaxExtenderPriority); an error there is ignored (no score
  from that extender), whatever `ignorable` says.
- Preempt (Evaluator.callExtenders): the candidates, as victims per node,
  go through every interested extender that has a preemptVerb; the reply
  (victims as UIDs) becomes the candidates.
- Bind (extendersBinding): the first interested binder binds the pod instead
  of the DefaultBinder.
- Errors: from an ignorable extender (filter, preempt, bind) the extender is
  skipped, with a note; otherwise the error ends the cycle (status Error,
  the message being the error's text, as kube-scheduler records it).

Every call is recorded on the pod's result (`ExtenderRecords`): its verdicts
and scores appear among the plugins' (the extender's name is its URL
prefix, as upstream names it), and the pod's `extenders` list says what was
asked and answered.
"""

from __future__ import annotations

import json

from .interface import PluginError
from .status import Code, Status

EXTENDER_NAME = "Extender"


class ExtenderRecords:
    """What the extenders were asked and answered in one pod's cycle."""

    __slots__ = ("calls", "filters", "scores", "notes")

    def __init__(self):
        self.calls: list[dict] = []
        self.filters: dict[str, list] = {}  # node -> [(extender, Status | None, details)]
        self.scores: dict[str, list] = {}  # node -> [(extender, raw, normalized, weight)]
        self.notes: list[str] = []

    def verdict(self, node: str, extender: str, status: Status | None, details=None) -> None:
        rows = self.filters.setdefault(node, [])
        # A node filtered twice (the nominated node, then every node) keeps
        # its last verdict.
        rows[:] = [r for r in rows if r[0] != extender]
        rows.append((extender, status, details))

    def annotate(self, nodes) -> None:
        """Add the extenders' verdicts and scores to the cycle's NodeResults;
        a node an extender rejected is no longer feasible."""
        for nr in nodes:
            rows = self.filters.get(nr.name)
            if rows:
                nr.extender_filters = list(rows)
                if nr.feasible:
                    failed = _failed(rows)
                    if failed is not None:
                        nr.feasible = False
                        nr.first_failure = failed[0]
                        nr.status = failed[1] if failed[1].reasons else None
            scores = self.scores.get(nr.name)
            if scores:
                nr.extender_scores = list(scores)

    def rejected(self, node: str) -> bool:
        """Whether an extender rejected the node (annotate makes it infeasible)."""
        rows = self.filters.get(node)
        return bool(rows) and _failed(rows) is not None

    def document(self) -> list[dict]:
        return [dict(c) for c in self.calls]


def _failed(rows):
    """The first of a node's extender verdicts that rejects it, or None."""
    return next((r for r in rows if r[1] is not None and r[1].code != Code.SUCCESS), None)


class Extenders:
    """The HTTPExtenders of a configuration, in kube-scheduler's order."""

    def __init__(self, extenders: list):
        self.extenders = [e for e in extenders if not e.ignorable] + [e for e in extenders if e.ignorable]

    @classmethod
    def from_config(cls, configs: list[dict], source: str = "") -> "Extenders":
        """NewHTTPExtender for each `extenders[i]`; one that cannot be built
        (bad TLS files or data, a bad httpTimeout) is an InputError naming
        the file and the field, as kube-scheduler would not start."""
        from ..util.errors import InputError
        from ..extenders.client import ExtenderConfigError, HTTPExtender

        built = []
        for i, cfg in enumerate(configs):
            try:
                built.append(HTTPExtender(cfg))
            except ExtenderConfigError as e:
                field = f"extenders[{i}]" + (f".{e.field}" if e.field else "")
                raise InputError(f"couldn't create scheduler: {e}", source=source or None, field=field) from None
        return cls(built)

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.extenders]

    def has_filters(self) -> bool:
        return any(e.is_filter() for e in self.extenders)

    def has_prioritizers(self) -> bool:
        return any(e.is_prioritizer() for e in self.extenders)

    # -- Filter ------------------------------------------------------------------
    def filter(self, result, pod, feasible: list, node_status: dict) -> list:
        """findNodesThatPassExtenders: the nodes left after every interested
        extender; node_status gains the failed nodes' statuses. Raises
        PluginError with the error of a non-ignorable extender."""
        from ..extenders import wire
        from ..extenders.client import ExtenderError

        records = _records(result)
        for ext in self.extenders:
            if not feasible:
                break
            if not ext.is_interested(pod.pod):
                _not_interested(records, ext, "filter")
                continue
            if not ext.is_filter():
                continue
            names = [ni.name for ni in feasible]
            call = {"extender": ext.name, "verb": "filter", "url": ext.url(ext.filter_verb), "nodes": len(names)}
            records.calls.append(call)
            try:
                kept, failed, unresolvable = self._filter_call(ext, pod, feasible)
            except (ExtenderError, wire.DecodeError) as e:
                call["error"] = str(e)
                if ext.ignorable:
                    call["ignored"] = True
                    records.notes.append(f"extender {ext.name} (ignorable) failed to filter, skipped as "
                                         f"kube-scheduler skips it: {e}")
                    continue
                raise PluginError(str(e)) from None
            for name, msg in unresolvable.items():
                node_status[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg, plugin=ext.name)
            for name, msg in failed.items():
                if name not in unresolvable:
                    node_status[name] = Status(Code.UNSCHEDULABLE, msg, plugin=ext.name)
            kept_names = {ni.name for ni in kept}
            for name in names:
                if name in kept_names:
                    records.verdict(name, ext.name, None)
                elif name in unresolvable:
                    records.verdict(name, ext.name, node_status[name])
                elif name in failed:
                    records.verdict(name, ext.name, node_status[name])
                else:
                    # Dropped without a reason: kube-scheduler records no
                    # status for it either.
                    records.verdict(name, ext.name, Status(Code.UNSCHEDULABLE, plugin=ext.name),
                                    {"leftOut": "not in the extender's reply, and no failure message"})
            call["passed"] = len(kept)
            call["failed"] = sum(1 for n in names if n not in kept_names)
            if not ext.node_cache_capable and kept:
                records.notes.append(
                    f"extender {ext.name} (nodeCacheCapable: false) returned Node objects: kube-scheduler "
                    "v1.35.4 scores such nodes as if they ran no pods and held no images, and so does kschedx "
                    "(kubernetes/kubernetes#141781)")
            feasible = kept
        return feasible

    def _filter_call(self, ext, pod, feasible: list):
        """HTTPExtender.Filter: (nodes kept, FailedNodes, FailedAndUnresolvableNodes)."""
        from ..extenders import wire
        from ..extenders.client import ExtenderError

        if ext.node_cache_capable:
            args = wire.extender_args(pod.pod, None, [ni.name for ni in feasible])
        else:
            args = wire.extender_args(pod.pod, [ni.node for ni in feasible], None)
        reply = wire.filter_result(ext.send(ext.filter_verb, args))
        if reply["Error"]:
            raise ExtenderError(reply["Error"])
        by_name = {ni.name: ni for ni in feasible}
        kept = []
        if ext.node_cache_capable and reply["NodeNames"] is not None:
            for name in reply["NodeNames"]:
                ni = by_name.get(name)
                if ni is None:
                    raise ExtenderError(f"extender {_go_quote(ext.name)} claims a filtered node {_go_quote(name)} "
                                        "which is not found in the input node list")
                kept.append(ni)
        elif reply["Nodes"] is not None:
            kept = [_node_info_from_reply(ext, item, by_name) for item in reply["Nodes"]]
            for ni in kept:
                if ni.name not in by_name:
                    # Upstream takes it and may place the pod on a node that is
                    # not there; kschedx reports it as the nodeCacheCapable path does.
                    raise ExtenderError(f"extender {_go_quote(ext.name)} returned a node {_go_quote(ni.name)} "
                                        "which is not found in the input node list")
        return kept, reply["FailedNodes"], reply["FailedAndUnresolvableNodes"]

    def filter_nominated(self, result, pod, nominated, node_status: dict) -> bool:
        """evaluateNominatedNode's extender pass: whether the nominated node
        (which passed the Filter plugins) also passes the extenders. An
        error is only logged upstream: every node is then filtered."""
        try:
            return bool(self.filter(result, pod, [nominated], node_status))
        except PluginError as e:
            _records(result).notes.append(f"the extenders failed on the nominated node {nominated.name} ({e}): "
                                          "kube-scheduler logs it and filters every node")
            return False

    # -- Prioritize ----------------------------------------------------------------
    def prioritize(self, result, pod, feasible: list, totals: list[int]) -> None:
        """The extenders' part of prioritizeNodes: adds each prioritizer's
        score * weight * 10 to the totals (in place) and records it."""
        from ..extenders import wire
        from ..extenders.client import ExtenderError

        records = _records(result)
        index = {ni.name: k for k, ni in enumerate(feasible)}
        scale = 100 // wire.MAX_EXTENDER_PRIORITY
        for ext in self.extenders:
            if not ext.is_interested(pod.pod):
                _not_interested(records, ext, "prioritize")
                continue
            if not ext.is_prioritizer():
                continue  # upstream adds a score of 0 for every node
            call = {"extender": ext.name, "verb": "prioritize", "url": ext.url(ext.prioritize_verb),
                    "nodes": len(feasible), "weight": ext.weight}
            records.calls.append(call)
            if ext.node_cache_capable:
                args = wire.extender_args(pod.pod, None, [ni.name for ni in feasible])
            else:
                args = wire.extender_args(pod.pod, [ni.node for ni in feasible], None)
            try:
                hosts = wire.host_priority_list(ext.send(ext.prioritize_verb, args))
            except (ExtenderError, wire.DecodeError) as e:
                call["error"] = str(e)
                call["ignored"] = True
                records.notes.append(f"extender {ext.name} failed to prioritize: no score from it, as "
                                     f"kube-scheduler ignores prioritize errors: {e}")
                continue
            raw: dict[str, int] = {}
            for host, score in hosts:
                raw[host] = raw.get(host, 0) + score
            for host, score in raw.items():
                k = index.get(host)
                if k is None:
                    continue  # not a feasible node: never read upstream
                totals[k] += score * ext.weight * scale
                records.scores.setdefault(host, []).append((ext.name, score, score * scale, ext.weight))
            call["scored"] = sum(1 for h in raw if h in index)

    # -- Preempt -------------------------------------------------------------------
    def process_preemption(self, handle, pod, candidates: list, calls: list, make_candidate):
        """Evaluator.callExtenders: the candidates after every interested
        extender with a preemptVerb. Returns (candidates, error message or
        None); `calls` receives what each extender was asked."""
        from ..extenders import wire
        from ..extenders.client import ExtenderError

        victims = {c.name: ([v.pod for v in c.victims], c.num_pdb_violations) for c in candidates}
        if not victims:
            return candidates, None
        pods_by_node = {c.name: list(c.victims) for c in candidates}
        changed = False
        for ext in self.extenders:
            if not ext.supports_preemption() or not ext.is_interested(pod.pod):
                continue
            call = {"extender": ext.name, "verb": "preempt", "url": ext.url(ext.preempt_verb),
                    "nodes": len(victims)}
            calls.append(call)
            try:
                reply = wire.preemption_result(ext.send(
                    ext.preempt_verb, wire.preemption_args(pod.pod, victims, ext.node_cache_capable)))
                new = _convert_victims(ext, handle.snapshot, reply)
            except (ExtenderError, wire.DecodeError) as e:
                call["error"] = str(e)
                if ext.ignorable:
                    call["ignored"] = True
                    continue
                return None, str(e)
            for node in list(new):
                if new[node] is None or not new[node][0]:
                    if ext.ignorable:
                        del new[node]
                        continue
                    call["error"] = f"expected at least one victim pod on node {_go_quote(node)}"
                    return None, call["error"]
            call["nodesAfter"] = len(new)
            victims = {node: ([v.pod for v in pods], pdb) for node, (pods, pdb) in new.items()}
            pods_by_node = {node: pods for node, (pods, _) in new.items()}
            changed = True
            if not victims:
                break
        if not changed:
            return candidates, None
        return [make_candidate(node, pods_by_node[node], victims[node][1]) for node in victims], None

    # -- Bind ----------------------------------------------------------------------
    def binder_for(self, pod: dict):
        """The extender that binds this pod (extendersBinding): the first
        interested one with a bindVerb, or None (the DefaultBinder binds)."""
        return next((e for e in self.extenders if e.is_binder() and e.is_interested(pod)), None)

    def bind(self, ext, pod: dict, node: str) -> None:
        """HTTPExtender.Bind; raises ExtenderError (or DecodeError) on failure."""
        from ..extenders import wire
        from ..extenders.client import ExtenderError

        meta = pod.get("metadata") or {}
        args = wire.binding_args(meta.get("namespace") or "default", meta.get("name", ""), meta.get("uid", ""), node)
        error = wire.binding_result(ext.send(ext.bind_verb, args))
        if error:
            raise ExtenderError(error)


def _records(result) -> ExtenderRecords:
    if result.extenders is None:
        result.extenders = ExtenderRecords()
    return result.extenders


def _not_interested(records: ExtenderRecords, ext, verb: str) -> None:
    if ext.managed_resources and not any(c.get("extender") == ext.name and c.get("notInterested")
                                         for c in records.calls):
        records.calls.append({"extender": ext.name, "verb": verb, "notInterested": True,
                              "managedResources": sorted(ext.managed_resources)})


def _go_quote(s: str) -> str:
    """fmt's %q, for the texts here."""
    return json.dumps(s, ensure_ascii=False)


def _node_info_from_reply(ext, item: dict, sent: dict):
    """A node of the reply as a NodeInfo of its own (NewNodeInfo + SetNode):
    no pods, no image states."""
    from ..util.errors import InputError
    from ..extenders.client import ExtenderError
    from ..state.types import NodeInfo
    from ..sources.shape import check_shape

    name = (item.get("metadata") or {}).get("name") if isinstance(item.get("metadata"), dict) else None
    ni = sent.get(name) if isinstance(name, str) else None
    if ni is not None and ni.node == item:
        # The node sent, unchanged (the usual reply): its shape is known good.
        return NodeInfo(ni.node)
    try:
        check_shape({**item, "kind": "Node", "apiVersion": "v1"}, f"extender {ext.name}", f"Node/{name or ''}")
    except InputError as e:
        raise ExtenderError(f"decoding the filter reply: {e}") from None
    if not isinstance(name, str):
        raise ExtenderError(f"decoding the filter reply: extender {ext.name} returned a node without metadata.name")
    return NodeInfo(item)


def _convert_victims(ext, snapshot, reply: dict) -> dict:
    """convertToVictims: node -> (PodInfos of the node, in the reply's order,
    NumPDBViolations), or None for a node the reply maps to null."""
    from ..extenders.client import ExtenderError

    out = {}
    for node, entry in reply.items():
        ni = snapshot.get(node)
        if ni is None:
            raise ExtenderError(f"nodeinfo not found for node name {_go_quote(node)}")
        if entry is None:
            out[node] = None
            continue
        uids, pdb = entry
        by_uid = {p.uid: p for p in ni.pods}
        pods = []
        for uid in uids:
            p = by_uid.get(uid) if uid is not None else None
            if p is None:
                raise ExtenderError(f"extender: {ext.name} claims to preempt pod (UID: &{{{uid or ''}}}) on node: "
                                    f"{node}, but the pod is not found on that node")
            pods.append(p)
        out[node] = (pods, pdb)
    return out
