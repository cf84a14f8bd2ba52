"""What one scheduling cycle records: every Filter verdict and every score.

A cycle on 5,000 nodes yields ~65,000 Filter verdicts and ~45,000 scores.
Most of them are never looked at one by one (simulate drops them once a pod
is placed), so the runner keeps them per plugin, one column of values for
all nodes (FilterTable, ScoreTable), and a NodeResult builds its own
`filters` / `scores` lists from those columns only when they are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from operator import add, mul

from ..util.gc_policy import pauses_collector
from ..state.types import generation_mark, NodeInfo, PodInfo
from .cycle_state import CycleState
from .fit_error import go_list
from .interface import Plugin
from .status import Code, DeferredStatus, Status


@dataclass
class FilterVerdict:
    plugin: str
    status: Status | None  # None = Success
    details: object = None  # a passing plugin's explanation (domain counts...)

    @property
    def code(self) -> Code:
        return Code.SUCCESS if self.status is None else self.status.code


@dataclass
class PluginScore:
    plugin: str
    raw: int
    normalized: int
    weight: int
    skipped: bool = False
    details: object = None

    @property
    def weighted(self) -> int:
        return self.normalized * self.weight


# A FilterTable column for a plugin that PreFilter told to skip.
SKIPPED = "skipped"


class FilterTable:
    """The Filter verdicts of a list of nodes, one column per plugin.

    A column is SKIPPED, None (every node passed without details), or one
    value per node: None (Success), a Success Status carrying details, or a
    failure Status whose plugin is set.
    """

    __slots__ = ("names", "columns", "tallies", "_shared", "_settled")

    def __init__(self, names: list[str], columns: list, tallies: list | None = None):
        self.names = names
        self.columns = columns
        # Per column: {reason: nodes} of its failures (Skip aside), counted
        # by the runner while it walks the column anyway (filterSummary).
        self.tallies = tallies if tallies is not None else [{} for _ in names]
        # Success and Skip verdicts carry nothing node-specific: one object
        # per plugin serves every node (nothing mutates a recorded verdict).
        self._shared = [
            FilterVerdict(name, Status(Code.SKIP, plugin=name)) if col is SKIPPED else FilterVerdict(name, None)
            for name, col in zip(names, columns)
        ]
        self._settled = False

    def verdicts(self, i: int) -> list[FilterVerdict]:
        out = []
        for name, col, shared in zip(self.names, self.columns, self._shared):
            st = None if col is None or col is SKIPPED else col[i]
            if st is None:
                out.append(shared)
            elif st.code == Code.SUCCESS:
                out.append(FilterVerdict(name, None, st.details))
            else:
                out.append(FilterVerdict(name, st))
        return out

    def settle(self) -> None:
        """Work out now the explanations plugins deferred (DeferredStatus),
        while the cycle's state is the one they describe."""
        if self._settled:
            return
        self._settled = True
        for col in self.columns:
            if col is None or col is SKIPPED:
                continue
            for st in col:
                if type(st) is DeferredStatus:
                    st.settle()

    def column(self, j: int):
        """Plugin j's verdicts as rows() reads them: (the Status every node
        has, None), that Status being None (Success) or a Skip; or (None, the
        column): per node None (Success), a Success Status carrying details
        (read as Success with those details), or a failure Status."""
        col = self.columns[j]
        if col is None or col is SKIPPED:
            return self._shared[j].status, None
        return None, col

    def rows(self, i: int):
        """verdicts(i) as (plugin, status, details) tuples, without objects."""
        for name, col, shared in zip(self.names, self.columns, self._shared):
            st = None if col is None or col is SKIPPED else col[i]
            if st is None:
                yield name, shared.status, None
            elif st.code == Code.SUCCESS:
                yield name, None, st.details
            else:
                yield name, st, None


class ScoreTable:
    """The scores of the feasible nodes, one column per Score plugin.

    Explanations (score_details) are asked of the plugins only when a node's
    scores are read: they describe the cycle's state, which must not have
    changed by then (simulate reads them before it changes the snapshot;
    `generation` catches a late read).
    """

    __slots__ = ("plugins", "weights", "raw", "normalized", "nodes", "generation", "state", "pod", "details")

    def __init__(self, state: CycleState, pod: PodInfo, nodes: list[NodeInfo]):
        self.state = state
        self.pod = pod
        self.nodes = nodes
        # Every node changed from now on has a higher generation.
        self.generation = generation_mark()
        self.plugins: list = []
        self.weights: list[int] = []
        self.raw: list = []  # per plugin: list of ints, or None when skipped
        self.normalized: list = []
        self.details: list | None = None  # per plugin, per node, once settled

    def settle(self) -> None:
        """Ask the plugins for every node's explanation now, while the state
        is the one they describe."""
        if self.details is not None:
            return
        self._check_unchanged(range(len(self.nodes)))
        state, pod, nodes = self.state, self.pod, self.nodes
        self.details = [
            _details_all(pl, state, pod, nodes) if raw is not None and _explains(pl) else None
            for pl, raw in zip(self.plugins, self.raw)
        ]

    def column_details(self, j: int, indexes: list[int]) -> list | None:
        """Plugin j's explanations of the nodes at `indexes`: the settled
        ones, or asked of the plugin now and not kept (a writer going a
        column at a time then holds one plugin's explanations, not every
        plugin's); None when the plugin explains nothing."""
        if self.details is not None:
            col = self.details[j]
            return None if col is None else list(map(col.__getitem__, indexes))
        pl = self.plugins[j]
        if self.raw[j] is None or not _explains(pl):
            return None
        self._check_unchanged(indexes)
        nodes = self.nodes
        return _details_all(pl, self.state, self.pod, [nodes[k] for k in indexes])

    def settle_without_details(self) -> None:
        """Settled with no plugin's explanations: none will be read."""
        if self.details is None:
            self.details = [None] * len(self.plugins)

    def _check_unchanged(self, indexes) -> None:
        for k in indexes:
            ni = self.nodes[k]
            if ni.generation > self.generation:
                raise RuntimeError(f"score details of node {ni.name} read after the node changed")

    def add(self, plugin, weight: int, raw: list[int] | None, normalized: list[int] | None) -> None:
        self.plugins.append(plugin)
        self.weights.append(weight)
        self.raw.append(raw)
        self.normalized.append(normalized)

    def totals(self) -> list[int]:
        """Each node's sum of weighted scores. A column of one integer for
        every node (a plugin that found nothing to tell the nodes apart)
        adds its weighted value once, at the end: integers add up the same
        in any order. (Only for kschedx's own plugins, whose scores are
        ints: another plugin's column of equal values could mix 1 and 1.0.)"""
        totals = None
        same = 0  # the columns of one value, weighted and added up
        for plugin, weight, col in zip(self.plugins, self.weights, self.normalized):
            if col is None:
                continue
            if col and type(col[0]) is int and col.count(col[0]) == len(col) and _in_tree(plugin):
                same += col[0] * weight
                continue
            weighted = col if weight == 1 else map(mul, col, repeat(weight))
            totals = list(weighted) if totals is None else list(map(add, totals, weighted))
        if totals is None:
            return [same] * len(self.nodes)
        return list(map(add, totals, repeat(same))) if same else totals

    def scores(self, k: int) -> list[PluginScore]:
        return [PluginScore(*row) for row in self.rows(k)]

    def rows(self, k: int):
        """The node's PluginScore fields, plugin by plugin, as tuples:
        (plugin, raw, normalized, weight, skipped, details)."""
        ni = self.nodes[k]
        settled = self.details
        if settled is None:
            self._check_unchanged((k,))
        for j, (pl, weight, raw, norm) in enumerate(zip(self.plugins, self.weights, self.raw, self.normalized)):
            if raw is None:
                yield pl.name, 0, 0, weight, True, None
            else:
                if settled is not None:
                    details = None if settled[j] is None else settled[j][k]
                else:
                    details = pl.score_details(self.state, self.pod, ni) if _explains(pl) else None
                yield pl.name, raw[k], norm[k], weight, False, details


def _in_tree(plugin) -> bool:
    return type(plugin).__module__.startswith("kschedx.plugins.")


def _details_all(plugin, state, pod, nodes) -> list:
    all_ = getattr(plugin, "score_details_all", None)  # a plugin of one's own may not be a Plugin
    if all_ is not None:
        return all_(state, pod, nodes)
    return [plugin.score_details(state, pod, ni) for ni in nodes]


def _explains(plugin) -> bool:
    """Whether the plugin has its own score_details (the default says nothing)."""
    return type(plugin).score_details is not Plugin.score_details


class NodeResult:
    """One node's story in a cycle. `filters` and `scores` come from the
    cycle's tables when they were recorded there (see the module doc)."""

    __slots__ = ("name", "status", "first_failure", "feasible", "total", "_filters", "_scores", "_filter_row",
                 "_score_row", "extender_filters", "extender_scores", "preemption")

    def __init__(self, name: str, filters: list[FilterVerdict] | None = None, status: Status | None = None,
                 first_failure: str | None = None, feasible: bool = False, scores: list[PluginScore] | None = None,
                 total: int | None = None):
        self.name = name
        self._filters = filters if filters is not None else []
        self.status = status  # what kube-scheduler records for the node
        self.first_failure = first_failure
        self.feasible = feasible
        self._scores = scores
        self.total = total
        self._filter_row = None  # (FilterTable, index)
        self._score_row = None  # (ScoreTable, index)
        # The extenders' verdicts and scores (framework/extenders.py), after the plugins'.
        self.extender_filters = None  # [(extender, Status | None, details)]
        self.extender_scores = None  # [(extender, raw, normalized, weight)]
        # A preemption candidate's part in the search (framework/preemption.py):
        # {numVictims, pdbViolations, couldBeNominated, share}.
        self.preemption = None

    @classmethod
    def from_table(cls, name: str, table: FilterTable, i: int) -> "NodeResult":
        nr = cls(name)
        nr._filters = None
        nr._filter_row = (table, i)
        return nr

    @property
    def filters(self) -> list[FilterVerdict]:
        if self._filters is None:
            table, i = self._filter_row
            self._filters = table.verdicts(i)
        return self._filters

    @filters.setter
    def filters(self, value) -> None:
        self._filters = value
        self._filter_row = None

    @property
    def scores(self) -> list[PluginScore] | None:
        if self._scores is None and self._score_row is not None:
            table, k = self._score_row
            self._scores = table.scores(k)
        return self._scores

    @scores.setter
    def scores(self, value) -> None:
        self._scores = value
        self._score_row = None

    def set_score_row(self, table: ScoreTable, k: int, total: int) -> None:
        self._scores = None
        self._score_row = (table, k)
        self.total = total

    def filter_rows(self):
        """(plugin, status, details) for each Filter plugin, from the table
        when the list was never built (the document needs no objects)."""
        if self._filters is None:
            table, i = self._filter_row
            return table.rows(i)
        return ((v.plugin, v.status, v.details) for v in self._filters)

    def score_rows(self):
        """(plugin, raw, normalized, weight, skipped, details) per Score
        plugin, or None when the node was not scored."""
        if self._scores is None and self._score_row is not None:
            table, k = self._score_row
            return table.rows(k)
        if self._scores is None:
            return None
        return ((s.plugin, s.raw, s.normalized, s.weight, s.skipped, s.details) for s in self._scores)

    @property
    def scored(self) -> bool:
        """Whether the node has scores (score_rows() is not None)."""
        return self._scores is not None or self._score_row is not None

    def table_rows(self):
        """Where the node's verdicts and scores are when their lists were
        never built: ((FilterTable, row) or None, (ScoreTable, index) or None)."""
        return (self._filter_row if self._filters is None else None,
                self._score_row if self._scores is None else None)

    def settle(self) -> None:
        """Compute now what describes the cycle's state (deferred filter and
        score explanations)."""
        if self._filters is not None:
            for v in self._filters:
                if type(v.status) is DeferredStatus:
                    v.status.settle()
        elif self._filter_row is not None:
            self._filter_row[0].settle()
        if self._score_row is not None:
            self._score_row[0].settle()

    def __repr__(self):
        return f"NodeResult({self.name}, feasible={self.feasible}, status={self.status!r})"


class NodeRecords:
    """Every node's NodeResult of a cycle, built when first asked for, from
    what the runner kept: the FilterTable (node i of `nodes` is row i, or
    row_of[name]), the nodes filtered one by one (`explicit`), the outcome
    of each table node with a non-Success verdict, the candidates of the
    PreFilterResult, and the ScoreTable of the feasible nodes."""

    __slots__ = ("nodes", "table", "row_of", "explicit", "outcomes", "candidates", "nominated", "absent_status",
                 "absent_plugins", "score_table", "totals")

    def __init__(self, nodes, table: FilterTable, row_of: dict | None, explicit: dict, outcomes: dict,
                 candidates: set | None, nominated: str, absent_status: Status | None, absent_plugins: str):
        self.nodes = nodes
        self.table = table
        self.row_of = row_of
        self.explicit = explicit
        self.outcomes = outcomes
        self.candidates = candidates
        self.nominated = nominated
        self.absent_status = absent_status
        self.absent_plugins = absent_plugins
        self.score_table = None
        self.totals = None

    def scored(self, table: ScoreTable, totals: list[int]) -> None:
        self.score_table = table
        self.totals = totals

    def build(self, keep: set[str] | None = None) -> list[NodeResult]:
        """The NodeResults, in node order; with `keep`, only those nodes'."""
        out = []
        scored = {}
        if self.score_table is not None:
            scored = {ni.name: k for k, ni in enumerate(self.score_table.nodes)}
        candidates = self.candidates
        for i, ni in enumerate(self.nodes):
            name = ni.name
            if keep is not None and name not in keep:
                continue
            nr = self.explicit.get(name)
            if nr is None:
                nr = NodeResult.from_table(name, self.table, i if self.row_of is None else self.row_of[name])
                outcome = self.outcomes.get(name)
                if outcome is None:
                    nr.feasible = True
                else:
                    nr.status, nr.first_failure = outcome
            if candidates is not None and name not in candidates and name != self.nominated:
                # Left out by the PreFilterResult: that is its status.
                nr.feasible = False
                nr.status = self.absent_status
                nr.first_failure = self.absent_plugins
            k = scored.get(name)
            if k is not None:
                nr.set_score_row(self.score_table, k, self.totals[k])
            out.append(nr)
        return out

    def _feasible(self, name: str) -> bool:
        """What build() sets as the node's `feasible`, without building it."""
        if self.candidates is not None and name not in self.candidates and name != self.nominated:
            return False
        nr = self.explicit.get(name)
        if nr is not None:
            return nr.feasible
        return self.outcomes.get(name) is None

    def outline(self):
        """(name, feasible, totalScore or None) of every node, in node order."""
        totals = {}
        if self.score_table is not None:
            totals = {ni.name: t for ni, t in zip(self.score_table.nodes, self.totals)}
        feasible = self._feasible
        return ((ni.name, feasible(ni.name), totals.get(ni.name)) for ni in self.nodes)

    def counts(self) -> dict:
        """How many nodes, and how many of them feasible (see outline)."""
        if self.candidates is None and not self.explicit:
            failed = sum(1 for o in self.outcomes.values() if o is not None)
            return {"nodes": len(self.nodes), "feasible": len(self.nodes) - failed}
        return {"nodes": len(self.nodes), "feasible": sum(1 for ni in self.nodes if self._feasible(ni.name))}

    def counted(self, name: str) -> bool:
        """Whether the node's Filter verdicts are ones kube-scheduler has:
        a candidate of the PreFilterResult (every node without one), or the
        nominated node, filtered on its own before the candidates narrow."""
        return self.candidates is None or name in self.candidates or name == self.nominated

    def filter_counts(self) -> dict:
        """Plugin -> reason -> nodes, plugins in profile order: the table's
        tallies and the verdicts of the nodes filtered one by one (never in
        the table); with a PreFilterResult, the counted() nodes' only."""
        if self.candidates is not None:
            return self._candidate_counts()
        counts = {name: dict(tally) for name, tally in zip(self.table.names, self.table.tallies)}
        for nr in self.explicit.values():
            tally_rows(nr.filter_rows(), counts)
        return counts

    def _candidate_counts(self) -> dict:
        """filter_counts() when the PreFilterResult narrowed the candidates:
        kschedx filtered the nodes left out too, and the table's tallies
        count them, so the candidates' rows are counted one by one (few, as
        a rule: the PreFilterResult names them)."""
        counts: dict = {name: {} for name in self.table.names}
        row_of = self.row_of
        for i, ni in enumerate(self.nodes):
            name = ni.name
            if not self.counted(name):
                continue
            nr = self.explicit.get(name)
            if nr is not None:
                tally_rows(nr.filter_rows(), counts)
            else:
                tally_rows(self.table.rows(i if row_of is None else row_of[name]), counts)
        return counts


def left_out_status(plugins: list[str]) -> Status:
    """The status kube-scheduler gives every node a PreFilterResult left
    out (the `absent` status of its FitError): the plugins that narrowed
    the candidates, no Filter plugin's."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, f"node(s) didn't satisfy plugin(s) {go_list(plugins)}")


def left_out(nr: "NodeResult", pre_filter_result: dict | None) -> bool:
    """Whether a built record is that of a node the PreFilterResult left
    out: not one of its nodeNames, and carrying its status. (A nominated
    node left out but filtered on its own carries its own verdict.)"""
    if pre_filter_result is None or nr.name in pre_filter_result["nodeNames"]:
        return False
    st = nr.status
    return (st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and not st.plugin
            and st.reasons == left_out_status(pre_filter_result["plugins"]).reasons)


def tally_rows(rows, counts: dict) -> None:
    """Add (plugin, status, details) rows to plugin -> {reason: nodes}: each
    reason of a verdict other than Success and Skip counts its node once (a
    verdict without reasons counts under its code)."""
    for plugin, st, _ in rows:
        if st is None or st.code in (Code.SUCCESS, Code.SKIP):
            continue
        tally = counts.setdefault(plugin, {})
        for reason in st.reasons or (st.code.label,):
            tally[reason] = tally.get(reason, 0) + 1


def ordered_summary(counts: dict) -> dict:
    """Plugins in profile order (their order in `counts`), those with no
    failure left out; reasons by node count, most first, then by text."""
    return {plugin: dict(sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
            for plugin, tally in counts.items() if tally}


class PodResult:
    """One pod's cycle: the outcome, and every node's record (`nodes`, built
    from the cycle's NodeRecords when first read)."""

    def __init__(self, pod_info: PodInfo):
        self.pod_info = pod_info
        self.status = "Unschedulable"  # Scheduled | Unschedulable | Gated | Error
        self.selected_node: str | None = None
        self.top_nodes: list[str] = []
        self.message: str | None = None
        self.gate: Status | None = None
        self.pre_filter: list[Status] = []
        self.pre_filter_result: dict | None = None
        self._nodes: list[NodeResult] | None = []
        self.node_records: NodeRecords | None = None
        # Computed from every node; kept when the nodes are let go (drop_nodes).
        self._filter_summary: dict | None = None
        self._node_counts: dict | None = None
        self.preemption: dict | None = None
        self.notes: list[str] = []
        # Node sampling, when kube-scheduler would stop searching early (runner._search).
        self.sampling: dict | None = None
        # What simulate needs after the cycle (not part of the schema).
        self.nominated_node: str | None = None  # set by PostFilter: "" clears a nomination
        self.victims: list[PodInfo] = []
        self.cycle_state: CycleState | None = None  # for Reserve after the cycle
        self.cleared_nominations: list[PodInfo] = []
        self.extenders = None  # ExtenderRecords (framework/extenders.py) once an extender was considered
        # selected_node was drawn at random among top_nodes (the cycle's last draw).
        self.tie_drawn = False
        # Preemption candidates' parts in the search, by node name (NodeResult.preemption).
        self.node_preemption: dict | None = None

    @property
    def nodes(self) -> list[NodeResult]:
        if self.node_records is not None:
            self._nodes = self._annotated(self.node_records.build())
            self.node_records = None
            if self.extenders is not None:
                self.extenders.annotate(self._nodes)
        return self._nodes

    def set_node_preemption(self, by_node: dict) -> None:
        self.node_preemption = by_node
        if self.node_records is None:
            self._annotated(self._nodes or [])

    def _annotated(self, records: list[NodeResult]) -> list[NodeResult]:
        by_node = self.node_preemption
        if by_node:
            for nr in records:
                nr.preemption = by_node.get(nr.name)
        return records

    @nodes.setter
    def nodes(self, value: list[NodeResult]) -> None:
        self._nodes = value
        self.node_records = None
        self._filter_summary = self._node_counts = None

    def outline(self):
        """(name, feasible, totalScore or None) of every node, in node order,
        without building the node records."""
        if self.node_records is not None:
            outline = self.node_records.outline()
            ext = self.extenders
            if ext is None or not ext.filters:
                return outline
            # A node an extender rejected is not feasible (ExtenderRecords.annotate).
            return ((name, feasible and not ext.rejected(name), total) for name, feasible, total in outline)
        return ((nr.name, nr.feasible, nr.total) for nr in self._nodes or ())

    def chosen_nodes(self, choice=None) -> list[NodeResult]:
        """The records of the nodes a NodeChoice (--nodes) keeps, in node
        order; only those are built."""
        if choice is None or choice.is_all:
            return self.nodes
        keep = choice.pick(self.outline(), self.selected_node)
        if self.node_records is not None:
            records = self._annotated(self.node_records.build(keep))
            if self.extenders is not None:
                self.extenders.annotate(records)
            return records
        return [nr for nr in self._nodes or () if nr.name in keep]

    def filter_summary(self) -> dict:
        """Plugin -> reason -> how many nodes: every node's Filter verdicts
        other than Success and Skip, counted without building the records.
        Nodes the PreFilterResult left out are not counted: kube-scheduler
        runs no Filter plugin on them."""
        if self._filter_summary is None:
            if self.node_records is not None:
                counts = self.node_records.filter_counts()
            else:
                counts: dict = {}
                pfr = self.pre_filter_result
                for nr in self._nodes or ():
                    if not left_out(nr, pfr):
                        tally_rows(nr.filter_rows(), counts)
            if self.extenders is not None:
                # Each node's `filters` lists the extenders' verdicts after the
                # plugins' (result/node_record.py): they count as its entries.
                for rows in self.extenders.filters.values():
                    tally_rows(rows, counts)
            self._filter_summary = ordered_summary(counts)
        return self._filter_summary

    def node_counts(self) -> dict:
        """{"nodes": how many nodes, "feasible": how many of them feasible}."""
        if self._node_counts is None:
            if self.node_records is not None:
                counts = self.node_records.counts()
                ext = self.extenders
                if ext is not None and ext.filters:
                    # Nodes an extender rejected (ExtenderRecords.annotate).
                    records = self.node_records
                    names = {ni.name for ni in records.nodes}
                    counts["feasible"] -= sum(1 for name in ext.filters
                                              if name in names and records._feasible(name) and ext.rejected(name))
                self._node_counts = counts
            else:
                nodes = self._nodes or ()
                self._node_counts = {"nodes": len(nodes), "feasible": sum(1 for nr in nodes if nr.feasible)}
        return self._node_counts

    def drop_nodes(self) -> None:
        """Let the node records go, keeping what was counted from them."""
        summary, counts = self.filter_summary(), self.node_counts()
        self.nodes = []
        self.node_preemption = None
        self._filter_summary, self._node_counts = summary, counts

    @pauses_collector
    def settle(self, score_details: bool = True) -> None:
        """Compute the explanations kept lazily, while the cycle's state is
        still the one they describe (simulate calls it before the snapshot
        changes). The result then lives until its pod is written. Without
        `score_details` the scores are kept without their explanations."""
        if self.node_records is not None:
            self.node_records.table.settle()
            if self.node_records.score_table is not None:
                if score_details:
                    self.node_records.score_table.settle()
                else:
                    self.node_records.score_table.settle_without_details()
            return
        for nr in self._nodes or ():
            nr.settle()

    def __repr__(self):
        return f"PodResult({self.pod_info.key}, {self.status}, {self.selected_node})"


def table_groups(records) -> tuple[list, list]:
    """The verdicts and scores of `records` still in the runner's tables,
    grouped by table, for writers that go a plugin's column at a time:
    ([(FilterTable, positions, rows)], [(ScoreTable, positions, indexes)]),
    positions into `records`. Left out, to be taken one record at a time:
    records with extender results. A ScoreTable's explanations, settled or
    not, are read a column at a time (ScoreTable.column_details)."""
    filter_groups: dict = {}  # id(FilterTable) -> (table, positions, rows)
    score_groups: dict = {}  # id(ScoreTable) -> (table, positions, indexes)
    for p, nr in enumerate(records):
        if nr.extender_filters or nr.extender_scores:
            continue
        frow, srow = nr.table_rows()
        if frow is not None:
            g = filter_groups.get(id(frow[0]))
            if g is None:
                g = filter_groups[id(frow[0])] = (frow[0], [], [])
            g[1].append(p)
            g[2].append(frow[1])
        if srow is not None:
            g = score_groups.get(id(srow[0]))
            if g is None:
                g = score_groups[id(srow[0])] = (srow[0], [], [])
            g[1].append(p)
            g[2].append(srow[1])
    return list(filter_groups.values()), list(score_groups.values())
