"""The console scripts end the process without tearing down its data
(cli.run / end_process): same output, exit code and exit handlers as
Python's own exit, and Python's own exit wherever it would do more."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _python(code: str, *args: str):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=120)


RUN = "import sys\nfrom kschedx.cli.main import run\nsys.argv[0] = 'kschedx'\n"


def test_output_exit_code_and_exit_handlers_are_kept():
    code = RUN + "import atexit\natexit.register(lambda: print('handler ran'))\nrun()\n"
    r = _python(code, "explain", "fixtures/pods/too-big.yaml", "--snapshot", "fixtures/cluster/", "-o", "json")
    assert r.returncode == 1, r.stderr
    document, handler = r.stdout.rsplit("}\n", 1)
    assert json.loads(document + "}")["pods"][0]["status"] == "Unschedulable"
    assert handler == "handler ran\n"


def test_an_input_error_keeps_its_line_and_code():
    r = _python(RUN + "run()\n", "explain", "fixtures/pods/web.yaml", "--snapshot", "no-such-dir/")
    assert r.returncode == 3
    assert r.stderr.startswith("kschedx: error: ") and r.stderr.count("\n") == 1
    assert r.stdout == ""


def test_a_running_thread_gets_pythons_own_exit():
    # os._exit would end the thread before it prints.
    code = RUN + ("import threading, time\n"
                  "threading.Thread(target=lambda: (time.sleep(0.3), print('thread done', flush=True))).start()\n"
                  "run()\n")
    r = _python(code, "--version")
    assert r.returncode == 0
    assert r.stdout.rstrip().endswith("thread done")


def test_exit_codes_as_python_makes_them():
    for value, status, stderr in (("None", 0, ""), ("3", 3, ""), ("256", 0, ""), ("-1", 255, ""),
                                  ("'gone'", 1, "gone\n")):
        r = _python(f"from kschedx.cli.main import end_process\nend_process({value})\n")
        assert (r.returncode, r.stderr) == (status, stderr), value
