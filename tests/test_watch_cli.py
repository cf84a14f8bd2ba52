"""`kschedx explain --watch` as a process: its output, SIGTERM and Ctrl-C,
a reader that leaves, the usage errors, and --metrics-addr scraped."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from builders import api_node, api_pod
from cluster_scenarios import no_ambient_config, run, small_cluster  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def api(kube_api):
    kube_api.bookmark_interval = 0.05
    small_cluster(kube_api)
    return kube_api


def start(api, *args, env=None):
    return subprocess.Popen([sys.executable, "-m", "kschedx", "explain", "--watch", "-A", "--kubeconfig",
                             str(api.kubeconfig), "--tie-break", "name", "--settle", "0.2", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def read_lines(proc, n, timeout=30.0) -> list[str]:
    lines = []
    deadline = time.monotonic() + timeout
    while len(lines) < n and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.decode())
    return lines


def test_jsonl_lines_and_sigterm_ends_with_the_summary(api):
    proc = start(api, "-o", "jsonl")
    try:
        first = [json.loads(line) for line in read_lines(proc, 4)]
        assert first[0]["kind"] == "WatchEvent" and first[0]["type"] == "Started"
        explained = first[1:]
        assert [line["pods"][0]["pod"] for line in explained] == ["default/big", "default/web", "team/tolerant"]
        assert all(line["kind"] == "SchedulingResult" and list(line)[-1] == "watch" for line in explained)
        assert explained[0]["watch"]["reason"] == "pending"
        api.add(api_node("n4", cpu="8"))
        again = [json.loads(line) for line in read_lines(proc, 3)]
        assert {line["watch"]["reason"] for line in again} == {"node n4 added"}
        proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, err.decode()
    last = json.loads(rest.decode().splitlines()[-1])
    assert last["kind"] == "SchedulingResult" and last["pods"] == []
    assert last["watch"]["stopReason"] == "SIGTERM" and last["watch"]["explanations"] == 6
    lag = last["watch"]["lag"]
    assert set(lag) == {"maxStalenessSeconds", "maxEventsQueued", "maxEventAgeSeconds"}
    assert 0 <= lag["maxStalenessSeconds"] < 20 and lag["maxEventsQueued"] >= 0
    assert last["stream"]["exitCode"] == 0
    assert "watching pending pods in all namespaces on cluster" in err.decode()


def test_ctrl_c_writes_the_human_summary(api):
    proc = start(api)
    try:
        text = ""
        deadline = time.monotonic() + 30
        while "team/tolerant" not in text and time.monotonic() < deadline:
            text += proc.stdout.readline().decode()
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, err.decode()
    out = text + rest.decode()
    assert "── " in out and "· pending ──" in out
    assert re.search(r"watched \d+ s: 3 pods explained 3 times; none still pending|still pending: 3", out)
    assert "Traceback" not in err.decode()


def test_a_reader_that_leaves_ends_the_watch_quietly(api):
    proc = start(api, "-o", "jsonl")
    try:
        read_lines(proc, 1)
        proc.stdout.close()
        api.add(api_node("n4", cpu="8"))  # something to write
        proc.wait(timeout=30)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err


@pytest.mark.parametrize("args, message", [
    (("--snapshot", "fixtures/cluster"), "cannot read --snapshot"),
    (("fixtures/pods/web.yaml",), "POD_FILEs (fixtures/pods/web.yaml) are not watched"),
    (("-o", "json"), "-o json writes one document, and a watch never ends: use -o human or -o jsonl"),
    (("-o", "wide"), "use -o human or -o jsonl"),
    (("-o", "junit"), "use -o human or -o jsonl"),
    (("--fix",), "--fix is not available with --watch"),
    (("--report", "r.html"), "--report writes one page when a run ends"),
    (("--settle", "soon"), "'soon' is not a duration"),
    (("--metrics-addr", "nine"), "'nine' is not [HOST]:PORT"),
    (("--nodes", "n1"), "--nodes NAME,... is not available with --watch"),
])
def test_usage_errors(api, tmp_path, args, message):
    r = run("explain", "--watch", "-A", "--kubeconfig", api.kubeconfig, *args)
    assert r.exit_code == 2, r.output
    assert message in r.stderr
    assert not [q for q in api.requests if q.query.get("watch")]


@pytest.mark.parametrize("args, message", [
    (("--metrics-addr", ":9090"), "--metrics-addr needs --watch"),
    (("--settle", "1s"), "--settle needs --watch"),
])
def test_watch_options_need_watch(api, args, message):
    r = run("explain", "-A", "--kubeconfig", api.kubeconfig, *args)
    assert r.exit_code == 2 and message in r.stderr


def test_which_pods(api):
    r = run("explain", "--watch", "--kubeconfig", api.kubeconfig)
    assert r.exit_code == 2 and "which pods?" in r.stderr


def test_metrics_without_the_extra_name_it(api, tmp_path):
    blocked = tmp_path / "blocked"
    (blocked / "prometheus_client").mkdir(parents=True)
    (blocked / "prometheus_client" / "__init__.py").write_text("raise ImportError('not installed')\n")
    proc = subprocess.run([sys.executable, "-m", "kschedx", "explain", "--watch", "-A", "--kubeconfig",
                           str(api.kubeconfig), "--metrics-addr", "127.0.0.1:0"], capture_output=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": f"{blocked}{os.pathsep}{ROOT}"}, timeout=60)
    assert proc.returncode == 2
    assert "pip install 'kschedx[metrics]'" in proc.stderr.decode()


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.read().decode()


def test_metrics_are_served(api):
    proc = start(api, "-o", "jsonl", "--metrics-addr", "127.0.0.1:0")
    try:
        read_lines(proc, 4)
        err = b""
        url = None
        deadline = time.monotonic() + 20
        while url is None and time.monotonic() < deadline:
            err += proc.stderr.readline()
            m = re.search(rb"serving metrics on (http://\S+)", err)
            url = m.group(1).decode() if m else None
        assert url, err
        deadline = time.monotonic() + 20  # the gauges are set once the batch is written
        text = scrape(url)
        while "kschedx_pending_pods{" not in text and time.monotonic() < deadline:
            time.sleep(0.1)
            text = scrape(url)
        assert 'kschedx_pending_pods{status="Unschedulable"} 1.0' in text
        assert 'kschedx_pending_pods{status="Scheduled"} 2.0' in text
        assert 'kschedx_pending_pods_by_reason{plugin="NodeResourcesFit",reason="Insufficient cpu"} 1.0' in text
        assert re.search(r"kschedx_explanation_duration_seconds_count 3\.0", text)
        assert "kschedx_api_server_up 1.0" in text and "process_resident_memory_bytes" in text
        # How far behind it is: nothing waits once the first batch is written;
        # the three explanations were each due from the start.
        for gauge in ("kschedx_watch_events_queued", "kschedx_watch_oldest_event_age_seconds", "kschedx_pods_due",
                      "kschedx_pods_due_oldest_age_seconds"):
            assert re.search(rf"^{gauge} 0\.0$", text, re.M), gauge
        assert re.search(r"kschedx_explanation_staleness_seconds_count 3\.0", text)
        conn_pod = api.get("Pod", "default", "web")
        from kschedx.sources.cluster import connect

        conn = connect(str(api.kubeconfig))
        conn_pod["kind"] = "Pod"
        conn.bind_pod(conn_pod, "n3")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            text = scrape(url)
            if "kschedx_pods_gone_total" in text and 'outcome="Bound"' in text:
                break
            time.sleep(0.1)
        assert 'kschedx_pods_gone_total{outcome="Bound"} 1.0' in text
        assert re.search(r'kschedx_predictions_total\{outcome="(hit|miss)"\} 1\.0', text)
        assert 'kschedx_watch_events_total{kind="Pod",type="MODIFIED"}' in text
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0
