"""kschedx's big, long-lived data and Python's cyclic garbage collector.

Reading a 150,000-pod cluster creates tens of millions of dicts and lists,
which live until the command ends. While they are being created, the cyclic
collector walks every one of them again and again (a full collection each
time the number of objects grows by a quarter), which more than doubles the
time, and finds nothing to free: API objects and documents are trees.

So the functions that build such data run with the collector paused, and
hand what they built to gc.freeze(), which keeps it out of every later
collection. Nothing is kept alive by this: reference counting frees frozen
objects as usual; only reference cycles alive at the freeze would never be
collected, and these builders make none.

One pod's result on 5,000 nodes is also a million objects, but it is written
and dropped before the next pod (streamed output): it is built with the
collector paused (pauses_collector) and never frozen.
"""

from __future__ import annotations

import functools
import gc
from contextlib import contextmanager


_LONG_RUNNING = False


def long_running() -> None:
    """This process runs for hours (explain --watch): a builder first collects
    what is garbage now, so that no reference cycle is frozen for good."""
    global _LONG_RUNNING
    _LONG_RUNNING = True


def builds_long_lived(fn):
    """Run `fn` with the cyclic collector paused, then freeze what exists."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        enabled = gc.isenabled()
        if _LONG_RUNNING:
            gc.collect()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.freeze()
            if enabled:
                gc.enable()

    return wrapper


def pauses_collector(fn):
    """Run `fn` with the cyclic collector paused, freezing nothing: for data
    that is big but short-lived (one pod's result, written and dropped)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with collector_paused():
            return fn(*args, **kwargs)

    return wrapper


@contextmanager
def collector_paused(freeze: bool = False):
    """pauses_collector for a block: one pod's work from its cycle to its
    written output, after which its result is dropped; a cluster's lists
    read and parsed (parsed JSON holds no reference cycles, yet each of the
    millions of dicts a big list makes counts toward the collector's
    thresholds: its passes over an ever larger heap made reading 3-4x
    slower). Collecting meanwhile only walks young objects to free nothing.

    With `freeze`, what exists afterwards is frozen (see freeze_all): only
    for a one-shot process, whose reads live as long as it does."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()


def freeze_all() -> None:
    """Everything that exists now lives as long as the process (a one-shot
    run's snapshot; a worker's inherited state): keep it out of every later
    collection. Process-wide and permanent: reference cycles alive now are
    never collected."""
    gc.freeze()
