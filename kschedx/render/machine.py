"""-o json / -o yaml / -o jsonl: the result document, nothing else on stdout.

The sinks write the document while it is computed, one pod at a time, and
keep nothing: -o json and -o yaml give, byte for byte (YAML: value for
value), what dumping the whole document at once gives (to_json, to_yaml).
`out` is a text writer: write(str), flush().
"""

from __future__ import annotations

import json

from ..result import Tally
from ..sink import ResultSink


def to_json(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def to_yaml(doc: dict) -> str:
    return _yaml_dump(doc)


def _yaml_dump(value) -> str:
    return _yaml().dump(value, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=1000)


def _yaml():
    import yaml

    return yaml


_DUMPER = None


def _dumper():
    """PyYAML's (C) safe dumper, writing an object met twice in full rather
    than as an alias: each pod is dumped on its own, and anchors numbered
    per dump would collide in the one document they form."""
    global _DUMPER
    if _DUMPER is None:
        yaml = _yaml()

        class NoAliasDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
            def ignore_aliases(self, data):
                return True

        _DUMPER = NoAliasDumper
    return _DUMPER


# Pods that take an earlier identical pod's result (kschedx/reuse.py) share
# its `nodes` list, the bulk of a pod's text on a large cluster: the sink
# keeps the last one's text (and the list, so that its identity holds), and
# encodes it once for all the pods of a group (queue order keeps them together).
KEPT_TEXTS = 1


class JsonSink(ResultSink):
    """One JSON document, indented as to_json indents it, written as it grows."""

    def __init__(self, out):
        self.out = out
        self.pods = 0
        self.texts: dict[int, tuple] = {}  # id(nodes list) -> (the list, its text at member depth)

    def begin(self, head: dict) -> None:
        text = json.dumps(head, indent=2, ensure_ascii=False)
        # '{ ...head keys...\n}' -> '{ ...head keys...,\n  "pods": ['
        self.out.write(text[:-2] + ',\n  "pods": [')
        self.out.flush()

    def pod(self, pod: dict) -> None:
        # What json.dumps(pod, indent=2) gives, member by member, the shared
        # `nodes` text taken from the kept ones.
        members = []
        for key, value in pod.items():
            members.append(f"\n  {json.dumps(key, ensure_ascii=False)}: "
                           + (self._nodes_text(value) if key == "nodes" else _indented(value, "\n  ")))
        body = ("{" + ",".join(members) + "\n}" if members else "{}").replace("\n", "\n    ")
        # JSON strings never hold a raw newline: every "\n" above is indentation.
        self.out.write(("\n    " if not self.pods else ",\n    ") + body)
        self.out.flush()
        self.pods += 1

    def _nodes_text(self, nodes) -> str:
        if not isinstance(nodes, list) or not nodes:
            return _indented(nodes, "\n  ")
        kept = self.texts.get(id(nodes))
        if kept is not None and kept[0] is nodes:
            return kept[1]
        text = _indented(nodes, "\n  ")
        self.texts[id(nodes)] = (nodes, text)
        while len(self.texts) > KEPT_TEXTS:
            del self.texts[next(iter(self.texts))]
        return text

    def end(self, tail: dict) -> None:
        close = "\n  ]" if self.pods else "]"
        if tail:
            # '{\n  "warnings": ...\n}' continues the document after the pods
            self.out.write(close + "," + json.dumps(tail, indent=2, ensure_ascii=False)[1:] + "\n")
        else:
            self.out.write(close + "\n}\n")
        self.out.flush()


def _indented(value, newline: str) -> str:
    """json.dumps(value, indent=2) as a member of an object: `newline` for each line break."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return text.replace("\n", newline) if "\n" in text else text


class YamlSink(ResultSink):
    """One YAML document, as to_yaml writes it, written as it grows."""

    def __init__(self, out):
        self.out = out
        self.pods = 0

    def begin(self, head: dict) -> None:
        self.out.write(_yaml_dump(head))
        self.out.flush()

    def pod(self, pod: dict) -> None:
        # A list in a mapping is written without indentation: '- pod: ...'.
        self.out.write(("pods:\n" if not self.pods else "") + _yaml_dump([pod]))
        self.out.flush()
        self.pods += 1

    def end(self, tail: dict) -> None:
        text = "" if self.pods else "pods: []\n"
        if tail:
            text += _yaml_dump(tail)
        self.out.write(text)
        self.out.flush()


class JsonlSink(ResultSink):
    """-o jsonl: one JSON object a line, for tools that read streams.

    Each pod's line is a SchedulingResult of that one pod (the document's
    head, then `pods: [pod]`). The closing line is a SchedulingResult with no
    pods that carries the document's tail (warnings; simulate's summary and
    utilization) and `stream`: how many pods, of which outcome, and the exit
    code. Joining the pods of every line gives the -o json document.
    """

    def __init__(self, out):
        self.out = out
        self.head: dict = {}
        self.tally = Tally()

    def begin(self, head: dict) -> None:
        self.head = head

    def pod(self, pod: dict) -> None:
        self.tally.add(pod)
        self._line(dict(self.head, pods=[pod]))

    def end(self, tail: dict) -> None:
        stream = {"pods": self.tally.pods, "statuses": dict(self.tally.statuses), "exitCode": self.tally.exit_code}
        self._line(dict(self.head, pods=[], **tail, stream=stream))

    def _line(self, obj: dict) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.out.flush()
