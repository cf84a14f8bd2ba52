"""`kschedx snapshot`: a cluster read, written as a fixture file.

The format follows the file name: `.yaml`/`.yml` is a multi-document YAML
stream (one object per document), `.json` a `v1 List` with one item per line;
either may end in `.gz`. The first object is the SnapshotInfo (kschedx.cluster)
that records what could not be read. Objects come in a fixed kind order, then
by namespace and name, so two snapshots of the same cluster state are the same
bytes (gzip included: no timestamp or file name in its header).

The file is written beside its final name and renamed over it only once
complete: readers see the old file or the new one, never a part. If writing
fails or is interrupted (Ctrl-C, SIGTERM, SIGHUP) the temporary file is
removed and an existing file of that name is left as it was.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import signal
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

from .snapshot_info import SNAPSHOT_INFO_KIND
from ..util.errors import OutputError, UsageError

# Classes and namespaces before what refers to them, pods last (they are the bulk).
KIND_ORDER = (
    SNAPSHOT_INFO_KIND,
    "Namespace",
    "PriorityClass",
    "RuntimeClass",
    "Node",
    "CSINode",
    "CSIDriver",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CSIStorageCapacity",
    "VolumeAttachment",
    "DeviceClass",
    "ResourceSlice",
    "DeviceTaintRule",
    "ResourceClaimTemplate",
    "ResourceClaim",
    "Service",
    "ReplicationController",
    "ReplicaSet",
    "StatefulSet",
    "PodDisruptionBudget",
    "Pod",
)
_RANK = {kind: i for i, kind in enumerate(KIND_ORDER)}

FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json"}


@dataclass
class SnapshotSummary:
    path: str
    format: str  # yaml | json
    compressed: bool
    counts: dict[str, int]  # kind -> objects written (SnapshotInfo not counted)
    size: int  # bytes on disk
    warnings: list[str] = field(default_factory=list)


def output_format(path: str) -> tuple[str, bool]:
    """(yaml|json, gzip?) from the file name; a UsageError for any other name."""
    name = path[:-3] if path.endswith(".gz") else path
    ext = os.path.splitext(name)[1].lower()
    if ext not in FORMATS:
        raise UsageError(f"{path}: the file name must end in .yaml, .yml or .json (optionally .gz)")
    return FORMATS[ext], path.endswith(".gz")


def check_writable(path: str) -> None:
    """Fail before a long cluster read (or evaluation) rather than after it.
    An OutputError (exit 3), as the same path failing at the write would be:
    one rule for a file that cannot be written, whenever it is found out."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        # A missing directory and a file where a directory should be call for different fixes.
        parent = directory
        while parent and not os.path.exists(parent) and os.path.dirname(parent) != parent:
            parent = os.path.dirname(parent)
        if os.path.exists(parent) and not os.path.isdir(parent):
            raise OutputError(f"cannot write {path}: {parent} is a file, not a directory")
        raise OutputError(f"cannot write {path}: no such directory: {directory}")
    if os.path.isdir(path):
        raise OutputError(f"cannot write {path}: it is a directory")
    # os.access() says yes to root on read-only file systems and pseudo file
    # systems (/proc, /sys): creating the temporary file is the real test.
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".partial", dir=directory)
    except OSError as e:
        raise OutputError(f"cannot write {path}: cannot create a file in {directory} ({_reason(e)})") from None
    os.close(fd)
    os.unlink(tmp)


def _reason(e: OSError) -> str:
    return (e.strerror or str(e)).lower()


def sort_key(obj: dict):
    """Kinds in KIND_ORDER, then each kind's objects in the order the API
    server lists them: by their storage key, "namespace/name" as one string
    (so namespace "a-b" comes before "a"). Pods are read back on their nodes
    in file order, which preemption's ties follow: a snapshot must give the
    order a live read gives."""
    meta = obj.get("metadata") or {}
    kind = obj.get("kind") or ""
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    return (_RANK.get(kind, len(KIND_ORDER)), kind, f"{namespace}/{name}" if namespace else name)


def write_snapshot(path: str, objects: list[dict], info: dict) -> SnapshotSummary:
    fmt, compressed = output_format(path)
    ordered = sorted(objects, key=sort_key)
    counts: dict[str, int] = {}
    for obj in ordered:
        counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
    try:
        with _atomic_file(path) as raw:
            if compressed:
                # filename="" and mtime=0: the gzip header carries neither the temporary
                # name nor the time, so the bytes depend on the content only.
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as gz:
                    _write_text(gz, fmt, info, ordered)
            else:
                _write_text(raw, fmt, info, ordered)
            size = raw.tell()
    except OSError as e:
        # Disk full, directory removed or made read-only since the check...:
        # the temporary file is gone and an older file of that name untouched.
        raise OutputError(f"cannot write {path}: {_reason(e)}; nothing was written") from None
    return SnapshotSummary(path, fmt, compressed, counts, size)


def _write_text(binary, fmt: str, info: dict, objects: list[dict]) -> None:
    text = io.TextIOWrapper(binary, encoding="utf-8", newline="\n", write_through=False)
    try:
        if fmt == "json":
            _write_json(text, info, objects)
        else:
            _write_yaml(text, info, objects)
        text.flush()
    finally:
        text.detach()  # the binary stream is closed by its owner


def _write_json(out, info: dict, objects: list[dict]) -> None:
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    out.write('{"apiVersion":"v1","kind":"List","metadata":{},"items":[\n')
    out.write(dumps(info))
    for obj in objects:
        out.write(",\n")
        out.write(dumps(obj))
    out.write("\n]}\n")


def _write_yaml(out, info: dict, objects: list[dict]) -> None:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    docs = [info]
    docs.extend(objects)
    yaml.dump_all(docs, out, Dumper=dumper, sort_keys=False, explicit_start=True,
                  allow_unicode=True, default_flow_style=False)


@contextmanager
def _atomic_file(path: str):
    """A binary file that appears at `path` only when the block completes."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".partial", dir=directory)
    try:
        with _interrupts_as_exceptions(), os.fdopen(fd, "wb") as raw:
            yield raw
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_atomically(path: str, data: bytes) -> None:
    """`data` at `path`, all of it or (on any error or interruption) nothing,
    readable as any new file is (mkstemp's files are private to the owner)."""
    umask = os.umask(0)
    os.umask(umask)
    with _atomic_file(path) as out:
        os.fchmod(out.fileno(), 0o666 & ~umask)
        out.write(data)


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP while a snapshot was being written."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def _interrupts_as_exceptions():
    """SIGTERM and SIGHUP end the process without unwinding (no `finally`);
    while a file is written, turn them into an exception so it is cleaned up.
    Only the main thread may set handlers; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_interrupted(signum, _frame):
        raise Interrupted(signum)

    previous = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, None):
            previous[sig] = signal.signal(sig, raise_interrupted)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
