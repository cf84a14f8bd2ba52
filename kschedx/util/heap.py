"""Freed memory given back to the system by a process that runs for hours.

A pod's line on 5,000 nodes is a text of some 13 MB, made and dropped for
each explanation. glibc's malloc serves blocks that big from the heap once
it has seen a few freed (its mmap threshold rises to their size), and
keeps the pages of what is freed there for later: `explain --watch` then
grew by hundreds of MiB over a busy hour without holding any more data.
malloc_trim(0) hands back every free page of every arena.
"""

from __future__ import annotations

_TRIM = None  # the C function, or False where there is none (not glibc)


def give_back() -> None:
    """Return the free pages of the heap to the system (glibc); elsewhere nothing."""
    global _TRIM
    if _TRIM is None:
        _TRIM = False
        import ctypes
        import ctypes.util

        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            trim = libc.malloc_trim
        except (OSError, AttributeError):
            return
        trim.argtypes = [ctypes.c_size_t]
        trim.restype = ctypes.c_int
        _TRIM = trim
    if _TRIM:
        _TRIM(0)
