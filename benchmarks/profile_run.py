#!/usr/bin/env python3
"""Profile one whole `kschedx` command, start to finish, in this process.

    python benchmarks/profile_run.py OUT.prof -- simulate --snapshot benchmarks/out/preempt-5k.json \\
        --detail placements -o json --tie-break name > /dev/null
    python benchmarks/profile_run.py OUT.txt --pyinstrument -- explain --snapshot benchmarks/out/mixed-5k.json \\
        -o json --jobs 1 > /dev/null
    python -c "import pstats; pstats.Stats('OUT.prof').sort_stats('cumulative').print_stats(40)"

`python -m cProfile -m kschedx` writes nothing: kschedx ends its process
with os._exit once its exit handlers have run (cli/main.py: end_process,
which skips freeing the snapshot object by object), so the profile is
written here by an exit handler of its own. OUT.prof is cProfile's (read
with pstats or snakeviz); with --pyinstrument (`pip install pyinstrument`,
sampling, far less overhead) OUT is pyinstrument's text tree of wall time.
Only this process is profiled: give explain `--jobs 1` to keep its pods in it.
The command's own output goes to stdout as usual.
"""

from __future__ import annotations

import atexit
import runpy
import sys


def main() -> None:
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") < 1:
        raise SystemExit(__doc__)
    split = argv.index("--")
    out, options, command = argv[0], argv[1:split], argv[split + 1:]
    sys.argv = ["kschedx", *command]
    if "--pyinstrument" in options:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.001)

        def write() -> None:
            profiler.stop()
            with open(out, "w") as f:
                f.write(profiler.output_text(unicode=False, color=False, show_all=False))

        atexit.register(write)
        profiler.start()
    else:
        import cProfile

        profile = cProfile.Profile()

        def write() -> None:
            profile.disable()
            profile.dump_stats(out)

        atexit.register(write)  # registered first: runs after kschedx's own handlers
        profile.enable()
    runpy.run_module("kschedx", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
