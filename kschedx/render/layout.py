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
from .blocks import (FAIL, GROUP_NAMES, MUTED, PASS, STRONG, UNICODE, WARN, Blank, Symbols, line_of, names_text,
                     plural)
from .details import details_text
from .report_filters import FilterSections
from .report_node import NodeStory
from .report_preemption import PreemptionSections
from .report_scores import ScoreSections
from .texts import sampling_text


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
        if self.pods:
            self.add(Blank())
        self.pods += 1
        self.count(pod)
        self.pod(pod)

    def end(self) -> None:
        if not self.pods:
            # why (no pending pod, a selection that took none) is among the run's warnings
            self.add(line_of("No pods to evaluate."))
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
            self.add(line_of(("fixes", STRONG), (f" (each checked by running the scheduling cycle again with it; "
                                               f"smallest change first; {words.search_words(pod)}):", MUTED),
                           indent=2))
        for i, fix in enumerate(fixes, 1):
            self.add(line_of(f"{i}. ", (f"[{fix['kind']}] ", STRONG), fix["description"], indent=2))
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
        pfr = pod.get("preFilterResult")
        if pfr is not None:
            names = pfr.get("nodeNames") or []
            who = ", ".join(pfr.get("plugins") or []) or "PreFilter"
            limit = None if self.wide else GROUP_NAMES * 2
            self.add(line_of(f"PreFilter ({who}) narrowed the candidates to {plural(len(names), 'node')}"
                           + (f": {names_text(names, limit, sym)}" if names else ""), indent=2))

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


def _yaml(obj) -> str:
    import yaml

    return yaml.safe_dump(obj, sort_keys=False, allow_unicode=True)



def build(doc: dict, *, wide: bool = False, node: str | None = None, sym: Symbols = UNICODE) -> list:
    return Report(doc, wide=wide, node=node, sym=sym).build()
