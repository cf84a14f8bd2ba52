"""The command line as a user meets it: exit codes, output formats, errors."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kschedx.commands import explain as explaining
from kschedx.commands import simulate as simulating
from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.cli.main import EXIT_INTERNAL_ERROR, main

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = str(ROOT / "fixtures" / "cluster")
PODS = ROOT / "fixtures" / "pods"
TIE_CASE = str(ROOT / "tests" / "golden" / "cases" / "case-1-0.yaml")  # first pod: 4 nodes tie

ANSI = "\x1b["


def run(*args, input=None, env=None):
    return CliRunner().invoke(main, list(args), input=input, env=env, catch_exceptions=False)


def pod(name: str) -> str:
    return str(PODS / f"{name}.yaml")


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
"""


# -- exit codes -------------------------------------------------------------------
def test_exit_0_when_every_pod_is_scheduled():
    r = run("explain", pod("web"), "--snapshot", CLUSTER)
    assert r.exit_code == 0, r.output
    assert "Scheduled → worker-a2" in r.stdout


def test_exit_1_when_a_pod_is_unschedulable():
    r = run("explain", pod("web"), pod("too-big"), "--snapshot", CLUSTER)
    assert r.exit_code == 1
    assert "✗ Unschedulable" in r.stdout


def test_exit_1_when_a_pod_is_gated():
    r = run("explain", pod("canary"), "--snapshot", CLUSTER)
    assert r.exit_code == 1
    assert "Gated" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("explain", "pod.yaml"),  # no --snapshot
        ("explain", "--snapshot", CLUSTER, "-o", "table"),
        ("explain", "--snapshot", CLUSTER, "--seed", "abc"),
        ("explain", "--snapshot", CLUSTER, "--tie-break", "first"),
        ("explain", "--snapshot", CLUSTER, "--bogus"),
        ("nosuchcommand",),
    ],
)
def test_usage_errors_exit_2(args):
    r = run(*args)
    assert r.exit_code == 2
    assert "Usage:" in r.stderr


def test_unknown_node_is_a_usage_error():
    r = run("explain", pod("web"), "--snapshot", CLUSTER, "--node", "worker-z9")
    assert r.exit_code == 2
    assert "no node named 'worker-z9'" in r.stderr


def test_unknown_node_suggests_close_names():
    r = run("explain", pod("web"), "--snapshot", CLUSTER, "--node", "worker-a3")
    assert r.exit_code == 2
    assert "no node named 'worker-a3' in the snapshot (did you mean worker-a2, worker-a1" in r.stderr


# -- machine output -----------------------------------------------------------------
def test_json_is_the_document_app_explain_builds():
    r = run("explain", pod("web"), pod("too-big"), "--snapshot", CLUSTER, "-o", "json", "--tie-break", "name")
    expected = explain(load_workload([CLUSTER], [pod("web"), pod("too-big")]), tie_break="name")
    assert json.loads(r.stdout) == expected
    assert r.stderr == ""


def test_yaml_parses_to_the_same_document():
    as_json = json.loads(run("explain", pod("gpu-training"), "--snapshot", CLUSTER, "-o", "json").stdout)
    as_yaml = yaml.safe_load(run("explain", pod("gpu-training"), "--snapshot", CLUSTER, "-o", "yaml").stdout)
    assert as_yaml == as_json
    assert as_yaml["kind"] == "SchedulingResult"


def test_machine_output_keeps_warnings_on_stderr(tmp_path):
    bound = write(tmp_path, "bound.yaml", POD.replace("spec:\n", "spec:\n  nodeName: n1\n"))
    r = run("explain", bound, "--snapshot", write(tmp_path, "node.yaml", NODE), "-o", "json")
    json.loads(r.stdout)  # nothing but the document
    assert "warning" in r.stderr and "spec.nodeName" in r.stderr


def test_pending_pods_of_the_snapshot_without_pod_files():
    doc = json.loads(run("explain", "--snapshot", CLUSTER, "-o", "json").stdout)
    assert [p["pod"] for p in doc["pods"]] == ["shop/search-indexer-5f6c7d8b9-r2x4z"]


def test_snapshot_from_stdin():
    text = Path(CLUSTER, "nodes.yaml").read_text()
    r = run("explain", pod("web"), "--snapshot", "-", "-o", "json", input=text)
    assert r.exit_code == 0
    assert json.loads(r.stdout)["pods"][0]["status"] == "Scheduled"


# -- human output ---------------------------------------------------------------------
def test_human_output_is_plain_when_not_a_terminal():
    r = run("explain", pod("web"), pod("too-big"), "--snapshot", CLUSTER)
    assert ANSI not in r.stdout
    assert "Filter" in r.stdout and "Score" in r.stdout
    assert "0/5 nodes are available" in r.stdout


class FakeTerminal(io.StringIO):
    encoding = "utf-8"

    def isatty(self):
        return True


def _doc():
    return explain(load_workload([CLUSTER], [pod("web")]), tie_break="name")


def test_colour_on_a_terminal(monkeypatch):
    from kschedx.render.human import render

    monkeypatch.delenv("NO_COLOR", raising=False)
    out = FakeTerminal()
    render(_doc(), out=out)
    assert ANSI in out.getvalue()


def test_no_color_gives_plain_text_on_a_terminal(monkeypatch):
    from kschedx.render.human import render

    monkeypatch.setenv("NO_COLOR", "1")
    out = FakeTerminal()
    render(_doc(), out=out)
    text = out.getvalue()
    assert ANSI not in text
    assert "Scheduled → worker-a2" in text


def test_rich_and_plain_say_the_same_words(monkeypatch):
    """Colour only adds emphasis: stripped of escapes and spacing, both renderers print the same words."""
    import re

    from kschedx.render.human import render

    monkeypatch.setenv("COLUMNS", "400")
    doc = explain(load_workload([CLUSTER], [pod("web"), pod("too-big")]), tie_break="name")
    rich_out, plain_out = io.StringIO(), io.StringIO()
    render(doc, out=rich_out, color=True)
    render(doc, out=plain_out, color=False)
    words = lambda s: [w for w in re.sub(r"\x1b\[[0-9;]*m", "", s).split() if set(w) != {"-"}]
    assert words(rich_out.getvalue()) == words(plain_out.getvalue())


def test_wide_shows_every_filter_plugin_and_raw_scores():
    narrow = run("explain", pod("web"), "--snapshot", CLUSTER).stdout
    wide = run("explain", pod("web"), "--snapshot", CLUSTER, "-o", "wide").stdout
    header = lambda out: next(line for line in out.splitlines() if line.strip().startswith("Filter"))
    assert "NodeName" not in header(narrow)  # passes everywhere: summarised in one line
    assert "NodeName" in header(wide) and "NodeResourcesFit" in header(wide)
    assert "(0→100)" in wide and "(0→100)" not in narrow


def test_node_view_tells_one_nodes_whole_story():
    r = run("explain", pod("too-big"), "--snapshot", CLUSTER, "--node", "worker-a1")
    out = r.stdout
    assert "node worker-a1: ✗ filtered out by NodeResourcesFit: Insufficient cpu, Insufficient memory" in out
    assert "cpu: requests 12, node has 770m free (3150m of 3920m allocatable requested by its pods)" in out
    r = run("explain", pod("web"), "--snapshot", CLUSTER, "--node", "worker-a1")
    assert "→ normalized" in r.stdout and "= weighted" in r.stdout
    assert "rank 2 of 3" in r.stdout


# -- tie-break reproducibility -------------------------------------------------------------
def _selected(*args):
    doc = json.loads(run("explain", "--snapshot", TIE_CASE, "-o", "json", *args).stdout)
    return doc["pods"][0]["selectedNode"], doc["pods"][0]["topNodes"]


def test_tie_break_name_picks_the_smallest_name():
    selected, top = _selected("--tie-break", "name")
    assert len(top) > 1 and selected == min(top)


def test_seed_makes_random_tie_break_reproducible():
    first = [_selected("--seed", str(seed))[0] for seed in range(8)]
    again = [_selected("--seed", str(seed))[0] for seed in range(8)]
    assert first == again
    top = _selected("--seed", "0")[1]
    assert set(first) <= set(top)
    assert len(set(first)) > 1  # the seed matters: random really is random


# -- input errors: one line, exit 3 ------------------------------------------------------------
BAD_INPUTS = {
    "malformed YAML": ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n spec: [\n", "malformed YAML: line 5"),
    "invalid quantity": (POD.replace("100m", "1.5.3"),
                         "Pod/default/web: field spec.containers[0].resources.requests.cpu: quantities must match "
                         "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    "negative quantity": (POD.replace("100m", "-1"),
                          "Pod/default/web: field spec.containers[0].resources.requests.cpu: invalid quantity -1: "
                          "must be greater than or equal to 0"),
    "no kind": ("apiVersion: v1\nmetadata: {name: web}\n", "field kind: object has no kind"),
    "missing PriorityClass": (POD.replace("spec:\n", "spec:\n  priorityClassName: high\n"),
                              "field spec.priorityClassName: no PriorityClass with name high"),
    "duplicate objects": (POD + "---\n" + POD, "duplicate object: Pod/default/web"),
    "not an object": ("- just\n- a list\n", "expected a Kubernetes object"),
    "wrong type": (POD.replace("metadata: {name: web}", "metadata: {name: web, labels: {gpu: true}}"),
                   "Pod/default/web: field metadata.labels.gpu: json: cannot unmarshal bool into Go struct field "
                   "ObjectMeta.metadata.labels of type string (quote it in YAML)"),
    "unknown field": (POD.replace("containers:", "containerz:"),
                      'Pod/default/web: unknown field "spec.containerz" (did you mean "containers"?)'),
}


@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_naming_the_file(tmp_path, kind):
    text, expected = BAD_INPUTS[kind]
    path = write(tmp_path, "bad.yaml", text)
    r = run("explain", path, "--snapshot", write(tmp_path, "node.yaml", NODE))
    assert r.exit_code == 3
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"kschedx: error: {path}")
    assert expected in lines[0]


def test_missing_file_is_an_input_error(tmp_path):
    r = run("explain", str(tmp_path / "nope.yaml"), "--snapshot", CLUSTER)
    assert r.exit_code == 3
    assert r.stderr == f"kschedx: error: {tmp_path / 'nope.yaml'}: no such file or directory\n"


def test_missing_snapshot_is_an_input_error(tmp_path):
    r = run("explain", pod("web"), "--snapshot", str(tmp_path / "cluster"))
    assert r.exit_code == 3
    assert "no such file or directory" in r.stderr


def test_internal_error_is_one_line_and_a_hint(monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(explaining, "explain_into", broken)
    r = run("explain", pod("web"), "--snapshot", CLUSTER)
    assert r.exit_code == EXIT_INTERNAL_ERROR
    assert r.stderr.splitlines()[0] == "kschedx: internal error: RuntimeError: boom"
    assert "--debug" in r.stderr
    assert "Traceback" not in r.stderr


def test_debug_shows_the_traceback(monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(explaining, "explain_into", broken)
    for args in (("--debug", "explain"), ("explain", "--debug")):
        with pytest.raises(RuntimeError, match="boom"):
            run(*args, pod("web"), "--snapshot", CLUSTER)


# -- the real entry point -----------------------------------------------------------------------
def _python(*args, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env=env, **kw)


def test_entry_point_runs_the_readme_example():
    r = _python("-m", "kschedx", "explain", "fixtures/pods/web.yaml", "--snapshot", "fixtures/cluster/")
    assert r.returncode == 0, r.stderr
    assert "shop/web-6d4cf56db6-8xq2v  ✓ Scheduled → worker-a2" in r.stdout
    assert ANSI not in r.stdout  # a pipe, not a terminal


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "kschedx"
    if not script.exists():
        pytest.skip("kschedx is not installed in this environment (pip install -e .)")
    r = subprocess.run([str(script), "explain", "fixtures/pods/too-big.yaml", "--snapshot", "fixtures/cluster/"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 1
    assert "Unschedulable" in r.stdout


def test_closed_pipe_is_quiet():
    r = subprocess.run(
        f"'{sys.executable}' -m kschedx explain fixtures/pods/*.yaml --snapshot fixtures/cluster/ -o wide | head -n 1",
        shell=True, capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert r.stdout.count("\n") == 1
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr


def test_closed_pipe_keeps_the_result_exit_code():
    # web.yaml is schedulable: the reader leaving early must not turn that into 1.
    r = subprocess.run(
        f"'{sys.executable}' -m kschedx explain fixtures/pods/web.yaml --snapshot fixtures/cluster/ -o wide"
        " | true; exit ${PIPESTATUS[0]}",  # the reader is gone before kschedx writes
        shell=True, executable="/bin/bash", capture_output=True, text=True, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert r.returncode == 0, r.stderr


def test_importing_the_cli_loads_no_heavy_module():
    r = _python("-c", "import sys, kschedx.cli.main; "
                      "print(sorted(m for m in ('kubernetes', 'rich', 'tabulate') if m in sys.modules))")
    assert r.stdout.strip() == "[]", r.stdout + r.stderr


def test_explain_never_imports_kubernetes():
    code = (
        "import sys\n"
        "from kschedx.cli.main import main\n"
        "try:\n"
        "    main(['explain', 'fixtures/pods/web.yaml', '--snapshot', 'fixtures/cluster/'], prog_name='kschedx')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('kubernetes' in sys.modules, file=sys.stderr)\n"
    )
    r = _python("-c", code)
    assert r.stderr.strip().splitlines()[-1] == "False"


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch):
    """Not Click's "Aborted!" with exit 1, which means "unschedulable"."""
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(simulating, "simulate_into", interrupted)
    r = run("simulate", pod("web"), "--snapshot", CLUSTER)
    assert r.exit_code == 130
    assert r.stderr.strip() == "kschedx: interrupted"
    assert r.stdout == ""


@pytest.mark.parametrize("stdin_for", ["--snapshot", "POD_FILE"])
def test_empty_stdin_is_an_input_error(stdin_for):
    """`kubectl get ... | kschedx explain --snapshot -` after kubectl failed:
    an error, not "no pending pods" with exit 0."""
    args = ["explain", "--snapshot", "-"] if stdin_for == "--snapshot" else ["explain", "-", "--snapshot", CLUSTER]
    r = run(*args, input="")
    assert r.exit_code == 3
    assert r.stderr.startswith("kschedx: error: <stdin>: holds no Kubernetes objects")
    assert r.stdout == ""


def test_a_pod_file_of_other_kinds_says_what_it_holds():
    r = run("explain", str(Path(CLUSTER) / "nodes.yaml"), "--snapshot", str(ROOT / "fixtures" / "gpu" / "cluster.yaml"))
    assert r.exit_code == 3
    assert "no Pod or workload (Deployment, Job, ...) to evaluate, only 5 Node; cluster objects go in --snapshot" \
        in r.stderr


def test_help_examples_name_existing_fixtures():
    import re

    for command in ("explain", "simulate"):
        help_text = run(command, "--help").stdout
        paths = re.findall(r"fixtures/[\w./-]+", help_text)
        assert paths, command
        for p in paths:
            assert (ROOT / p).exists(), f"kschedx {command} --help names {p}"


def test_a_file_given_twice_is_named_as_such():
    r = run("explain", str(Path(CLUSTER) / "nodes.yaml"), "--snapshot", CLUSTER)
    assert r.exit_code == 3
    assert r.stderr.strip().endswith("nodes.yaml: given both as --snapshot and as POD_FILE: "
                                     "each object in it would be a duplicate")
    r = run("explain", pod("web"), pod("web"), "--snapshot", CLUSTER)
    assert "given twice as POD_FILE" in r.stderr and r.exit_code == 3


def test_json_is_utf8_even_on_an_ascii_locale(tmp_path):
    p = write(tmp_path, "pod.yaml", POD.replace("metadata: {name: web}", "metadata: {name: web, annotations: {team: café}}"))
    n = write(tmp_path, "node.yaml", NODE)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="ascii")
    r = subprocess.run([sys.executable, "-m", "kschedx", "explain", p, "--snapshot", n, "-o", "json"],
                       capture_output=True, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.decode("utf-8"))["pods"][0]["status"] == "Scheduled"
    r = subprocess.run([sys.executable, "-m", "kschedx", "explain", p, "--snapshot", n],
                       capture_output=True, cwd=ROOT, env=env)
    assert r.returncode == 0 and b"ok Scheduled -> n1" in r.stdout


def test_seed_with_tie_break_name_is_a_warning():
    r = run("explain", pod("web"), "--snapshot", CLUSTER, "--tie-break", "name", "--seed", "3")
    assert r.exit_code == 0
    assert "--seed has no effect with --tie-break name" in r.stderr
    assert "--seed" not in run("explain", pod("web"), "--snapshot", CLUSTER, "--seed", "3").stderr


def test_a_pod_file_with_a_lowercase_kind_says_so(tmp_path):
    p = write(tmp_path, "pod.yaml", POD.replace("kind: Pod", "kind: pod"))
    r = run("explain", p, "--snapshot", CLUSTER)
    assert r.exit_code == 3
    assert 'field kind: no matches for kind "pod" in version "v1" (did you mean Pod?)' in r.stderr


def test_stdin_can_be_read_only_once():
    r = run("explain", "-", "--snapshot", "-", input=Path(pod("web")).read_text())
    assert r.exit_code == 3
    assert "stdin (-) can be read only once" in r.stderr


_TYPO_PODS = "".join(f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n"
                     f"  containers: [{{name: c, image: i}}]\n  nodeSelectr: {{a: b}}\n" for i in range(40))


@pytest.mark.parametrize("reader", ["head -1", "true"])
@pytest.mark.parametrize("args, code", [
    # a warning on stderr after the result (a selection that took no pod), exit 0
    ("explain --snapshot fixtures/cluster/ -n shop -l 'app in (nothing)'", 0),
    ("explain fixtures/pods/web.yaml --snapshot fixtures/cluster/ -o wide", 0),
    ("explain fixtures/pods/too-big.yaml --snapshot fixtures/cluster/", 1),
    ("explain fixtures/pods/web.yaml --snapshot fixtures/cluster/ --kube-version 0.1", 2),
    # strict input: one error line per problem, many lines after the reader left
    ("explain - --snapshot fixtures/cluster/", 3),
])
def test_closed_pipe_on_stderr_keeps_the_exit_code(reader, args, code):
    # `2>&1 | head -1`: stdout and stderr share a pipe whose reader leaves
    # after one line (or before any): what is left to say goes nowhere, the
    # exit code stays the run's own.
    r = subprocess.run(
        f"printf '%s' \"$PODS\" | '{sys.executable}' -m kschedx {args} 2>&1 | {reader}; exit ${{PIPESTATUS[1]}}",
        shell=True, executable="/bin/bash", capture_output=True, text=True, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT), PODS=_TYPO_PODS),
    )
    assert r.returncode == code, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr and "BrokenPipe" not in r.stdout + r.stderr
