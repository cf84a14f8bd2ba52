"""Fixture files -> raw Kubernetes objects (dicts), each tagged with where it came from.

Reads exactly what fixture-format.md allows: files, directories (recursive),
`-` for stdin, `.gz`, JSON, multi-document YAML, and `List` / `*List` kinds.
Nothing here applies defaults; see sources/admission.py for that.
"""

from __future__ import annotations

import io
import json
import os
import sys
import zlib
from dataclasses import dataclass, field, replace

import yaml

from ..util.errors import InputError
from ..util.gc_policy import builds_long_lived
from . import read_ahead as ahead_scan
from .snapshot_info import SNAPSHOT_INFO_API_VERSION, SNAPSHOT_INFO_KIND
from .yaml_loader import FastSafeLoader

# The C parser with a faster constructor: PyYAML's SafeLoader results.
_Loader = FastSafeLoader

FIXTURE_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Origin:
    """Where an object was read from: a file and its document number, and
    (for POD_FILEs, read with `lines=True`) the line of its metadata.name."""

    path: str
    document: int = 0
    line: int | None = field(default=None, compare=False)

    def __str__(self):
        return self.path if self.document <= 1 else f"{self.path} (document {self.document})"


def _is_fixture_file(name: str) -> bool:
    if name.endswith(".gz"):
        name = name[:-3]
    return name.endswith(FIXTURE_SUFFIXES)


def expand_paths(paths) -> list[str]:
    """Files and directories -> the ordered list of fixture files to read."""
    files: list[str] = []
    for path in paths:
        if path == "-":
            files.append(path)
            continue
        if os.path.isdir(path):
            found = []
            for root, dirs, names in os.walk(path):
                dirs.sort()
                for name in sorted(names):
                    if _is_fixture_file(name) and not name.startswith("."):
                        found.append(os.path.join(root, name))
            if not found:
                raise InputError("directory holds no .yaml, .yml or .json files", source=path)
            files.extend(found)
        elif os.path.exists(path):
            files.append(path)
        else:
            raise InputError("no such file or directory", source=path)
    return files


# The most input one file may hold, uncompressed. A 150,000-pod snapshot of
# the fields scheduling reads is a few hundred MB; this bounds what a
# compression bomb or a runaway file can cost before anything is parsed.
DEFAULT_MAX_INPUT_BYTES = 2 * 1024**3


def max_input_bytes() -> int:
    value = os.environ.get("KSCHEDX_MAX_INPUT_BYTES", "")
    return int(value) if value.isdigit() else DEFAULT_MAX_INPUT_BYTES


def _too_large(path: str, limit: int, what: str) -> InputError:
    return InputError(f"{what} more than {limit:,} bytes: refused (set KSCHEDX_MAX_INPUT_BYTES to allow more)",
                      source=path)


def _read_bytes(path: str) -> bytes:
    limit = max_input_bytes()
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(path, "rb") as fh:
                data = fh.read(limit + 1)
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), source=path) from None
    if len(data) > limit:
        raise _too_large(path, limit, "holds")
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(path, data, limit)
    elif path.endswith(".gz"):
        # Reading it as text would only report undecodable bytes.
        raise InputError("not a gzip file (the name ends in .gz)", source=path)
    return data


def _gunzip(path: str, data: bytes, limit: int) -> bytes:
    """Decompress every gzip member, never past `limit` bytes of output."""
    out = []
    size = 0
    try:
        while data:
            d = zlib.decompressobj(wbits=31)
            while True:
                chunk = d.decompress(data, 1 << 24)
                size += len(chunk)
                if size > limit:
                    raise _too_large(path, limit, "decompresses to")
                out.append(chunk)
                data = d.unconsumed_tail
                if d.eof or not (data or chunk):
                    break
            if not d.eof:
                raise InputError("not a valid gzip file (Compressed file ended before the end-of-stream marker "
                                 "was reached)", source=path)
            data = d.unused_data.lstrip(b"\x00")
    except zlib.error as exc:
        raise InputError(f"not a valid gzip file ({exc})", source=path) from None
    return b"".join(out)


def _yaml_error(path: str, exc: yaml.YAMLError) -> InputError:
    if isinstance(exc, yaml.reader.ReaderError):
        # str() of it spans two lines and names "<file>": say it in one.
        char = exc.character
        what = f"#x{char:04x}" if isinstance(char, int) else repr(char)
        return InputError(f"malformed YAML: character {what} at position {exc.position}: {exc.reason}",
                          source=path)
    mark = getattr(exc, "problem_mark", None)
    problem = " ".join((getattr(exc, "problem", None) or str(exc)).split())
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
    context = getattr(exc, "context", None)
    cmark = getattr(exc, "context_mark", None)
    if context and cmark is not None and (mark is None or cmark.line != mark.line):
        # The problem is often only noticed lines later (at the end of the
        # file for an unclosed bracket): say where the construct started.
        problem = f"{problem} ({context} at line {cmark.line + 1}, column {cmark.column + 1})"
    return InputError(f"malformed YAML: {where}{problem}", source=path)


def parse_documents(path: str, data, duplicates: dict | None = None) -> list[tuple[int, object]]:
    """Bytes -> (document number, parsed value) for every non-empty document.
    `data` may be a list holding the bytes, which is emptied once they are
    decoded: a 200 MB snapshot's bytes are then gone before its objects are
    made, rather than held next to them. With `duplicates` (a dict), keys
    given twice in a mapping are noted in it (schema/duplicates.py: what
    strict validation reports as `duplicate field`)."""
    box = data if isinstance(data, list) else None
    if box is not None:
        data = box[0]
    text_start = data.lstrip()[:1]
    json_error = None
    if text_start in (b"{", b"[") or _is_json_name(path):
        encoding = json.detect_encoding(data)
        try:
            if box is not None and encoding in ("utf-8", "utf-8-sig"):
                # What json.loads(bytes) does first; the text encodes back to
                # the very bytes (YAML reads them below if this is not JSON).
                text = data.decode(encoding, "surrogatepass")
                box.clear()
                data = None
                try:
                    return [(1, _json_loads(text, duplicates))]
                except ValueError:
                    data = text.encode(encoding, "surrogatepass")
                    raise
            return [(1, _json_loads(data, duplicates))]
        except ValueError as exc:
            # YAML flow style also starts with { or [; let the YAML parser decide,
            # but report a JSON error for what is meant to be JSON.
            json_error = exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", source=path) from None
    if box is not None:
        box.clear()
    data = None
    try:
        if duplicates is None:
            docs = list(yaml.load_all(io.StringIO(text), Loader=_Loader))
        else:
            from .schema.duplicates import load_yaml

            docs, found = load_yaml(text, _Loader)
            duplicates.update(found)
    except yaml.YAMLError as exc:
        if isinstance(json_error, json.JSONDecodeError) and (_is_json_name(path) or path == "<stdin>"):
            raise InputError(f"malformed JSON: line {json_error.lineno}, column {json_error.colno}: "
                             f"{json_error.msg}", source=path) from None
        raise _yaml_error(path, exc) from None
    return [(i, d) for i, d in enumerate(docs, 1) if d is not None]


def _json_loads(data, duplicates: dict | None):
    if duplicates is None:
        return json.loads(data)
    from .schema.duplicates import load_json

    if isinstance(data, bytes):
        data = data.decode(json.detect_encoding(data), "surrogatepass")
    value, found = load_json(data)
    duplicates.update(found)
    return value


def _is_json_name(path: str) -> bool:
    return path.endswith((".json", ".json.gz"))


# The kinds cluster.build_cluster reads before all others.
CLASS_KINDS = frozenset({"PriorityClass", "RuntimeClass"})
# The kinds read_objects notes as it reads them (ObjectList).
_NOTED_KINDS = CLASS_KINDS | {SNAPSHOT_INFO_KIND}


@dataclass
class FileObjects:
    """The objects one file gave: ObjectList[start:end]. `own`: a snapshot
    kschedx wrote (its first object is kschedx's SnapshotInfo), whose
    objects a live API server served. `duplicates`: the keys given twice,
    as schema/duplicates.py notes them (None when they were not looked for)."""

    path: str
    start: int
    end: int
    own: bool
    duplicates: dict | None = None


class ObjectList(list):
    """read_objects' (object, origin) pairs, with the PriorityClass and
    RuntimeClass pairs among them in `classes` and the SnapshotInfo pairs
    in `infos`, noted as they were read: admission reads the classes first,
    and the version to validate against is in a SnapshotInfo; finding them
    again would be one more look at each of 150,000 objects. `files`: which
    file gave which objects (FileObjects)."""

    __slots__ = ("classes", "infos", "files")

    def __init__(self):
        super().__init__()
        self.classes: list = []
        self.infos: list = []
        self.files: list[FileObjects] = []


def is_snapshot_info(obj) -> bool:
    """kschedx's own SnapshotInfo object (what `kschedx snapshot` writes first)."""
    return obj.__class__ is dict and obj.get("kind") == SNAPSHOT_INFO_KIND \
        and obj.get("apiVersion") == SNAPSHOT_INFO_API_VERSION


# How a snapshot kschedx wrote begins (sources/writer.py: the SnapshotInfo
# first, its apiVersion and kind its first keys), in JSON and in YAML.
_OWN_STARTS = (b'"items":[\n{"apiVersion":"' + SNAPSHOT_INFO_API_VERSION.encode() + b'","kind":"'
               + SNAPSHOT_INFO_KIND.encode() + b'"',
               b"apiVersion: " + SNAPSHOT_INFO_API_VERSION.encode() + b"\nkind: " + SNAPSHOT_INFO_KIND.encode())


def looks_written_by_kschedx(data: bytes) -> bool:
    """Whether the bytes begin as a `kschedx snapshot` file does: a hint,
    before parsing, that no key needs noting (read_objects checks the
    first object once parsed)."""
    head = data[:160]
    return any(start in head for start in _OWN_STARTS)


def _flatten(value, origin: Origin, out: ObjectList):
    if not isinstance(value, dict):
        raise InputError(
            f"expected a Kubernetes object (a mapping with apiVersion and kind), got {type(value).__name__}",
            source=origin,
        )
    kind = value.get("kind")
    if not kind or not isinstance(kind, str):
        meta = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
        name = meta.get("name")
        raise InputError(
            "object has no kind" + (f" (metadata.name {name!r})" if name else ""),
            source=origin,
            field="kind",
        )
    if kind == "List" or (kind.endswith("List") and "items" in value):
        items = value.get("items") or []
        if not isinstance(items, list):
            raise InputError(f"{kind}.items must be a list", source=origin, field="items")
        item_kind = kind[:-4] if kind != "List" else None
        item_version = value.get("apiVersion")
        append = out.append
        for item in items:
            if item.__class__ is dict:
                # The common item, as the call below would take it, without the call.
                given = item.get("kind")
                if given.__class__ is str and given and not given.endswith("List") and given not in _NOTED_KINDS:
                    append((item, origin))
                    continue
            if isinstance(item, dict) and item_kind and "kind" not in item:
                # `kubectl get nodes -o json` items carry kind, but API list
                # responses do not: take it from the list kind.
                item = dict(item, kind=item_kind)
                if item_version and "apiVersion" not in item:
                    item["apiVersion"] = item_version
            _flatten(item, origin, out)
        return
    out.append((value, origin))
    if kind in _NOTED_KINDS:
        (out.infos if kind == SNAPSHOT_INFO_KIND else out.classes).append((value, origin))


def name_lines(data: bytes) -> dict[int, list[int | None]]:
    """{document number: [line of metadata.name of each object, in the order
    _flatten lists them]}, 1-based, for CI annotations that point at a pod.

    Composing the YAML nodes (JSON is read the same way) costs a second
    parse, so only POD_FILEs are read with lines. Whatever cannot be
    composed simply has no line."""
    try:
        text = data.decode("utf-8-sig")
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        nodes = list(yaml.compose_all(io.StringIO(text), Loader=loader))
    except (yaml.YAMLError, UnicodeDecodeError, ValueError):
        return {}
    out: dict[int, list[int | None]] = {}
    for number, node in enumerate(nodes, 1):  # numbered as parse_documents numbers them
        lines: list[int | None] = []
        _node_lines(node, lines)
        out[number] = lines
    return out


def _child(node, key: str):
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
    return None


def _node_lines(node, lines: list) -> None:
    kind = _child(node, "kind")
    kind = kind.value if isinstance(kind, yaml.ScalarNode) else ""
    items = _child(node, "items")
    if kind == "List" or (kind.endswith("List") and items is not None):
        for item in items.value if isinstance(items, yaml.SequenceNode) else ():
            _node_lines(item, lines)
        return
    name = _child(_child(node, "metadata"), "name")
    lines.append(name.start_mark.line + 1 if name is not None else None)


@builds_long_lived
def read_objects(paths, *, lines: bool = False, read_ahead: bool = False,
                 note_duplicates: bool = False) -> ObjectList:
    """Read every object from the given paths, in file and document order;
    with `lines`, each Origin also carries the line of the object's name.
    `read_ahead`: a big JSON file may be read by a second process too
    (sources/read_ahead.py), for the cluster built from these objects.
    `note_duplicates`: note the keys given twice (FileObjects.duplicates),
    but in the files that begin as a snapshot kschedx wrote."""
    out = ObjectList()
    for path in expand_paths(paths):
        label = "<stdin>" if path == "-" else path
        data = _read_bytes(path)
        by_document = name_lines(data) if lines else {}
        duplicates = {} if note_duplicates and not looks_written_by_kschedx(data) else None
        # A big snapshot is read by a second process too (read_ahead.py),
        # which answers part of admission while this one parses.
        ahead = ahead_scan.start(data) if read_ahead and not lines else None
        box = [data]
        del data  # parse_documents lets go of the bytes once decoded
        try:
            documents = parse_documents(label, box, duplicates)
        except BaseException:
            if ahead is not None:
                ahead.close()
            raise
        file_start = len(out)
        for number, doc in documents:
            start = len(out)
            origin = Origin(label, number)
            if ahead is not None:
                ahead_scan.offer(origin, ahead)
                ahead = None
            _flatten(doc, origin, out)
            found = by_document.get(number) or []
            if len(found) == len(out) - start:
                for i, line in enumerate(found, start):
                    if line is not None:
                        out[i] = (out[i][0], replace(out[i][1], line=line))
        own = len(out) > file_start and is_snapshot_info(out[file_start][0])
        out.files.append(FileObjects(label, file_start, len(out), own, duplicates))
    if lines:
        out.classes[:] = [pair for pair in out if pair[0]["kind"] in CLASS_KINDS]  # with their lines
    return out
