"""The report's Filter sections: which plugins rejected how many nodes, the
verdicts per node (a matrix for a few nodes, groups for many)."""

from __future__ import annotations

from ..result.node_view import NodeView
from .blocks import FAIL, GROUP_NAMES, LATER, MUTED, PASS, STRONG, Blank, Cell, Table, cell_of, line_of, names_text, plural

# More nodes than this and the filter matrix becomes a grouped list.
MATRIX_MAX_NODES = 8


class FilterSections:
    """Report's Filter sections (a mixin of render/layout.py's Report)."""

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
        self.add(line_of(f"{plural(total, 'node')} {sym.dot} feasible: {counts.get('feasible', 0)} {sym.dot} "
                       f"shown below: {len(nodes)}" + (f" (--nodes {detail})" if detail else ""), indent=2))
        summary = pod.get("filterSummary") or {}
        if not summary:
            return
        table = Table(["nodes", "failing Filter", "reason"], align=["right", "left", "left"])
        for plugin, reasons in summary.items():
            for reason, n in reasons.items():
                table.rows.append([cell_of(str(n)), cell_of(plugin), cell_of((f"{sym.fail} {reason}", FAIL))])
        self.add(table)
        self.add(line_of((f"{summary_scope(pod)}; -o json: filterSummary", MUTED), indent=2))

    def filters(self, pod: dict) -> None:
        nodes = pod.get("nodes") or []
        part = self.shown_part(pod)
        if part:
            self.filter_summary(pod)
        if not nodes:
            return
        sym = self.sym
        codes = _filter_codes(nodes)
        if not codes:
            # Rejected at PreFilter: no Filter plugin ran on any node.
            st = nodes[0].get("status") or {}
            self.add(line_of(f"no Filter plugin ran: PreFilter {st.get('plugin') or ''} rejected the pod for all "
                           f"{plural(len(nodes), 'node')}", indent=2))
            return
        plugins = list(codes)
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
                self.add(line_of((f"({plural(len(passing), 'more plugin')}: {sym.ok} on {every}: "
                                f"{', '.join(passing)})", MUTED), indent=2))
            else:
                self.add(line_of((f"{sym.ok} {every} passes all {plural(len(passing), 'Filter plugin')}: "
                                f"{', '.join(passing)}", PASS), indent=2))
        if skipped:
            self.add(line_of((f"skipped for this pod (PreFilter returned Skip, nothing to check): {', '.join(skipped)}",
                            MUTED), indent=2))
        if pod.get("status") != "Scheduled" and len(nodes) <= MATRIX_MAX_NODES \
                and any(f.get("details") for n in nodes for f in n.get("filters") or ()):
            # The grouped list says the same; a matrix does not.
            self.add(line_of(("--node NAME shows why in numbers: free resources, pods per topology domain, "
                            "devices, volumes", MUTED), indent=2))

    def _reported_by_pre_filter(self, pod: dict, node: dict) -> bool:
        return left_out_by_pre_filter(pod, node)

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
            row = [cell_of((n["name"], STRONG if n["name"] == pod.get("selectedNode") else None))]
            if pfr is not None:
                if self._reported_by_pre_filter(pod, n):
                    row.append(cell_of((f"{sym.fail} not a candidate", FAIL)))
                elif n["name"] not in (pfr.get("nodeNames") or ()):
                    # The nominated node: kube-scheduler filters it before the candidates narrow.
                    row.append(cell_of(("nominated, filtered first", MUTED)))
                else:
                    row.append(cell_of((sym.ok, PASS)))
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
        self.add(line_of((legend, MUTED), indent=2))

    def verdict_cell(self, f: dict | None, reported: bool) -> Cell:
        sym = self.sym
        if f is None:
            return cell_of(("", None))
        code = f["code"]
        if code == "Success":
            return cell_of((sym.ok, PASS))
        if code == "Skip":
            return cell_of(("skip", MUTED))
        text = f"{sym.fail} " + (", ".join(f["reasons"]) or code)
        if reported:
            return cell_of((text, FAIL))
        return cell_of((f"({text})", LATER))

    def grouped(self, pod: dict, nodes: list[dict]) -> None:
        """Wide clusters: nodes grouped by the failure kube-scheduler reports."""
        sym = self.sym
        known = nodes.failure_groups() if isinstance(nodes, NodeView) else None
        groups, feasible = known if known is not None else _failure_groups(nodes)
        limit = None if self.wide else GROUP_NAMES
        table = Table(["nodes", "filtered out by", "reason", "node names"], align=["right", "left", "left", "left"])
        for (plugin, reason), names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            table.rows.append([cell_of(str(len(names))), cell_of(plugin), cell_of((f"{sym.fail} {reason}", FAIL)),
                               cell_of((names_text(names, limit, sym), MUTED))])
        if feasible:
            table.rows.append([cell_of(str(len(feasible))), cell_of(""), cell_of((f"{sym.ok} feasible", PASS)),
                               cell_of(names_text(feasible, limit, sym))])
        self.add(line_of(f"Filter: {plural(len(nodes), 'node')}, grouped by the failure kube-scheduler reports",
                       indent=2))
        self.add(table)
        if not self.wide and (any(len(v) > GROUP_NAMES for v in groups.values()) or len(feasible) > GROUP_NAMES):
            self.add(line_of(("-o wide names every node; --node NAME shows one node's whole story", MUTED), indent=2))


def summary_scope(pod: dict) -> str:
    """What filterSummary counts, in words: with a PreFilterResult, only
    its candidates' failures (kube-scheduler runs no Filter plugin on the
    nodes it left out)."""
    if pod.get("preFilterResult") is None:
        return "every Filter failure on every node (a node fails one or more)"
    return ("every Filter failure on the candidate nodes PreFilter left (a node fails one or more; "
            "the others ran no Filter plugin)")


def left_out_by_pre_filter(pod: dict, node: dict) -> bool:
    """Whether the failure reported for the node is the PreFilterResult's:
    not one of its candidates, and a status no Filter plugin gave (a
    nominated node, filtered before the candidates narrow, has its own)."""
    pfr = pod.get("preFilterResult")
    if pfr is None or node.get("feasible") or node["name"] in (pfr.get("nodeNames") or ()):
        return False
    return not (node.get("status") or {}).get("plugin")


def reported_failure(node: dict) -> tuple[str, list[str], str]:
    """(plugin, reasons, code) of the failure kube-scheduler reports for an
    infeasible node: its status, which for a node the PreFilterResult left
    out is that one's (`node(s) didn't satisfy plugin(s) [...]`), not any
    Filter verdict's; the first failing verdict only when no status says."""
    st = node.get("status") or {}
    plugin = node.get("firstFailure") or st.get("plugin") or "?"
    reasons, code = st.get("reasons"), st.get("code")
    if reasons is None:
        f = next((f for f in node.get("filters") or () if f["plugin"] == plugin), None)
        reasons = f["reasons"] if f else []
        code = f["code"] if f else code
    return plugin, reasons, code or "?"


def _failure_groups(nodes: list[dict]) -> tuple[dict, list]:
    """({(plugin, reasons joined): names}, feasible names), in node order."""
    groups: dict[tuple, list[str]] = {}
    feasible: list[str] = []
    for n in nodes:
        if n.get("feasible"):
            feasible.append(n["name"])
            continue
        plugin, reasons, _ = reported_failure(n)
        groups.setdefault((plugin, ", ".join(reasons)), []).append(n["name"])
    return groups, feasible


def _filter_codes(nodes) -> dict:
    """Filter plugin -> the codes of its verdicts on `nodes`, plugins in
    order of first appearance; {} when no node has a verdict."""
    if isinstance(nodes, NodeView):
        codes = nodes.filter_codes()
        if codes is not None:
            return codes
    codes: dict = {}
    for f in _distinct_verdicts(nodes):
        codes.setdefault(f["plugin"], set()).add(f["code"])
    return codes


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
