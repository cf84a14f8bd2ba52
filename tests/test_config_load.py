"""--config: decoding (strict v1), validation texts, warnings, and the CLI's exit 3."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from kschedx.cli.main import main
from kschedx.framework.configured import parse_config
from kschedx.util.errors import InputError

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def error_of(text: str) -> str:
    with pytest.raises(InputError) as e:
        parse_config(HEAD + textwrap.dedent(text), "sched.yaml")
    return str(e.value)


def test_empty_configuration_is_the_default_profile():
    cfg = parse_config(HEAD, "sched.yaml")
    assert cfg.scheduler_names == ["default-scheduler"]
    assert cfg.percentage_of_nodes_to_score == 0
    assert cfg.profiles[0].percentage_of_nodes_to_score is None
    assert cfg.extenders == []
    assert cfg.warnings == []


def test_json_is_read_too():
    cfg = parse_config(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                   "kind": "KubeSchedulerConfiguration", "percentageOfNodesToScore": 40}))
    assert cfg.percentage_of_nodes_to_score == 40


@pytest.mark.parametrize("text, message", [
    ("percentageOfNodesToScore: 101\n",
     "sched.yaml: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    ("profiles:\n- schedulerName: a\n  percentageOfNodesToScore: -1\n",
     "sched.yaml: profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"),
    ("parallelism: 0\n",
     "sched.yaml: parallelism: Invalid value: 0: should be an integer value greater than zero"),
    ("profiles:\n- schedulerName: a\n- schedulerName: a\n",
     "sched.yaml: profiles[1].schedulerName: Duplicate value: {}"),
    ("profiles:\n- schedulerName: a\n- {}\n",
     "sched.yaml: profiles[1].schedulerName: Required value"),
    ("podInitialBackoffSeconds: 0\n",
     "sched.yaml: podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
    ("podInitialBackoffSeconds: 20\n",
     "sched.yaml: podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal to PodInitialBackoffSeconds"),
    ("extenders:\n- urlPrefix: http://e\n  prioritizeVerb: p\n",
     "sched.yaml: extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"),
    ("extenders:\n- {urlPrefix: a, bindVerb: b}\n- {urlPrefix: c, bindVerb: d}\n",
     'sched.yaml: extenders: Invalid value: "found 2 extenders implementing bind": only one extender can '
     "implement bind"),
    ("extenders:\n- urlPrefix: a\n  managedResources: [{name: kubernetes.io/foo}]\n",
     'sched.yaml: extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/foo": is an invalid '
     "extended resource name"),
    ("profiles:\n- plugins:\n    filter:\n      enabled: [{name: EBSLimits}]\n",
     'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version "v1" '
     '(KubeSchedulerConfiguration is version "")'),
    ("profiles:\n- schedulerName: a\n  plugins: {queueSort: {enabled: [{name: PrioritySort}], disabled: "
     "[{name: '*'}]}}\n- schedulerName: b\n",
     'profiles[1].plugins.queueSort: Invalid value: {"Enabled":null,"Disabled":null}: must be the same for all '
     "profiles"),
])
def test_validation_errors_name_file_and_field(text, message):
    assert message in error_of(text)


def test_several_errors_are_one_aggregate_line():
    msg = error_of("parallelism: -1\npercentageOfNodesToScore: 200\n")
    assert msg.startswith("sched.yaml: [parallelism: Invalid value: -1")
    assert "percentageOfNodesToScore: Invalid value: 200" in msg and "\n" not in msg


@pytest.mark.parametrize("text, message", [
    ("profiles:\n- schedulerName: a\n  pluginz: {}\n", 'strict decoding error: unknown field "profiles[0].pluginz"'),
    ("profiles:\n- plugins: {score: {enabled: [{name: ImageLocality, wieght: 2}]}}\n",
     'unknown field "profiles[0].plugins.score.enabled[0].wieght"'),
    ("percentageOfNodesToScore: fifty\n",
     "json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.percentageOfNodesToScore of "
     "type int32"),
    ("profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAfinityWeight: 2}\n",
     'decoding args for plugin InterPodAffinity: strict decoding error: unknown field "hardPodAfinityWeight"'),
])
def test_strict_decoding(text, message):
    assert message in error_of(text)


@pytest.mark.parametrize("text, message", [
    ("", "holds no KubeSchedulerConfiguration"),
    ("kind: Pod\napiVersion: v1\n", 'no kind "Pod" is registered for version "v1"'),
    ("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
     'for version "kubescheduler.config.k8s.io/v1beta3"'),
    ("a: [\n", "not valid YAML or JSON (line"),
])
def test_not_a_configuration(text, message):
    with pytest.raises(InputError) as e:
        parse_config(text, "sched.yaml")
    assert message in str(e.value)


def test_out_of_tree_plugin_does_not_exist_unless_allowed():
    text = "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: Coscheduling}]\n"
    msg = error_of(text)
    assert ("creating profile for scheduler name default-scheduler: PreFilterPlugin \"Coscheduling\" does not "
            "exist") in msg
    cfg = parse_config(HEAD + text, "sched.yaml", allow_unknown_plugins=True)
    assert cfg.profiles[0].unknown == ["Coscheduling"]
    assert any("Coscheduling" in w for w in cfg.warnings)


@pytest.mark.parametrize("text, message", [
    ("profiles:\n- plugins:\n    score:\n      enabled: [{name: NodePorts}]\n",
     'plugin "NodePorts" does not extend ScorePlugin plugin'),
    ("profiles:\n- plugins:\n    filter:\n      enabled: [{name: NodeName}, {name: NodeName}]\n      disabled: "
     "[{name: '*'}]\n", 'plugin "NodeName" already registered as "FilterPlugin"'),
    ("profiles:\n- plugins:\n    queueSort:\n      disabled: [{name: '*'}]\n",
     'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0'),
    ("profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: DefaultBinder}]\n",
     'at least one bind plugin is needed for profile with scheduler name "default-scheduler"'),
    # Weights are int32: the overflow check of getScoreWeights cannot trip.
    ("profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, weight: 92233720368547758}]\n",
     "json: cannot unmarshal number 92233720368547758 into Go struct field Plugin.profiles.plugins.score.enabled."
     "weight of type int32"),
])
def test_framework_construction_errors(text, message):
    assert message in error_of(text)


def test_ignored_fields_warn_once_each():
    cfg = parse_config(HEAD + "leaderElection: {leaderElect: false}\nclientConnection: {qps: 10}\nparallelism: 4\n",
                       "sched.yaml")
    assert len(cfg.warnings) == 3
    assert all(w.startswith("sched.yaml: ") and " is ignored: " in w for w in cfg.warnings)


# -- the CLI --------------------------------------------------------------------------------
CLUSTER = "fixtures/cluster"


def test_cli_invalid_config_is_exit_3_with_one_line(tmp_path):
    bad = tmp_path / "sched.yaml"
    bad.write_text(HEAD + "percentageOfNodesToScore: 120\n")
    r = CliRunner().invoke(main, ["explain", "--snapshot", CLUSTER, "--config", str(bad)])
    assert r.exit_code == 3
    assert r.stderr.strip() == (f"kschedx: error: {bad}: percentageOfNodesToScore: Invalid value: 120: "
                                "not in valid range [0-100]")


def test_cli_config_from_stdin():
    r = CliRunner().invoke(main, ["explain", "--snapshot", CLUSTER, "--config", "-", "-o", "json",
                                  "--tie-break", "name"], input=HEAD)
    assert r.exit_code in (0, 1), r.stderr
    doc = json.loads(r.stdout)
    assert doc["profiles"] == ["default-scheduler"] and doc["config"] == "<stdin>"
    assert all(p["profile"] == "default-scheduler" for p in doc["pods"])


def test_cli_stdin_only_once():
    r = CliRunner().invoke(main, ["explain", "--snapshot", "-", "--config", "-"], input=HEAD)
    assert r.exit_code == 2 and "only once" in r.stderr


def test_allow_unknown_plugins_needs_config():
    r = CliRunner().invoke(main, ["explain", "--snapshot", CLUSTER, "--allow-unknown-plugins"])
    assert r.exit_code == 2


# -- fuzzing finds: each was an internal error (exit 70) -------------------------------------------

def _run_config(tmp_path, text):
    path = tmp_path / "sched.yaml"
    path.write_text(HEAD + textwrap.dedent(text))
    cluster = "tests/golden/cases/hand-04-topology-spread.yaml"
    return CliRunner().invoke(main, ["simulate", "--snapshot", cluster, "--config", str(path), "-o", "json",
                                     "--tie-break", "name"], catch_exceptions=False)


FIT = "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: "
AFFINITY = "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args: "
SPREAD = "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: "


@pytest.mark.parametrize("text, message", [
    (AFFINITY + "{addedAffinity: 0}",
     "json: cannot unmarshal number into Go struct field NodeAffinityArgs.addedAffinity of type v1.NodeAffinity"),
    (AFFINITY + "{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                "[{matchExpressions: [{key: 1, operator: In}]}]}}}",
     "json: cannot unmarshal number into Go struct field NodeSelectorRequirement.addedAffinity."
     "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.matchExpressions.key of type string"),
    (AFFINITY + "{addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: []}]}}",
     "cannot unmarshal array into Go struct field PreferredSchedulingTerm.addedAffinity."
     "preferredDuringSchedulingIgnoredDuringExecution.preference of type v1.NodeSelectorTerm"),
    (SPREAD + "{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, "
              "whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {a: [1]}}}]}",
     "cannot unmarshal array into Go struct field LabelSelector.defaultConstraints.labelSelector.matchLabels "
     "of type string"),
    # A null item decodes to the zero struct, which validation then refuses.
    (SPREAD + "{defaultingType: List, defaultConstraints: [null]}",
     "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"),
    (FIT + "{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: "
           "{shape: [{score: 1}, {utilization: null, score: 3}]}}}",
     # The 1.36 path (the default version); 1.35 reports it under scoringStrategy.shape.
     "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 0: values must be sorted in "
     "increasing order"),
])
def test_wrongly_typed_nested_args_are_one_line(tmp_path, text, message):
    result = _run_config(tmp_path, text)
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kschedx: error: "), result.stderr
    assert message in lines[0]


@pytest.mark.parametrize("text", [
    # ResourceSpec's name is a plain string: left out, it is "" (validation allows it), and a
    # null item is the zero ResourceSpec, whose weight 0 defaulting turns into 1.
    FIT + "{scoringStrategy: {type: MostAllocated, resources: [{weight: 1}]}}",
    FIT + "{scoringStrategy: {type: MostAllocated, resources: [null, {name: cpu, weight: 1}]}}",
    "profiles: [null]",  # the zero profile: defaulting names it default-scheduler
])
def test_zero_values_of_list_items_run_as_upstream_decodes_them(tmp_path, text):
    result = _run_config(tmp_path, text)
    assert result.exit_code in (0, 1), result.stderr
    assert json.loads(result.stdout)["kind"]


def test_an_unknown_key_with_a_line_break_stays_one_line(tmp_path):
    # A fuzzing find: YAML keys may hold NEL (U+0085) or newlines.
    result = _run_config(tmp_path, 'profiles:\n- {" \\x85": null, "a\\nb": 1}')
    assert result.exit_code == 3
    assert result.stderr.splitlines() == [result.stderr.rstrip("\n")]
    assert 'unknown field "profiles[0]. \\x85", unknown field "profiles[0].a\\nb"' in result.stderr


# ---- per version ----------------------------------------------------------------------------------

def test_placement_points_are_unknown_fields_before_1_36():
    from kschedx.features import default_features

    text = HEAD + "profiles:\n- plugins:\n    placementScore:\n      enabled: [{name: NodeResourcesFit}]\n"
    with pytest.raises(InputError) as e:
        parse_config(text, "sched.yaml", features=default_features("1.35"))
    assert 'strict decoding error: unknown field "profiles[0].plugins.placementScore"' in str(e.value)
    cfg = parse_config(text, "sched.yaml", features=default_features("1.36"))
    # MultiPoint makes NodeResourcesFit a PlacementScore plugin too; kschedx plans it, never runs it.
    assert cfg.profiles[0].points["placementScore"] == ["NodeResourcesFit"]
    assert cfg.profiles[0].placement_weights == {"NodeResourcesFit": 1}


def test_at_most_one_placement_generate_plugin():
    from kschedx.features import Features

    # Gates kschedx refuses on the command line: the configuration's checks are NewFramework's all the same.
    gates = Features("1.36", {"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True},
                     reproduced_only=False)
    cfg = parse_config(HEAD, "sched.yaml", features=gates)
    plan = cfg.profiles[0]
    assert plan.points["placementGenerate"] == ["TopologyPlacementGenerator"]
    assert plan.placement_weights == {"NodeResourcesFit": 1, "PodGroupPodsCount": 1}
    text = HEAD + ("profiles:\n- plugins:\n    placementGenerate:\n      enabled: [{name: TopologyPlacementGenerator}, "
                   "{name: TopologyPlacementGenerator}]\n")
    with pytest.raises(InputError) as e:
        parse_config(text, "sched.yaml", features=gates)
    assert 'plugin "TopologyPlacementGenerator" already registered as "PlacementGeneratePlugin"' in str(e.value)


def test_a_plugin_of_another_version_does_not_exist():
    from kschedx.features import default_features

    text = HEAD + "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: PodGroupPodsCount}]\n"
    with pytest.raises(InputError) as e:
        parse_config(text, "sched.yaml", features=default_features("1.35"))
    assert 'PreFilterPlugin "PodGroupPodsCount" does not exist' in str(e.value)
    assert "not a kube-scheduler v1.35 in-tree plugin" in str(e.value)


def test_fit_args_are_validated_as_the_version_does(tmp_path):
    """1.36 forbids requestedToCapacityRatio with another type; 1.35 accepts it."""
    text = FIT + "{scoringStrategy: {type: LeastAllocated, requestedToCapacityRatio: {shape: [{utilization: 1}]}}}"
    path = tmp_path / "sched.yaml"
    path.write_text(HEAD + text)
    args = ["simulate", "--snapshot", "tests/golden/cases/hand-04-topology-spread.yaml", "--config", str(path),
            "-o", "json"]
    new = CliRunner().invoke(main, args)
    assert new.exit_code == 3 and ("scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is "
                                   "not RequestedToCapacityRatio") in new.stderr
    old = CliRunner().invoke(main, args + ["--kube-version", "1.35"])
    assert old.exit_code in (0, 1), old.stderr
    assert json.loads(old.stdout)["kubeVersion"] == "1.35"
