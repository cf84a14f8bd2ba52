"""Generate the per-version schema data (data/v1_NN.json.gz) from the
Kubernetes release itself. A development tool, never imported at run time:

    python -m kschedx.sources.schema.generate          # rewrite data/
    python -m kschedx.sources.schema.generate --check  # exit 1 if data/ differs

Sources, per release (Go modules, fetched with `go mod download`):

- k8s.io/kubernetes@vX.Y.Z: `api/openapi-spec/v3/*.json`, the OpenAPI
  documents the release's API server publishes (every group and version it
  can serve, alpha and beta included). They give the kinds (every
  x-kubernetes-group-version-kind of an operation on a resource path, not a
  subresource), whether each is namespaced, and every object's fields with
  their types.
- k8s.io/api, k8s.io/apimachinery, k8s.io/apiextensions-apiserver and
  k8s.io/kube-aggregator @v0.Y.Z: the Go declarations the API server decodes
  into. They give what the decoder's messages name (the Go struct, the type
  `[]v1.Container`, an inline struct such as `VolumeSource`) and which types
  decode themselves (quantities, int-or-string, times, raw JSON). Every field
  of the OpenAPI documents must be a json field of its Go struct and the
  reverse, or generation fails: the two sources are checked against each
  other, never merged by guessing.

The output is one JSON document per minor, gzip'd; decoded, it is the same
for the same release whatever machine generates it (tests regenerate it).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from .gotypes import BASIC, GoPackage, GoSourceError, parse_package
from .model import RELEASES, data_file

FORMAT = 2
# A struct's fields are one string, "name:type[:inline struct]" joined by
# commas: decoding the document is then mostly long strings (fast), and a
# struct's fields are split only when a validation first meets the struct.
_FIELD_TEXT = re.compile(r"[^:,\s]+")

# Go modules whose API packages the OpenAPI definitions name:
# definition "io.k8s.<module>.<package path>.<Type>"
_MODULES = ("api", "apimachinery", "apiextensions-apiserver", "kube-aggregator")

# What a type that decodes itself (UnmarshalJSON) accepts, by Go package and
# name. A type with an UnmarshalJSON method not listed here fails generation.
CUSTOM = {
    ("k8s.io/apimachinery/pkg/api/resource", "Quantity"): "quantity",
    ("k8s.io/apimachinery/pkg/util/intstr", "IntOrString"): "intorstring",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "Time"): "time",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "MicroTime"): "microtime",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "Duration"): "duration",
    # raw JSON kept as bytes: any value
    ("k8s.io/apimachinery/pkg/runtime", "RawExtension"): "any",
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "FieldsV1"): "any",
    ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "JSON"): "any",
    # a CRD's nested schemas: decoded by their own, non-strict, json.Unmarshal
    ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "JSONSchemaPropsOrBool"): "schemaorbool",
    ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "JSONSchemaPropsOrArray"): "any",
    ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1", "JSONSchemaPropsOrStringArray"): "any",
    # not API fields, but declared with the method in the packages read
    ("k8s.io/apimachinery/pkg/apis/meta/v1", "GroupVersion"): "string",
}

# Go basic types: the leaf kind and, for integers, the range
_INTS = {
    "int8": (-(1 << 7), (1 << 7) - 1), "int16": (-(1 << 15), (1 << 15) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1), "int": (-(1 << 63), (1 << 63) - 1),
    "uint8": (0, (1 << 8) - 1), "uint16": (0, (1 << 16) - 1), "uint32": (0, (1 << 32) - 1),
    "uint64": (0, (1 << 64) - 1), "uint": (0, (1 << 64) - 1), "uintptr": (0, (1 << 64) - 1),
}


class GenerationError(RuntimeError):
    pass


# -- reading a release ---------------------------------------------------------------------


def module_zip(module: str, version: str) -> Path:
    """The module's zip in the Go module cache, downloaded when missing."""
    out = subprocess.run(["go", "mod", "download", "-json", f"{module}@{version}"],
                         capture_output=True, text=True, check=False)
    try:
        info = json.loads(out.stdout)
    except ValueError:
        raise GenerationError(f"go mod download {module}@{version}: {out.stderr.strip()}") from None
    if info.get("Error") or not info.get("Zip"):
        raise GenerationError(f"go mod download {module}@{version}: {info.get('Error')}")
    return Path(info["Zip"])


def staging_version(release: str) -> str:
    """k8s.io/api and the other staging modules of release v1.Y.Z are v0.Y.Z."""
    m = re.fullmatch(r"v1\.(\d+)\.(\d+)", release)
    if m is None:
        raise GenerationError(f"not a release: {release}")
    return f"v0.{m.group(1)}.{m.group(2)}"


def read_release(release: str) -> dict:
    """The inputs of one release: {"openapi": {file: text}, "go": {import path: {file: text}}}."""
    inputs = {"release": release, "openapi": {}, "go": {}}
    with zipfile.ZipFile(module_zip("k8s.io/kubernetes", release)) as z:
        prefix = f"k8s.io/kubernetes@{release}/api/openapi-spec/v3/"
        for name in z.namelist():
            if name.startswith(prefix) and name.endswith(".json"):
                inputs["openapi"][name[len(prefix):]] = z.read(name).decode("utf-8")
    staging = staging_version(release)
    for module in _MODULES:
        with zipfile.ZipFile(module_zip(f"k8s.io/{module}", staging)) as z:
            prefix = f"k8s.io/{module}@{staging}/"
            for name in z.namelist():
                if not name.startswith(prefix) or not name.endswith(".go") or name.endswith("_test.go"):
                    continue
                rel = name[len(prefix):]
                directory, _, fname = rel.rpartition("/")
                path = f"k8s.io/{module}/{directory}" if directory else f"k8s.io/{module}"
                inputs["go"].setdefault(path, {})[fname] = z.read(name).decode("utf-8")
    return inputs


# -- the Go side -----------------------------------------------------------------------------


class GoWorld:
    """The Go packages of a release, parsed when first named."""

    def __init__(self, sources: dict[str, dict[str, str]]):
        self._sources = sources
        self._packages: dict[str, GoPackage] = {}

    def package(self, path: str) -> GoPackage:
        pkg = self._packages.get(path)
        if pkg is None:
            if path not in self._sources:
                raise GenerationError(f"no Go source for package {path}")
            pkg = self._packages[path] = parse_package(path, self._sources[path])
        return pkg

    def lookup(self, path: str, name: str):
        t = self.package(path).types.get(name)
        if t is None:
            raise GenerationError(f"no type {name} in Go package {path}")
        return t

    # Type expressions, as written, resolved in a package and a file's imports.
    def parse_expr(self, expr: str, pkg_path: str, imports: dict):
        if expr.startswith("*"):
            return ("ptr", self.parse_expr(expr[1:], pkg_path, imports))
        if expr.startswith("[]"):
            return ("slice", self.parse_expr(expr[2:], pkg_path, imports))
        if expr.startswith("map["):
            depth, i = 0, 3
            for i in range(3, len(expr)):
                depth += {"[": 1, "]": -1}.get(expr[i], 0)
                if depth == 0:
                    break
            return ("map", self.parse_expr(expr[4:i], pkg_path, imports),
                    self.parse_expr(expr[i + 1:], pkg_path, imports))
        if expr in ("interface{}", "any"):
            return ("iface",)
        if expr in BASIC:
            return ("basic", {"byte": "uint8", "rune": "int32"}.get(expr, expr))
        if "." in expr:
            alias, name = expr.split(".", 1)
            if alias not in imports:
                raise GenerationError(f"{pkg_path}: unknown import {alias!r} in {expr!r}")
            return self._dealias(("named", imports[alias], name))
        return self._dealias(("named", pkg_path, expr))

    def _dealias(self, t):
        """`type X = Y` names Y itself (reflect prints Y)."""
        for _ in range(20):
            decl = self.package(t[1]).types.get(t[2])
            if decl is None or not decl.alias:
                return t
            t = self.parse_expr(decl.underlying, t[1], decl.imports)
            if t[0] != "named":
                return t
        raise GenerationError(f"alias cycle at {t}")

    def go_string(self, t) -> str:
        """reflect.Type.String() of a type."""
        tag = t[0]
        if tag == "ptr":
            return "*" + self.go_string(t[1])
        if tag == "slice":
            return "[]" + self.go_string(t[1])
        if tag == "map":
            return f"map[{self.go_string(t[1])}]{self.go_string(t[2])}"
        if tag == "iface":
            return "interface {}"
        if tag == "basic":
            return t[1]
        return f"{self.package(t[1]).name}.{t[2]}"

    def underlying(self, t):
        """A named type -> the type it is declared as (custom decoders stop here)."""
        seen = 0
        while t[0] == "named":
            if (t[1], t[2]) in CUSTOM:
                return t
            self.check_custom(t)
            decl = self.lookup(t[1], t[2])
            if decl.is_struct:
                return t
            if decl.underlying == "<opaque>":
                raise GenerationError(f"{t[1]}.{t[2]} is not a data type")
            t = self.parse_expr(decl.underlying, t[1], decl.imports)
            seen += 1
            if seen > 20:
                raise GenerationError(f"type cycle at {t}")
        return t

    def check_custom(self, t) -> None:
        if t[0] == "named" and (t[1], t[2]) not in CUSTOM and t[2] in self.package(t[1]).unmarshalers:
            raise GenerationError(f"{t[1]}.{t[2]} decodes itself (UnmarshalJSON): say in CUSTOM what it accepts")

    def struct_fields(self, path: str, name: str) -> dict:
        """json name -> (embedding path of Go field names, type), inline structs flattened
        the way encoding/json promotes them (the shallower field wins)."""
        out: dict = {}
        self._collect(path, name, (), out, depth=0)
        return {k: (v[0], v[1]) for k, v in out.items()}

    def _collect(self, path, name, embed, out, depth):
        decl = self.lookup(path, name)
        if not decl.is_struct:
            raise GenerationError(f"{path}.{name} is not a struct")
        for f in decl.fields:
            if f.embedded:
                t = self.parse_expr(f.type, path, f.imports)
                while t[0] == "ptr":
                    t = t[1]
                if t[0] != "named":
                    raise GenerationError(f"{path}.{name}: embedded {f.type}")
                self._collect(t[1], t[2], embed + (f.name,), out, depth + 1)
                continue
            if f.json == "-" or not f.name[:1].isupper():
                continue
            known = out.get(f.json)
            if known is not None and known[2] <= depth:
                continue
            out[f.json] = (embed, self.parse_expr(f.type, path, f.imports), depth)


# -- the OpenAPI side -------------------------------------------------------------------------

_RESOURCE_PATH = re.compile(r"^/(?:api/(v1)|apis/([^/]+)/([^/]+))/(.+)$")


def _definitions_and_kinds(openapi: dict[str, str]):
    definitions: dict = {}
    kinds: dict = {}
    for fname in sorted(openapi):
        doc = json.loads(openapi[fname])
        for key, schema in (doc.get("components") or {}).get("schemas", {}).items():
            known = definitions.get(key)
            if known is not None and _strip_gvk(known) != _strip_gvk(schema):
                raise GenerationError(f"definition {key} differs between documents ({fname})")
            definitions.setdefault(key, schema)
        for path, item in (doc.get("paths") or {}).items():
            m = _RESOURCE_PATH.match(path)
            if m is None:
                continue
            segments = m.group(4).split("/")
            if segments[0] == "watch":
                continue
            namespaced = len(segments) >= 3 and segments[0] == "namespaces" and segments[1] == "{namespace}"
            if namespaced:
                segments = segments[2:]
            if len(segments) > 2:
                continue  # a subresource (status, scale, binding, eviction...)
            for op in item.values():
                if not isinstance(op, dict) or "x-kubernetes-group-version-kind" not in op:
                    continue
                gvk = op["x-kubernetes-group-version-kind"]
                key = (gvk["group"], gvk["version"], gvk["kind"])
                entry = kinds.setdefault(key, {"resource": segments[0], "namespaced": False, "definition": None})
                entry["namespaced"] = entry["namespaced"] or namespaced
    for key, schema in definitions.items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            k = (gvk["group"], gvk["version"], gvk["kind"])
            if k in kinds and not kinds[k]["definition"]:
                kinds[k]["definition"] = key
    missing = [k for k, v in kinds.items() if not v["definition"]]
    if missing:
        raise GenerationError(f"kinds without a definition: {missing}")
    return definitions, kinds


def _strip_gvk(schema: dict) -> dict:
    return {k: v for k, v in schema.items() if k != "x-kubernetes-group-version-kind"}


def _ref(schema: dict) -> str | None:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    for sub in schema.get("allOf") or ():
        if "$ref" in sub:
            return sub["$ref"].rsplit("/", 1)[-1]
    return None


def _go_location(definition: str) -> tuple[str, str]:
    """OpenAPI definition name -> (Go import path, type name)."""
    if not definition.startswith("io.k8s."):
        raise GenerationError(f"definition {definition} is not a Kubernetes type")
    rest = definition[len("io.k8s."):]
    for module in sorted(_MODULES, key=len, reverse=True):
        if rest.startswith(module + "."):
            parts = rest[len(module) + 1:].split(".")
            return f"k8s.io/{module}/" + "/".join(parts[:-1]), parts[-1]
    raise GenerationError(f"definition {definition}: no Go module for it")


# -- building the data ----------------------------------------------------------------------


class _Builder:
    def __init__(self, definitions: dict, go: GoWorld):
        self.definitions = definitions
        self.go = go
        self.exprs: list = []
        self._expr_index: dict = {}
        self.structs: list = []
        self._struct_index: dict = {}
        self._pending: list = []
        self.differences: list[str] = []

    def expr(self, entry) -> int:
        key = json.dumps(entry, separators=(",", ":"))
        index = self._expr_index.get(key)
        if index is None:
            index = self._expr_index[key] = len(self.exprs)
            self.exprs.append(entry)
        return index

    def struct(self, definition: str, go_type) -> int:
        index = self._struct_index.get(definition)
        if index is None:
            index = self._struct_index[definition] = len(self.structs)
            self.structs.append(None)
            self._pending.append((index, definition, go_type))
        return index

    def finish(self) -> None:
        while self._pending:
            index, definition, go_type = self._pending.pop(0)
            self.structs[index] = self._build_struct(definition, go_type)

    def _build_struct(self, definition: str, go_type) -> list:
        schema = self.definitions[definition]
        go_fields = self.go.struct_fields(go_type[1], go_type[2])
        props = schema.get("properties") or {}
        only_go = sorted(set(go_fields) - set(props))
        only_openapi = sorted(set(props) - set(go_fields))
        if only_openapi:
            raise GenerationError(f"{definition}: OpenAPI fields not in the Go struct: {only_openapi}")
        if only_go:
            raise GenerationError(f"{definition}: Go json fields not in the OpenAPI document: {only_go}")
        fields = []
        for name in sorted(props):
            embed, go_t = go_fields[name]
            if not _FIELD_TEXT.fullmatch(name):
                raise GenerationError(f"{definition}: a field name the data cannot hold: {name!r}")
            index = self.field_expr(props[name], go_t, f"{definition}.{name}")
            fields.append(f"{name}:{index}:{'.'.join(embed)}" if embed else f"{name}:{index}")
        return [go_type[2], definition, ",".join(fields)]

    def field_expr(self, schema: dict, go_t, where: str) -> int:
        """The expression of a value: [kind, go type string, ...]."""
        while go_t[0] == "ptr":
            go_t = go_t[1]
        go_string = self.go.go_string(go_t)
        self.go.check_custom(go_t)
        resolved = self.go.underlying(go_t)
        ref = _ref(schema)
        target = self.definitions.get(ref) if ref else schema
        if ref and target is None:
            raise GenerationError(f"{where}: unknown definition {ref}")
        if resolved[0] == "named" and (resolved[1], resolved[2]) in CUSTOM:
            return self.expr([CUSTOM[(resolved[1], resolved[2])], go_string])
        if resolved[0] == "named":  # a struct
            if not ref:
                raise GenerationError(f"{where}: Go struct {go_string}, OpenAPI {schema.get('type')}")
            if target.get("type") not in (None, "object"):
                raise GenerationError(f"{where}: Go struct {go_string}, OpenAPI type {target.get('type')}")
            return self.expr(["struct", go_string, self.struct(ref, resolved)])
        if resolved[0] == "iface":
            return self.expr(["any", go_string])
        if resolved[0] == "slice":
            elem = resolved[1]
            bare = elem
            while bare[0] == "ptr":
                bare = bare[1]
            if self.go.underlying(bare) == ("basic", "uint8"):
                self._expect(where, target, "string")
                return self.expr(["bytes", go_string])
            self._expect(where, target, "array")
            return self.expr(["array", go_string, self.field_expr(target.get("items") or {}, elem, where + "[]")])
        if resolved[0] == "map":
            key = self.go.underlying(resolved[1])
            if key != ("basic", "string"):
                raise GenerationError(f"{where}: map key {self.go.go_string(resolved[1])}")
            self._expect(where, target, "object")
            extra = target.get("additionalProperties")
            if not isinstance(extra, dict):
                raise GenerationError(f"{where}: Go map without additionalProperties")
            return self.expr(["map", go_string, self.field_expr(extra, resolved[2], where + "{}")])
        basic = resolved[1]
        if basic == "string":
            self._expect(where, target, "string")
            return self.expr(["string", go_string])
        if basic == "bool":
            self._expect(where, target, "boolean")
            return self.expr(["bool", go_string])
        if basic in ("float32", "float64"):
            self._expect(where, target, "number")
            return self.expr(["float", go_string, 32 if basic == "float32" else 64])
        if basic in _INTS:
            self._expect(where, target, "integer")
            low, high = _INTS[basic]
            return self.expr(["int", go_string, low, high])
        raise GenerationError(f"{where}: Go type {go_string}")

    def _expect(self, where: str, schema: dict, openapi_type: str) -> None:
        got = schema.get("type")
        if got != openapi_type:
            raise GenerationError(f"{where}: Go decodes a {openapi_type}, OpenAPI says {got!r}")


def build(inputs: dict) -> dict:
    """The data of one release from its inputs (read_release): pure, so that
    tests can run it on made-up inputs."""
    definitions, kinds = _definitions_and_kinds(inputs["openapi"])
    go = GoWorld(inputs["go"])
    builder = _Builder(definitions, go)
    rows = []
    for (group, version, kind) in sorted(kinds):
        entry = kinds[(group, version, kind)]
        path, name = _go_location(entry["definition"])
        root = builder.struct(entry["definition"], ("named", path, name))
        rows.append([group, version, kind, root, entry["namespaced"], entry["resource"]])
    builder.finish()
    return {
        "format": FORMAT,
        "release": inputs["release"],
        "kinds": rows,
        "structs": builder.structs,
        "exprs": builder.exprs,
    }


def encode(data: dict) -> bytes:
    """The document as stored: compact JSON, gzip'd without a timestamp."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with data/ instead of writing it")
    parser.add_argument("minors", nargs="*", default=sorted(RELEASES), help="minors to generate (default: all)")
    args = parser.parse_args(argv)
    differ = False
    for minor in args.minors:
        data = build(read_release(RELEASES[minor]))
        path = data_file(minor)
        if args.check:
            stored = json.loads(gzip.decompress(path.read_bytes())) if path.exists() else None
            same = stored == data
            differ = differ or not same
            print(f"{path.name}: {'up to date' if same else 'DIFFERS'}")
        else:
            blob = encode(data)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(blob)
            print(f"{path.name}: {len(data['kinds'])} kinds, {len(data['structs'])} structs, "
                  f"{len(data['exprs'])} types, {len(blob):,} bytes")
    return 1 if differ else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (GenerationError, GoSourceError) as exc:
        print(f"generate: {exc}", file=sys.stderr)
        sys.exit(1)
