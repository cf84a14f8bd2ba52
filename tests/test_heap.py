"""util/heap.py: giving freed pages back is harmless wherever it runs."""

from __future__ import annotations

from kschedx.util import heap


def test_give_back_runs_and_remembers_what_it_found(monkeypatch):
    monkeypatch.setattr(heap, "_TRIM", None)
    heap.give_back()
    found = heap._TRIM
    assert found is False or callable(found)  # glibc's malloc_trim, or nothing to call
    heap.give_back()  # found once, called again
    assert heap._TRIM is found


def test_without_malloc_trim_nothing_is_called(monkeypatch):
    monkeypatch.setattr(heap, "_TRIM", False)
    heap.give_back()
    assert heap._TRIM is False


def test_a_batch_of_the_watch_gives_memory_back(monkeypatch):
    from test_watch_rescore import watch as rescore_watch

    calls = []
    monkeypatch.setattr("kschedx.commands.watch.give_back", lambda: calls.append(1))
    _, run, _, _ = rescore_watch(pending=2)
    run.explain_all_now()
    run._flush(run.clock() + 10.0)
    assert calls
