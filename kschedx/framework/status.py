"""Status and Code: a plugin's verdict, as in the scheduler framework."""

from __future__ import annotations

from enum import IntEnum


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


class Status:
    """A plugin's answer: a code, reason strings, and the plugin that gave it.

    `details` carries kschedx's explanation (which pods, which claim, ...)
    next to the reasons; it never changes the verdict.
    """

    __slots__ = ("code", "reasons", "plugin", "error", "details")

    def __init__(self, code: Code = Code.SUCCESS, *reasons: str, plugin: str = "", error: str | None = None, details=None):
        self.code = code
        self.reasons = list(reasons)
        self.plugin = plugin
        self.error = error
        self.details = details

    @classmethod
    def as_error(cls, message: str, plugin: str = "") -> "Status":
        return cls(Code.ERROR, message, plugin=plugin, error=message)

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    def is_rejected(self) -> bool:
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> "Status":
        self.plugin = plugin
        return self

    def __repr__(self):
        return f"Status({self.code.label}, {self.reasons!r}, plugin={self.plugin!r})"


_DETAILS = Status.__dict__["details"]  # the slot, under the property below


class DeferredStatus(Status):
    """A Status whose explanation is worked out when first read: `explain()`
    gives what `details` would have held. For verdicts whose explanation is
    costly and often never read (simulate drops placed pods' verdicts); it
    must describe the cycle's state, so it is read or settled (`settle`)
    before the snapshot changes, as ScoreTable's explanations are."""

    __slots__ = ("_explain",)

    def __init__(self, code: Code, *reasons: str, explain):
        super().__init__(code, *reasons)
        self._explain = explain

    @property
    def details(self):
        explain = self._explain
        if explain is not None:
            self._explain = None
            _DETAILS.__set__(self, explain())
        return _DETAILS.__get__(self)

    @details.setter
    def details(self, value) -> None:
        self._explain = None
        _DETAILS.__set__(self, value)

    def settle(self) -> None:
        self.details  # noqa: B018 - computed now, kept


SUCCESS = None  # plugins return None for Success, as upstream returns a nil *Status


def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS
