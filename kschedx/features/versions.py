"""The Kubernetes versions kschedx reproduces, each minor's gate table
derived from the one gate history (history.py), and version strings read:
`--kube-version` as typed, an API server's /version.

A version is a minor, "1.35" to "1.37": a patch release maps to its minor
(kschedx reproduces one release of each, REFERENCES: the newest patch the
Go module proxy serves). Nothing here guesses: a version kschedx does not
know is refused when typed, and named in a warning when a server reports it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from . import history

# Oldest first. Adding a version: docs/development.md, "A new Kubernetes version".
SUPPORTED_VERSIONS = ("1.35", "1.36", "1.37")
OLDEST = SUPPORTED_VERSIONS[0]
NEWEST = SUPPORTED_VERSIONS[-1]
# The release kschedx reproduces for each minor (and the oracle is built against).
REFERENCES = {"1.35": "v1.35.4", "1.36": "v1.36.3", "1.37": "v1.37.2"}

# `--kube-version`: 1.37, v1.37, 1.37.2, v1.37.2 (a pre-release or build
# suffix as a server reports it is accepted too: v1.37.2-gke.100, v1.37.2+k3s1).
_TYPED = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+][0-9A-Za-z.+-]*)?")
# A server's gitVersion: the numbers at its start, whatever follows.
_GIT_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


class VersionError(ValueError):
    """A version given by hand that kschedx does not reproduce (a usage error)."""


def minor_key(version: str) -> tuple[int, int]:
    """"1.36" -> (1, 36), for comparing minors."""
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def at_least(version: str, since: str) -> bool:
    return minor_key(version) >= minor_key(since)


def _previous(version: str) -> str:
    major, minor = minor_key(version)
    return f"{major}.{minor - 1}"


def check_supported(version: str) -> str:
    if version not in SUPPORTED_VERSIONS:
        raise VersionError(unsupported_text(version))
    return version


def _registered(gate: str, version: str) -> bool:
    first = history.REGISTERED.get(gate, history.FIRST)
    removed = history.REMOVED.get(gate)
    return at_least(version, first) and (removed is None or not at_least(version, removed))


def _effective(specs, version: str):
    """featureSpecAtEmulationAndMinCompatVersion: the last spec whose version
    is at most `version` and whose minimum compatibility version (if any) is
    at most the minor before it."""
    min_compat = minor_key(_previous(version))
    found = None
    for spec in specs:
        if minor_key(spec[0]) > minor_key(version):
            continue
        if len(spec) > 4 and spec[4] is not None and minor_key(spec[4]) > min_compat:
            continue
        found = spec
    return found


@lru_cache(maxsize=None)
def gate_table(version: str) -> tuple[dict, dict]:
    """The minor's gates as its kube-scheduler registers them: ({name: (stage,
    default, lockToDefault, since)}, {name: (gates it needs, ...)})."""
    check_supported(version)
    gates = {}
    for name, specs in history.HISTORY.items():
        if not _registered(name, version):
            continue
        spec = _effective(history.OVERRIDES.get((name, version), specs), version)
        if spec is None:  # every spec is newer: the gate is PreAlpha here, unknown to the flag
            continue
        since, default, stage = spec[:3]
        locked = bool(spec[3]) if len(spec) > 3 else False
        gates[name] = (stage, default, locked, since)
    dependencies = {}
    for name, rows in history.DEPENDENCIES.items():
        if name not in gates:
            continue
        needs = ()
        for row in rows:
            if at_least(version, row[0]):
                needs = tuple(row[1:])
        if needs:
            dependencies[name] = needs
    return gates, dependencies


def reference(version: str) -> str:
    """The release kschedx reproduces for a minor: "v1.36.3"."""
    return REFERENCES[check_supported(version)]


def supported_text() -> str:
    return ", ".join(f"{v} ({reference(v)})" for v in SUPPORTED_VERSIONS)


def unsupported_text(version: str) -> str:
    return f"kube-scheduler {version} is not supported: kschedx reproduces {supported_text()}"


def parse_kube_version(text: str) -> str:
    """`--kube-version` as typed -> a supported minor; VersionError otherwise."""
    m = _TYPED.fullmatch(text.strip())
    if m is None:
        raise VersionError(f"{text!r} is not a Kubernetes version: give a minor such as {NEWEST} "
                           f"(supported: {supported_text()}; {reference(NEWEST)} and v{NEWEST} are read as {NEWEST})")
    minor = f"{int(m.group(1))}.{int(m.group(2))}"
    if minor not in SUPPORTED_VERSIONS:
        raise VersionError(unsupported_text(minor) + (
            f" (the scheduler source of {minor} could not be read yet)" if _newer(minor, NEWEST) else ""))
    return minor


def server_minor(git_version: str | None, major: str | None = None, minor: str | None = None) -> str | None:
    """The minor an API server's /version reports ("1.36"), or None: gitVersion's
    leading numbers (v1.36.2-gke.1, v1.36.2+k3s1), else major and minor
    (a managed cluster's minor may read "36+")."""
    if git_version:
        m = _GIT_VERSION.match(git_version.strip())
        if m is not None and (m.group(1), m.group(2)) != ("0", "0"):
            return f"{int(m.group(1))}.{int(m.group(2))}"
    if major and minor:
        ma, mi = str(major).strip(), str(minor).strip().rstrip("+")
        if ma.isdigit() and mi.isdigit():
            return f"{int(ma)}.{int(mi)}"
    return None


def version_for_server(git_version: str | None, major: str | None = None,
                       minor: str | None = None) -> tuple[str, str | None]:
    """The version to reproduce for a server that reports this /version,
    and a warning when it is not one kschedx knows (None when it is)."""
    found = server_minor(git_version, major, minor)
    shown = git_version or (f"{major}.{minor}" if major and minor else "an unknown version")
    if found is None:
        return NEWEST, (f"the API server reports version {shown!r}, which kschedx cannot read: reproducing "
                        f"kube-scheduler {reference(NEWEST)} (--kube-version chooses another)")
    if found in SUPPORTED_VERSIONS:
        return found, None
    used = NEWEST if _newer(found, NEWEST) else OLDEST
    how = "newer than" if used == NEWEST else "older than"
    return used, (f"the API server is Kubernetes {shown}, {how} the versions kschedx reproduces "
                  f"({', '.join(SUPPORTED_VERSIONS)}): reproducing kube-scheduler {reference(used)} instead "
                  "(--kube-version chooses)")


def run_version(kube_version: str | None, server_git_version: str | None) -> tuple[str, str | None]:
    """The version a run reproduces, and validates its input against:
    --kube-version's (a supported minor), else the API server's (read
    live, or recorded in a snapshot), else the newest; with
    version_for_server's warning when the server's is not one kschedx knows."""
    if kube_version is not None:
        return kube_version, None
    if server_git_version is None:
        return NEWEST, None
    return version_for_server(server_git_version)


def _newer(a: str, b: str) -> bool:
    return minor_key(a) > minor_key(b)
