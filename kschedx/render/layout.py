"""The human report of a SchedulingResult, as blocks both renderers draw.

Built from the document alone (the dict `-o json` prints), so it serves every
mode and plugins added later: verdicts and reasons are shown as they are,
and `details` in the words of the form their plugin declares
(render/details.py), generically for any other plugin.

The report answers, in order: where does the pod go (or why nowhere)? which
nodes lost, and to which plugin? why did the winner win? Styles name a
meaning (pass, fail, later, ...), never a colour; every distinction a style
makes is also made by a symbol or by the words, so the plain renderer
(no colour) says the same thing.

The blocks and symbols are render/blocks.py's; the sections of a pod's
report are mixins in render/report_filters.py, report_scores.py,
report_preemption.py and report_node.py.
"""

from __future__ import annotations

from ..result.document import scheduler_text
from ..result.node_view import NodeView
from .blocks import (FAIL, GROUP_NAMES, MUTED, PASS, STRONG, UNICODE, WARN, Blank, Symbols, line_of, names_text,
                     plural)
from .details import details_text
from .report_filters import FilterSections
from .report_node import NodeStory
from .report_preemption import PreemptionSections
from .report_scores import ScoreSections
from .texts import pre_filter_result_text, sampling_text


# -- the report ---------------------------------------------------------------
# A pod's own fields, which only its header line shows.
_HEADER_ONLY = frozenset({"pod", "uid", "source", "nodes"})


def _body_key(pod: dict) -> str | None:
    """What a pod's body is drawn from besides its `nodes` list (compared by
    identity): every other field but the header's own. None when the body
    is not worth keeping (a small node list is quick to draw again)."""
    nodes = pod.get("nodes")
    if not isinstance(nodes, (list, NodeView)) or len(nodes) < 64:
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


class Report(FilterSections, ScoreSections, PreemptionSections, NodeStory):
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
        # A workload being shown (explain judges its replicas one after another):
        # its tally, and the run of replicas with the same answer folded into one line.
        self._workload: dict | None = None
        self._run: dict | None = None
        self.workloads: list[dict] = []  # each workload's tally, for the summary

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
            self.add(line_of((scheduler_text(doc), MUTED)))
            self.add(Blank())
        if doc.get("notEvaluated"):
            missing = ", ".join(doc["notEvaluated"])
            self.add(line_of((f"{self.sym.warn} incomplete: kschedx cannot evaluate yet: {missing}.", WARN)))
            self.add(line_of(("  Verdicts that depend on these plugins may differ from kube-scheduler.", WARN)))
            self.add(Blank())

    def next_pod(self, pod: dict) -> None:
        w = pod.get("workload")
        if w is None:
            self._end_workload()
        elif self._workload is None or w["replica"] == 1 or self._workload["key"] != _workload_key(w):
            self._end_workload()
            self._begin_workload(pod)
        elif not self.wide and self._run is not None and self._run["answer"] == _answer(pod):
            # The same answer as the replica before: one line for the run (below).
            self.pods += 1
            self.count(pod)
            self._tally(pod)
            # Only what the run's line shows: a whole document per replica would
            # keep every node's verdicts until the run ends.
            self._run["pods"].append({"placedNode": pod.get("placedNode"), "status": pod["status"],
                                      "workload": pod["workload"]})
            return
        self._fold()
        if self.pods and not (w is not None and w["replica"] == 1 and self._run is None):
            self.add(Blank())
        self.pods += 1
        self.count(pod)
        self.pod(pod)
        if w is not None:
            self._tally(pod)
            self._run = {"answer": _answer(pod), "first": w["replica"], "pods": []}

    def end(self) -> None:
        self._end_workload()
        if not self.pods:
            # why (no pending pod, a selection that took none) is among the run's warnings
            self.add(line_of("No pods to evaluate."))
        if self.pods > 1:
            self.add(Blank())
            self.summary()

    # -- a workload's replicas ------------------------------------------------------------------
    def _begin_workload(self, pod: dict) -> None:
        w = pod["workload"]
        if self.pods or self.workloads:
            self.add(Blank())
        self.add(line_of((f"{w['kind']} {w['namespace']}/{w['name']}", STRONG),
                         (f": {plural(w['replicas'], 'replica')}, placed one after another as its controller "
                          "creates them, each with the ones before it in place", MUTED)))
        self.add(Blank())
        self._workload = {"key": _workload_key(w), "kind": w["kind"], "name": f"{w['namespace']}/{w['name']}",
                          "replicas": w["replicas"], "seen": 0, "placed": 0, "byPreemption": 0, "nodes": {},
                          "first": None}
        self._run = None

    def _tally(self, pod: dict) -> None:
        t = self._workload
        t["seen"] += 1
        node = pod.get("placedNode")
        if node:
            t["placed"] += 1
            t["nodes"][node] = None
            t["byPreemption"] += pod["status"] != "Scheduled"
        elif t["first"] is None:
            t["first"] = (pod["workload"]["replica"], pod["pod"])

    def _fold(self) -> None:
        """The replicas after a run's first, which got its answer: one line."""
        run, self._run = self._run, None
        if not run or not run["pods"]:
            return
        sym = self.sym
        pods = run["pods"]
        first, last = pods[0]["workload"]["replica"], pods[-1]["workload"]["replica"]
        which = f"replica {first}" if first == last else f"replicas {first}-{last}"
        p = pods[0]
        self.add(Blank())
        if p.get("placedNode"):
            nodes = names_text([q["placedNode"] for q in pods], None if self.wide else GROUP_NAMES * 2, sym)
            verdict = (f"{sym.ok} Scheduled {sym.arrow} {nodes}" if p["status"] == "Scheduled" else
                       f"{sym.fail} placed by preemption {sym.arrow} {nodes}", PASS if p["status"] == "Scheduled"
                       else WARN)
            self.add(line_of((which, STRONG), "  ", verdict,
                             (f"   each with the replicas before it in place", MUTED), indent=2))
        else:
            self.add(line_of((which, STRONG), "  ", (f"{sym.fail} {p['status']}", FAIL),
                             (f"   the same answer as replica {run['first']}", MUTED), indent=2))

    def _end_workload(self) -> None:
        t = self._workload
        if t is None:
            return
        self._fold()
        self._workload = None
        self.workloads.append(t)
        sym = self.sym
        self.add(Blank())
        what = (t["kind"] + " " + t["name"], STRONG)
        # (The summary of a workload, after its replicas.)
        if t["placed"] == t["replicas"]:
            more = f", {t['byPreemption']} by preempting" if t["byPreemption"] else ""
            self.add(line_of(what, ": ", (f"{sym.ok} all {plural(t['replicas'], 'replica')} placed", PASS),
                             f", on {plural(len(t['nodes']), 'node')}{more}"))
        else:
            replica, name = t["first"] or (None, None)
            self.add(line_of(what, ": ", (f"{sym.fail} {t['placed']} of {plural(t['replicas'], 'replica')} placed",
                                          FAIL),
                             f"; the first not placed: replica {replica} ({name})" if replica else ""))

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
        self.templates(pod)
        if self.node is not None:
            self.node_story(pod, self.node)
            return
        self.pre_filter(pod)
        self.filters(pod)
        self.scores(pod)
        if pod.get("sampling") and pod["status"] == "Scheduled":
            self.add(line_of((sampling_text(pod, None if self.wide else GROUP_NAMES, self.sym), WARN), indent=2))
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
            self.add(line_of((f"fixes: none found: no change kschedx tried makes the pod schedulable "
                            f"({words.search_words(pod)})", WARN), indent=2))
        else:
            self.add(line_of(("fixes", STRONG), (f" ({words.checked_words(pod)}; "
                                               f"least widening first; {words.search_words(pod)}):", MUTED),
                           indent=2))
        for i, fix in enumerate(fixes, 1):
            self.add(line_of(f"{i}. ", (f"[{fix['kind']}] ", STRONG), fix["description"], indent=2))
            if "widens" in fix:
                self.add(line_of((words.widens_text(fix), WARN if fix["widens"] else MUTED), indent=5))
            for change in fix.get("changes") or ():
                self.add(line_of((words.change_line(change, self.sym.ellipsis), MUTED), indent=5))
                command = words.kubectl_command(change)
                if command is not None:
                    self.add(line_of(("$ " + command, MUTED), indent=7))
                if self.wide and change["action"] == "create" and not change.get("by"):
                    self.add(line_of(("$ kubectl create -f - <<'EOF'", MUTED), indent=7))
                    for text in _yaml(change["patch"][0]["value"]).splitlines():
                        self.add(line_of((text, MUTED), indent=9))
                    self.add(line_of(("EOF", MUTED), indent=9))
            owner = fix.get("owner")
            if owner:
                self.add(line_of((words.owner_line(owner), MUTED), indent=5))
                command = words.owner_command(owner) if owner.get("checked") else None
                if command is not None:
                    self.add(line_of(("$ " + command, MUTED), indent=7))
        for text in words.uncovered_lines(pod) + words.advice_lines(pod):
            self.add(line_of((text, WARN if not fixes else MUTED), indent=2))

    def templates(self, pod: dict) -> None:
        """explain --node-template: which node pools could take the pod, and
        each one's verdict on its new node."""
        t = pod.get("templates")
        if not t:
            return
        sym = self.sym
        self.add(Blank())
        self.add(line_of(("node templates", STRONG),
                         (" (one new node of each, the pod's cycle run again with it):", MUTED), indent=2))
        width = max(len(r["template"]) for r in t["results"])
        for r in t["results"]:
            name = r["template"].ljust(width)
            if r.get("feasible"):
                where = r.get("selectedNode") or r.get("nodeName")
                self.add(line_of(name + "  ", (f"{sym.ok} could take it", PASS),
                                 (f" ({sym.arrow} {where})", MUTED), indent=4))
            else:
                reasons = "; ".join(r.get("reasons") or ()) or r.get("code") or ""
                also = f"  (also {', '.join(r['alsoFailing'])})" if r.get("alsoFailing") else ""
                self.add(line_of(name + "  ", (f"{sym.fail} {r.get('plugin')}: {reasons}", FAIL), (also, MUTED),
                                 indent=4))

    def header(self, pod: dict) -> None:
        sym = self.sym
        context = [f"priority {pod.get('priority', 0)}"]
        w = pod.get("workload")
        if w is not None:
            context.insert(0, f"replica {w['replica']} of {w['replicas']}")
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
        elif pre.get("nominatedNode") and pod.get("placedNode"):
            verdict = (f"{sym.fail} Unschedulable now {sym.dot} placed on {pod['placedNode']} by preemption", WARN)
        elif pre.get("nominatedNode"):
            verdict = (f"{sym.fail} Unschedulable now {sym.dot} preemption nominates {pre['nominatedNode']}", WARN)
        else:
            verdict = (f"{sym.fail} {status}", FAIL)
        self.add(line_of((pod["pod"], STRONG), "  ", verdict, ("   " + f" {sym.dot} ".join(context), MUTED)))

    def outcome(self, pod: dict) -> None:
        status = pod["status"]
        if pod.get("message"):
            self.add(line_of(pod["message"], indent=2))
        if status == "Gated" and pod.get("gate"):
            gate = pod["gate"]
            self.add(line_of((f"held before scheduling by {gate['plugin']} (PreEnqueue): the scheduler does not "
                            "consider the pod until its gates are removed", MUTED), indent=2))
        if status == "Error":
            self.add(line_of(("the scheduling cycle stopped with an error: kube-scheduler would retry the pod later", MUTED),
                           indent=2))

    def pre_filter(self, pod: dict) -> None:
        sym = self.sym
        for st in pod.get("preFilter") or ():
            if st["code"] in ("Success", "Skip"):
                continue
            self.add(line_of(f"PreFilter {st['plugin']}: ", (f"{sym.fail} {st['code']}", FAIL),
                           (": " + ", ".join(st["reasons"])) if st["reasons"] else "", indent=2))
            if st.get("details"):
                self.add(line_of((details_text(st["details"]).replace("\n", "; "), MUTED), indent=4))
        narrowed = pre_filter_result_text(pod, None if self.wide else GROUP_NAMES * 2, sym)
        if narrowed is not None:
            self.add(line_of(narrowed, indent=2))

    # -- filters ----------------------------------------------------------------
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
        self.add(line_of((f"{plural(self.pods, 'pod')}: " + ", ".join(parts), STRONG)))
        if self.workloads:
            short = [t for t in self.workloads if t["placed"] < t["replicas"]]
            text = f"{plural(len(self.workloads), 'workload')}: {len(self.workloads) - len(short)} with every " \
                   "replica placed"
            if short:
                text += ", " + ", ".join(f"{t['kind']} {t['name']} {t['placed']} of {t['replicas']}" for t in short)
            self.add(line_of((text, STRONG)))


def _workload_key(w: dict) -> tuple:
    return (w["kind"], w["namespace"], w["name"])


def _answer(pod: dict) -> tuple:
    """What makes two replicas' results the same answer: placed with the
    same status, or not placed with the same status and message."""
    if pod.get("placedNode"):
        return ("placed", pod["status"])
    return ("unplaced", pod["status"], pod.get("message"))


def _yaml(obj) -> str:
    import yaml

    return yaml.safe_dump(obj, sort_keys=False, allow_unicode=True)



def build(doc: dict, *, wide: bool = False, node: str | None = None, sym: Symbols = UNICODE) -> list:
    return Report(doc, wide=wide, node=node, sym=sym).build()
