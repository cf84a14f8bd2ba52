"""A pod's node records as result.node_dict's dicts, built a plugin column
at a time from the runner's tables.

On 5,000 nodes that is 5,000 node dicts holding ~65,000 Filter verdicts and
~50,000 scores, nearly all of them repeats: every node's Success from
NodeName, the same Skip, the few failure reasons, a score row without
explanation that other nodes share. Each distinct verdict or score row is
one dict here, shared by the nodes that have it (nothing changes a document
once built; writers encode a dict met twice in full, YAML without aliases),
and only explanations (`details`) make an entry of its own. Nodes with the
same verdicts share their `filters` list too.

node_dict stays the reference: tests/test_result_dicts.py compares the two
on every golden case.
"""

from __future__ import annotations

from itertools import repeat

from ..framework.records import table_groups
from ..framework.status import Code
from .node_record import node_dict, status_dict

_INT = {int}


def node_dicts(records) -> list[dict]:
    """[node_dict(nr) for nr in records], equal entries shared."""
    n = len(records)
    if not n:
        return []
    filters = [None] * n
    scores = [None] * n
    filter_groups, score_groups = table_groups(records)
    for table, positions, rows in filter_groups:
        for p, row in zip(positions, _filter_columns(table, rows)):
            filters[p] = row
    for table, positions, indexes in score_groups:
        for p, row in zip(positions, _score_columns(table, indexes)):
            scores[p] = row
    statuses: dict = {}  # id(Status) -> its dict
    out = []
    for nr, fl, sc in zip(records, filters, scores):
        if fl is None or (sc is None and nr.table_rows()[1] is not None):
            out.append(node_dict(nr))  # verdicts in lists: one by one
            continue
        d = {"name": nr.name, "feasible": nr.feasible, "filters": fl, "firstFailure": nr.first_failure}
        st = nr.status
        if st is not None:
            sd = statuses.get(id(st))
            if sd is None:
                sd = statuses[id(st)] = {"code": st.code.label, "plugin": st.plugin, "reasons": list(st.reasons)}
            d["status"] = sd
        if sc is None:
            rows = nr.score_rows()  # a node of no ScoreTable: scores in a list, or none
            if rows is not None:
                sc = [_score_entry(*row) for row in rows]
        if sc is not None:
            d["scores"] = sc
            d["totalScore"] = nr.total
        if nr.preemption is not None:
            d["preemption"] = nr.preemption
        out.append(d)
    return out


def _filter_columns(table, rows) -> list[list[dict]]:
    """The `filters` list of each of `rows` of a FilterTable; rows of the
    same verdicts share one list."""
    cols = []
    keys = []  # per column with values of its own: each row's distinct value, numbered
    for j, name in enumerate(table.names):
        shared, column = table.column(j)
        if column is None:
            cols.append(repeat(_success(name) if shared is None else status_dict(shared, name), len(rows)))
            continue
        values = list(map(column.__getitem__, rows))
        entries = {}
        for v in {id(v): v for v in values}.values():  # Status objects: by identity
            if v is None:
                entries[id(v)] = _success(name)
            elif v.code == Code.SUCCESS:
                entries[id(v)] = _success(name, v.details)
            else:
                entries[id(v)] = status_dict(v, name)
        number = {k: i for i, k in enumerate(entries)}
        ids = list(map(id, values))
        cols.append(list(map(entries.__getitem__, ids)))
        keys.append(list(map(number.__getitem__, ids)))
    if not cols:
        return [[] for _ in rows]
    lists: dict = {}
    out = []
    for key, row in zip(zip(*keys) if keys else repeat((), len(rows)), zip(*cols)):
        fl = lists.get(key)
        if fl is None:
            fl = lists[key] = list(row)
        out.append(fl)
    return out


def _success(plugin, details=None) -> dict:
    d = {"plugin": plugin, "code": "Success", "reasons": []}
    if details:
        d["details"] = details
    return d


def _score_columns(table, indexes) -> list[list[dict]]:
    """The `scores` list of each of `indexes` of a ScoreTable."""
    cols = []
    for j, (pl, weight, raw, norm) in enumerate(zip(table.plugins, table.weights, table.raw, table.normalized)):
        if raw is None:
            cols.append(repeat(_score_entry(pl.name, 0, 0, weight, True, None), len(indexes)))
            continue
        raws = list(map(raw.__getitem__, indexes))
        norms = list(map(norm.__getitem__, indexes))
        details = table.column_details(j, indexes)
        cols.append(_score_column(pl.name, weight, raws, norms, details))
    if not cols:
        return [[] for _ in indexes]
    return [list(row) for row in zip(*cols)]


def _score_column(plugin, weight, raws, norms, details) -> list[dict]:
    if not (set(map(type, raws)) <= _INT and set(map(type, norms)) <= _INT and type(weight) is int):
        # 1 == 1.0 == True as keys: only ints share an entry.
        return [_score_entry(plugin, r, nm, weight, False, d)
                for r, nm, d in zip(raws, norms, details or repeat(None))]
    if details is None or not any(details):
        # No explanation (the human report reads none): one entry per
        # distinct (raw, normalized), found with C-level hashing.
        pairs = list(zip(raws, norms))
        shared = {pair: _score_entry(plugin, pair[0], pair[1], weight, False, None) for pair in set(pairs)}
        return list(map(shared.__getitem__, pairs))
    entries: dict = {}
    out = []
    for pair, d in zip(zip(raws, norms), details):
        if d:
            out.append(_score_entry(plugin, pair[0], pair[1], weight, False, d))
            continue
        e = entries.get(pair)
        if e is None:
            e = entries[pair] = _score_entry(plugin, pair[0], pair[1], weight, False, None)
        out.append(e)
    return out


def _score_entry(plugin, raw, normalized, weight, skipped, details) -> dict:
    sd = {"plugin": plugin, "raw": raw, "normalized": normalized, "weight": weight, "weighted": normalized * weight}
    if skipped:
        sd["skipped"] = True
    if details:
        sd["details"] = details
    return sd
