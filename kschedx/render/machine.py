"""-o json / -o yaml / -o jsonl: the result document, nothing else on stdout.

The sinks write the document while it is computed, one pod at a time, and
keep nothing: -o json and -o yaml give, byte for byte (YAML: value for
value), what dumping the whole document at once gives (to_json, to_yaml).
`out` is a text writer: write(str), flush().
"""

from __future__ import annotations

import json

from ..result.document import Tally
from ..result.json_text import indented
from ..result.sink import ResultSink


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


# Pods that take an earlier identical pod's result (commands/reuse.py) share
# its `nodes` list, the bulk of a pod's text on a large cluster: the sink
# keeps the last one's text (and the list, so that its identity holds), and
# encodes it once for all the pods of a group (queue order keeps them together).
KEPT_TEXTS = 1
# Texts at least this long are written on their own, not joined first.
WRITTEN_APART = 1 << 16
# A pod's members in the document: pods are at depth 2, indented by 4.
MEMBER_NEWLINE = "\n      "


class EncodedNodes:
    """A pod's `nodes` list as JsonSink writes it, encoded ahead (by a worker
    process of explain --jobs: see JsonSink.nodes_encoder)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def encode_nodes(nodes) -> EncodedNodes:
    return EncodedNodes(indented(nodes, MEMBER_NEWLINE))


def encode_node_records(records) -> EncodedNodes:
    """The same text as encode_nodes([node_dict(n) for n in records]),
    written from the records (result/node_text.py)."""
    from ..result.node_text import node_records_text

    return EncodedNodes(node_records_text(records, MEMBER_NEWLINE))


class CompactNodes:
    """A pod's `nodes` list as JsonlSink writes it (compact), encoded from
    the runner's records where the pod is computed: a type of its own, so
    that indented text never lands in a line, nor compact text in a document."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def encode_compact_node_records(records) -> CompactNodes:
    """The text json.dumps([node_dict(n) for n in records], ensure_ascii=False,
    separators=(",", ":")) gives, written from the records."""
    from ..result.node_text import node_records_text

    return CompactNodes(node_records_text(records, None))


class JsonSink(ResultSink):
    """One JSON document, indented as to_json indents it, written as it grows."""

    # The most expensive part of writing a pod, done where the pod is computed.
    nodes_encoder = staticmethod(encode_nodes)
    node_records_encoder = staticmethod(encode_node_records)

    def __init__(self, out):
        self.out = out
        self.pods = 0
        self.texts: dict[int, tuple] = {}  # id(nodes list) -> (the list, its text)

    def begin(self, head: dict) -> None:
        text = json.dumps(head, indent=2, ensure_ascii=False)
        # '{ ...head keys...\n}' -> '{ ...head keys...,\n  "pods": ['
        self.out.write(text[:-2] + ',\n  "pods": [')
        self.out.flush()

    def pod(self, pod: dict) -> None:
        # What json.dumps(pod, indent=2) gives, indented as an element of
        # `pods`, member by member: the `nodes` text may be encoded already.
        # (JSON strings never hold a raw newline: every line break is indentation.)
        # Every piece is made before any is written; the big ones (`nodes`,
        # some 20 MB) are written as they are rather than copied into one text.
        pieces = ["\n    " if not self.pods else ",\n    "]
        sep = "{"
        for key, value in pod.items():
            pieces.append(sep + MEMBER_NEWLINE + json.dumps(key, ensure_ascii=False) + ": ")
            pieces.append(self._nodes_text(value) if key == "nodes" else indented(value, MEMBER_NEWLINE))
            sep = ","
        pieces.append("\n    }" if pod else "{}")
        small = []
        for piece in pieces:
            if len(piece) < WRITTEN_APART:
                small.append(piece)
                continue
            self.out.write("".join(small))
            self.out.write(piece)
            small = []
        self.out.write("".join(small))
        self.out.flush()
        self.pods += 1

    def _nodes_text(self, nodes) -> str:
        if isinstance(nodes, EncodedNodes):
            return nodes.text
        if not isinstance(nodes, list) or not nodes:
            return indented(nodes, MEMBER_NEWLINE)
        kept = self.texts.get(id(nodes))
        if kept is not None and kept[0] is nodes:
            return kept[1]
        text = indented(nodes, MEMBER_NEWLINE)
        self.texts[id(nodes)] = (nodes, text)
        while len(self.texts) > KEPT_TEXTS:
            del self.texts[next(iter(self.texts))]
        return text

    def end(self, tail: dict) -> None:
        close = "\n  ]" if self.pods else "]"
        if tail:
            # '{\n  "warnings": ...\n}' continues the document after the pods
            # (json.dumps(tail, indent=2) as indented writes it: simulate's
            # utilization lists every node)
            self.out.write(close + "," + indented(tail, "\n")[1:] + "\n")
        else:
            self.out.write(close + "\n}\n")
        self.out.flush()


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

    # A pod's node records, most of its line, written from the runner's
    # records rather than from node dicts (no dict per verdict, each repeated
    # verdict's text made once).
    node_records_encoder = staticmethod(encode_compact_node_records)

    def __init__(self, out):
        self.out = out
        self.head: dict = {}
        self.tally = Tally()
        self.texts: dict[int, tuple] = {}  # id(nodes list) -> (the list, its compact text)

    def begin(self, head: dict) -> None:
        self.head = head

    def pod(self, pod: dict) -> None:
        self.tally.add(pod)
        self._line(dict(self.head, pods=[pod]))

    def end(self, tail: dict) -> None:
        self.forget_texts()
        stream = {"pods": self.tally.pods, "statuses": dict(self.tally.statuses), "exitCode": self.tally.exit_code}
        self._line(dict(self.head, pods=[], **tail, stream=stream))

    def forget_texts(self) -> None:
        """No later pod shares the last one's nodes (explain --watch: a batch
        ended): the list and its text are let go (a pod's every record)."""
        self.texts.clear()

    def _line(self, obj: dict) -> None:
        pieces = compact_pieces(obj, self._nodes_text)
        pieces[-1] += "\n"
        write = self.out.write
        for piece in pieces:
            write(piece)
        self.out.flush()

    def _nodes_text(self, nodes) -> str:
        if type(nodes) is CompactNodes:
            return nodes.text
        # Identical pods share one cycle and one `nodes` list (commands/reuse.py):
        # its text, most of each line (every node's record), is encoded once.
        kept = self.texts.get(id(nodes))
        if kept is not None and kept[0] is nodes:
            return kept[1]
        text = _compact(nodes)
        self.texts[id(nodes)] = (nodes, text)
        while len(self.texts) > KEPT_TEXTS:
            del self.texts[next(iter(self.texts))]
        return text


def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_NODES_TYPES = (list, CompactNodes)


def compact_line(obj: dict, nodes_text) -> str:
    """json.dumps(obj, ensure_ascii=False, separators=(",", ":")), character
    for character, with each pod's `nodes` list (obj["pods"][i]["nodes"])
    encoded by `nodes_text(list)`: a compact JSON object is its members'
    texts joined, so the member may be encoded apart (and its text kept)."""
    return "".join(compact_pieces(obj, nodes_text))


def compact_pieces(obj: dict, nodes_text) -> list[str]:
    """compact_line's text in pieces, each `nodes` text a piece of its own:
    written one after another, a pod's every node record (megabytes on a
    large cluster) is not copied into one line first."""
    pods = obj.get("pods")
    if not pods or type(obj) is not dict or type(pods) is not list \
            or not all(type(p) is dict and type(p.get("nodes")) in _NODES_TYPES and all(type(k) is str for k in p)
                       for p in pods) or not all(type(k) is str for k in obj):
        return [_compact(obj)]
    pieces = []
    small = []  # the text since the last `nodes` text
    sep = "{"
    for k, v in obj.items():
        if k != "pods":
            small.append(sep + _compact(k) + ":" + _compact(v))
            sep = ","
            continue
        small.append(sep + _compact(k) + ":[")
        sep = ","
        for i, pod in enumerate(pods):
            psep = "{" if not i else ",{"
            for pk, pv in pod.items():
                if pk == "nodes":
                    small.append(psep + _compact(pk) + ":")
                    pieces.append("".join(small))
                    pieces.append(nodes_text(pv))
                    small = []
                else:
                    small.append(psep + _compact(pk) + ":" + _compact(pv))
                psep = ","
            small.append("}")
        small.append("]")
    small.append("}" if sep == "," else "{}")
    pieces.append("".join(small))
    return pieces
