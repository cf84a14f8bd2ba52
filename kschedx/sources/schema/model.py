"""The schema of one Kubernetes version, loaded from the package data
(data/v1_NN.json.gz, written by generate.py) when first asked for, once.

A Schema holds every group/version/kind the release's API server can serve
(alpha and beta versions too: a cluster may enable them), each with the Go
struct its objects decode into, and each struct's fields by json name.
"""

from __future__ import annotations

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
    through (`VolumeSource` for a volume's hostPath). The fields are read
    from the data when first asked for."""

    __slots__ = ("name", "definition", "_fields", "_embeds", "_schema", "_text")

    def __init__(self, name: str, definition: str, schema: "Schema", text: str):
        self.name = name
        self.definition = definition  # the OpenAPI definition, the same in every version
        self._schema = schema
        self._text = text
        self._fields: dict | None = None
        self._embeds: dict | None = None

    @property
    def fields(self) -> dict[str, "Type"]:
        fields = self._fields
        if fields is None:
            fields = self._read()
        return fields

    @property
    def embeds(self) -> dict[str, str]:
        if self._embeds is None:
            self._read()
        return self._embeds

    def _read(self) -> dict:
        fields: dict = {}
        embeds: dict = {}
        type_of = self._schema.type
        for entry in self._text.split(",") if self._text else ():
            name, index, *embed = entry.split(":")
            fields[name] = type_of(int(index))
            if embed:
                embeds[name] = embed[0]
        self._embeds = embeds
        self._fields = fields
        return fields


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
        if data.get("format") != 2:
            raise ValueError(f"schema data of Kubernetes {minor}: format {data.get('format')}, not 2")
        self.minor = minor
        self.release = data["release"]
        self._exprs = data["exprs"]
        self._types: list = [None] * len(self._exprs)
        structs = [Struct(name, definition, self, text) for name, definition, text in data["structs"]]
        self._structs = structs
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

    def type(self, index: int) -> "Type":
        """The type of an expression of the data, made when first asked for."""
        t = self._types[index]
        if t is None:
            entry = self._exprs[index]
            t = Type(_CODES[entry[0]], entry[1])
            if t.code == STRUCT:
                t.sub = self._structs[entry[2]]
            elif t.code in (ARRAY, MAP):
                t.sub = self.type(entry[2])
            elif t.code == INT:
                t.low, t.high = entry[2], entry[3]
            self._types[index] = t
        return t

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
    import json
    import zlib  # gzip's own module costs an import; the data is one gzip member

    found = _loaded[minor] = Schema(minor, json.loads(zlib.decompress(data_file(minor).read_bytes(), wbits=31)))
    return found
