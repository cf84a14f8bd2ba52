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

from ..framework.records import table_groups
from ..framework.registry import all_in_tree_names
from ..framework.status import Code
from ..result.document import add_source
from ..sources.trim import trim_pod

# metadata that names one pod, not what it asks of the scheduler.
IDENTITY = frozenset({"name", "generateName", "uid", "resourceVersion", "generation", "creationTimestamp"})
# Keys a pod document sets from its own pod (document.pod_document), the last keys.
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
        in_tree = all_in_tree_names()
        self.enabled = all(name in in_tree for fw in scheds.frameworks for name in _plugin_names(fw))
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


def names_own_pod(doc: dict, pi, records=None) -> bool:
    """Whether a pod's document names the pod (its name or uid) anywhere but
    in the fields that are its own: a search of the document's JSON text.
    `nodes` may be encoded ahead already (render/machine.py EncodedNodes):
    then its text is searched. `records`, the NodeResults `nodes` was built
    from, stand in for its text (records_text): the same answer without
    encoding thousands of node records only to search them."""
    rest = {k: v for k, v in doc.items() if k not in OWN_KEYS and k not in ("pod", "uid", "nodes")}
    texts = [json.dumps(rest, default=repr, ensure_ascii=False)]
    nodes = doc.get("nodes")
    encoded = getattr(nodes, "text", None)
    if isinstance(encoded, str):
        texts.append(encoded)
    elif records is None or not (_plain(pi.name) and _plain(pi.uid)):
        # (A NodeView, result/node_view.py, is the list of its dicts.)
        texts.append(json.dumps(nodes if nodes is None or isinstance(nodes, list) else list(nodes), default=repr,
                                ensure_ascii=False))
    else:
        # (Its NodeView, when the document has one, has grouped them already.)
        groups = nodes.table_groups() if getattr(nodes, "records", None) is records else None
        texts.append(records_text(records, groups))
    return any(pi.name in text or pi.uid in text for text in texts)


# What separates two tokens of json.dumps' text (", ", ": ", brackets,
# quotes) or starts an escape in a string. A string without these (and
# without control characters, always escaped) found in that text lies
# within one token: a string's encoded content, a number or a literal.
_BOUNDARY = frozenset('"\\ ,:[]{}')


def _plain(s) -> bool:
    return isinstance(s, str) and bool(s) and not any(c in _BOUNDARY or c < " " for c in s)


def records_text(records, groups=None) -> str:
    """A JSON text holding every token of json.dumps([result.node_dict(nr)
    for nr in records]) and no other: each distinct verdict, score and
    explanation once, not once per node. A name without _BOUNDARY
    characters is in one text exactly when it is in the other
    (tests/test_reuse.py compares their tokens on every golden case).

    What a node record can hold: its name, feasible, firstFailure and
    status (code, plugin, reasons); per Filter plugin a verdict (plugin,
    code, reasons, details: of a Success, or of the Status); per Score
    plugin (plugin, raw, normalized, weight, weighted, skipped, details)
    and the total; a preemption candidate's part in the search. Extenders'
    verdicts are encoded as they are."""
    from ..result.node_record import node_dict, status_dict

    atoms: list = []
    add = atoms.append
    if not records:
        return json.dumps(atoms)
    # A field at a time over the records (each pass a comprehension); the
    # verdicts and scores still in the runner's tables, a column at a time.
    plain = [nr for nr in records if not (nr.extender_filters or nr.extender_scores)]
    if len(plain) < len(records):
        for nr in records:
            if nr.extender_filters or nr.extender_scores:
                add(node_dict(nr))  # explains itself, encoded whole
    names = [nr.name for nr in plain]
    for part in [nr.preemption for nr in plain if nr.preemption is not None]:
        add({"preemption": part})
    feasible = {nr.feasible for nr in plain}
    first = {nr.first_failure for nr in plain}
    statuses = {nr.status for nr in plain}  # (a Status is equal only to itself)
    statuses.discard(None)
    whole = groups is not None and len(plain) == len(records)
    filter_groups, score_groups = groups if whole else table_groups(plain)
    filter_rows = [(table, rows) for table, _, rows in filter_groups]
    score_rows = [(table, indexes) for table, _, indexes in score_groups]
    totals = [plain[i].total for _, positions, _ in score_groups for i in positions]
    in_filters = sum(len(positions) for _, positions, _ in filter_groups)
    in_scores = sum(len(positions) for _, positions, _ in score_groups)
    if in_filters < len(plain) or in_scores < len(plain):
        # Records whose lists were built (or that were not scored): one by one.
        every = set(range(len(plain)))
        for i in sorted(every.difference(*(positions for _, positions, _ in filter_groups))):
            for plugin, status, details in plain[i].filter_rows():
                add(_filter_entry(plugin, status, details, status_dict))
        for i in sorted(every.difference(*(positions for _, positions, _ in score_groups))):
            nr = plain[i]
            if nr.scored:
                for plugin, raw, normalized, weight, skipped, details in nr.score_rows():
                    add(_score_entry(plugin, raw, normalized, weight, normalized * weight, skipped, details))
                totals.append(nr.total)
    if names:
        add({"name": names, "feasible": list(feasible), "filters": [], "firstFailure": list(first)})
    for st in statuses:
        add({"status": {"code": st.code.label, "plugin": st.plugin, "reasons": list(st.reasons)}})
    for table, rows in filter_rows:
        for j, name in enumerate(table.names):
            shared, column = table.column(j)
            if column is None:
                add(_filter_entry(name, shared, None, status_dict))
                continue
            # (A Status is equal only to itself; rows as many as the column's are all of it.)
            for st in set(column if len(rows) == len(column) else map(column.__getitem__, rows)):
                if st is None:
                    add(_filter_entry(name, None, None, status_dict))
                elif st.code == Code.SUCCESS:
                    add(_filter_entry(name, None, st.details, status_dict))
                else:
                    add(_filter_entry(name, st, None, status_dict))
    for table, indexes in score_rows:
        settled = table.details
        # Explanations not settled yet are asked of the plugins, as node_dict asks.
        rows = None if settled is not None else [list(table.rows(k)) for k in indexes]
        for j, (pl, weight, raw, norm) in enumerate(zip(table.plugins, table.weights, table.raw, table.normalized)):
            if raw is None:
                add(_score_entry(pl.name, 0, 0, weight, 0 * weight, True, None))
                continue
            whole_column = len(indexes) == len(raw)
            norms = norm if whole_column else list(map(norm.__getitem__, indexes))
            if rows is not None:
                details = [row[j][5] for row in rows]
            else:
                details = None if settled[j] is None else map(settled[j].__getitem__, indexes)
            if details is not None:
                details = _parts(d for d in {id(d): d for d in details}.values() if d)
            distinct = _distinct(norms)
            # Equal scores weigh the same: the distinct ones say every weighted token.
            raws = _distinct(raw if whole_column else map(raw.__getitem__, indexes))
            add(_score_entry(pl.name, raws, distinct, weight, _distinct([n * weight for n in distinct]), False,
                             details))
    if totals:
        add({"scores": [], "totalScore": _distinct(totals)})
    # Separators are boundary characters either way; explanations are trees.
    return json.dumps(atoms, default=repr, ensure_ascii=False, check_circular=False, separators=(",", ":"))


def _distinct(values) -> list:
    """Scores as tokens: each int once (5,000 nodes have a few hundred
    distinct ones); any other value kept as it is (1, 1.0 and true, or 0.0
    and -0.0, are equal but other tokens)."""
    if type(values) is not list:
        values = list(values)
    if _INT_ONLY.issuperset(map(type, values)):
        return list(set(values))
    return values


_INT_ONLY = frozenset((int,))


def _parts(explanations) -> list:
    """What the explanations' JSON text holds, in parts: each explanation's
    keys and members, and the items of a list member, each object once. An
    explanation made per node from parts shared by many nodes (the pods
    behind an InterPodAffinity domain) is then encoded part by part, each
    shared part once. (A key is written as a string: a member key 1, 1.5,
    true or null is the token a value 1, 1.5, true or null is.)"""
    out: list = []
    keys: list = []
    seen: set = set()
    for d in explanations:
        if type(d) is dict:
            keys.extend(d)
            members = d.values()
        elif type(d) is list:
            members = d
        else:
            out.append(d)
            continue
        for v in members:
            if type(v) is not list:
                out.append(v)
                continue
            for item in v:
                if type(item) is dict or type(item) is list:
                    if id(item) in seen:
                        continue
                    seen.add(id(item))
                out.append(item)
    out.append(keys)
    return out


def _filter_entry(plugin, status, details, status_dict) -> dict:
    if status is None:
        d = {"plugin": plugin, "code": "Success", "reasons": []}
        if details:
            d["details"] = details
        return d
    return status_dict(status, plugin)


def _score_entry(plugin, raw, normalized, weight, weighted, skipped, details) -> dict:
    d = {"plugin": plugin, "raw": raw, "normalized": normalized, "weight": weight, "weighted": weighted}
    if skipped:
        d["skipped"] = True
    if details:
        d["details"] = details
    return d


def _plugin_names(fw) -> list[str]:
    return list(fw.profile.plan.plugin_names())
