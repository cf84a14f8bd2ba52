"""The Kubernetes versions kschedx reproduces, and version strings read:
`--kube-version` as typed, an API server's /version.

A version is a minor, "1.35" or "1.36": a patch release maps to its minor
(kschedx reproduces one release of each, REFERENCE). Nothing here guesses:
a version kschedx does not know is refused when typed, and named in a
warning when a server reports it.
"""

from __future__ import annotations

import importlib
import re

# Oldest first. Adding a version: docs/configuration.md, "Adding a version".
SUPPORTED_VERSIONS = ("1.35", "1.36")
OLDEST = SUPPORTED_VERSIONS[0]
NEWEST = SUPPORTED_VERSIONS[-1]

# `--kube-version`: 1.36, v1.36, 1.36.2, v1.36.2 (a pre-release or build
# suffix as a server reports it is accepted too: v1.36.2-gke.100, v1.36.2+k3s1).
_TYPED = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+][0-9A-Za-z.+-]*)?")
# A server's gitVersion: the numbers at its start, whatever follows.
_GIT_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


class VersionError(ValueError):
    """A version given by hand that kschedx does not reproduce (a usage error)."""


def version_module(version: str):
    """The module of a supported minor: its gate table (GATES, DEPENDENCIES),
    REFERENCE and behaviour switches (SWITCHES)."""
    if version not in SUPPORTED_VERSIONS:
        raise VersionError(unsupported_text(version))
    return importlib.import_module(f"{__package__}.v{version.replace('.', '_')}")


def reference(version: str) -> str:
    """The release kschedx reproduces for a minor: "v1.36.2"."""
    return version_module(version).REFERENCE


def supported_text() -> str:
    return ", ".join(f"{v} ({reference(v)})" for v in SUPPORTED_VERSIONS)


def unsupported_text(version: str) -> str:
    return f"kube-scheduler {version} is not supported: kschedx reproduces {supported_text()}"


def parse_kube_version(text: str) -> str:
    """`--kube-version` as typed -> a supported minor; VersionError otherwise."""
    m = _TYPED.fullmatch(text.strip())
    if m is None:
        raise VersionError(f"{text!r} is not a Kubernetes version: give a minor such as {NEWEST} "
                           f"(supported: {supported_text()}; v{NEWEST}.2 and v{NEWEST} are read as {NEWEST})")
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
    return tuple(map(int, a.split("."))) > tuple(map(int, b.split(".")))
