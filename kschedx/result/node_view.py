"""A pod's node records as the human report reads them, without 5,000 dicts.

The report draws a few rows from thousands of node records: the nodes
grouped by the failure kube-scheduler reports, which Filter plugins failed
or were skipped anywhere, the ten best-scored nodes, the score columns that
are 0 or skipped everywhere, and the nodes not scored, grouped. NodeView
answers those from the runner's records and tables (a column at a time, as
node_dicts.py builds), and builds dicts only for the rows it shows.

It is also the Sequence of node_dicts(records), built when first read
(any other reader: --node's story, the fix search, a template), so that a
report drawn from it is the report drawn from the dicts:
tests/test_node_view.py compares the two on every golden case. Each answer
is None where the records are not the plain case (an extender's verdicts,
verdicts listed one by one, more than one table): the report then reads
the dicts.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from itertools import compress

from ..framework.records import table_groups
from ..framework.status import Code

# Fewer records than this are read as dicts: quick either way.
VIEW_MIN_NODES = 64


class NodeView(Sequence):
    __slots__ = ("records", "_dicts", "_groups", "_tables_read", "_scored")

    def __init__(self, records: list):
        self.records = records
        self._dicts: list | None = None
        self._groups = None
        self._tables_read = None
        self._scored: list | None = None  # each record's `scored`

    # -- the Sequence of dicts ----------------------------------------------------------------
    def _all(self) -> list:
        if self._dicts is None:
            from .node_dicts import node_dicts

            self._dicts = node_dicts(self.records)
        return self._dicts

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, i):
        return self._all()[i]

    def __iter__(self):
        return iter(self._all())

    def __reduce__(self):
        # Pickled (sent by an explain --jobs worker), it is the list of its dicts.
        return list, (self._all(),)

    # -- what the report reads --------------------------------------------------------------
    def table_groups(self):
        """framework.records.table_groups(self.records), kept."""
        if self._groups is None:
            self._groups = table_groups(self.records)
        return self._groups

    def _tables(self):
        """(FilterTable, rows, ScoreTable or None, its indexes):
        every record in one FilterTable and the scored ones in one
        ScoreTable, none listing its verdicts or scores; else None."""
        if self._tables_read is None:
            filter_groups, score_groups = self.table_groups()
            plain = (len(filter_groups) == 1 and len(filter_groups[0][1]) == len(self.records)
                     and len(score_groups) <= 1)
            if plain:
                scored = score_groups[0][1] if score_groups else []
                plain = self.scored_count() == len(scored)
            if not plain:
                self._tables_read = False
            else:
                table, _, rows = filter_groups[0]
                stable, _, indexes = score_groups[0] if score_groups else (None, [], [])
                self._tables_read = (table, rows, stable, indexes)
        return self._tables_read or None

    def filter_codes(self) -> dict | None:
        """Filter plugin -> the codes of its verdicts on these nodes, plugins
        in profile order (as the distinct verdicts of every node's `filters`
        give them)."""
        tables = self._tables()
        if tables is None:
            return None
        table, rows = tables[0], tables[1]
        codes: dict = {}
        for j, name in enumerate(table.names):
            shared, column = table.column(j)
            if column is None:
                codes[name] = {"Success" if shared is None else shared.code.label}
                continue
            # (A Status is equal only to itself; rows as many as the column's are all of it.)
            seen = set(column if len(rows) == len(column) else [column[i] for i in rows])
            codes[name] = {"Success" if v is None or v.code == Code.SUCCESS else v.code.label for v in seen}
        return codes

    def failure_groups(self) -> tuple[dict, list] | None:
        """({(plugin, reasons joined): names}, feasible names), in node order:
        the nodes grouped by the failure kube-scheduler reports."""
        groups: dict = {}
        feasible = [nr.name for nr in self.records if nr.feasible]
        texts: dict = {}  # id(Status) -> its reasons joined
        for nr in [nr for nr in self.records if not nr.feasible]:
            st = nr.status
            if st is None:
                return None  # its reasons are its verdict's: read from the dicts
            text = texts.get(id(st))
            if text is None:
                text = texts[id(st)] = ", ".join(st.reasons)
            groups.setdefault((nr.first_failure or st.plugin or "?", text), []).append(nr.name)
        return groups, feasible

    def _flags(self) -> list:
        if self._scored is None:
            self._scored = [nr.scored for nr in self.records]
        return self._scored

    def scored_count(self) -> int:
        return sum(self._flags())

    def best(self, n: int) -> list[dict]:
        """The dicts of the n best-scored nodes, best first (the highest
        total, then the name)."""
        scored = list(compress(self.records, self._flags()))
        if len(scored) > n:
            totals = [nr.total or 0 for nr in scored]
            floor = heapq.nlargest(n, totals)[-1]
            scored = [nr for nr, t in zip(scored, totals) if t >= floor]
        scored.sort(key=lambda nr: (-(nr.total or 0), nr.name))
        from .node_dicts import node_dicts

        return node_dicts(scored[:n])

    def score_columns(self) -> tuple[list, list, list] | None:
        """(plugins, skipped on every scored node, 0 on every scored node),
        in profile order."""
        tables = self._tables()
        if tables is None:
            return None
        stable, indexes = tables[2], tables[3]
        if stable is None:
            return None
        plugins, skipped, zero = [], [], []
        for pl, weight, raw, norm in zip(stable.plugins, stable.weights, stable.raw, stable.normalized):
            if pl.name in plugins:
                return None
            plugins.append(pl.name)
            if raw is None:
                skipped.append(pl.name)
            elif not (any(map(norm.__getitem__, indexes)) if type(weight) is int and weight
                      else any(norm[k] * weight for k in indexes)):
                zero.append(pl.name)  # (times a whole number not 0, a score is 0 only when it was)
        return plugins, skipped, zero

    def unscored(self) -> dict:
        """{why not scored: names}, in node order: the node's first failing
        Filter, or `feasible, not scored`."""
        out: dict = {}
        for nr in [nr for nr, scored in zip(self.records, self._flags()) if not scored]:
            why = nr.first_failure or ("feasible, not scored" if nr.feasible else "?")
            out.setdefault(why, []).append(nr.name)
        return out


def node_view(records):
    """The human report's `nodes`: a NodeView, or the dicts of a few nodes."""
    if len(records) < VIEW_MIN_NODES:
        from .node_dicts import node_dicts

        return node_dicts(records)
    return NodeView(records)
