"""The schema of one Kubernetes version, loaded from the package data
(data/v1_NN.json.gz, written by generate.py) when first asked for, once.

A Schema holds every group/version/kind the release's API server can serve
(alpha and beta versions too: a cluster may enable them), each with the Go
struct its objects decode into, and each struct's fields by json name.
"""

from __future__ import annotations

import gzip
import json
import threading
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"

# minor -> the release whose API the data describes
RELEASES = {"1.35": "v1.35.4", "1.36": "v1.36.3", "1.37": "v1.37.2"}

# What a value decodes into (Type.code).
(STRUCT, STRING, INT, FLOAT, BOOL, ARRAY, MAP, QUANTITY, INTORSTRING, TIME, MICROTIME, DURATION, ANY, BYTES,
 SCHEMAORBOOL) = range(15)
_CODES = {
    "struct": STRUCT, "string": STRING, "int": INT, "float": FLOAT, "bool": BOOL, "array": ARRAY, "map": MAP,
    "quantity": QUANTITY, "intorstring": INTORSTRING, "time": TIME, "microtime": MICROTIME,
    "duration": DURATION, "any": ANY, "bytes": BYTES, "schemaorbool": SCHEMAORBOOL,
}


class Type:
    """A value's type: what it decodes as (code), the Go type the decoder
    names in its messages (go, e.g. "[]v1.Container"), and what it holds:
    a Struct, the element Type of an array or map, or an integer range."""

    __slots__ = ("code", "go", "sub", "low", "high")

    def __init__(self, code: int, go: str):
        self.code = code
        self.go = go
        self.sub = None
        self.low = self.high = 0


class Struct:
    """A Go struct: its name (the decoder's "Go struct field PodSpec.…"),
    its fields by json name, and the inline structs a field is reached
    through (`VolumeSource` for a volume's hostPath)."""

    __slots__ = ("name", "fields", "embeds", "definition")

    def __init__(self, name: str, definition: str):
        self.name = name
        self.definition = definition  # the OpenAPI definition, the same in every version
        self.fields: dict[str, Type] = {}
        self.embeds: dict[str, str] = {}


class Kind:
    __slots__ = ("group", "version", "kind", "struct", "namespaced", "resource")

    def __init__(self, group, version, kind, struct, namespaced, resource):
        self.group = group
        self.version = version
        self.kind = kind
        self.struct = struct
        self.namespaced = namespaced
        self.resource = resource

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


class Schema:
    def __init__(self, minor: str, data: dict):
        self.minor = minor
        self.release = data["release"]
        structs = [Struct(row[0], row[2]) for row in data["structs"]]
        types: list[Type] = []
        for entry in data["exprs"]:
            t = Type(_CODES[entry[0]], entry[1])
            if t.code == STRUCT:
                t.sub = structs[entry[2]]
            elif t.code in (ARRAY, MAP):
                t.sub = entry[2]  # an index, resolved below (elements come later or earlier)
            elif t.code == INT:
                t.low, t.high = entry[2], entry[3]
            types.append(t)
        for t in types:
            if t.code in (ARRAY, MAP):
                t.sub = types[t.sub]
        for struct, row in zip(structs, data["structs"]):
            for name, index, embed in row[1]:
                struct.fields[name] = types[index]
                if embed:
                    struct.embeds[name] = embed
        self.kinds: dict[tuple[str, str, str], Kind] = {}
        self.by_kind: dict[str, list[Kind]] = {}
        self.groups: dict[str, list[str]] = {}
        for group, version, kind, root, namespaced, resource in data["kinds"]:
            k = Kind(group, version, kind, structs[root], namespaced, resource)
            self.kinds[(group, version, kind)] = k
            self.by_kind.setdefault(kind, []).append(k)
            versions = self.groups.setdefault(group, [])
            if version not in versions:
                versions.append(version)
        for kinds in self.by_kind.values():
            kinds.sort(key=lambda k: (version_priority(k.version), k.group))
        self.structs_by_definition = {s.definition: s for s in structs}

    def kind(self, group: str, version: str, kind: str) -> Kind | None:
        return self.kinds.get((group, version, kind))


def version_priority(version: str):
    """Kubernetes' version order, most preferred first: v1 > v1beta2 > v1beta1 > v1alpha1."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if m is None:
        return (3, 0, 0, version)
    stage = {"": 0, "beta": 1, "alpha": 2}[m.group(2) or ""]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), version)


_lock = threading.Lock()
_loaded: dict[str, Schema] = {}


def data_file(minor: str) -> Path:
    return DATA_DIR / f"v{minor.replace('.', '_')}.json.gz"


def schema(minor: str) -> Schema:
    """The schema of a minor ("1.36"), read from the package data on first use."""
    found = _loaded.get(minor)
    if found is not None:
        return found
    if minor not in RELEASES:
        raise ValueError(f"no schema for Kubernetes {minor}: kschedx has {', '.join(sorted(RELEASES))}")
    with _lock:
        found = _loaded.get(minor)
        if found is None:
            data = json.loads(gzip.decompress(data_file(minor).read_bytes()))
            found = _loaded[minor] = Schema(minor, data)
    return found
