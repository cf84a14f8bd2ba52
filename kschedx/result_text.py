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

from .render.machine import _enc, _string
from .result import node_dict


def node_records_text(records, nl: str) -> str:
    """The JSON text of [node_dict(n) for n in records], indented as
    render.machine._indented(..., nl) indents it."""
    if not records:
        return "[]"
    return _Writer(nl).nodes(records)


class _Writer:
    """One pod's texts of repeated pieces, at one indentation."""

    def __init__(self, nl: str):
        self.i1 = i1 = nl + "  "  # a node record
        self.i2 = i2 = i1 + "  "  # its members
        self.i3 = i3 = i2 + "  "  # a verdict or score
        self.i4 = i3 + "  "  # their members
        self.nl = nl
        self.close_node = i1 + "}"
        self.close_list = i2 + "]"
        self.close_entry = i3 + "}"
        self.k_name = "{" + i2 + '"name": '
        self.k_feasible = "," + i2 + '"feasible": '
        self.k_filters = "," + i2 + '"filters": [' + i3
        self.k_first = "," + i2 + '"firstFailure": '
        self.k_status = "," + i2 + '"status": '
        self.k_scores = "," + i2 + '"scores": [' + i3
        self.k_total = "," + i2 + '"totalScore": '
        self.entry_sep = "," + i3
        self.filters: dict = {}  # (plugin, Status or None) -> text, for verdicts without details
        self.filter_values: dict = {}  # (plugin, code, reasons) -> text
        self.scores: dict = {}  # score row without details -> text
        self.score_heads: dict = {}  # (plugin, raw, normalized, weight, skipped) -> text before "details"

    def nodes(self, records) -> str:
        node = self.node
        i1 = self.i1
        return "[" + ",".join([i1 + node(nr) for nr in records]) + self.nl + "]"

    def node(self, nr) -> str:
        if nr.extender_filters or nr.extender_scores:
            return _enc(node_dict(nr), self.i1)
        filters = self.filters
        entry = self.filter_entry
        texts = []
        for plugin, status, details in nr.filter_rows():
            if details:
                texts.append(entry(plugin, status, details))
                continue
            key = (plugin, status)
            text = filters.get(key)
            if text is None:
                text = filters[key] = entry(plugin, status, None)
            texts.append(text)
        feasible = nr.feasible
        first = nr.first_failure
        parts = [
            self.k_name, _string(nr.name) if type(nr.name) is str else _enc(nr.name, self.i2),
            self.k_feasible, "true" if feasible is True else "false" if feasible is False else _enc(feasible, self.i2),
            self.k_filters + self.entry_sep.join(texts) + self.close_list if texts else ',' + self.i2 + '"filters": []',
            self.k_first, "null" if first is None else _string(first) if type(first) is str else _enc(first, self.i2),
        ]
        st = nr.status
        if st is not None:
            parts.append(self.k_status)
            parts.append(_enc({"code": st.code.label, "plugin": st.plugin, "reasons": list(st.reasons)}, self.i2))
        rows = nr.score_rows()
        if rows is not None:
            scores = self.scores
            texts = []
            for row in rows:
                # 1 == 1.0 == True as keys: only rows of ints share text.
                if row[5] is not None or type(row[1]) is not int or type(row[2]) is not int or type(row[3]) is not int:
                    texts.append(self.score_entry(row))
                    continue
                text = scores.get(row)
                if text is None:
                    text = scores[row] = self.score_entry(row)
                texts.append(text)
            if texts:
                parts.append(self.k_scores + self.entry_sep.join(texts) + self.close_list)
            else:
                parts.append("," + self.i2 + '"scores": []')
            parts.append(self.k_total)
            total = nr.total
            parts.append(int.__repr__(total) if type(total) is int else _enc(total, self.i2))
        parts.append(self.close_node)
        return "".join(parts)

    def filter_entry(self, plugin, status, details) -> str:
        if status is None:
            d = {"plugin": plugin, "code": "Success", "reasons": []}
            if details:
                d["details"] = details
            return _enc(d, self.i3)
        if details or status.details:
            # Never both (FilterTable.rows): the status's own explanation.
            d = {"plugin": plugin, "code": status.code.label, "reasons": list(status.reasons)}
            if status.details:
                d["details"] = status.details
            return _enc(d, self.i3)
        key = (plugin, status.code, tuple(status.reasons))
        text = self.filter_values.get(key)
        if text is None:
            text = self.filter_values[key] = _enc(
                {"plugin": plugin, "code": status.code.label, "reasons": list(status.reasons)}, self.i3)
        return text

    def score_entry(self, row) -> str:
        plugin, raw, normalized, weight, skipped, details = row
        head_key = row[:5]
        exact = type(raw) is int and type(normalized) is int and type(weight) is int and type(skipped) is bool
        head = self.score_heads.get(head_key) if exact else None
        if head is None:
            d = {"plugin": plugin, "raw": raw, "normalized": normalized, "weight": weight,
                 "weighted": normalized * weight}
            if skipped:
                d["skipped"] = True
            text = _enc(d, self.i3)
            head = text[:-len(self.close_entry)]
            if exact:
                self.score_heads[head_key] = head
        if not details:
            return head + self.close_entry
        return head + "," + self.i4 + '"details": ' + _enc(details, self.i4) + self.close_entry
