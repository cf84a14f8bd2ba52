"""Where a SchedulingResult goes while it is being computed.

`explain` and `simulate` hand each pod's result to a sink as soon as it is
final, then drop it, so memory does not grow with the number of pods. A sink
sees the document in three pieces, in document order (result-schema.md):

- begin(head): every key before `pods` (apiVersion ... notEvaluated);
- pod(pod): one element of `pods`, in evaluation order;
- end(tail): every key after `pods` (warnings, and simulate's detail,
  summary, utilization, inputNotes), known only once every pod is done.

head, the pods in order, then tail is exactly the document `-o json` prints.
A run that goes on (explain --watch) also tells event(event): something
that is not a pod's result (a pod explained again and why, a pod gone, the
cluster lost), before the pod it is about when there is one.
Every output format is a sink (render/: human, json, yaml, jsonl, ...); a new
format is one more class with these three methods.
"""

from __future__ import annotations


class ResultSink:
    """Receives a SchedulingResult piece by piece (see the module doc)."""

    # A function the run may apply to a pod's `nodes` list before pod(),
    # where the pod is computed (a worker process of explain --jobs): pod()
    # then receives what it returned in place of the list. None: the list.
    nodes_encoder = None
    # A function the run may give a pod's node records (NodeResults) in
    # place of building their dicts (result.node_dict): pod() then receives
    # what it returned as `nodes`. None: the dicts.
    node_records_encoder = None
    # The same, for explain's pods of every node only: what pod() receives
    # as `nodes` must read as the list of dicts (a Sequence of them), as
    # result/node_view.py's NodeView does for the human report.
    node_records_view = None
    # Whether pod() reads the explanations of the plugins' scores (`details`
    # in each node's `scores`): a report that shows none of them spares the
    # run asking every node for them (PodResult.settle).
    reads_score_details = True

    def begin(self, head: dict) -> None:
        pass

    def pod(self, pod: dict) -> None:
        pass

    def event(self, event: dict) -> None:
        pass

    def end(self, tail: dict) -> None:
        pass


class DocumentSink(ResultSink):
    """Keeps the whole document (tests, `bind`, small runs)."""

    def __init__(self):
        self.doc: dict = {}

    def begin(self, head: dict) -> None:
        self.doc = dict(head, pods=[])

    def pod(self, pod: dict) -> None:
        self.doc["pods"].append(pod)

    def end(self, tail: dict) -> None:
        self.doc.update(tail)


class Tee(ResultSink):
    """The same result to several sinks (stdout and an HTML report)."""

    def __init__(self, *sinks: ResultSink):
        self.sinks = sinks

    def begin(self, head: dict) -> None:
        for s in self.sinks:
            s.begin(head)

    def pod(self, pod: dict) -> None:
        for s in self.sinks:
            s.pod(pod)

    def event(self, event: dict) -> None:
        for s in self.sinks:
            s.event(event)

    def end(self, tail: dict) -> None:
        for s in self.sinks:
            s.end(tail)
