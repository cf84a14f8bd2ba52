"""The human report of a SchedulingResult, as blocks both renderers draw.

Built from the document alone (the dict `-o json` prints), so it serves every
mode and plugins added later: verdicts, reasons and `details` are shown
generically, never looked up by plugin name.

The report answers, in order: where does the pod go (or why nowhere)? which
nodes lost, and to which plugin? why did the winner win? Styles name a
meaning (pass, fail, later, ...), never a colour; every distinction a style
makes is also made by a symbol or by the words, so the plain renderer
(no colour) says the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..result.document import scheduler_text
from .details import detail_lines, details_text

# Meanings a span can carry; the Rich renderer maps them to colours.
PASS = "pass"  # a filter passed, the pod is scheduled
FAIL = "fail"  # the failure kube-scheduler reports
LATER = "later"  # also failing, but kube-scheduler stopped before it
WARN = "warn"  # the result is incomplete, or needs attention
MUTED = "muted"  # context: skipped plugins, hints
STRONG = "strong"  # names the reader looks for: pod, selected node
HEADER = "header"

# More nodes than this and the filter matrix becomes a grouped list.
MATRIX_MAX_NODES = 8
# Score rows shown without -o wide.
SCORE_ROWS = 10
# Node names shown per group of the grouped list without -o wide.
GROUP_NAMES = 3


@dataclass(frozen=True)
class Symbols:
    ok: str
    fail: str
    star: str
    tie: str
    gated: str
    error: str
    warn: str
    arrow: str
    times: str
    dot: str
    ellipsis: str
    minus: str


UNICODE = Symbols("✓", "✗", "★", "=", "⏸", "!", "⚠", "→", "×", "·", "…", "−")
ASCII = Symbols("ok", "x", "*", "=", "||", "!", "!", "->", "x", "-", "...", "-")


def symbols_for(encoding: str | None) -> Symbols:
    """Unicode marks when the output can carry them, else ASCII ones."""
    try:
        "".join(v for v in UNICODE.__dict__.values()).encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return ASCII
    return UNICODE


@dataclass(frozen=True)
class Span:
    text: str
    style: str | None = None


Cell = list  # list[Span]; a cell's text may hold newlines


@dataclass
class Line:
    spans: list[Span]
    indent: int = 0

    @property
    def text(self) -> str:
        return "".join(s.text for s in self.spans)


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    align: list[str] = field(default_factory=list)  # "left" | "right" per column
    indent: int = 2


@dataclass
class Blank:
    pass


def _line(*parts, indent: int = 0) -> Line:
    """Line("text", ("text", STYLE), ...)"""
    spans = [p if isinstance(p, Span) else Span(p) if isinstance(p, str) else Span(*p) for p in parts]
    return Line(spans, indent)


def _cell(*parts) -> Cell:
    return _line(*parts).spans


def plural(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else word + 's'}"


def _names(names, limit: int | None, sym: Symbols) -> str:
    names = list(names)
    if limit is None or len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f", {sym.ellipsis} (+{len(names) - limit})"


def sampling_text(pod: dict, limit: int | None, sym: Symbols) -> str:
    """The pod's `sampling` field in one line: where kube-scheduler's node
    sampling stops, and (mode all) whether it could pick another node."""
    s = pod["sampling"]
    pct = s["percentageOfNodesToScore"]
    share = f"percentageOfNodesToScore {pct}" + (" = adaptive" if pct == 0 else "")
    k, start = s["numFeasibleNodesToFind"], s["startIndex"]
    if s["mode"] == "upstream":
        return (f"sampling (upstream): scored the first {s['foundNodes']} feasible nodes found from start index "
                f"{start} ({share}; {s['processedNodes']} of {s['nodes']} nodes checked, next cycle starts at "
                f"{s['nextStartIndex']})")
    head = f"sampling: kube-scheduler stops at {k} feasible nodes of {s['nodes']} ({share})"
    if not s.get("couldBeMissed"):
        return head + f"; only {s['feasibleNodes']} are feasible, so it finds them all: same pick"
    picks = s.get("upstreamCouldPick") or []
    others = [n for n in picks if n != pod.get("selectedNode")]
    return (head + f"; from start index {start} its best are {_names(s.get('startWindowBest') or [], 3, sym)}"
            f" {sym.dot} {pod.get('selectedNode')} could be missed: from other starts it could pick "
            f"{plural(len(others), 'other node')} ({_names(others, limit, sym)})")


def share_text(share: float) -> str:
    """A share of examination orders as a percentage: 43%, <1%."""
    pct = share * 100
    if 0 < pct < 1:
        return "<1%"
    return f"{round(pct)}%"


def outcome_text(a: dict) -> str:
    """One preemption outcome of `alternatives`: its node, victims, share."""
    n = len(a.get("victims") or ())
    extra = f", {plural(a['pdbViolations'], 'PDB violation')}" if a.get("pdbViolations") else ""
    return f"{a['nominatedNode']} ({plural(n, 'victim')}{extra}, {share_text(a.get('share', 0))})"


def preemption_search_text(pre: dict, limit: int | None, sym: Symbols) -> str | None:
    """The `search` of a preemption in one line when its outcome could
    differ: why (kube-scheduler examines some nodes only, from a random
    offset; or equal candidates), the other possible outcomes with their
    shares, and this one's. None when it could not differ."""
    search = pre.get("search") or {}
    if not search.get("couldDiffer"):
        return None
    sampling = pre.get("sampling") or {}
    potential, wanted = search["potentialNodes"], search["candidatesWanted"]
    examined = sampling.get("evaluatedNodes", potential)
    if search["nodesWithVictims"] <= wanted:
        head = (f"preemption: {search['outcomes']} candidates tie on every criterion and kube-scheduler "
                "nominates any of them")
    elif examined < potential:
        head = f"preemption examined {examined} of {potential} potential nodes from a random offset"
    else:
        head = (f"preemption examined all {potential} potential nodes but keeps the first {wanted} candidates it "
                "finds (all violate a PodDisruptionBudget)")
    others = search["outcomes"] - 1
    if search.get("alternativesOmitted"):
        return head + f"; other outcomes are possible (not computed: {search['alternativesOmitted']})"
    alts = pre.get("alternatives") or []
    rest = [a for a in alts if not a.get("chosen")]
    chosen = next((a for a in alts if a.get("chosen")), None)
    names = [outcome_text(a) for a in rest]
    shown = names if limit is None else names[:limit]
    text = f"{head}; {plural(others, 'other outcome')} {'is' if others == 1 else 'are'} possible: " + ", ".join(shown)
    if others > len(shown):
        text += f", {sym.ellipsis} (+{others - len(shown)})"
    if chosen is not None:
        text += f"; this one {share_text(chosen.get('share', 0))}"
    return text + f" {sym.dot} --node/-o json for all"


def node_preemption_text(pod: dict, node: dict) -> str:
    """What preemption makes of one candidate node (its record's
    `preemption`): nominated, a possible nomination, or never nominated."""
    rec = node["preemption"]
    pre = pod.get("preemption") or {}
    search = pre.get("search") or {}
    evicting = f"evicting {plural(rec['numVictims'], 'pod')}"
    if rec.get("pdbViolations"):
        evicting += f" ({plural(rec['pdbViolations'], 'PodDisruptionBudget violation')})"
    if pre.get("nominatedNode") == node["name"]:
        text = f"preemption nominates it, {evicting}"
        if search.get("couldDiffer"):
            others = search["outcomes"] - 1
            text += (f": {share_text(rec['share'])} of kube-scheduler's examination orders do "
                     f"({plural(others, 'other outcome')} possible)")
        return text
    if rec.get("couldBeNominated"):
        return (f"preemption could nominate it instead, {evicting}, in {share_text(rec['share'])} of "
                "kube-scheduler's examination orders")
    return (f"a preemption candidate, {evicting}, but never nominated: whatever the order, the candidates "
            "kube-scheduler finds with it hold a better one")


# Details longer than this go below the --node tables instead of in a cell.
INLINE_DETAIL_LINES = 3


# -- the report ---------------------------------------------------------------
# A pod's own fields, which only its header line shows.
_HEADER_ONLY = frozenset({"pod", "uid", "source", "nodes"})


def _body_key(pod: dict) -> str | None:
    """What a pod's body is drawn from besides its `nodes` list (compared by
    identity): every other field but the header's own. None when the body
    is not worth keeping (a small node list is quick to draw again)."""
    nodes = pod.get("nodes")
    if not isinstance(nodes, list) or len(nodes) < 64:
        return None
    import json

    return json.dumps({k: v for k, v in pod.items() if k not in _HEADER_ONLY}, default=repr)


class RenderedBody:
    """A pod's body blocks drawn ahead, where the pod was computed (an
    `explain --jobs` worker: HumanSink.body_renderer); it stands in for the
    pod's `nodes`, the bulk of what a worker would send otherwise."""

    __slots__ = ("blocks",)

    def __init__(self, blocks: list):
        self.blocks = blocks


class Report:
    """Builds the blocks for one document, or piece by piece for a stream:
    begin(), then next_pod() for each pod (take_blocks() hands over what is
    built so far), then end()."""

    def __init__(self, doc: dict, *, wide: bool = False, node: str | None = None, sym: Symbols = UNICODE):
        self.doc = doc  # the document, or only its head when streaming
        self.wide = wide
        self.node = node
        self.sym = sym
        self.blocks: list = []
        self.pods = 0
        self.counts: dict[str, int] = {}
        # The last pod's body blocks: (its key, its nodes list, the blocks). See pod().
        self._last_body: tuple | None = None

    def build(self) -> list:
        """Every block of the report, in reading order."""
        self.begin()
        for pod in self.doc.get("pods") or []:
            self.next_pod(pod)
        self.end()
        return self.blocks

    def begin(self) -> None:
        doc = self.doc
        if scheduler_text(doc):
            # Which scheduler the answers are: the version and its non-default gates.
            self.add(_line((scheduler_text(doc), MUTED)))
            self.add(Blank())
        if doc.get("notEvaluated"):
            missing = ", ".join(doc["notEvaluated"])
            self.add(_line((f"{self.sym.warn} incomplete: kschedx cannot evaluate yet: {missing}.", WARN)))
            self.add(_line(("  Verdicts that depend on these plugins may differ from kube-scheduler.", WARN)))
            self.add(Blank())

    def next_pod(self, pod: dict) -> None:
        if self.pods:
            self.add(Blank())
        self.pods += 1
        self.count(pod)
        self.pod(pod)

    def end(self) -> None:
        if not self.pods:
            self.add(_line("No pods to evaluate: the snapshot has no pending pods (name POD_FILEs to evaluate)."))
        if self.pods > 1:
            self.add(Blank())
            self.summary()

    def take_blocks(self) -> list:
        blocks, self.blocks = self.blocks, []
        return blocks

    def add(self, block) -> None:
        self.blocks.append(block)

    # -- one pod ----------------------------------------------------------------
    def pod(self, pod: dict) -> None:
        self.header(pod)
        if isinstance(pod.get("nodes"), RenderedBody):
            self.blocks.extend(pod["nodes"].blocks)
            return
        # Pods that take an identical earlier pod's result (commands/reuse.py)
        # share its `nodes` list and differ only in the fields the header
        # shows: their body (5,000 nodes grouped and ranked) is the same
        # blocks, built once. Blocks are never changed once built.
        key = _body_key(pod)
        last = self._last_body
        if key is not None and last is not None and last[0] == key and last[1] is pod["nodes"]:
            self.blocks.extend(last[2])
            return
        start = len(self.blocks)
        self.body(pod)
        if key is not None:
            self._last_body = (key, pod["nodes"], self.blocks[start:])

    def body(self, pod: dict) -> None:
        """Everything under a pod's header line."""
        self.outcome(pod)
        if pod["status"] in ("Gated", "Error", "NoProfile"):
            return  # no node was considered
        self.fixes(pod)  # under the verdict: what to do comes before why
        if self.node is not None:
            self.node_story(pod, self.node)
            return
        self.pre_filter(pod)
        self.filters(pod)
        self.scores(pod)
        if pod.get("sampling") and pod["status"] == "Scheduled":
            self.add(_line((sampling_text(pod, None if self.wide else GROUP_NAMES, self.sym), WARN), indent=2))
        self.preemption(pod)

    def fixes(self, pod: dict) -> None:
        """explain --fix: the verified changes, smallest first, each with its
        patch and the kubectl command of a change made on the cluster; then
        what no kind covers, and advice."""
        from . import fixes as words

        if "fixes" not in pod:
            return
        fixes = pod["fixes"]
        self.add(Blank())
        if not fixes:
            self.add(_line((f"fixes: none found: no change kschedx tried makes the pod schedulable "
                            f"({words.search_words(pod)})", WARN), indent=2))
        else:
            self.add(_line(("fixes", STRONG), (f" (each checked by running the scheduling cycle again with it; "
                                               f"smallest change first; {words.search_words(pod)}):", MUTED),
                           indent=2))
        for i, fix in enumerate(fixes, 1):
            self.add(_line(f"{i}. ", (f"[{fix['kind']}] ", STRONG), fix["description"], indent=2))
            for change in fix.get("changes") or ():
                self.add(_line((words.change_line(change, self.sym.ellipsis), MUTED), indent=5))
                command = words.kubectl_command(change)
                if command is not None:
                    self.add(_line(("$ " + command, MUTED), indent=7))
                if self.wide and change["action"] == "create" and not change.get("by"):
                    self.add(_line(("$ kubectl create -f - <<'EOF'", MUTED), indent=7))
                    for text in _yaml(change["patch"][0]["value"]).splitlines():
                        self.add(_line((text, MUTED), indent=9))
                    self.add(_line(("EOF", MUTED), indent=9))
            owner = fix.get("owner")
            if owner:
                self.add(_line((words.owner_line(owner), MUTED), indent=5))
                command = words.owner_command(owner) if owner.get("checked") else None
                if command is not None:
                    self.add(_line(("$ " + command, MUTED), indent=7))
        for text in words.uncovered_lines(pod) + words.advice_lines(pod):
            self.add(_line((text, WARN if not fixes else MUTED), indent=2))

    def header(self, pod: dict) -> None:
        sym = self.sym
        context = [f"priority {pod.get('priority', 0)}"]
        if self.doc.get("profiles") and pod.get("profile"):
            context.insert(0, f"profile {pod['profile']}")  # --config: which profile evaluated it
        reqs = pod.get("requests")
        if reqs:
            context.append("requests " + ", ".join(f"{k} {v}" for k, v in reqs.items()))
        elif reqs is not None:
            context.append("no requests")
        status = pod["status"]
        pre = pod.get("preemption") or {}
        if status == "Scheduled":
            verdict = (f"{sym.ok} Scheduled {sym.arrow} {pod.get('selectedNode')}", PASS)
        elif status == "Gated":
            verdict = (f"{sym.gated} Gated", WARN)
        elif status == "Error":
            verdict = (f"{sym.error} Error", FAIL)
        elif status == "NoProfile":
            verdict = (f"{sym.gated} not served by this configuration's profiles", WARN)
        elif pre.get("nominatedNode"):
            verdict = (f"{sym.fail} Unschedulable now {sym.dot} preemption nominates {pre['nominatedNode']}", WARN)
        else:
            verdict = (f"{sym.fail} {status}", FAIL)
        self.add(_line((pod["pod"], STRONG), "  ", verdict, ("   " + f" {sym.dot} ".join(context), MUTED)))

    def outcome(self, pod: dict) -> None:
        status = pod["status"]
        if pod.get("message"):
            self.add(_line(pod["message"], indent=2))
        if status == "Gated" and pod.get("gate"):
            gate = pod["gate"]
            self.add(_line((f"held before scheduling by {gate['plugin']} (PreEnqueue): the scheduler does not "
                            "consider the pod until its gates are removed", MUTED), indent=2))
        if status == "Error":
            self.add(_line(("the scheduling cycle stopped with an error: kube-scheduler would retry the pod later", MUTED),
                           indent=2))

    def pre_filter(self, pod: dict) -> None:
        sym = self.sym
        for st in pod.get("preFilter") or ():
            if st["code"] in ("Success", "Skip"):
                continue
            self.add(_line(f"PreFilter {st['plugin']}: ", (f"{sym.fail} {st['code']}", FAIL),
                           (": " + ", ".join(st["reasons"])) if st["reasons"] else "", indent=2))
            if st.get("details"):
                self.add(_line((details_text(st["details"]).replace("\n", "; "), MUTED), indent=4))
        pfr = pod.get("preFilterResult")
        if pfr is not None:
            names = pfr.get("nodeNames") or []
            who = ", ".join(pfr.get("plugins") or []) or "PreFilter"
            limit = None if self.wide else GROUP_NAMES * 2
            self.add(_line(f"PreFilter ({who}) narrowed the candidates to {plural(len(names), 'node')}"
                           + (f": {_names(names, limit, sym)}" if names else ""), indent=2))

    # -- filters ----------------------------------------------------------------
    def shown_part(self, pod: dict) -> bool:
        """Whether --nodes left some of the pod's nodes out of its document."""
        counts = pod.get("nodeCounts")
        return counts is not None and len(pod.get("nodes") or ()) < counts.get("nodes", 0)

    def filter_summary(self, pod: dict) -> None:
        """--nodes failing/top=N/NAME: what every node said, counted
        (filterSummary), then which of them the tables below show."""
        sym = self.sym
        counts = pod.get("nodeCounts") or {}
        nodes = pod.get("nodes") or []
        total = counts.get("nodes", 0)
        detail = self.doc.get("nodeDetail")
        self.add(Blank())
        self.add(_line(f"{plural(total, 'node')} {sym.dot} feasible: {counts.get('feasible', 0)} {sym.dot} "
                       f"shown below: {len(nodes)}" + (f" (--nodes {detail})" if detail else ""), indent=2))
        summary = pod.get("filterSummary") or {}
        if not summary:
            return
        table = Table(["nodes", "failing Filter", "reason"], align=["right", "left", "left"])
        for plugin, reasons in summary.items():
            for reason, n in reasons.items():
                table.rows.append([_cell(str(n)), _cell(plugin), _cell((f"{sym.fail} {reason}", FAIL))])
        self.add(table)
        self.add(_line((f"every Filter failure on every node (a node fails one or more); "
                        f"-o json: filterSummary", MUTED), indent=2))

    def filters(self, pod: dict) -> None:
        nodes = pod.get("nodes") or []
        part = self.shown_part(pod)
        if part:
            self.filter_summary(pod)
        if not nodes:
            return
        sym = self.sym
        if all(not n.get("filters") for n in nodes):
            # Rejected at PreFilter: no Filter plugin ran on any node.
            st = nodes[0].get("status") or {}
            self.add(_line(f"no Filter plugin ran: PreFilter {st.get('plugin') or ''} rejected the pod for all "
                           f"{plural(len(nodes), 'node')}", indent=2))
            return
        verdicts = _distinct_verdicts(nodes)
        plugins = _ordered(f["plugin"] for f in verdicts)
        codes = {p: set() for p in plugins}
        for f in verdicts:
            codes[f["plugin"]].add(f["code"])
        skipped = [p for p in plugins if codes[p] == {"Skip"}]
        failing = [p for p in plugins if codes[p] - {"Success", "Skip"}]
        passing = [p for p in plugins if p not in skipped and p not in failing]

        self.add(Blank())
        if len(nodes) > MATRIX_MAX_NODES:
            self.grouped(pod, nodes)
        else:
            self.matrix(pod, nodes, failing if not self.wide else [p for p in plugins if p not in skipped])
        if passing and not self.wide:
            every = "every node shown" if part else "every node"
            if failing:
                self.add(_line((f"({plural(len(passing), 'more plugin')}: {sym.ok} on {every}: "
                                f"{', '.join(passing)})", MUTED), indent=2))
            else:
                self.add(_line((f"{sym.ok} {every} passes all {plural(len(passing), 'Filter plugin')}: "
                                f"{', '.join(passing)}", PASS), indent=2))
        if skipped:
            self.add(_line((f"skipped for this pod (PreFilter returned Skip, nothing to check): {', '.join(skipped)}",
                            MUTED), indent=2))
        if pod.get("status") != "Scheduled" and len(nodes) <= MATRIX_MAX_NODES \
                and any(f.get("details") for n in nodes for f in n.get("filters") or ()):
            # The grouped list says the same; a matrix does not.
            self.add(_line(("--node NAME shows why in numbers: free resources, pods per topology domain, "
                            "devices, volumes", MUTED), indent=2))

    def _reported_by_pre_filter(self, pod: dict, node: dict) -> bool:
        pfr = pod.get("preFilterResult")
        return pfr is not None and not node.get("feasible") and node["name"] not in (pfr.get("nodeNames") or ())

    def matrix(self, pod: dict, nodes: list[dict], columns: list[str]) -> None:
        """One row per node, one column per Filter plugin worth showing."""
        sym = self.sym
        pfr = pod.get("preFilterResult")
        if not columns and pfr is None:
            return
        headers = ["Filter"] + (["PreFilterResult"] if pfr is not None else []) + columns
        table = Table(headers, align=["left"] * len(headers))
        any_later = False
        for n in nodes:
            row = [_cell((n["name"], STRONG if n["name"] == pod.get("selectedNode") else None))]
            if pfr is not None:
                if self._reported_by_pre_filter(pod, n):
                    row.append(_cell((f"{sym.fail} not a candidate", FAIL)))
                else:
                    row.append(_cell((sym.ok, PASS)))
            verdicts = {f["plugin"]: f for f in n.get("filters") or ()}
            for plugin in columns:
                f = verdicts.get(plugin)
                reported = n.get("firstFailure") == plugin and not self._reported_by_pre_filter(pod, n)
                any_later = any_later or (f is not None and not reported and f["code"] not in ("Success", "Skip"))
                row.append(self.verdict_cell(f, reported))
            table.rows.append(row)
        self.add(table)
        legend = f"{sym.fail} = the failure kube-scheduler reports for the node"
        if any_later:
            legend += f"; ({sym.fail} {sym.ellipsis}) = also failing, not reached"
        self.add(_line((legend, MUTED), indent=2))

    def verdict_cell(self, f: dict | None, reported: bool) -> Cell:
        sym = self.sym
        if f is None:
            return _cell(("", None))
        code = f["code"]
        if code == "Success":
            return _cell((sym.ok, PASS))
        if code == "Skip":
            return _cell(("skip", MUTED))
        text = f"{sym.fail} " + (", ".join(f["reasons"]) or code)
        if reported:
            return _cell((text, FAIL))
        return _cell((f"({text})", LATER))

    def grouped(self, pod: dict, nodes: list[dict]) -> None:
        """Wide clusters: nodes grouped by the failure kube-scheduler reports."""
        sym = self.sym
        groups: dict[tuple, list[str]] = {}
        feasible: list[str] = []
        for n in nodes:
            if n.get("feasible"):
                feasible.append(n["name"])
                continue
            st = n.get("status") or {}
            plugin = n.get("firstFailure") or st.get("plugin") or "?"
            reasons = st.get("reasons")
            if reasons is None:
                f = next((f for f in n.get("filters") or () if f["plugin"] == plugin), None)
                reasons = f["reasons"] if f else []
            groups.setdefault((plugin, ", ".join(reasons)), []).append(n["name"])
        limit = None if self.wide else GROUP_NAMES
        table = Table(["nodes", "filtered out by", "reason", "node names"], align=["right", "left", "left", "left"])
        for (plugin, reason), names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            table.rows.append([_cell(str(len(names))), _cell(plugin), _cell((f"{sym.fail} {reason}", FAIL)),
                               _cell((_names(names, limit, sym), MUTED))])
        if feasible:
            table.rows.append([_cell(str(len(feasible))), _cell(""), _cell((f"{sym.ok} feasible", PASS)),
                               _cell(_names(feasible, limit, sym))])
        self.add(_line(f"Filter: {plural(len(nodes), 'node')}, grouped by the failure kube-scheduler reports",
                       indent=2))
        self.add(table)
        if not self.wide and (any(len(v) > GROUP_NAMES for v in groups.values()) or len(feasible) > GROUP_NAMES):
            self.add(_line(("-o wide names every node; --node NAME shows one node's whole story", MUTED), indent=2))

    # -- scores -----------------------------------------------------------------
    def scores(self, pod: dict) -> None:
        sym = self.sym
        nodes = pod.get("nodes") or []
        scored = [n for n in nodes if n.get("scores") is not None]
        if not scored:
            for note in pod.get("notes") or ():
                self.add(_line(("note: " + note, MUTED), indent=2))
            return
        scored.sort(key=lambda n: (-(n.get("totalScore") or 0), n["name"]))
        by_plugin: dict[str, list] = {}  # in order of first appearance
        for n in scored:
            for s in n["scores"]:
                by_plugin.setdefault(s["plugin"], []).append(s)
        plugins = list(by_plugin)
        weights = {}
        skipped_everywhere = []
        zero_everywhere = []  # e.g. DynamicResources for a pod without claims: a column of 0s says nothing
        for p in plugins:
            entries = by_plugin[p]
            weights[p] = entries[0].get("weight", 1)
            if all(s.get("skipped") for s in entries):
                skipped_everywhere.append(p)
            elif all(not s.get("skipped") and not s.get("weighted") for s in entries):
                zero_everywhere.append(p)
        columns = plugins if self.wide else [p for p in plugins
                                             if p not in skipped_everywhere and p not in zero_everywhere]
        top = pod.get("topNodes") or []
        selected = pod.get("selectedNode")
        table = Table(["Score", "", "total"] + [f"{p} {sym.times}{weights[p]}" for p in columns],
                      align=["left", "left", "right"] + ["right"] * len(columns))
        shown = scored if self.wide else scored[:SCORE_ROWS]
        for n in shown:
            mark = ""
            if n["name"] == selected:
                mark = sym.star
            elif len(top) > 1 and n["name"] in top:
                mark = sym.tie
            by_plugin = {s["plugin"]: s for s in n["scores"]}
            row = [_cell((n["name"], STRONG if n["name"] == selected else None)), _cell((mark, PASS)),
                   _cell((str(n.get("totalScore")), STRONG if n["name"] == selected else None))]
            for p in columns:
                s = by_plugin.get(p)
                if s is None or s.get("skipped"):
                    row.append(_cell(("skip" if s is not None else "", MUTED)))
                elif self.wide:
                    row.append(_cell(f"{s['weighted']} ({s['raw']}{sym.arrow}{s['normalized']})"))
                else:
                    row.append(_cell(str(s["weighted"])))
            table.rows.append(row)
        self.add(Blank())
        self.add(table)
        if len(shown) < len(scored):
            self.add(_line((f"{sym.ellipsis} {plural(len(scored) - len(shown), 'more scored node')} "
                            "(-o wide shows all)", MUTED), indent=2))
        legend = [f"{sym.star} selected"]
        if len(top) > 1:
            legend.append(f"{sym.tie} tied for the top score")
        legend.append(f"cells: weighted score (normalized {sym.times} weight)")
        if self.wide:
            legend.append(f"(raw {sym.arrow} normalized)")
        self.add(_line((f" {sym.dot} ".join(legend), MUTED), indent=2))
        if zero_everywhere and not self.wide:
            self.add(_line((f"0 on every node: {', '.join(zero_everywhere)}", MUTED), indent=2))
        if skipped_everywhere and not self.wide:
            self.add(_line((f"not scoring this pod (PreScore returned Skip): {', '.join(skipped_everywhere)}", MUTED),
                           indent=2))

        # ties, coverage, and why the winner won
        best = scored[0].get("totalScore")
        limit = None if self.wide else GROUP_NAMES
        if len(top) > 1:
            tie_break = self.doc.get("tieBreak", "random")
            self.add(_line((f"tie: {plural(len(top), 'node')} share the top score {best} "
                            f"({_names(top, limit, sym)}); tie-break {tie_break} chose {selected}", WARN),
                           ((" (at random, as kube-scheduler: --tie-break name or --seed N choose the same "
                             "node every run)") if tie_break == "random" else "", MUTED), indent=2))
            coverage = self.coverage(nodes, scored, pod)
        else:
            coverage = f"ties: none {sym.dot} " + self.coverage(nodes, scored, pod)
        self.add(_line(coverage, indent=2))
        if len(top) == 1 and len(scored) > 1 and selected == scored[0]["name"]:
            self.add(_line(self.margin(scored[0], scored[1]), indent=2))
        for note in pod.get("notes") or ():
            self.add(_line(("note: " + note, MUTED), indent=2))

    def coverage(self, nodes: list[dict], scored: list[dict], pod: dict | None = None) -> str:
        if pod is not None and self.shown_part(pod):
            # The shown nodes are a choice (--nodes): counting them says nothing.
            return f"scores shown for {plural(len(scored), 'node')} (--nodes {self.doc.get('nodeDetail') or ''})"
        out = f"nodes scored: {len(scored)} of {len(nodes)}"
        lost = [n for n in nodes if n.get("scores") is None]
        if not lost:
            return out
        by_plugin: dict[str, list[str]] = {}
        for n in lost:
            reason = n.get("firstFailure") or ("feasible, not scored" if n.get("feasible") else "?")
            by_plugin.setdefault(reason, []).append(n["name"])
        parts = []
        for plugin, names in sorted(by_plugin.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            if len(names) <= GROUP_NAMES or self.wide:
                parts.append(f"{', '.join(names)} ({plugin})")
            else:
                parts.append(f"{len(names)} nodes ({plugin})")
        return out + f" {self.sym.dot} filtered out: " + "; ".join(parts)

    def margin(self, first: dict, second: dict) -> str:
        """Why the winner won: its lead over the runner-up, plugin by plugin."""
        sym = self.sym
        a = {s["plugin"]: s["weighted"] for s in first["scores"]}
        b = {s["plugin"]: s["weighted"] for s in second["scores"]}
        diffs = [(p, a.get(p, 0) - b.get(p, 0)) for p in a]
        diffs = sorted((d for d in diffs if d[1]), key=lambda d: -d[1])
        lead = (first.get("totalScore") or 0) - (second.get("totalScore") or 0)
        parts = ", ".join(f"{p} {'+' if d > 0 else sym.minus}{abs(d)}" for p, d in diffs)
        return f"why {first['name']}: it leads {second['name']} by {lead}" + (f" ({parts})" if parts else "")

    # -- preemption ---------------------------------------------------------------
    def preemption(self, pod: dict) -> None:
        pre = pod.get("preemption")
        if not pre:
            return
        if not pre.get("nominatedNode"):
            # Preemption could not help: the message says why; -o wide adds
            # which nodes the dry runs tried and what each answered.
            if self.wide:
                self.preemption_dry_runs(pre)
            return
        sym = self.sym
        victims = pre.get("victims") or []
        self.add(Blank())
        text = f"preemption: nominated node {pre['nominatedNode']}, evicting {plural(len(victims), 'pod')}"
        if pre.get("pdbViolations"):
            text += f" ({plural(pre['pdbViolations'], 'PodDisruptionBudget violation')})"
        self.add(_line((text, WARN), indent=2))
        search = preemption_search_text(pre, None if self.wide else GROUP_NAMES, sym)
        if search:
            self.add(_line((search, WARN), indent=2))
        if victims:
            table = Table(["victim", "priority", "node"], align=["left", "right", "left"])
            for v in victims:
                table.rows.append([_cell(v.get("pod", "?")), _cell(str(v.get("priority", ""))),
                                   _cell(v.get("node") or pre["nominatedNode"])])
            self.add(table)
        if pre.get("message"):
            self.add(_line((f"{sym.dot} " + pre["message"], MUTED), indent=2))
        candidates = pre.get("candidates") or []
        if self.wide:
            self.preemption_candidates(pre, candidates)
        elif len(candidates) > 1:
            self.add(_line((f"{len(candidates)} candidate nodes: -o wide shows each and why "
                            f"{pre['nominatedNode']} was chosen", MUTED), indent=2))

    def preemption_candidates(self, pre: dict, candidates: list[dict]) -> None:
        """Every candidate node and the criterion on which it lost (the
        criteria in the order kube-scheduler applies them)."""
        sym = self.sym
        if candidates:
            self.add(Blank())
            self.add(_line(f"preemption candidates ({plural(len(candidates), 'node')}), compared in order on: "
                           "PDB violations, highest victim priority, sum of victim priorities, number of "
                           "victims, start time of the most important victims", indent=2))
            table = Table(["candidate", "result", "PDB violations", "highest priority", "priority sum", "victims",
                           "earliest start (top victims)"], align=["left", "left", "right", "right", "right", "left", "left"])
            for c in candidates:
                if c.get("selected"):
                    result = _cell((f"{sym.star} nominated", PASS))
                else:
                    result = _cell((f"lost: {c.get('lostOn') or '?'}", MUTED))
                table.rows.append([
                    _cell((c["node"], STRONG if c.get("selected") else None)), result,
                    _cell(str(c.get("pdbViolations", 0))), _cell(str(c.get("highestPriority", ""))),
                    _cell(str(c.get("prioritySum", ""))),
                    _cell(f"{c.get('numVictims', len(c.get('victims') or []))}: "
                          + ", ".join(c.get("victims") or [])),
                    _cell(c.get("earliestStartTime") or "-"),
                ])
            self.add(table)
        self.preemption_dry_runs(pre)

    def preemption_dry_runs(self, pre: dict) -> None:
        sampling = pre.get("sampling") or {}
        failures = pre.get("dryRunFailures") or []
        if not sampling and not failures:
            return
        if sampling:
            self.add(_line((f"dry runs: {sampling.get('evaluatedNodes', 0)} of "
                            f"{plural(sampling.get('potentialNodes', 0), 'node')} where removing pods may help "
                            f"(starting at offset {sampling.get('offset', 0)}, looking for "
                            f"{plural(sampling.get('numCandidates', 0), 'candidate')})", MUTED), indent=2))
        if failures:
            table = Table(["dry run", "no candidate because"], align=["left", "left"])
            for f in failures:
                table.rows.append([_cell(f.get("node", "?")),
                                   _cell((", ".join(f.get("reasons") or []) or f.get("code", ""), MUTED))])
            self.add(table)

    # -- --node -------------------------------------------------------------------
    def node_story(self, pod: dict, name: str) -> None:
        sym = self.sym
        node = next((n for n in pod.get("nodes") or () if n["name"] == name), None)
        self.add(Blank())
        if node is None:
            self.add(_line(f"node {name}: not evaluated for this pod", indent=2))
            return
        st = node.get("status") or {}
        if node.get("feasible"):
            verdict = (f"{sym.ok} feasible", PASS)
        else:
            reasons = ", ".join(st.get("reasons") or [])
            verdict = (f"{sym.fail} filtered out by {node.get('firstFailure') or st.get('plugin') or '?'}"
                       + (f": {reasons}" if reasons else ""), FAIL)
        self.add(_line("node ", (name, STRONG), ": ", verdict, indent=2))
        sampling = pod.get("sampling")
        if sampling and node.get("feasible"):
            k = sampling["numFeasibleNodesToFind"]
            if sampling["mode"] == "upstream" and node.get("scores") is None:
                text = (f"not scored: kube-scheduler's search (node sampling) kept {k} feasible nodes "
                        f"before reaching it")
            elif "upstreamCouldPick" in sampling:
                text = ("kube-scheduler's node sampling could pick it (it is the best of some "
                        f"{k} consecutive feasible nodes)" if name in sampling["upstreamCouldPick"] else
                        f"kube-scheduler's node sampling never picks it: every {k} consecutive feasible nodes "
                        "around it hold a better one")
            else:
                text = None
            if text:
                self.add(_line((text, WARN), indent=4))
        if node.get("preemption") is not None:
            self.add(_line((node_preemption_text(pod, node), WARN), indent=4))
        if self._reported_by_pre_filter(pod, node):
            pfr = pod["preFilterResult"]
            self.add(_line(f"not among the {plural(len(pfr.get('nodeNames') or []), 'candidate')} PreFilter "
                           f"({', '.join(pfr.get('plugins') or [])}) left; the Filter verdicts below were "
                           "evaluated for the explanation only", indent=4))

        below: list[tuple[str, list[str]]] = []  # (plugin, lines) too long for a cell

        def details_cell(plugin, details) -> Cell:
            lines = detail_lines(plugin, details)
            if len(lines) > INLINE_DETAIL_LINES:
                below.append((plugin, lines))
                return _cell(("(below)", MUTED))
            return _cell(("\n".join(lines), MUTED))

        filters = node.get("filters") or []
        if filters:
            table = Table(["Filter", "verdict", "details"], align=["left", "left", "left"])
            for f in filters:
                reported = node.get("firstFailure") == f["plugin"] and not self._reported_by_pre_filter(pod, node)
                cell = self.verdict_cell(f, reported)
                if f["code"] not in ("Success", "Skip"):
                    cell = cell + [Span(f"  [{f['code']}]", MUTED)]
                table.rows.append([_cell(f["plugin"]), cell, details_cell(f["plugin"], f.get("details"))])
            self.add(Blank())
            self.add(table)
        elif st:
            self.add(_line(f"no Filter plugin ran: PreFilter {st.get('plugin') or ''} rejected the pod", indent=4))

        scores = node.get("scores")
        if scores is not None:
            self.score_story(pod, node, scores, details_cell)
        for plugin, lines in below:
            self.add(Blank())
            self.add(_line((f"{plugin} details", STRONG), indent=2))
            for line in lines:
                self.add(_line((line, MUTED), indent=4))
        self.preemption_alternatives(pod, name)

    def preemption_alternatives(self, pod: dict, name: str | None = None) -> None:
        """The outcomes kube-scheduler's preemption could reach, most likely
        first, with the share of examination orders that reach each."""
        pre = pod.get("preemption") or {}
        alts = pre.get("alternatives")
        if not alts:
            return
        sym = self.sym
        search = pre["search"]
        self.add(Blank())
        head = f"preemption outcomes ({search['outcomes']} possible"
        head += f", the {len(alts)} most likely shown)" if len(alts) < search["outcomes"] else ")"
        self.add(_line((head, STRONG), (" and the share of examination orders that reach each", MUTED), indent=2))
        table = Table(["nominated node", "victims", "PDB violations", "share", ""],
                      align=["left", "left", "right", "right", "left"])
        for a in alts:
            mark = f"{sym.star} chosen by kschedx" if a.get("chosen") else ""
            if a["nominatedNode"] == name:
                mark = (mark + ", " if mark else "") + "this node"
            victims = a.get("victims") or []
            table.rows.append([_cell((a["nominatedNode"], STRONG if a.get("chosen") else None)),
                               _cell(f"{len(victims)}: " + _names((v["pod"] for v in victims),
                                                                 None if self.wide else GROUP_NAMES, sym)),
                               _cell(str(a.get("pdbViolations", 0))), _cell(share_text(a.get("share", 0))),
                               _cell((mark, PASS if a.get("chosen") else MUTED))])
        self.add(table)

    def score_story(self, pod: dict, node: dict, scores: list[dict], details_cell) -> None:
        sym = self.sym
        name = node["name"]
        table = Table(["Score", "raw", sym.arrow + " normalized", sym.times + " weight", "= weighted", "details"],
                      align=["left", "right", "right", "right", "right", "left"])
        for s in scores:
            if s.get("skipped"):
                table.rows.append([_cell(s["plugin"]), _cell(("skip", MUTED)), _cell(""),
                                   _cell(f"{sym.times}{s['weight']}"), _cell("0"),
                                   _cell(("PreScore returned Skip", MUTED))])
                continue
            table.rows.append([_cell(s["plugin"]), _cell(str(s["raw"])), _cell(str(s["normalized"])),
                               _cell(f"{sym.times}{s['weight']}"), _cell(str(s["weighted"])),
                               details_cell(s["plugin"], s.get("details"))])
        scored = sorted((n for n in pod.get("nodes") or () if n.get("scores") is not None),
                        key=lambda n: (-(n.get("totalScore") or 0), n["name"]))
        rank = next(i for i, n in enumerate(scored, 1) if n["name"] == name)
        mark = ""
        if pod.get("selectedNode") == name:
            mark = f" {sym.star} selected"
        elif name in (pod.get("topNodes") or ()):
            mark = f" {sym.tie} tied for the top score"
        table.rows.append([_cell(("total", STRONG)), _cell(""), _cell(""), _cell(""),
                           _cell((str(node.get("totalScore")), STRONG)),
                           _cell(f"rank {rank} of {len(scored)}{mark}")])
        self.add(Blank())
        self.add(table)

    # -- several pods -------------------------------------------------------------
    def count(self, pod: dict) -> None:
        key = pod["status"]
        if key == "Unschedulable" and (pod.get("preemption") or {}).get("nominatedNode"):
            key = "Unschedulable (preemption nominated a node)"
        self.counts[key] = self.counts.get(key, 0) + 1

    def summary(self) -> None:
        counts = self.counts
        order = ["Scheduled", "Unschedulable (preemption nominated a node)", "Unschedulable", "Gated", "Error",
                 "NoProfile"]
        parts = [f"{counts[k]} {k.lower()}" for k in order if k in counts]
        parts += [f"{v} {k.lower()}" for k, v in counts.items() if k not in order]
        self.add(_line((f"{plural(self.pods, 'pod')}: " + ", ".join(parts), STRONG)))


def _yaml(obj) -> str:
    import yaml

    return yaml.safe_dump(obj, sort_keys=False, allow_unicode=True)


def _distinct_verdicts(nodes: list[dict]) -> list[dict]:
    """Every node's Filter verdicts in node order, each verdict object once:
    node dicts built by the runner share equal verdicts and equal `filters`
    lists (result/node_dicts.py), so 5,000 nodes are read as a few."""
    lists: dict = {}
    for n in nodes:
        fl = n.get("filters")
        if fl:
            lists[id(fl)] = fl
    verdicts: dict = {}
    for fl in lists.values():
        for f in fl:
            verdicts[id(f)] = f
    return list(verdicts.values())


def _ordered(items) -> list:
    seen = {}
    for it in items:
        seen.setdefault(it, None)
    return list(seen)


def build(doc: dict, *, wide: bool = False, node: str | None = None, sym: Symbols = UNICODE) -> list:
    return Report(doc, wide=wide, node=node, sym=sym).build()
