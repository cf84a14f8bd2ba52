"""Plugins of your own: out-of-tree plugin names in a --config, the
`kschedx.plugins` entry-point group, and --allow-unknown-plugins.

The example plugin (tests/example_plugin, distribution
kschedx-example-plugin, plugin NodeLabelPreference: Filter + Score with args)
is installed as a real distribution: pip builds its wheel through its own
PEP 517 backend (standard library only, no build requirements) and installs
it with --target into a temporary directory, with --no-index so that nothing
is fetched. That directory goes on sys.path for this module's tests (and on
PYTHONPATH for the subprocess test), so importlib.metadata finds the
distribution and its entry point exactly as for a package pip installed into
the environment, and the environment itself is never modified.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from kschedx.cli.main import main
from kschedx.commands import explain as explaining
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.framework.dispatch import new_schedulers
from kschedx.framework.configured import parse_config
from kschedx.util.errors import InputError

EXAMPLE = Path(__file__).resolve().parent / "example_plugin"
HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@pytest.fixture(scope="module")
def example_plugin(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                    "--disable-pip-version-check", "--target", str(target), str(EXAMPLE)],
                   check=True, capture_output=True, text=True)
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    yield target
    sys.path.remove(str(target))
    for name in [m for m in sys.modules if m.split(".")[0] == "kschedx_example_plugin"]:
        del sys.modules[name]
    importlib.invalidate_caches()


NODES = """\
apiVersion: v1
kind: List
items:
"""
_NODE = """\
- apiVersion: v1
  kind: Node
  metadata:
    name: {name}
    labels: {labels}
  status:
    allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}
    capacity: {{cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: default}
spec:
  containers:
  - name: app
    image: app:1
    resources: {requests: {cpu: 100m, memory: 128Mi}}
"""


@pytest.fixture
def cluster(tmp_path):
    """Four identical nodes but for their labels: n3 has no `rack`, n4 no `tier`."""
    labels = {"n1": {"rack": "r1", "tier": "30"}, "n2": {"rack": "r2", "tier": "60"},
              "n3": {"tier": "90"}, "n4": {"rack": "r4"}}
    d = tmp_path / "cluster"
    d.mkdir()
    (d / "nodes.yaml").write_text(NODES + "".join(
        _NODE.format(name=n, labels=json.dumps({"kubernetes.io/hostname": n, **lab})) for n, lab in labels.items()))
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD)
    return str(d), str(pod)


def config(tmp_path, text: str) -> str:
    path = tmp_path / "sched.yaml"
    path.write_text(HEAD + textwrap.dedent(text))
    return str(path)


WITH_PLUGIN = """\
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: NodeLabelPreference, weight: 5}]
  pluginConfig:
  - name: NodeLabelPreference
    args: {requiredLabels: [rack], scoreLabel: tier}
"""


def explain(args, **kw):
    return CliRunner().invoke(main, ["explain", *args, "--tie-break", "name"], **kw)


# -- names kschedx does not know ---------------------------------------------------------
def test_unknown_plugin_is_exit_3_with_upstreams_text(tmp_path, cluster):
    snap, pod = cluster
    cfg = config(tmp_path, WITH_PLUGIN)  # the example plugin is not installed here
    r = explain([pod, "--snapshot", snap, "--config", cfg])
    assert r.exit_code == 3 and r.stdout == ""
    first = r.stderr.strip().splitlines()[0]
    # framework.go's "%s %q does not exist", under profile.NewMap's "creating profile ..."
    assert first.startswith(f'kschedx: error: {cfg}: creating profile for scheduler name default-scheduler: '
                            'PreFilterPlugin "NodeLabelPreference" does not exist')
    assert "kschedx.plugins" in first and "--allow-unknown-plugins" in first


def test_unknown_plugin_at_one_point_names_that_point():
    with pytest.raises(InputError) as e:
        parse_config(HEAD + "profiles:\n- plugins:\n    score:\n      enabled: [{name: Trimaran, weight: 2}]\n",
                     "s.yaml")
    assert 'creating profile for scheduler name default-scheduler: ScorePlugin "Trimaran" does not exist' in str(e.value)


def test_allow_unknown_plugins_lists_them_and_goes_on(tmp_path, cluster):
    snap, pod = cluster
    cfg = config(tmp_path, WITH_PLUGIN + "  - name: Coscheduling\n    args: {permitWaitingTimeSeconds: 10}\n")
    r = explain([pod, "--snapshot", snap, "--config", cfg, "--allow-unknown-plugins", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["notEvaluated"] == ["NodeLabelPreference"]
    pod_doc = doc["pods"][0]
    assert pod_doc["status"] == "Scheduled"
    # Left out: no verdict and no score of it, and n3 (no rack label) is feasible.
    plugins = {v["plugin"] for n in pod_doc["nodes"] for v in (n.get("filters") or []) + (n.get("scores") or [])}
    assert "NodeLabelPreference" not in plugins
    assert all(n["feasible"] for n in pod_doc["nodes"])
    assert "NodeLabelPreference" in r.stderr  # the warning

    human = explain([pod, "--snapshot", snap, "--config", cfg, "--allow-unknown-plugins"])
    assert human.exit_code == 0
    # After the line naming the scheduler, the incomplete-result notice comes first.
    assert human.stdout.split("\n\n")[0] == "kube-scheduler v1.37.2"
    assert "NodeLabelPreference" in human.stdout.split("\n\n")[1]
    sim = CliRunner().invoke(main, ["simulate", pod, "--snapshot", snap, "--config", cfg, "--allow-unknown-plugins"])
    assert sim.exit_code == 0 and "not evaluated (result incomplete): NodeLabelPreference" in sim.stdout


# -- a plugin registered through the kschedx.plugins entry points --------------------------
def by_node(doc):
    return {n["name"]: n for n in doc["pods"][0]["nodes"]}


def test_registered_plugin_filters_and_scores_through_the_config(example_plugin, tmp_path, cluster):
    snap, pod = cluster
    r = explain([pod, "--snapshot", snap, "--config", config(tmp_path, WITH_PLUGIN), "-o", "json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["notEvaluated"] == []
    nodes = by_node(doc)
    # Filter: n3 lacks the required `rack` label; the plugin runs after the
    # default Filter plugins (MultiPoint order: defaults first, then yours).
    n3 = nodes["n3"]
    assert not n3["feasible"] and n3["firstFailure"] == "NodeLabelPreference"
    verdict = n3["filters"][-1]
    assert verdict["plugin"] == "NodeLabelPreference" and verdict["code"] == "UnschedulableAndUnresolvable"
    assert verdict["reasons"] == ["node(s) didn't have the required labels"]
    assert doc["pods"][0]["selectedNode"] == "n2"
    # Score: raw = the `tier` label, normalized to the highest (60), weight 5 from the config.
    scores = {name: next(s for s in n["scores"] if s["plugin"] == "NodeLabelPreference")
              for name, n in nodes.items() if n["feasible"]}
    assert {name: (s["raw"], s["normalized"], s["weight"], s["weighted"]) for name, s in scores.items()} == {
        "n1": (30, 50, 5, 250), "n2": (60, 100, 5, 500), "n4": (0, 0, 5, 0)}
    # Its explanation (score_details) is the score's details.
    assert nodes["n1"]["scores"][-1]["details"] == {"label": "tier", "value": "30"}
    # Its weighted score is in each node's total like an in-tree plugin's.
    for name, n in nodes.items():
        if n["feasible"]:
            assert n["totalScore"] == sum(s["weighted"] for s in n["scores"])


def test_registered_plugin_in_the_human_report(example_plugin, tmp_path, cluster):
    snap, pod = cluster
    r = explain([pod, "--snapshot", snap, "--config", config(tmp_path, WITH_PLUGIN)])
    assert r.exit_code == 0, r.stderr
    assert "NodeLabelPreference ×5" in r.stdout
    assert "node(s) didn't have the required labels" in r.stdout


def test_registered_plugin_at_per_point_lists_with_its_own_weight(example_plugin, tmp_path, cluster):
    """Enabled at Score only: no Filter verdict, weight from the score list."""
    snap, pod = cluster
    cfg = config(tmp_path, """\
        profiles:
        - plugins:
            score:
              enabled: [{name: NodeLabelPreference, weight: 2}]
          pluginConfig:
          - {name: NodeLabelPreference, args: {scoreLabel: tier}}
        """)
    doc = json.loads(explain([pod, "--snapshot", snap, "--config", cfg, "-o", "json"]).stdout)
    nodes = by_node(doc)
    assert all(n["feasible"] for n in nodes.values())
    assert all(v["plugin"] != "NodeLabelPreference" for n in nodes.values() for v in n["filters"])
    weighted = {name: next(s["weighted"] for s in n["scores"] if s["plugin"] == "NodeLabelPreference")
                for name, n in nodes.items()}
    assert weighted == {"n1": 2 * 33, "n2": 2 * 66, "n3": 2 * 100, "n4": 0}
    assert doc["pods"][0]["selectedNode"] == "n3"


def test_registered_plugin_at_a_point_it_does_not_extend(example_plugin):
    with pytest.raises(InputError) as e:
        parse_config(HEAD + "profiles:\n- plugins:\n    preScore:\n      enabled: [{name: NodeLabelPreference}]\n",
                     "s.yaml")
    assert 'plugin "NodeLabelPreference" does not extend PreScorePlugin plugin' in str(e.value)


def test_args_reach_the_constructor(example_plugin, tmp_path, cluster):
    """Without args the plugin gets {} (requires nothing, scores 0 everywhere)."""
    snap, pod = cluster
    cfg = config(tmp_path, "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: NodeLabelPreference}]\n")
    doc = json.loads(explain([pod, "--snapshot", snap, "--config", cfg, "-o", "json"]).stdout)
    nodes = by_node(doc)
    assert all(n["feasible"] for n in nodes.values())
    assert {next(s["weight"] for s in n["scores"] if s["plugin"] == "NodeLabelPreference")
            for n in nodes.values()} == {1}


@pytest.mark.parametrize("args, message", [
    ("{requiredLabels: rack}", "requiredLabels: must be a list of label keys, got 'rack'"),
    ("{scoreLable: tier}", 'unknown arg "scoreLable": the args are requiredLabels, scoreLabel'),
])
def test_bad_args_are_exit_3(example_plugin, tmp_path, cluster, args, message):
    snap, pod = cluster
    cfg = config(tmp_path, WITH_PLUGIN.replace("{requiredLabels: [rack], scoreLabel: tier}", args))
    r = explain([pod, "--snapshot", snap, "--config", cfg])
    assert r.exit_code == 3 and r.stdout == ""
    assert r.stderr.strip() == (f'kschedx: error: {cfg}: creating profile for scheduler name default-scheduler: '
                                f'initializing plugin "NodeLabelPreference": {message}')


def test_the_kschedx_command_finds_the_installed_distribution(example_plugin, tmp_path, cluster):
    """The real entry point, in a process of its own: nothing but the
    distribution on the path makes the plugin known."""
    snap, pod = cluster
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(example_plugin), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "kschedx", "explain", pod, "--snapshot", snap, "--config",
                          config(tmp_path, WITH_PLUGIN), "-o", "json", "--tie-break", "name"],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["pods"][0]["selectedNode"] == "n2"


# -- a plugin that fails at run time ----------------------------------------------------------
class _Boom:
    """Plugins whose methods raise or return what no Score may: kschedx
    reports the pod's Error (as for a plugin returning an error Status), it
    does not crash."""

    @staticmethod
    def register(monkeypatch, cls):
        from kschedx.framework import registry

        points = frozenset(p for p, m in registry.POINT_METHODS.items() if callable(getattr(cls, m, None)))
        entry = registry.Entry(cls.name, f"tests:{cls.__name__}", points, registry._Loaded(cls))
        monkeypatch.setattr(registry, "entry_point_entries", lambda names=None, in_tree_names=None: {cls.name: entry})


@pytest.mark.parametrize("method, message", [
    ("filter", "plugin Boom raised KeyError in filter: 'zone'"),
    ("score", 'running Score plugins: plugin "Boom" failed with: plugin Boom: score must give integer scores, '
              "got 0.5"),
])
def test_a_plugin_failing_at_run_time_is_the_pods_error(monkeypatch, tmp_path, cluster, method, message):
    from kschedx.framework.configured import load_config
    from kschedx.framework.interface import Plugin

    def filter(self, state, pod_info, node_info):
        return {}["zone"]

    def score(self, state, pod_info, node_info):
        return 0.5

    cls = type("Boom", (Plugin,), {"name": "Boom", method: {"filter": filter, "score": score}[method]})
    _Boom.register(monkeypatch, cls)
    snap, pod = cluster
    cfg = load_config(config(tmp_path, "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: Boom}]\n"))
    doc = explaining.explain(load_workload([snap], [pod]), tie_break="name", config=cfg)
    assert doc["pods"][0]["status"] == "Error"
    assert doc["pods"][0]["message"] == message


@pytest.mark.parametrize("failing", ["score_details", "score_details_all", "score_details_all_short"])
def test_a_failing_explanation_is_left_out_and_the_score_stands(monkeypatch, tmp_path, cluster, failing):
    from kschedx.framework.configured import load_config
    from kschedx.framework.interface import Plugin

    def score(self, state, pod_info, node_info):
        return 7

    def details(self, state, pod_info, node_info):
        if failing == "score_details" and node_info.name == "n1":
            raise RuntimeError("no explanation")
        return {"node": node_info.name}

    def details_all(self, state, pod_info, nodes):
        if failing == "score_details_all":
            raise RuntimeError("no explanations")
        return [{"node": "?"}]  # one for every node: not an answer

    body = {"name": "Boom", "score": score, "score_details": details}
    if failing != "score_details":
        body["score_details_all"] = details_all
    cls = type("Boom", (Plugin,), body)
    _Boom.register(monkeypatch, cls)
    snap, pod = cluster
    cfg = load_config(config(tmp_path, "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: Boom}]\n"))
    doc = explaining.explain(load_workload([snap], [pod]), tie_break="name", config=cfg)
    p = doc["pods"][0]
    assert p["status"] == "Scheduled"
    boom = {n["name"]: next(s for s in n["scores"] if s["plugin"] == "Boom") for n in p["nodes"] if n.get("scores")}
    assert boom and all(s["raw"] == 7 for s in boom.values())
    for name, s in boom.items():
        if failing == "score_details" and name == "n1":
            assert "details" not in s
        else:  # asked node by node once the column failed
            assert s["details"] == {"node": name}


def test_a_class_that_is_not_a_plugin_is_refused(monkeypatch):
    from importlib.metadata import EntryPoint

    from kschedx.framework import registry

    ep = EntryPoint("Nope", "json:JSONDecoder", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: [ep])
    with pytest.raises(InputError) as e:
        parse_config(HEAD + "profiles:\n- plugins:\n    filter:\n      enabled: [{name: Nope}]\n", "s.yaml")
    assert str(e.value) == ("s.yaml: plugin 'Nope' (kschedx.plugins entry point Nope = json:JSONDecoder) is not a "
                            "subclass of kschedx.framework.interface.Plugin")


def test_a_registered_queue_sort_plugin_orders_the_pods(monkeypatch, tmp_path, cluster):
    from kschedx.framework.configured import load_config
    from kschedx.framework.interface import Plugin

    class NameSort(Plugin):
        name = "NameSort"

        def less(self, a, b):
            return a.name > b.name  # reverse alphabetical

    _Boom.register(monkeypatch, NameSort)
    snap, pod = cluster
    files = []
    for name in ("a", "b", "c"):
        path = tmp_path / f"{name}.yaml"
        path.write_text(POD.replace("name: app,", f"name: {name},"))
        files.append(str(path))
    w = load_workload([snap], files)
    assert [p["pod"] for p in simulate(w, tie_break="name")["pods"]] == ["default/a", "default/b", "default/c"]
    cfg = load_config(config(tmp_path, "profiles:\n- plugins:\n    queueSort:\n      enabled: [{name: NameSort}]\n"
                                       "      disabled: [{name: '*'}]\n"))
    for run in (simulate, explaining.explain):
        doc = run(load_workload([snap], files), tie_break="name", config=cfg)
        assert [p["pod"] for p in doc["pods"]] == ["default/c", "default/b", "default/a"]


def test_registered_plugin_reasons_in_the_fit_error(example_plugin, tmp_path, cluster):
    snap, pod = cluster
    cfg = config(tmp_path, WITH_PLUGIN.replace("requiredLabels: [rack]", "requiredLabels: [gpu]"))
    r = explain([pod, "--snapshot", snap, "--config", cfg, "-o", "json"])
    assert r.exit_code == 1
    message = json.loads(r.stdout)["pods"][0]["message"]
    assert message.startswith("0/4 nodes are available: 4 node(s) didn't have the required labels.")


def test_allow_unknown_plugins_when_the_unknown_plugin_was_the_queue_sort(tmp_path, cluster):
    """Coscheduling's usual configuration replaces PrioritySort: left out, it
    leaves no queue sort, so PrioritySort stands in (with a warning) instead
    of NewFramework's "only one queue sort plugin required"."""
    snap, pod = cluster
    cfg = config(tmp_path, """\
        profiles:
        - plugins:
            multiPoint:
              enabled: [{name: Coscheduling}]
              disabled: [{name: PrioritySort}]
          pluginConfig:
          - {name: Coscheduling, args: {permitWaitingTimeSeconds: 10}}
        """)
    r = explain([pod, "--snapshot", snap, "--config", cfg])
    assert r.exit_code == 3 and 'PreFilterPlugin "Coscheduling" does not exist' in r.stderr
    r = explain([pod, "--snapshot", snap, "--config", cfg, "--allow-unknown-plugins", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["notEvaluated"] == ["Coscheduling"] and doc["pods"][0]["status"] == "Scheduled"
    assert "no queue sort plugin is left once those are left out: PrioritySort stands in" in r.stderr


def test_a_failing_prefilter_extension_is_the_plugins_error(monkeypatch, tmp_path, cluster):
    """AddPod / RemovePod (run for nominated pods and preemption) are guarded too."""
    from kschedx.framework.configured import load_config
    from kschedx.framework.cycle_state import CycleState
    from kschedx.framework.interface import Plugin, PluginError

    class Extensions:
        def add_pod(self, state, pod_info, to_add, node_info):
            raise RuntimeError("no state")

        def remove_pod(self, state, pod_info, to_remove, node_info):
            return None

    class Boom(Plugin):
        name = "Boom"

        def pre_filter(self, state, pod_info, nodes):
            return None, None

        def pre_filter_extensions(self):
            return Extensions()

    _Boom.register(monkeypatch, Boom)
    snap, pod = cluster
    cfg = load_config(config(tmp_path, "profiles:\n- plugins:\n    preFilter:\n      enabled: [{name: Boom}]\n"
                                       "      disabled: [{name: '*'}]\n"))
    w = load_workload([snap], [pod])
    fw = new_schedulers(w.cluster, tie_break="name", seed=None, config=cfg).primary
    pi, node = w.pods[0], fw.snapshot.node_infos[0]
    fw.run_pre_filter_extension_remove_pod(CycleState(), pi, pi, node)  # None: Success
    with pytest.raises(PluginError) as e:
        fw.run_pre_filter_extension_add_pod(CycleState(), pi, pi, node)
    assert str(e.value) == "plugin Boom raised RuntimeError in add_pod: no state"
