"""FitError.Error(): the "0/N nodes are available: ..." sentence."""

from __future__ import annotations

from .status import Status


def fit_error_message(num_all: int, statuses: dict, absent: Status | None, pre_filter_msg: str = "") -> str:
    """The message without its PostFilter part.

    A PreFilter rejection stands alone; otherwise each distinct reason is
    counted over the nodes that gave it (nodes without an explicit status
    share `absent`), written "<count> <reason>", and the strings are sorted
    as plain strings — so "10 ..." sorts before "2 ...", like upstream.
    """
    message = f"0/{num_all} nodes are available:"
    if pre_filter_msg:
        return message + f" {pre_filter_msg}."
    counts: dict[str, int] = {}
    for st in statuses.values():
        for reason in st.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    if len(statuses) < num_all and absent is not None:
        for reason in absent.reasons:
            counts[reason] = counts.get(reason, 0) + num_all - len(statuses)
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    if parts:
        message += " " + ", ".join(parts) + "."
    return message


def go_list(items) -> str:
    """fmt's %v of a []string: [a b c]."""
    return "[" + " ".join(items) + "]"
