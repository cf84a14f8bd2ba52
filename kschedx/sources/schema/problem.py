"""A problem found in an object: the field, the upstream text, kschedx's hint."""

from __future__ import annotations


# Problem.reason
UNKNOWN_FIELD = "unknown-field"      # strict decoding: a field the type does not have
DUPLICATE_FIELD = "duplicate-field"  # strict decoding: a field given twice
WRONG_TYPE = "wrong-type"            # decoding: a value of the wrong type or format
NO_KIND_MATCH = "no-kind-match"      # kubectl's REST mapping: no such apiVersion/kind
MISSING_KIND = "missing-kind"        # no kind at all
BAD_API_VERSION = "bad-api-version"  # an apiVersion that is not "group/version" or "version"

# What the API server reports as "strict decoding error"s: kubectl's
# --validate=warn turns these (only) into warnings, --validate=ignore drops
# them. Every other problem fails whatever the setting: the object cannot be
# decoded, or kubectl cannot find where to send it.
STRICT_REASONS = frozenset({UNKNOWN_FIELD, DUPLICATE_FIELD})


class Problem:
    """`field`: the path as the API server names it (`spec.containers[0].image`;
    `apiVersion` or `kind` for the object's type). `message`: the API server's
    (or kubectl's) own text, unchanged. `hint`: what kschedx adds, after it.
    `reason`: UNKNOWN_FIELD, DUPLICATE_FIELD, WRONG_TYPE, NO_KIND_MATCH...

    `aborts`: a type that decodes itself (quantity, int-or-string, time)
    failed: the API server's decoder stops there and reports this error,
    even over a wrong type it met before (which it only noted)."""

    __slots__ = ("field", "message", "reason", "hint", "aborts")

    def __init__(self, field: str, message: str, reason: str, hint: str = "", aborts: bool = False):
        self.field = field
        self.message = message
        self.reason = reason
        self.hint = hint
        self.aborts = aborts

    @property
    def strict(self) -> bool:
        """A strict decoding error (unknown or duplicate field)."""
        return self.reason in STRICT_REASONS

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def __repr__(self) -> str:
        return f"Problem({self.field!r}, {self.message!r}, {self.reason!r}, hint={self.hint!r})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, Problem):
            return NotImplemented
        return (self.field, self.message, self.reason, self.hint) == (other.field, other.message, other.reason,
                                                                       other.hint)

    def __hash__(self) -> int:
        return hash((self.field, self.message, self.reason, self.hint))


def server_message(obj: dict, problems: list[Problem]) -> str:
    """The message of the API server's answer to a create of `obj` with these
    problems, as kubectl prints it after `Error from server (BadRequest):`:
    `Pod in version "v1" cannot be handled as a Pod: strict decoding error:
    unknown field "spec.a", unknown field "spec.b"`. A decoding error stops
    the API server at the first one and hides the strict errors; kubectl's
    own REST mapping errors never reach the server."""
    kind = obj.get("kind")
    api_version = obj.get("apiVersion") if isinstance(obj.get("apiVersion"), str) else ""
    version = api_version.rpartition("/")[2]
    for p in problems:
        if p.reason in (NO_KIND_MATCH, MISSING_KIND, BAD_API_VERSION):
            return p.message
    wrong = [p for p in problems if p.reason == WRONG_TYPE]
    if wrong:
        first = next((p for p in wrong if p.aborts), wrong[0])
        return f"{kind} in version {_go_quote(version)} cannot be handled as a {kind}: {first.message}"
    strict = [p.message for p in problems if p.strict]
    if not strict:
        return ""
    return (f"{kind} in version {_go_quote(version)} cannot be handled as a {kind}: "
            f"strict decoding error: {', '.join(strict)}")


def _go_quote(s: str) -> str:
    """Go's %q for the plain text of an apiVersion."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
