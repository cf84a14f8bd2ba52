"""A second process that reads a big JSON snapshot alongside the first.

Loading 150,000 pods is one long pass on one core: the parser builds every
object, then admission and the snapshot look at every pod. Part of that
depends on each pod alone: the key of its spec (which earlier pod has an
equal one), the shape of its metadata and status, its stable uid when it
has none, and which earlier pod has the same PodInfo facts. A forked process
reads the same bytes, an item at a time, and works those out while the parent
is still parsing; admission (Admission.pod's `answer`) and build_snapshot
(ClusterState.facts_groups) take them instead of computing them.

The answers are only ever a shortcut, never a second opinion:
- pods are paired by their order in the file and checked by "namespace/name",
  so an answer is used only for the pod it was computed for;
- "same spec as pod N" means equal as marshal writes it, as spec_share's key
  does in one process: equal text, equal spec;
- what the scan does not follow in an item (no `kind`, a nested List) ends
  its answers there: the parent does the rest as it would alone;
- the answers hold only if the scan, at the end of the document, finds that
  the parser read it as it did (the parser keeps the last of two "items",
  and kubectl writes a List's kind after its items). Otherwise, or when the
  scan dies, build_cluster raises Void and the snapshot is read again in one
  process (commands/load.py).

The answers go through an unlinked temporary file, not a pipe: the parent
reads nothing while its parser runs, and a pipe's buffer would stop the
scan after a few thousand pods. A pipe carries one byte per finished frame.
"""

from __future__ import annotations

import json
import marshal
import os
import re
import signal
from array import array

from ..util.workers import kill_and_reap
from .admission import uid_of
from .shape import pod_shape_but_spec_valid
from .spec_share import claims_key, spec_key, status_facts_key

# Below this a second process costs more than it saves.
MIN_BYTES = 8 << 20

_FRAME_PODS = 4096
_WINDOW = 4 << 20
_WS = re.compile(r"[ \t\n\r]*")
_SEPARATOR = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")
_HEADER = 8


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def start(data: bytes):
    """A ReadAhead over `data` (the bytes of one file), or None when one is
    not worth starting or cannot be."""
    if _OFFERED or len(data) < MIN_BYTES or not hasattr(os, "fork") or cpus() < 2:
        return None
    head = data[:64].lstrip()
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:].lstrip()
    if not head.startswith(b"{"):
        return None
    import tempfile  # here: most runs start no read-ahead

    try:
        out = tempfile.TemporaryFile(prefix="kschedx-")
        note_r, note_w = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        out.close()
        os.close(note_r)
        os.close(note_w)
        return None
    if pid == 0:  # pragma: no cover - the child; its work is checked through the parent
        code = 0
        try:
            os.close(note_r)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C ends
            _Scan(data, out.fileno(), note_w, parent=os.getppid()).run()
        except BaseException:
            code = 1
        os._exit(code)
    os.close(note_w)
    return ReadAhead(pid, out, note_r)


class ReadAhead:
    """The parent's side: the scan's answers, by pod number in the file."""

    def __init__(self, pid: int, out, note_fd: int):
        self._pid = pid
        self._out = out
        self._note = note_fd
        self._offset = 0
        self._frames_told = 0
        self._frames_read = 0
        self._done = False
        self._last = None
        self._valid = None  # the scan's verdict once read

    def answers(self, n: int):
        """(first pod number, keys, reps, shape_ok, uids, facts reps) of the frame holding
        pod `n`, waiting for the scan to write it; None when the scan ended
        before pod `n`. Pods are asked for in order."""
        while True:
            last = self._last
            if last is not None:
                if n < last[0]:
                    return None
                if n < last[0] + len(last[1]):
                    return last
            if self._next_frame() is None:
                return None

    def valid(self) -> bool:
        """Whether the answers given hold: waits for the end of the scan."""
        while self._valid is None and self._next_frame() is not None:
            pass
        return bool(self._valid)

    def _next_frame(self):
        if self._done:
            return None
        while self._frames_read >= self._frames_told:
            try:
                told = os.read(self._note, 4096)
            except OSError:
                told = b""
            if not told:
                self._done = True
                return None
            self._frames_told += len(told)
        try:
            header = os.pread(self._out.fileno(), _HEADER, self._offset)
            size = int.from_bytes(header, "little")
            body = os.pread(self._out.fileno(), size, self._offset + _HEADER)
            frame = marshal.loads(body)
            self._offset += _HEADER + size
            self._frames_read += 1
            if frame[0] == "end":
                self._valid = frame[1] is True
                self._done = True
                return None
            first, keys, reps, oks, uids, freps = frame
            frame = (first, keys.split("\n"), array("i", reps), oks, uids, array("i", freps))
        except (OSError, ValueError, EOFError, TypeError, IndexError):
            self._done = True
            return None
        self._last = frame
        return frame

    def close(self) -> None:
        """Stop the scan if it still runs and let it go."""
        if self._out is None:
            return
        if self._pid is not None:
            kill_and_reap(self._pid)
            self._pid = None
        self._done = True
        os.close(self._note)
        self._out.close()
        self._out = None

    def __del__(self):
        self.close()


# Scans whose file was parsed, by the Origin of its objects, until the
# cluster is built (cluster.build_cluster takes them).
_OFFERED: dict = {}


def offer(origin, ahead: ReadAhead) -> None:
    _OFFERED[origin] = ahead


def take() -> dict:
    """{Origin: ReadAhead} offered since the last take(): the caller closes them."""
    taken = dict(_OFFERED)
    _OFFERED.clear()
    return taken


def discard() -> None:
    """Stop scans nobody took (loading failed before the cluster was built)."""
    for ahead in take().values():
        ahead.close()


class Void(Exception):
    """The answers used did not hold for the document as parsed (read_ahead
    checks this once the whole document is scanned): load without them."""


class _GiveUp(Exception):
    pass


class _Scan:
    """The child's side: the items of the top-level List, an item at a time,
    the bytes decoded a window at a time (the file is never held as text)."""

    def __init__(self, data: bytes, out_fd: int, note_fd: int, parent: int | None = None):
        self.data = data
        # The parent's pid: a scan whose parent is gone stops (see _more).
        self.parent = parent
        self.pos = 3 if data[:3] == b"\xef\xbb\xbf" else 0
        self.text = ""
        self.i = 0
        self.out_fd = out_fd
        self.note_fd = note_fd
        self.scan = json.JSONDecoder().scan_once
        self.reps: dict = {}
        self.freps: dict = {}
        self.answering = True
        self.n = 0
        self._frame_start = 0
        self._keys: list[str] = []
        self._reps = array("i")
        self._freps = array("i")
        self._oks = bytearray()
        self._uids: list = []

    def run(self) -> None:
        valid = False
        if json.detect_encoding(self.data[:4]) in ("utf-8", "utf-8-sig"):
            try:
                valid = self._document()
            except (_GiveUp, ValueError, StopIteration, IndexError, KeyError, TypeError, AttributeError):
                valid = False
        self._flush()
        self._write(("end", valid))

    # -- text --------------------------------------------------------------------
    def _more(self) -> bool:
        data, pos = self.data, self.pos
        if pos >= len(data):
            return False
        if self.parent is not None and os.getppid() != self.parent:
            raise _GiveUp  # nobody reads the answers
        end = min(pos + _WINDOW, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:  # not inside a UTF-8 sequence
            end += 1
        self.text = self.text[self.i:] + data[pos:end].decode("utf-8")
        self.i = 0
        self.pos = end
        return True

    def _skip(self) -> str:
        """The next non-blank character (not consumed)."""
        while True:
            i = _WS.match(self.text, self.i).end()
            if i < len(self.text):
                self.i = i
                return self.text[i]
            self.i = i
            if not self._more():
                raise _GiveUp

    def _value(self):
        """The JSON value at the cursor; one that reaches the end of the
        window may be cut short, so it is read again with more text."""
        while True:
            try:
                value, end = self.scan(self.text, self.i)
            except (ValueError, StopIteration):
                value, end = None, None
            if end is not None and end < len(self.text):
                self.i = end
                return value
            if not self._more():
                if end is None:
                    raise _GiveUp
                self.i = end
                return value

    def _expect(self, char: str) -> None:
        if self._skip() != char:
            raise _GiveUp
        self.i += 1

    # -- structure ---------------------------------------------------------------
    def _document(self) -> bool:
        """Whether the answers hold for the objects the parser makes of the
        whole document: known only at its end (the parser keeps the last of
        two "items", and kubectl writes the list's kind after its items)."""
        self._expect("{")
        kind = None
        seen_items = False
        if self._skip() == "}":
            return False
        while True:
            if self._skip() != '"':
                return False
            key = self._value()
            self._expect(":")
            self._skip()
            if key == "items":
                if seen_items:
                    return False
                seen_items = True
                self._items()
            else:
                value = self._value()
                if key == "kind":
                    kind = value
            if self._after_member("}"):
                break
        # Only a List's items are the file's objects (fixtures._flatten).
        return seen_items and kind.__class__ is str and (kind == "List" or kind.endswith("List"))

    def _items(self) -> None:
        self._expect("[")
        if self._skip() == "]":
            self.i += 1
            return
        scan, separator = self.scan, _SEPARATOR.match
        while True:
            # The common case inline (an item, then a comma, both inside the
            # window); _value and _after_member do the rest.
            text = self.text
            try:
                item, end = scan(text, self.i)
            except (ValueError, StopIteration):
                end = None
            if end is not None and end < len(text):
                self.i = end
            else:
                item = self._value()
            if self.answering:
                try:
                    self._item(item)
                except _GiveUp:
                    # From here on the parent does it all; the pods answered
                    # so far keep their answers.
                    self._flush()
                    self.answering = False
            text = self.text
            past = separator(text, self.i)
            if past is not None and past.end() < len(text):
                self.i = past.end()
                continue
            if self._after_member("]"):
                return
            self._skip()

    def _after_member(self, close: str) -> bool:
        """Past the comma or the `close` after a member: True at the end."""
        c = self._skip()
        self.i += 1
        if c == close:
            return True
        if c != ",":
            raise _GiveUp
        return False

    def _item(self, item) -> None:
        if item.__class__ is not dict:
            raise _GiveUp
        kind = item.get("kind")
        if kind.__class__ is not str or kind.endswith("List"):
            raise _GiveUp  # kind taken from the list's, or a nested list: as the parent flattens it
        if kind != "Pod":
            return
        meta = item.get("metadata")
        if meta.__class__ is not dict:
            raise _GiveUp
        name, ns = meta.get("name"), meta.get("namespace") or "default"  # as admission's metadata() has it
        if not (name and name.__class__ is str and ns.__class__ is str) or "\n" in name or "\n" in ns:
            raise _GiveUp
        key = f"{ns}/{name}"
        spec = item.get("spec")
        if spec.__class__ is not dict:
            raise _GiveUp
        skey = spec_key(spec, item)
        rep = self.reps.setdefault(skey, self.n) if skey is not None else -1
        self._keys.append(key)
        self._reps.append(rep)
        self._freps.append(self._facts_rep(rep, spec, item))
        self._oks.append(1 if pod_shape_but_spec_valid(item) else 0)
        self._uids.append(None if meta.get("uid") else uid_of(key))
        self.n += 1
        if len(self._keys) >= _FRAME_PODS:
            self._flush()

    def _facts_rep(self, rep: int, spec: dict, item: dict) -> int:
        """The first pod whose PodInfo facts are this one's (snapshot.SpecFacts):
        the same admitted spec, the same claims, the same resized requests."""
        if rep < 0:
            return -1
        volumes = spec.get("volumes")
        claims = claims_key(volumes) if volumes is not None else ()
        said = status_facts_key(item.get("status"))
        if claims is None or said is None:
            return -1
        return self.freps.setdefault((rep, claims, said), self.n)

    # -- answers -----------------------------------------------------------------
    def _flush(self) -> None:
        if not self._keys:
            return
        self._write((self._frame_start, "\n".join(self._keys), self._reps.tobytes(), bytes(self._oks),
                     self._uids, self._freps.tobytes()))
        self._frame_start = self.n
        self._keys, self._reps, self._oks, self._uids = [], array("i"), bytearray(), []
        self._freps = array("i")

    def _write(self, frame) -> None:
        body = marshal.dumps(frame)
        block = len(body).to_bytes(_HEADER, "little") + body
        view = memoryview(block)
        while view:
            view = view[os.write(self.out_fd, view):]
        os.write(self.note_fd, b".")
