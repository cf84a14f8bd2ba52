"""The SnapshotInfo object of a snapshot file."""

from __future__ import annotations

# A snapshot written by `kschedx snapshot` carries one object of this kind: what
# the fixture cannot show by itself (the kinds that could not be read), so that
# explain on the file reports what explain on the cluster reports.
SNAPSHOT_INFO_API_VERSION = "kschedx/v1"
SNAPSHOT_INFO_KIND = "SnapshotInfo"


def snapshot_info(*, server: str | None, context: str | None, unreadable: dict[str, str],
                  fields: str, version: dict | None = None) -> dict:
    """The SnapshotInfo object for a cluster read (`fields`: "scheduling" or
    "full"; `version`: the server's /version, of which its gitVersion is kept:
    the Kubernetes version explain and simulate reproduce by default)."""
    source = {"server": server}
    if context:
        source["context"] = context
    git_version = server_git_version(version)
    if git_version:
        source["gitVersion"] = git_version
    return {"apiVersion": SNAPSHOT_INFO_API_VERSION, "kind": SNAPSHOT_INFO_KIND,
            "metadata": {"name": "snapshot"}, "source": source, "fields": fields,
            "unreadableKinds": dict(sorted(unreadable.items()))}


def server_git_version(version: dict | None) -> str | None:
    """The gitVersion of a /version answer; major.minor when it has none."""
    if not isinstance(version, dict):
        return None
    git_version = version.get("gitVersion")
    if isinstance(git_version, str) and git_version:
        return git_version
    major, minor = version.get("major"), version.get("minor")
    if isinstance(major, str) and isinstance(minor, str) and major and minor:
        return f"v{major}.{minor}"
    return None
