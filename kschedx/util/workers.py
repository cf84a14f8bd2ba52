"""Worker processes forked from a loaded run (`explain --jobs N`).

Forking after loading lets every worker read the snapshot, the plugins and
their caches without loading or sending anything: the pages are shared
copy-on-write (the cyclic collector is frozen first, so it does not touch
them). The parent sends an item index down a pipe; the worker runs the task
on it and sends back the pickled result. Each worker does its items in the
order sent, so the parent, reading results in item order, reads each
worker's results in its own order too. A worker blocks on writing a result
until the parent reads it: at most one finished result per worker waits.

A worker that fails (the task raises, the process dies) reports nothing
more than that: the parent computes that item itself, so an error surfaces
exactly as without workers, with its own type and traceback. Workers ignore
Ctrl-C (the parent stops them) and never write to stdout.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys

from .gc_policy import collector_paused, freeze_all, pauses_collector

_HEADER = struct.Struct("<q")  # payload length; -1: the task failed
_STOP = -1


class WorkerPool:
    """`jobs` worker processes running `task(index)`."""

    def __init__(self, task, jobs: int):
        self.task = task
        self.workers: list[_Worker] = []
        self.outstanding: list[int] = []  # per worker: items sent, result not yet read
        sys.stdout.flush()
        sys.stderr.flush()
        freeze_all()  # what the run built so far stays out of every collection (and its pages unwritten)
        try:
            for _ in range(jobs):
                self.workers.append(_Worker.fork(task, self.workers))
                self.outstanding.append(0)
        except BaseException:
            self.close()
            raise

    def submit(self, index: int) -> int | None:
        """Send item `index` to the least busy live worker; returns its number
        (None: no worker left, the caller computes the item itself)."""
        live = [w for w, worker in enumerate(self.workers) if worker.alive]
        if not live:
            return None
        w = min(live, key=lambda k: self.outstanding[k])
        if not self.workers[w].send(index):
            return None
        self.outstanding[w] += 1
        return w

    def result(self, w: int):
        """The next result of worker `w` as (True, value), or (False, None)
        when the task failed there or the worker is gone."""
        self.outstanding[w] -= 1
        return self.workers[w].receive()

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.workers = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _Worker:
    def __init__(self, pid: int, tasks, results):
        self.pid = pid
        self.tasks = tasks  # binary file: item indices to the worker
        self.results = results  # binary file: pickled results from the worker
        self.alive = True

    @classmethod
    def fork(cls, task, others) -> _Worker:
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                os.close(task_w)
                os.close(result_r)
                for other in others:  # the parent's ends of earlier workers' pipes
                    os.close(other.tasks.fileno())
                    os.close(other.results.fileno())
                _serve(task, task_r, result_w)
            except BaseException:
                code = 1
            finally:
                # Never return into the parent's code, never flush its buffers or
                # run its exit handlers.
                os._exit(code)
        os.close(task_r)
        os.close(result_w)
        return cls(pid, os.fdopen(task_w, "wb", buffering=0), os.fdopen(result_r, "rb"))

    def send(self, index: int) -> bool:
        try:
            self.tasks.write(_HEADER.pack(index))
            return True
        except OSError:
            self.alive = False
            return False

    def receive(self):
        if not self.alive:
            return False, None
        try:
            header = self.results.read(_HEADER.size)
            if len(header) == _HEADER.size:
                (size,) = _HEADER.unpack(header)
                if size < 0:
                    return False, None
                payload = self.results.read(size)
                if len(payload) == size:
                    return True, _loads(payload)
        except (OSError, EOFError, pickle.UnpicklingError):
            pass
        self.alive = False  # died (killed, out of memory): its items are the parent's now
        return False, None

    def stop(self) -> None:
        for f in (self.tasks, self.results):
            try:
                f.close()
            except OSError:
                pass
        if self.pid:
            kill_and_reap(self.pid)
            self.pid = 0
        self.alive = False


def kill_and_reap(pid: int) -> None:
    """Stop a forked helper now, whatever it is doing, and reap it: no
    zombie is left behind."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


@pauses_collector
def _loads(payload: bytes):
    # A pod's result on 5,000 nodes is a million objects: with the collector
    # running, unpickling it took 15 times longer.
    return pickle.loads(payload)


def _serve(task, task_fd: int, result_fd: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    tasks = os.fdopen(task_fd, "rb")
    results = os.fdopen(result_fd, "wb")
    while True:
        header = tasks.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return  # the parent closed the pipe: done
        (index,) = _HEADER.unpack(header)
        if index == _STOP:
            return
        try:
            with collector_paused():  # the result is dropped once sent
                payload = pickle.dumps(task(index), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            results.write(_HEADER.pack(-1))
        else:
            results.write(_HEADER.pack(len(payload)))
            results.write(payload)
        results.flush()
