"""Semantic versions as the DRA CEL environment parses them (blang/semver v4).

DRA parses `version` device attributes and the `semver()` CEL function with
blang's strict Parse; `semver(s, true)` and `isSemver(s, true)` first apply the
Kubernetes normalisation (drop a leading "v", fill missing minor/patch,
strip leading zeros). Error texts are blang's, because a CEL runtime error
quotes them in the scheduler's message.
"""

from __future__ import annotations

_NUMBERS = set("0123456789")
_ALPHANUM = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-") | _NUMBERS
_UINT64_MAX = (1 << 64) - 1


class SemverError(ValueError):
    pass


def _only(s: str, allowed: set) -> bool:
    return all(c in allowed for c in s)


def _leading_zero(s: str) -> bool:
    return len(s) > 1 and s[0] == "0"


def _parse_uint(s: str) -> int:
    # strconv.ParseUint(s, 10, 64)
    if not s or not _only(s, _NUMBERS):
        raise SemverError(f'strconv.ParseUint: parsing "{s}": invalid syntax')
    v = int(s)
    if v > _UINT64_MAX:
        raise SemverError(f'strconv.ParseUint: parsing "{s}": value out of range')
    return v


class Semver:
    """An immutable version; build metadata is kept but never compared."""

    __slots__ = ("major", "minor", "patch", "pre", "build")

    def __init__(self, major: int, minor: int, patch: int, pre=(), build=()):
        self.major, self.minor, self.patch = major, minor, patch
        self.pre = tuple(pre)  # ints for numeric identifiers, str otherwise
        self.build = tuple(build)

    @classmethod
    def parse(cls, s: str) -> "Semver":
        if not s:
            raise SemverError("Version string empty")
        parts = s.split(".", 2)
        if len(parts) != 3:
            raise SemverError("No Major.Minor.Patch elements found")
        nums = []
        for label, part in (("major", parts[0]), ("minor", parts[1])):
            if not _only(part, _NUMBERS):
                raise SemverError(f"Invalid character(s) found in {label} number {_q(part)}")
            if _leading_zero(part):
                raise SemverError(f"{label.capitalize()} number must not contain leading zeroes {_q(part)}")
            nums.append(_parse_uint(part))
        patch = parts[2]
        build: list[str] = []
        pre_strs: list[str] = []
        i = patch.find("+")
        if i != -1:
            build = patch[i + 1:].split(".")
            patch = patch[:i]
        i = patch.find("-")
        if i != -1:
            pre_strs = patch[i + 1:].split(".")
            patch = patch[:i]
        if not _only(patch, _NUMBERS):
            raise SemverError(f"Invalid character(s) found in patch number {_q(patch)}")
        if _leading_zero(patch):
            raise SemverError(f"Patch number must not contain leading zeroes {_q(patch)}")
        nums.append(_parse_uint(patch))
        pre = []
        for p in pre_strs:
            if not p:
                raise SemverError("Prerelease is empty")
            if _only(p, _NUMBERS):
                if _leading_zero(p):
                    raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {_q(p)}")
                pre.append(_parse_uint(p))
            elif _only(p, _ALPHANUM):
                pre.append(p)
            else:
                raise SemverError(f"Invalid character(s) found in prerelease {_q(p)}")
        for b in build:
            if not b:
                raise SemverError("Build meta data is empty")
            if not _only(b, _ALPHANUM):
                raise SemverError(f"Invalid character(s) found in build meta data {_q(b)}")
        return cls(nums[0], nums[1], nums[2], pre, build)

    @classmethod
    def parse_normalized(cls, s: str) -> "Semver":
        """normalizeAndParse of the Kubernetes semver library."""
        if s.startswith("v"):
            s = s[1:]
        parts = s.split(".", 2)
        for i, p in enumerate(parts):
            if len(p) > 1:
                p = p.lstrip("0")
                if not p or p[0] not in _NUMBERS:
                    p = "0" + p
                parts[i] = p
        if len(parts) < 3:
            if any(c in parts[-1] for c in "+-"):
                raise SemverError("short version cannot contain PreRelease/Build meta data")
            while len(parts) < 3:
                parts.append("0")
        return cls.parse(".".join(parts))

    def compare(self, other: "Semver") -> int:
        a = (self.major, self.minor, self.patch)
        b = (other.major, other.minor, other.patch)
        if a != b:
            return 1 if a > b else -1
        if not self.pre and not other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for x, y in zip(self.pre, other.pre):
            if x == y:
                continue
            xi, yi = isinstance(x, int), isinstance(y, int)
            if xi and yi:
                return 1 if x > y else -1
            if xi:
                return -1
            if yi:
                return 1
            return 1 if x > y else -1
        if len(self.pre) == len(other.pre):
            return 0
        return 1 if len(self.pre) > len(other.pre) else -1

    def __eq__(self, other):
        return isinstance(other, Semver) and self.compare(other) == 0

    def __hash__(self):
        return hash((self.major, self.minor, self.patch, self.pre))

    def __str__(self):
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self):
        return f"Semver({str(self)!r})"


def _q(s: str) -> str:
    """Go's %q for the ASCII strings these errors quote."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
