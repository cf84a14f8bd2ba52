"""A pod's node records written as indented JSON text straight from the
runner's records, without building result.node_dict's dicts first.

`--detail full` on 5,000 nodes is 5,000 node records per pod (~20 MB of
text), each with a dozen Filter verdicts and as many scores: building those
dicts and walking them again to write them was most of the run. Most of
these small objects repeat (every node's Success from NodeName, the same
Skip, the same few failure reasons; a score row without explanation that
other nodes share), so their text is made once per pod and reused; only
explanations (`details`) are encoded node by node.

node_dict stays the reference: tests/test_result_text.py compares the two on
every golden case, and what is written here is byte for byte
json.dumps([node_dict(n) ...], indent=2, ensure_ascii=False) at the given
indentation.
"""

from __future__ import annotations

import json
from itertools import repeat
from json.encoder import c_make_encoder

from ..framework.records import table_groups
from ..framework.status import Code
from .json_text import ShapeEncoder, encode, string
from .node_record import node_dict

_INT = {int}
_STR = frozenset((str,))


def node_records_text(records, nl: str | None) -> str:
    """The JSON text of [node_dict(n) for n in records], indented as
    json_text.indented(..., nl) indents it; with `nl` None, compact as
    json.dumps(..., ensure_ascii=False, separators=(",", ":")) writes it
    (-o jsonl)."""
    if not records:
        return "[]"
    return _Writer(nl).nodes(records)


def _unencodable(o):
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


# json.dumps(value, ensure_ascii=False, separators=(",", ":")), from the json
# module's C encoder made once: json.dumps builds an encoder per call, which
# was most of the cost of a node's small explanation.
_C_COMPACT = c_make_encoder(None, _unencodable, string, None, ":", ",", False, False, True) \
    if c_make_encoder is not None else None


def _compact(value) -> str:
    if _C_COMPACT is None:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return "".join(_C_COMPACT(value, 0))


def _compact_at(value, _nl) -> str:
    return _compact(value)


class _Writer:
    """One pod's texts of repeated pieces, at one indentation."""

    def __init__(self, nl: str | None):
        if nl is None:
            # Compact: no indentation, ":" alone; what is not a repeated
            # piece goes to the json module's C encoder, fast when not indenting.
            nl = ""
            step, kv = "", ":"
            self.encode = _compact_at
        else:
            step, kv = "  ", ": "
            self.encode = encode
        self.compact = not step
        self.kv = kv
        self.i1 = i1 = nl + step  # a node record
        self.i2 = i2 = i1 + step  # its members
        self.i3 = i3 = i2 + step  # a verdict or score
        self.i4 = i3 + step  # their members
        self.nl = nl
        self.close_node = i1 + "}"
        self.close_list = i2 + "]"
        self.close_entry = i3 + "}"
        self.k_name = "{" + i2 + '"name"' + kv
        self.k_feasible = "," + i2 + '"feasible"' + kv
        self.k_filters = "," + i2 + '"filters"' + kv + '[' + i3
        self.k_first = "," + i2 + '"firstFailure"' + kv
        self.k_status = "," + i2 + '"status"' + kv
        self.k_scores = "," + i2 + '"scores"' + kv + '[' + i3
        self.k_total = "," + i2 + '"totalScore"' + kv
        self.k_preemption = "," + i2 + '"preemption"' + kv
        self.entry_sep = "," + i3
        self.filters: dict = {}  # (plugin, Status or None) -> text, for verdicts without details
        self.filter_values: dict = {}  # (plugin, code, reasons) -> text
        self.scores: dict = {}  # score row without details -> text
        self.score_heads: dict = {}  # (plugin, raw, normalized, weight, skipped) -> text before "details"
        self.explainers: dict = {}  # plugin -> ShapeEncoder of its score explanations
        self.statuses: dict = {}  # (code, plugin, reasons) -> a node's status text

    def nodes(self, records) -> str:
        # The verdicts and scores still in the runner's tables are written a
        # plugin's column at a time (each distinct value once); the others,
        # node by node.
        n = len(records)
        filters = [None] * n
        scores = [None] * n
        filter_groups, score_groups = table_groups(records)
        for table, positions, rows in filter_groups:
            for p, text in zip(positions, self.filter_columns(table, rows)):
                filters[p] = text
        for table, positions, indexes in score_groups:
            for p, text in zip(positions, self.score_columns(table, indexes)):
                scores[p] = text
        node = self.node
        i1 = self.i1
        return "[" + ",".join([i1 + node(nr, f, sc) for nr, f, sc in zip(records, filters, scores)]) + self.nl + "]"

    def filter_columns(self, table, rows) -> list[str]:
        """The `filters` member text of each of `rows` of a FilterTable."""
        cols = []
        for j, name in enumerate(table.names):
            shared, column = table.column(j)
            if column is None:
                cols.append(repeat(self.filter_text(name, shared), len(rows)))
                continue
            values = list(map(column.__getitem__, rows))
            texts = {}
            for v in set(values):  # Status objects: by identity
                if v is None:
                    texts[v] = self.filter_text(name, None)
                elif v.code == Code.SUCCESS:
                    texts[v] = self.filter_entry(name, None, v.details)
                else:
                    texts[v] = self.filter_text(name, v)
            cols.append(map(texts.__getitem__, values))
        if not cols:
            return [',' + self.i2 + '"filters"' + self.kv + '[]'] * len(rows)
        head, sep, close = self.k_filters, self.entry_sep, self.close_list
        return [head + sep.join(row) + close for row in zip(*cols)]

    def filter_text(self, plugin, status) -> str:
        key = (plugin, status)
        text = self.filters.get(key)
        if text is None:
            text = self.filters[key] = self.filter_entry(plugin, status, None)
        return text

    def score_columns(self, table, indexes) -> list[str]:
        """The `scores` member text of each of `indexes` of a ScoreTable."""
        cols = []
        for j, (pl, weight, raw, norm) in enumerate(zip(table.plugins, table.weights, table.raw, table.normalized)):
            if raw is None:
                cols.append(repeat(self.score_text((pl.name, 0, 0, weight, True, None)), len(indexes)))
                continue
            raws = list(map(raw.__getitem__, indexes))
            norms = list(map(norm.__getitem__, indexes))
            details = table.column_details(j, indexes)
            cols.append(self.score_column(pl.name, weight, raws, norms, details))
        if not cols:
            return [',' + self.i2 + '"scores"' + self.kv + '[]'] * len(indexes)
        head, sep, close = self.k_scores, self.entry_sep, self.close_list
        return [head + sep.join(row) + close for row in zip(*cols)]

    def score_column(self, plugin, weight, raws, norms, details):
        if not (set(map(type, raws)) <= _INT and set(map(type, norms)) <= _INT and type(weight) is int):
            # 1 == 1.0 == True as keys: only ints share text.
            return [self.score_entry((plugin, r, nm, weight, False, d))
                    for r, nm, d in zip(raws, norms, details or repeat(None))]
        pairs = list(zip(raws, norms))
        if details is None or not any(details):
            texts = {pair: self.score_text((plugin, pair[0], pair[1], weight, False, None)) for pair in set(pairs)}
            return list(map(texts.__getitem__, pairs))
        close = self.close_entry
        heads = {pair: self.score_head(plugin, pair[0], pair[1], weight, False) for pair in set(pairs)}
        key = "," + self.i4 + '"details"' + self.kv
        # One plugin's explanations have one shape across the nodes, mostly;
        # nodes may share one (Plugin.score_details_all): its text is made once.
        explain = self.explainer(plugin)
        # (raw, normalized, id(explanation)) -> the entry's text, each
        # distinct one made once (the explanations are alive in `details`,
        # so their ids are their own).
        keys = list(zip(pairs, map(id, details)))
        texts = {}
        for k, d in dict(zip(keys, details)).items():
            texts[k] = heads[k[0]] + (key + explain(d) if d else "") + close
        return list(map(texts.__getitem__, keys))

    def score_text(self, row) -> str:
        if row[5] is not None or type(row[1]) is not int or type(row[2]) is not int or type(row[3]) is not int:
            return self.score_entry(row)
        text = self.scores.get(row)
        if text is None:
            text = self.scores[row] = self.score_entry(row)
        return text

    def node(self, nr, filters_text=None, scores_text=None) -> str:
        if nr.extender_filters or nr.extender_scores:
            return self.encode(node_dict(nr), self.i1)
        if filters_text is None:
            filter_text = self.filter_text
            entry = self.filter_entry
            texts = []
            for plugin, status, details in nr.filter_rows():
                texts.append(entry(plugin, status, details) if details else filter_text(plugin, status))
            filters_text = (self.k_filters + self.entry_sep.join(texts) + self.close_list if texts
                            else ',' + self.i2 + '"filters"' + self.kv + '[]')
        feasible = nr.feasible
        first = nr.first_failure
        parts = [
            self.k_name, string(nr.name) if type(nr.name) is str else self.encode(nr.name, self.i2),
            self.k_feasible, "true" if feasible is True else "false" if feasible is False else self.encode(feasible, self.i2),
            filters_text,
            self.k_first, "null" if first is None else string(first) if type(first) is str else self.encode(first, self.i2),
        ]
        st = nr.status
        if st is not None:
            parts.append(self.k_status)
            parts.append(self.status_text(st))
        if scores_text is None:
            rows = nr.score_rows()
            if rows is not None:
                texts = list(map(self.score_text, rows))
                scores_text = (self.k_scores + self.entry_sep.join(texts) + self.close_list if texts
                               else "," + self.i2 + '"scores"' + self.kv + '[]')
        if scores_text is not None:
            parts.append(scores_text)
            parts.append(self.k_total)
            total = nr.total
            parts.append(int.__repr__(total) if type(total) is int else self.encode(total, self.i2))
        if nr.preemption is not None:
            parts.append(self.k_preemption)
            parts.append(self.encode(nr.preemption, self.i2))
        parts.append(self.close_node)
        return "".join(parts)

    def status_text(self, st) -> str:
        """A node's `status`: infeasible nodes mostly share a few."""
        key = None
        if type(st.plugin) is str and _STR.issuperset(map(type, st.reasons)):  # (only text makes a key)
            key = (st.code, st.plugin, tuple(st.reasons))
            text = self.statuses.get(key)
            if text is not None:
                return text
        text = self.encode({"code": st.code.label, "plugin": st.plugin, "reasons": list(st.reasons)}, self.i2)
        if key is not None:
            self.statuses[key] = text
        return text

    def filter_entry(self, plugin, status, details) -> str:
        if status is None:
            d = {"plugin": plugin, "code": "Success", "reasons": []}
            if details:
                d["details"] = details
            return self.encode(d, self.i3)
        if details or status.details:
            # Never both (FilterTable.rows): the status's own explanation.
            d = {"plugin": plugin, "code": status.code.label, "reasons": list(status.reasons)}
            if status.details:
                d["details"] = status.details
            return self.encode(d, self.i3)
        key = (plugin, status.code, tuple(status.reasons))
        text = self.filter_values.get(key)
        if text is None:
            text = self.filter_values[key] = self.encode(
                {"plugin": plugin, "code": status.code.label, "reasons": list(status.reasons)}, self.i3)
        return text

    def score_head(self, plugin, raw, normalized, weight, skipped) -> str:
        """A score entry's text up to where `details` would go."""
        key = (plugin, raw, normalized, weight, skipped)
        exact = type(raw) is int and type(normalized) is int and type(weight) is int and type(skipped) is bool
        head = self.score_heads.get(key) if exact else None
        if head is None:
            d = {"plugin": plugin, "raw": raw, "normalized": normalized, "weight": weight,
                 "weighted": normalized * weight}
            if skipped:
                d["skipped"] = True
            head = self.encode(d, self.i3)[:-len(self.close_entry)]
            if exact:
                self.score_heads[key] = head
        return head

    def explainer(self, plugin):
        if self.compact:
            return _compact
        enc = self.explainers.get(plugin)
        if enc is None:
            enc = self.explainers[plugin] = ShapeEncoder(self.i4)
        return enc

    def score_entry(self, row) -> str:
        plugin, raw, normalized, weight, skipped, details = row
        head = self.score_head(plugin, raw, normalized, weight, skipped)
        if not details:
            return head + self.close_entry
        return head + "," + self.i4 + '"details"' + self.kv + self.explainer(plugin)(details) + self.close_entry
