"""The report's preemption sections: the outcome, the candidates, the dry
runs that failed, and the other outcomes kube-scheduler's search could
reach."""

from __future__ import annotations

from .blocks import GROUP_NAMES, MUTED, PASS, STRONG, WARN, Blank, Table, cell_of, line_of, names_text, plural
from .texts import preemption_search_text, share_text


class PreemptionSections:
    """Report's preemption sections (a mixin of render/layout.py's Report)."""

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
        self.add(line_of((text, WARN), indent=2))
        search = preemption_search_text(pre, None if self.wide else GROUP_NAMES, sym)
        if search:
            self.add(line_of((search, WARN), indent=2))
        if victims:
            table = Table(["victim", "priority", "node"], align=["left", "right", "left"])
            for v in victims:
                table.rows.append([cell_of(v.get("pod", "?")), cell_of(str(v.get("priority", ""))),
                                   cell_of(v.get("node") or pre["nominatedNode"])])
            self.add(table)
        if pre.get("message"):
            self.add(line_of((f"{sym.dot} " + pre["message"], MUTED), indent=2))
        candidates = pre.get("candidates") or []
        if self.wide:
            self.preemption_candidates(pre, candidates)
        elif len(candidates) > 1:
            self.add(line_of((f"{len(candidates)} candidate nodes: -o wide shows each and why "
                            f"{pre['nominatedNode']} was chosen", MUTED), indent=2))

    def preemption_candidates(self, pre: dict, candidates: list[dict]) -> None:
        """Every candidate node and the criterion on which it lost (the
        criteria in the order kube-scheduler applies them)."""
        sym = self.sym
        if candidates:
            self.add(Blank())
            self.add(line_of(f"preemption candidates ({plural(len(candidates), 'node')}), compared in order on: "
                           "PDB violations, highest victim priority, sum of victim priorities, number of "
                           "victims, start time of the most important victims", indent=2))
            table = Table(["candidate", "result", "PDB violations", "highest priority", "priority sum", "victims",
                           "earliest start (top victims)"], align=["left", "left", "right", "right", "right", "left", "left"])
            for c in candidates:
                if c.get("selected"):
                    result = cell_of((f"{sym.star} nominated", PASS))
                else:
                    result = cell_of((f"lost: {c.get('lostOn') or '?'}", MUTED))
                table.rows.append([
                    cell_of((c["node"], STRONG if c.get("selected") else None)), result,
                    cell_of(str(c.get("pdbViolations", 0))), cell_of(str(c.get("highestPriority", ""))),
                    cell_of(str(c.get("prioritySum", ""))),
                    cell_of(f"{c.get('numVictims', len(c.get('victims') or []))}: "
                          + ", ".join(c.get("victims") or [])),
                    cell_of(c.get("earliestStartTime") or "-"),
                ])
            self.add(table)
        self.preemption_dry_runs(pre)

    def preemption_dry_runs(self, pre: dict) -> None:
        sampling = pre.get("sampling") or {}
        failures = pre.get("dryRunFailures") or []
        if not sampling and not failures:
            return
        if sampling:
            self.add(line_of((f"dry runs: {sampling.get('evaluatedNodes', 0)} of "
                            f"{plural(sampling.get('potentialNodes', 0), 'node')} where removing pods may help "
                            f"(starting at offset {sampling.get('offset', 0)}, looking for "
                            f"{plural(sampling.get('numCandidates', 0), 'candidate')})", MUTED), indent=2))
        if failures:
            table = Table(["dry run", "no candidate because"], align=["left", "left"])
            for f in failures:
                table.rows.append([cell_of(f.get("node", "?")),
                                   cell_of((", ".join(f.get("reasons") or []) or f.get("code", ""), MUTED))])
            self.add(table)

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
        self.add(line_of((head, STRONG), (" and the share of examination orders that reach each", MUTED), indent=2))
        table = Table(["nominated node", "victims", "PDB violations", "share", ""],
                      align=["left", "left", "right", "right", "left"])
        for a in alts:
            mark = f"{sym.star} chosen by kschedx" if a.get("chosen") else ""
            if a["nominatedNode"] == name:
                mark = (mark + ", " if mark else "") + "this node"
            victims = a.get("victims") or []
            table.rows.append([cell_of((a["nominatedNode"], STRONG if a.get("chosen") else None)),
                               cell_of(f"{len(victims)}: " + names_text((v["pod"] for v in victims),
                                                                 None if self.wide else GROUP_NAMES, sym)),
                               cell_of(str(a.get("pdbViolations", 0))), cell_of(share_text(a.get("share", 0))),
                               cell_of((mark, PASS if a.get("chosen") else MUTED))])
        self.add(table)

