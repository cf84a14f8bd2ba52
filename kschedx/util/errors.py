"""Errors that end a command, each with the exit code result-schema.md gives it."""


class KschedxError(Exception):
    exit_code = 1

    def lines(self) -> list[str]:
        """What stderr says, a line each (most errors are one)."""
        return [str(self)]


class UsageError(KschedxError):
    exit_code = 2


class InputError(KschedxError):
    """Unreadable or invalid input: a fixture, a kubeconfig, a config file.

    The message names the file, the object (kind/namespace/name) and the field
    when they are known, so one line on stderr is enough to fix the input.
    """

    exit_code = 3

    def __init__(self, message, *, source=None, obj=None, field=None):
        self.source = source
        self.obj = obj
        self.field = field
        self.detail = message
        parts = []
        if source:
            parts.append(str(source))
        if obj:
            parts.append(str(obj))
        if field:
            parts.append(f"field {field}")
        prefix = ": ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class InvalidObjects(InputError):
    """Objects the API server would refuse (strict validation): the first
    problem is the error's message, every problem a line of its own."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__(self.problems[0])

    def __str__(self) -> str:
        return self.problems[0]

    def lines(self) -> list[str]:
        return self.problems


class OutputError(KschedxError):
    """A file kschedx was asked to write cannot be written (disk full,
    permissions). Exit code 3, like unreadable input: the fix is on this side."""

    exit_code = 3


class ClusterError(KschedxError):
    """The cluster could not be read or written: unreachable, TLS, 401/403, conflict."""

    exit_code = 4
    # True when trying again later may work (the server could not be reached,
    # dropped the connection, answered too slowly): a long-running watch retries.
    transient = False
    # True when a request was sent (or may have been) but no answer came back:
    # timed out, connection lost. For a write, whether it took effect is then
    # unknown: the server may have carried it out, or may still.
    unanswered = False


# What str.splitlines() breaks on: a value quoted in a message (a key, a
# name) may hold any of them, and an error is one line on stderr.
_LINE_BREAKS = {c: repr(chr(c))[1:-1] for c in (0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029)}


def one_line(text: str) -> str:
    """`text` with line breaks written as escapes (\\n, \\x85...)."""
    return text.translate(_LINE_BREAKS)
