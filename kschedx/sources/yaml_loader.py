"""PyYAML's safe loader with a faster constructor for plain documents.

PyYAML's C loader parses in C but builds the Python objects in Python, one
generic call chain per node; on a `kubectl get pods -o yaml` dump that is
most of the time. FastSafeLoader builds the common case itself: mappings,
sequences and strings with their standard tags. Every other node (numbers,
booleans, null, timestamps, explicit tags, merge keys) is handed to PyYAML's
own constructors, and a document the fast path cannot build (a complex key,
a recursive alias, an error) is built again by PyYAML from the start, so the
result, and every error message, is PyYAML's.
"""

from __future__ import annotations

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

try:  # the C parser
    _SafeLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _SafeLoader = yaml.SafeLoader

STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
# Keys PyYAML's SafeConstructor rewrites before building a mapping.
_SPECIAL_KEY_TAGS = ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value")


class FastSafeLoader(_SafeLoader):
    # -- resolving plain scalars --------------------------------------------------------
    # Resolver.resolve, minus the per-call list concatenation: the implicit
    # resolvers for a first character are joined with the wildcard ones once.
    _implicit_by_first_char: dict | None = None

    def resolve(self, kind, value, implicit):
        if self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)
        if kind is ScalarNode:
            if implicit[0]:
                table = FastSafeLoader._implicit_by_first_char
                if table is None:
                    table = FastSafeLoader._implicit_by_first_char = _implicit_table(self.yaml_implicit_resolvers)
                for tag, regexp in table.get(value[:1], table[None]):
                    if regexp.match(value):
                        return tag
            return self.DEFAULT_SCALAR_TAG
        return self.DEFAULT_SEQUENCE_TAG if kind is SequenceNode else self.DEFAULT_MAPPING_TAG

    # -- constructing ---------------------------------------------------------------------
    def construct_document(self, node):
        try:
            data = self._build(node)
        except Exception:  # noqa: BLE001 - anything unusual: PyYAML decides, and reports its own error
            self._reset()
            return super().construct_document(node)
        self._reset()
        return data

    def _reset(self) -> None:
        self.constructed_objects = {}
        self.recursive_objects = {}
        self.state_generators = []
        self.deep_construct = False

    def _build(self, node):
        cls = node.__class__
        tag = node.tag
        if cls is ScalarNode:
            if tag == STR_TAG:
                return node.value
            return self.construct_object(node, deep=True)
        built = self.constructed_objects.get(node)
        if built is not None:
            return built  # an alias: the same object, as PyYAML gives it
        if cls is MappingNode and tag == MAP_TAG:
            pairs = node.value
            for key_node, _ in pairs:
                if key_node.__class__ is not ScalarNode or key_node.tag in _SPECIAL_KEY_TAGS:
                    return self.construct_object(node, deep=True)
            # Registered before its children, as PyYAML's generators do.
            mapping = self.constructed_objects[node] = {}
            build = self._build
            for key_node, value_node in pairs:
                key = key_node.value if key_node.tag == STR_TAG else build(key_node)
                mapping[key] = build(value_node)
            return mapping
        if cls is SequenceNode and tag == SEQ_TAG:
            items = self.constructed_objects[node] = []
            items.extend([self._build(child) for child in node.value])
            return items
        return self.construct_object(node, deep=True)


def _implicit_table(resolvers: dict) -> dict:
    wildcard = list(resolvers.get(None, []))
    table = {first: list(entries) + wildcard for first, entries in resolvers.items() if first is not None}
    table[None] = wildcard
    return table
