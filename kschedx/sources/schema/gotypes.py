"""Go type declarations read from Go source text, as far as the JSON decoder
sees them: struct fields with their json names, inline embedding, named
types and their underlying types, and which types decode themselves
(an UnmarshalJSON method).

Used by the generator only (generate.py): the OpenAPI documents say which
fields an object has; the Go declarations say how the API server's decoder
names them in its errors (`Go struct field PodSpec.spec.containers of type
[]v1.Container`). The k8s.io API packages are gofmt'd declarations, one
field a line, which is all this reads; anything else it does not understand
in a type it needs is an error, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PACKAGE = re.compile(r"^package (\w+)", re.M)
_IMPORT_ONE = re.compile(r'^import\s+(?:(\w+|\.|_)\s+)?"([^"]+)"', re.M)
_IMPORT_BLOCK = re.compile(r"^import \((.*?)^\)", re.M | re.S)
_IMPORT_LINE = re.compile(r'^\s*(?:(\w+|\.|_)\s+)?"([^"]+)"', re.M)
_UNMARSHAL = re.compile(r"^func \(\w+ \*?(\w+)\) Unmarshal(?:JSON|Text)\(", re.M)
_TYPE_START = re.compile(r"^type (\w+)(\[[^\]]*\])?\s+(.*)$")
_GROUP_MEMBER = re.compile(r"^\t(\w+)\s+(.*)$")
_FIELD = re.compile(r"^(\w+(?:\s*,\s*\w+)*)\s+([^\s`]+)\s*(`[^`]*`)?$")
_EMBEDDED = re.compile(r"^(\*?[\w.]+)\s*(`[^`]*`)?$")
_JSON_TAG = re.compile(r'json:"([^"]*)"')

BASIC = frozenset({
    "string", "bool", "byte", "rune", "int", "int8", "int16", "int32", "int64",
    "uint", "uint8", "uint16", "uint32", "uint64", "uintptr", "float32", "float64",
})


class GoSourceError(ValueError):
    """A declaration the generator needs but cannot read."""


@dataclass
class GoField:
    name: str           # the Go field name
    json: str           # the json name ("" for an inline embedded struct)
    type: str           # the type as written in the source, e.g. "[]Container", "*metav1.LabelSelector"
    embedded: bool
    imports: dict       # the imports of the file it is declared in (alias -> path)


@dataclass
class GoType:
    name: str
    package: "GoPackage"
    underlying: str | None = None         # for a non-struct type: the type expression written
    body: list[str] | None = None         # for a struct: its field lines, read when first asked
    imports: dict = field(default_factory=dict)
    alias: bool = False                   # `type X = Y`: Y under another name
    _fields: list | None = None

    @property
    def is_struct(self) -> bool:
        return self.body is not None

    @property
    def fields(self) -> list[GoField]:
        if self._fields is None:
            if self.body is None:
                raise GoSourceError(f"{self.package.path}.{self.name} is not a struct")
            self._fields = [_field(self.package, self.name, line, self.imports) for line in self.body]
        return self._fields


@dataclass
class GoPackage:
    path: str                      # import path, e.g. k8s.io/api/core/v1
    name: str = ""                 # package clause, e.g. v1
    types: dict = field(default_factory=dict)
    unmarshalers: set = field(default_factory=set)


def _strip_comment(line: str) -> str:
    """The line without a // comment (outside backquotes and double quotes)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "`\"":
            quote = ch
        elif ch == "/" and line[i + 1:i + 2] == "/":
            return line[:i].rstrip()
    return line.rstrip()


def _imports(text: str) -> dict:
    out = {}
    for alias, path in _IMPORT_ONE.findall(text):
        out[alias or path.rsplit("/", 1)[-1]] = path
    for block in _IMPORT_BLOCK.findall(text):
        for alias, path in _IMPORT_LINE.findall(block):
            out[alias or path.rsplit("/", 1)[-1]] = path
    return out


_TOKENS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|`[^`]*`|\'(?:\\.|[^\'\\\n])*\'', re.S)


def _without_comments(text: str) -> str:
    """The text with every comment blanked (newlines kept), strings and
    runes left alone."""
    def blank(m):
        token = m.group(0)
        if token.startswith("//"):
            return ""
        if token.startswith("/*"):
            return "\n" * token.count("\n")
        return token
    return _TOKENS.sub(blank, text)


def parse_package(path: str, sources: dict[str, str]) -> GoPackage:
    """A package from its files' text (name -> text; test files are skipped)."""
    pkg = GoPackage(path)
    for fname in sorted(sources):
        if fname.endswith("_test.go") or not fname.endswith(".go") or fname.startswith("zz_generated") \
                or fname.endswith(".pb.go"):
            continue
        text = _without_comments(sources[fname])
        m = _PACKAGE.search(text)
        if m is None:
            continue
        if not pkg.name:
            pkg.name = m.group(1)
        imports = _imports(text)
        pkg.unmarshalers.update(_UNMARSHAL.findall(text))
        _parse_types(pkg, text.split("\n"), imports)
    return pkg


def _parse_types(pkg: GoPackage, lines: list[str], imports: dict) -> None:
    i = 0
    n = len(lines)
    while i < n:
        line = _strip_comment(lines[i])
        if line == "type (":
            i += 1
            while i < n and _strip_comment(lines[i]) != ")":
                member = _strip_comment(lines[i])
                m = _GROUP_MEMBER.match(member)
                if m:
                    i = _declare(pkg, m.group(1), m.group(2), lines, i, imports, indent="\t")
                i += 1
        else:
            m = _TYPE_START.match(line)
            if m and m.group(2) is None:  # generic types are never API types
                i = _declare(pkg, m.group(1), m.group(3), lines, i, imports, indent="")
        i += 1


def _declare(pkg, name, rest, lines, i, imports, indent) -> int:
    rest = rest.strip()
    if rest.startswith("= "):
        pkg.types[name] = GoType(name, pkg, underlying=rest[2:].strip().split()[0], imports=imports, alias=True)
        return i
    if rest in ("struct{}", "struct {}"):
        pkg.types[name] = GoType(name, pkg, body=[], imports=imports)
        return i
    if rest == "struct {":
        body: list[str] = []
        i += 1
        while True:
            if i >= len(lines):
                raise GoSourceError(f"{pkg.path}.{name}: struct without its closing brace")
            raw = _strip_comment(lines[i])
            if raw == indent + "}":
                break
            line = raw.strip()
            if line:
                body.append(line)
            i += 1
        pkg.types[name] = GoType(name, pkg, body=body, imports=imports)
        return i
    if rest.endswith("{"):
        # interfaces and the like: not data the decoder fills
        depth = rest.count("{") - rest.count("}")
        while depth > 0 and i + 1 < len(lines):
            i += 1
            raw = _strip_comment(lines[i])
            depth += raw.count("{") - raw.count("}")
        pkg.types[name] = GoType(name, pkg, underlying="<opaque>", imports=imports)
        return i
    pkg.types[name] = GoType(name, pkg, underlying=rest.split()[0] if rest else "<opaque>", imports=imports)
    return i


def _field(pkg, struct, body, imports) -> GoField:
    m = _FIELD.match(body)
    if m and not m.group(2).startswith("`"):
        names = [s.strip() for s in m.group(1).split(",")]
        if len(names) != 1:
            raise GoSourceError(f"{pkg.path}.{struct}: several fields on one line: {body!r}")
        return GoField(names[0], _json_name(names[0], m.group(3)), m.group(2), False, imports)
    m = _EMBEDDED.match(body)
    if m:
        typ = m.group(1)
        tag = _json_tag(m.group(2))
        if tag is not None and tag.split(",")[0]:
            # an embedded field with a json name is a named field
            return GoField(typ.lstrip("*").rsplit(".", 1)[-1], tag.split(",")[0], typ, False, imports)
        return GoField(typ.lstrip("*").rsplit(".", 1)[-1], "", typ, True, imports)
    raise GoSourceError(f"{pkg.path}.{struct}: cannot read the field {body!r}")


def _json_tag(tag: str | None) -> str | None:
    if not tag:
        return None
    m = _JSON_TAG.search(tag)
    return m.group(1) if m else None


def _json_name(go_name: str, tag: str | None) -> str:
    value = _json_tag(tag)
    if value is None:
        return go_name
    name = value.split(",")[0]
    if value == "-":
        return "-"
    return name or go_name
