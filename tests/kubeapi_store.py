"""In-memory object storage for the test API server.

Objects are kept serialized (compact JSON without kind/apiVersion, as list items
travel on the wire), so a list page is one bytes join and 150,000 pods cost
their JSON size rather than the several-fold size of Python dicts. Writes parse,
change and re-serialize the one object they touch.

Lists are consistent like etcd's: a paginated list reads a snapshot taken when
its first page was served, named by the resourceVersion in the continue token.
Only the most recent snapshots are kept; an older token gets 410 Expired, the
way a compacted etcd revision does.

Every write is also kept in a bounded history of events (ADDED, MODIFIED,
DELETED with their resourceVersions), which watches read from: a watch from a
resourceVersion older than the history holds (or than the last compact())
is told 410 Gone, as kube-apiserver's watch cache tells it.
"""

from __future__ import annotations

import base64
import bisect
import json
import threading
import time
import uuid
from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import datetime, timezone


@dataclass(frozen=True)
class Resource:
    kind: str
    group_version: str  # "v1" for the core group
    plural: str
    namespaced: bool

    @property
    def group(self) -> str:
        return self.group_version.rpartition("/")[0]

    @property
    def list_kind(self) -> str:
        return self.kind + "List"


RESOURCES: tuple[Resource, ...] = (
    Resource("Node", "v1", "nodes", False),
    Resource("Pod", "v1", "pods", True),
    Resource("Namespace", "v1", "namespaces", False),
    Resource("PersistentVolume", "v1", "persistentvolumes", False),
    Resource("PersistentVolumeClaim", "v1", "persistentvolumeclaims", True),
    Resource("Service", "v1", "services", True),
    Resource("ReplicationController", "v1", "replicationcontrollers", True),
    # Served so that tests can prove the client never asks for them.
    Resource("Secret", "v1", "secrets", True),
    Resource("ConfigMap", "v1", "configmaps", True),
    Resource("ReplicaSet", "apps/v1", "replicasets", True),
    Resource("StatefulSet", "apps/v1", "statefulsets", True),
    Resource("Deployment", "apps/v1", "deployments", True),
    Resource("DaemonSet", "apps/v1", "daemonsets", True),
    Resource("Job", "batch/v1", "jobs", True),
    Resource("StorageClass", "storage.k8s.io/v1", "storageclasses", False),
    Resource("CSINode", "storage.k8s.io/v1", "csinodes", False),
    Resource("CSIDriver", "storage.k8s.io/v1", "csidrivers", False),
    Resource("CSIStorageCapacity", "storage.k8s.io/v1", "csistoragecapacities", True),
    Resource("VolumeAttachment", "storage.k8s.io/v1", "volumeattachments", False),
    Resource("RuntimeClass", "node.k8s.io/v1", "runtimeclasses", False),
    Resource("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True),
    Resource("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False),
    Resource("ResourceSlice", "resource.k8s.io/v1", "resourceslices", False),
    Resource("DeviceClass", "resource.k8s.io/v1", "deviceclasses", False),
    Resource("ResourceClaim", "resource.k8s.io/v1", "resourceclaims", True),
    Resource("ResourceClaimTemplate", "resource.k8s.io/v1", "resourceclaimtemplates", True),
)

BY_KIND = {r.kind: r for r in RESOURCES}
BY_PATH = {(r.group_version, r.plural): r for r in RESOURCES}

# Field selectors the real server accepts, per resource (the common subset).
POD_FIELDS = ("metadata.name", "metadata.namespace", "spec.nodeName", "status.phase",
              "spec.schedulerName")
META_FIELDS = ("metadata.name", "metadata.namespace")


def dumps(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def now_rfc3339() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def object_key(resource: Resource, namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if resource.namespaced else name


def _index_fields(resource: Resource, obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}
    if resource.kind == "Pod":
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        fields["spec.nodeName"] = spec.get("nodeName", "")
        fields["status.phase"] = status.get("phase", "")
        fields["spec.schedulerName"] = spec.get("schedulerName", "")
    return fields


class Entry:
    __slots__ = ("raw", "fields")

    def __init__(self, raw: bytes, fields: dict):
        self.raw = raw
        self.fields = fields


class FieldSelectorError(ValueError):
    pass


def parse_field_selector(resource: Resource, text: str | None) -> list[tuple[str, bool, str]]:
    """`a=b,c!=d` -> [(field, wants_equal, value)]; unknown fields raise, as upstream does."""
    if not text:
        return []
    allowed = POD_FIELDS if resource.kind == "Pod" else META_FIELDS
    terms = []
    for clause in text.split(","):
        if "!=" in clause:
            field, _, value = clause.partition("!=")
            equal = False
        elif "==" in clause:
            field, _, value = clause.partition("==")
            equal = True
        elif "=" in clause:
            field, _, value = clause.partition("=")
            equal = True
        else:
            raise FieldSelectorError(f"invalid selector: '{text}'; can't understand '{clause}'")
        field = field.strip()
        if field not in allowed:
            raise FieldSelectorError(f'field label not supported: {field}')
        terms.append((field, equal, value.strip()))
    return terms


def _matches(fields: dict, terms) -> bool:
    for field, equal, value in terms:
        if (fields.get(field, "") == value) != equal:
            return False
    return True


class ContinueExpired(Exception):
    pass


class TooOld(Exception):
    """A watch from a resourceVersion whose events are no longer kept."""

    def __init__(self, asked: int, oldest: int):
        super().__init__(f"too old resource version: {asked} ({oldest})")
        self.asked = asked
        self.oldest = oldest


@dataclass
class Event:
    rv: int
    kind: str
    type: str  # ADDED MODIFIED DELETED
    key: str
    raw: bytes
    fields: dict
    old_fields: dict | None


def encode_continue(rv: int, start: str) -> str:
    # The real server's token: base64 of {"v":"meta.k8s.io/v1","rv":N,"start":KEY}
    token = {"v": "meta.k8s.io/v1", "rv": rv, "start": start}
    return base64.urlsafe_b64encode(dumps(token)).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded))
        return int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"continue key is not valid: {e}") from None


@dataclass
class Page:
    body: bytes
    count: int


class ObjectStore:
    """Thread-safe storage of every kind the test server serves."""

    SNAPSHOTS_KEPT = 8

    def __init__(self, watch_history: int = 1000):
        self.lock = threading.RLock()
        # Notified on every write: open watches wait on it.
        self.cond = threading.Condition(self.lock)
        self.history: deque[Event] = deque(maxlen=watch_history)
        # Events at or below this resourceVersion are no longer kept.
        self.history_floor = 0
        self._rv = 1000
        self._tables: dict[str, dict[str, Entry]] = {r.kind: {} for r in RESOURCES}
        self._sorted: dict[str, list[str] | None] = {r.kind: None for r in RESOURCES}
        self._snapshots: OrderedDict[tuple[str, int], tuple[list[str], list[Entry]]] = OrderedDict()
        # (kind, key) -> monotonic deadline at which a terminating object goes away
        self._pending_removal: dict[tuple[str, str], float] = {}

    # ---- writes -----------------------------------------------------------------

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _record(self, rv: int, kind: str, type_: str, key: str, entry: "Entry",
                old_fields: dict | None) -> None:
        history = self.history
        if history.maxlen is not None and len(history) == history.maxlen:
            self.history_floor = max(self.history_floor, history[0].rv)
        history.append(Event(rv, kind, type_, key, entry.raw, entry.fields, old_fields))
        self.cond.notify_all()

    def _record_deleted(self, kind: str, key: str, entry: "Entry") -> None:
        """A deletion: the object's last state, at the deletion's resourceVersion."""
        rv = self._rv
        obj = json.loads(entry.raw)
        obj.setdefault("metadata", {})["resourceVersion"] = str(rv)
        self._record(rv, kind, "DELETED", key, Entry(dumps(obj), entry.fields), entry.fields)

    def compact(self) -> None:
        """Forget every event so far: a watch from an older resourceVersion gets 410."""
        with self.lock:
            self.history.clear()
            self.history_floor = self._rv

    def events_since(self, kind: str, rv: int, namespace: str | None = None,
                     terms=()) -> list[tuple[int, str, bytes]]:
        """[(rv, type, raw)] of `kind` after `rv`, as a watch with this namespace and
        field selector sees them: an object that starts matching is ADDED, one that
        stops matching DELETED. Raises TooOld when they are no longer all kept."""
        with self.lock:
            if rv < self.history_floor:
                raise TooOld(rv, self.history_floor + 1)
            out = []
            prefix = namespace + "/" if namespace else None
            for ev in reversed(self.history):
                if ev.rv <= rv:
                    break
                if ev.kind != kind or (prefix and not ev.key.startswith(prefix)):
                    continue
                now = _matches(ev.fields, terms) if ev.type != "DELETED" else False
                before = ev.old_fields is not None and _matches(ev.old_fields, terms)
                if ev.type == "DELETED":
                    if before:
                        out.append((ev.rv, "DELETED", ev.raw))
                elif now and before:
                    out.append((ev.rv, "MODIFIED", ev.raw))
                elif now:
                    out.append((ev.rv, "ADDED", ev.raw))
                elif before:
                    out.append((ev.rv, "DELETED", ev.raw))
            out.reverse()
            return out

    def current(self, kind: str, namespace: str | None = None, terms=()) -> list[bytes]:
        """The objects a watch from resourceVersion 0 starts with (ADDED each)."""
        with self.lock:
            keys, entries = self._current(kind)
            prefix = namespace + "/" if namespace else None
            return [e.raw for k, e in zip(keys, entries)
                    if (prefix is None or k.startswith(prefix)) and _matches(e.fields, terms)]

    @property
    def resource_version(self) -> int:
        return self._rv

    def put(self, obj: dict, *, kind: str | None = None) -> dict:
        """Store (create or replace) one object; fills uid, resourceVersion, creationTimestamp."""
        return self.put_many([obj], kind=kind)[0]

    def put_many(self, objs, *, kind: str | None = None) -> list[dict]:
        out = []
        with self.lock:
            for obj in objs:
                resource = BY_KIND[kind or obj["kind"]]
                obj = dict(obj)
                obj.pop("kind", None)
                obj.pop("apiVersion", None)
                meta = obj["metadata"] = dict(obj.get("metadata") or {})
                if resource.namespaced:
                    meta.setdefault("namespace", "default")
                else:
                    meta.pop("namespace", None)
                meta.setdefault("uid", str(uuid.uuid4()))
                meta.setdefault("creationTimestamp", now_rfc3339())
                meta["resourceVersion"] = str(self._next_rv())
                key = object_key(resource, meta.get("namespace"), meta["name"])
                table = self._tables[resource.kind]
                old = table.get(key)
                if old is None:
                    self._sorted[resource.kind] = None
                entry = table[key] = Entry(dumps(obj), _index_fields(resource, obj))
                self._record(self._rv, resource.kind, "ADDED" if old is None else "MODIFIED", key, entry,
                             None if old is None else old.fields)
                out.append(obj)
        return out

    def put_raw_many(self, kind: str, items) -> None:
        """Bulk load already-complete objects [(key, raw_json_bytes, fields)] (benchmarks)."""
        with self.lock:
            table = self._tables[kind]
            for key, raw, fields in items:
                table[key] = Entry(raw, fields)
            self._sorted[kind] = None
            self._next_rv()
            # Not one event each: a watch from before this load relists.
            self.history.clear()
            self.history_floor = self._rv
            self.cond.notify_all()

    def delete(self, kind: str, namespace: str | None, name: str) -> bool:
        resource = BY_KIND[kind]
        key = object_key(resource, namespace, name)
        with self.lock:
            self._pending_removal.pop((kind, key), None)
            entry = self._tables[kind].pop(key, None)
            if entry is None:
                return False
            self._sorted[kind] = None
            self._next_rv()
            self._record_deleted(kind, key, entry)
            return True

    def remove_later(self, kind: str, key: str, delay: float) -> None:
        with self.lock:
            self._pending_removal[(kind, key)] = time.monotonic() + delay

    def reap(self) -> None:
        """Remove terminating objects whose grace has run out (called on every request)."""
        if not self._pending_removal:
            return
        now = time.monotonic()
        with self.lock:
            for (kind, key), deadline in list(self._pending_removal.items()):
                if deadline <= now:
                    del self._pending_removal[(kind, key)]
                    entry = self._tables[kind].pop(key, None)
                    if entry is not None:
                        self._sorted[kind] = None
                        self._next_rv()
                        self._record_deleted(kind, key, entry)

    def expire_snapshots(self) -> None:
        """Forget every list snapshot: outstanding continue tokens now get 410."""
        with self.lock:
            self._snapshots.clear()

    # ---- reads ------------------------------------------------------------------

    def get(self, kind: str, namespace: str | None, name: str) -> dict | None:
        resource = BY_KIND[kind]
        with self.lock:
            entry = self._tables[kind].get(object_key(resource, namespace, name))
            return None if entry is None else json.loads(entry.raw)

    def get_raw(self, kind: str, namespace: str | None, name: str) -> bytes | None:
        resource = BY_KIND[kind]
        with self.lock:
            entry = self._tables[kind].get(object_key(resource, namespace, name))
            return None if entry is None else entry.raw

    def objects(self, kind: str, namespace: str | None = None) -> list[dict]:
        with self.lock:
            keys, entries = self._current(kind)
            return [json.loads(e.raw) for k, e in zip(keys, entries)
                    if namespace is None or k.startswith(namespace + "/")]

    def count(self, kind: str) -> int:
        return len(self._tables[kind])

    def _current(self, kind: str) -> tuple[list[str], list[Entry]]:
        keys = self._sorted[kind]
        if keys is None:
            keys = self._sorted[kind] = sorted(self._tables[kind])
        table = self._tables[kind]
        return keys, [table[k] for k in keys]

    def list_page(self, resource: Resource, namespace: str | None, *, limit: int | None,
                  continue_token: str | None, field_selector: str | None) -> Page:
        terms = parse_field_selector(resource, field_selector)
        with self.lock:
            if continue_token:
                rv, start = decode_continue(continue_token)
                snap = self._snapshots.get((resource.kind, rv))
                if snap is None:
                    raise ContinueExpired(encode_continue(self._rv, start))
                keys, entries = snap
            else:
                rv = self._rv
                keys, entries = self._current(resource.kind)
                start = ""
            lo, hi = 0, len(keys)
            if namespace is not None and resource.namespaced:
                lo = bisect.bisect_left(keys, namespace + "/")
                hi = bisect.bisect_left(keys, namespace + "0")  # "0" sorts right after "/"
            if start:
                lo = max(lo, bisect.bisect_left(keys, start))
            picked: list[bytes] = []
            i = lo
            while i < hi and (limit is None or len(picked) < limit):
                entry = entries[i]
                if not terms or _matches(entry.fields, terms):
                    picked.append(entry.raw)
                i += 1
            if terms:
                # Skip trailing non-matching items so the last page has no continue token.
                while i < hi and not _matches(entries[i].fields, terms):
                    i += 1
            meta = {"resourceVersion": str(rv)}
            if i < hi:
                meta["continue"] = encode_continue(rv, keys[i - 1] + "\x00")
                if not terms:
                    meta["remainingItemCount"] = hi - i
                if not continue_token:
                    self._snapshots[(resource.kind, rv)] = (keys, entries)
                    while len(self._snapshots) > self.SNAPSHOTS_KEPT:
                        self._snapshots.popitem(last=False)
        head = (b'{"kind":"' + resource.list_kind.encode() + b'","apiVersion":"'
                + resource.group_version.encode() + b'","metadata":' + dumps(meta) + b',"items":[')
        return Page(head + b",".join(picked) + b"]}", len(picked))

    # ---- read-modify-write --------------------------------------------------------

    def update(self, kind: str, namespace: str | None, name: str, change) -> dict | None:
        """Apply `change(obj) -> obj | None` under the lock; None from change aborts.

        Returns the stored object, or None when it does not exist. Exceptions from
        `change` propagate (the server turns them into Status responses).
        """
        resource = BY_KIND[kind]
        key = object_key(resource, namespace, name)
        with self.lock:
            entry = self._tables[kind].get(key)
            if entry is None:
                return None
            obj = change(json.loads(entry.raw))
            if obj is None:
                return None
            obj["metadata"]["resourceVersion"] = str(self._next_rv())
            new = self._tables[kind][key] = Entry(dumps(obj), _index_fields(resource, obj))
            self._record(self._rv, kind, "MODIFIED", key, new, entry.fields)
            return obj
