"""The SnapshotInfo object of a snapshot file."""

from __future__ import annotations

# A snapshot written by `kschedx snapshot` carries one object of this kind: what
# the fixture cannot show by itself (the kinds that could not be read), so that
# explain on the file reports what explain on the cluster reports.
SNAPSHOT_INFO_API_VERSION = "kschedx/v1"
SNAPSHOT_INFO_KIND = "SnapshotInfo"


def snapshot_info(*, server: str | None, context: str | None, unreadable: dict[str, str],
                  fields: str) -> dict:
    """The SnapshotInfo object for a cluster read (`fields`: "scheduling" or "full")."""
    source = {"server": server}
    if context:
        source["context"] = context
    return {"apiVersion": SNAPSHOT_INFO_API_VERSION, "kind": SNAPSHOT_INFO_KIND,
            "metadata": {"name": "snapshot"}, "source": source, "fields": fields,
            "unreadableKinds": dict(sorted(unreadable.items()))}
