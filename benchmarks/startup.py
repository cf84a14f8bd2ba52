"""How long `kschedx explain` takes on the bundled example, start to finish.

    python benchmarks/startup.py            # median of 10 runs, plain and terminal output
    python benchmarks/startup.py --imports  # also the slowest imports (python -X importtime)

Start-up dominates on small fixtures, so Rich, tabulate and the kubernetes
client are imported only where needed; this shows whether that still holds.
"""

from __future__ import annotations

import os
import pty
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["-m", "kschedx", "explain", "fixtures/pods/web.yaml", "--snapshot", "fixtures/cluster/"]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def plain_run() -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, *ARGS], cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t


def terminal_run() -> float:
    """stdout on a pseudo-terminal, so the Rich renderer is used."""
    main, secondary = pty.openpty()
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *ARGS], cwd=ROOT, env=ENV, stdout=secondary, stderr=secondary)
    os.close(secondary)
    while True:
        try:
            if not os.read(main, 65536):
                break
        except OSError:
            break
    proc.wait()
    elapsed = time.perf_counter() - t
    os.close(main)
    return elapsed


def slowest_imports(n: int = 12) -> list[str]:
    r = subprocess.run([sys.executable, "-X", "importtime", *ARGS], cwd=ROOT, env=ENV, capture_output=True, text=True)
    rows = []
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.split("|")
            if cumulative.strip().isdigit():
                rows.append((int(cumulative), name.rstrip()))
    rows.sort(reverse=True)
    return [f"{us / 1000:8.1f} ms  {name}" for us, name in rows[:n]]


def main() -> None:
    for label, fn in (("plain (pipe)", plain_run), ("terminal (Rich)", terminal_run)):
        fn()  # warm the file cache and __pycache__
        times = [fn() for _ in range(10)]
        print(f"{label:16} median {statistics.median(times) * 1000:6.0f} ms   min {min(times) * 1000:6.0f} ms")
    if "--imports" in sys.argv:
        print("\nslowest imports (cumulative):")
        print("\n".join(slowest_imports()))


if __name__ == "__main__":
    main()
