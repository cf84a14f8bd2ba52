"""Keys given twice in one mapping: PyYAML and json keep the last value and
say nothing; the API server's strict decoding says `duplicate field "..."`.

The loaders here read exactly what their plain counterparts read and also
note, for each mapping that had a key twice, which keys: a dict
{id(mapping): (key, ...)} that validate() takes as `duplicates`. (An id is
only good while the objects live: validate right after loading.)

kubectl itself converts YAML to JSON before sending it, which drops the
first of two equal keys silently; the API server refuses a body with a
duplicate key (JSON or YAML). kschedx follows the API server: a key given
twice is never what was meant.
"""

from __future__ import annotations

import io
import json

import yaml
from yaml.nodes import MappingNode, ScalarNode

_MERGE = "tag:yaml.org,2002:merge"
_MAP = "tag:yaml.org,2002:map"


def _repeated(node: MappingNode) -> tuple:
    seen: set = set()
    repeated: dict = {}
    for key_node, _ in node.value:
        if key_node.__class__ is not ScalarNode or key_node.tag == _MERGE:
            continue
        key = key_node.value
        if key in seen:
            repeated[key] = None
        seen.add(key)
    return tuple(repeated)


_classes: dict = {}


def noting_loader(base):
    """A subclass of the PyYAML loader class `base` (kschedx's fast loader,
    or PyYAML's own) whose instances note duplicate keys in `duplicates`."""
    cls = _classes.get(base)
    if cls is not None:
        return cls

    class DuplicateNotingLoader(base):
        def __init__(self, stream):
            super().__init__(stream)
            self.duplicates: dict = {}
            self._by_constructor: set = set()

        def construct_noted_map(self, node):
            repeated = _repeated(node)  # before merge keys are flattened into the node
            data = {}
            self._by_constructor.add(id(data))
            yield data
            data.update(self.construct_mapping(node))
            if repeated:
                self.duplicates[id(data)] = repeated

    if hasattr(base, "_build"):
        # kschedx's fast loader builds plain mappings itself
        def _build(self, node):
            built = base._build(self, node)
            if (node.__class__ is MappingNode and built.__class__ is dict and len(built) < len(node.value)
                    and id(built) not in self._by_constructor):
                repeated = _repeated(node)
                if repeated:
                    self.duplicates[id(built)] = repeated
            return built

        DuplicateNotingLoader._build = _build

    DuplicateNotingLoader.add_constructor(_MAP, DuplicateNotingLoader.construct_noted_map)
    _classes[base] = DuplicateNotingLoader
    return DuplicateNotingLoader


def load_yaml(text: str, base=None) -> tuple[list, dict]:
    """Every document of a YAML stream (None for an empty one, as
    yaml.load_all gives them) and the duplicate keys found."""
    if base is None:
        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = noting_loader(base)(io.StringIO(text))
    try:
        docs = []
        while loader.check_data():
            docs.append(loader.get_data())
    finally:
        loader.dispose()
    return docs, loader.duplicates


def load_json(text: str) -> tuple[object, dict]:
    """json.loads(text), and the duplicate keys found."""
    duplicates: dict = {}

    def mapping(pairs):
        built = dict(pairs)
        if len(built) < len(pairs):
            seen: set = set()
            repeated: dict = {}
            for key, _ in pairs:
                if key in seen:
                    repeated[key] = None
                seen.add(key)
            duplicates[id(built)] = tuple(repeated)
        return built

    return json.loads(text, object_pairs_hook=mapping), duplicates
