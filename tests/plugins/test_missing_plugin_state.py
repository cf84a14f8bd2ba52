"""A configuration that disables a plugin's PreFilter or PreScore but keeps
its Filter or Score: the plugin finds no state of its own in the cycle.

Some plugins then compute what the state holds (NodeAffinity, the Score of
NodeResourcesFit and NodeResourcesBalancedAllocation); the others fail the
cycle with an Error, each in its own words, which the framework prefixes
with the extension point and the plugin. A PreFilter that returned Skip is
another matter: its Filter does not run at all (the default profile with a
pod without host ports, NodePorts).

Each case is asserted as written and, where the oracle is built, against
kube-scheduler itself."""

from __future__ import annotations

import pytest

from tests.differential import VERSIONS, run_kschedx
from tests.oracle import binary_or_skip, run as run_oracle

FIXTURE = """\
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a, topology.kubernetes.io/zone: z1}}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b, topology.kubernetes.io/zone: z2}}
spec:
  taints:
  - {key: spot, value: "true", effect: PreferNoSchedule}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: 500m, memory: 256Mi}}
"""

FILTER = 'running "{}" filter plugin: '
SCORE = 'running Score plugins: plugin "{}" failed with: '

# (extension point disabled, plugin) -> the Error kube-scheduler gives the pod
# (the same in v1.35, v1.36 and v1.37).
ERRORS = {
    ("preFilter", "NodeResourcesFit"):
        FILTER.format("NodeResourcesFit") + 'error reading "PreFilterNodeResourcesFit" from cycleState: not found',
    ("preFilter", "NodePorts"):
        FILTER.format("NodePorts") + 'reading "PreFilterNodePorts" from cycleState: not found',
    ("preFilter", "InterPodAffinity"):
        FILTER.format("InterPodAffinity") + 'error reading "PreFilterInterPodAffinity" from cycleState: not found',
    ("preFilter", "PodTopologySpread"):
        FILTER.format("PodTopologySpread") + 'reading "PreFilterPodTopologySpread" from cycleState: not found',
    ("preScore", "TaintToleration"):
        SCORE.format("TaintToleration") + 'failed to read "PreScoreTaintToleration" from cycleState: not found',
    ("preScore", "InterPodAffinity"):
        SCORE.format("InterPodAffinity") + 'failed to read "PreScoreInterPodAffinity" from cycleState: not found',
    ("preScore", "PodTopologySpread"):
        SCORE.format("PodTopologySpread") + 'error reading "PreScorePodTopologySpread" from cycleState: not found',
    # Every PreScore off: Score runs plugin by plugin in profile order, and
    # TaintToleration, the first, is the one that fails.
    ("preScore", "*"):
        SCORE.format("TaintToleration") + 'failed to read "PreScoreTaintToleration" from cycleState: not found',
}

# Plugins that compute the missing state, or have none to miss: the pod is placed.
FALLBACKS = [
    ("preFilter", "NodeAffinity"), ("preScore", "NodeAffinity"), ("preScore", "NodeResourcesFit"),
    ("preScore", "NodeResourcesBalancedAllocation"), ("preFilter", "TaintToleration"),
    ("preScore", "ImageLocality"), (None, None),
]


def _config(tmp_path, point, plugin):
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" \
           "profiles:\n- schedulerName: default-scheduler\n"
    if point is not None:
        text += f"  plugins:\n    {point}:\n      disabled:\n      - name: '{plugin}'\n"
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def _fixture(tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text(FIXTURE)
    return path


def _outcome(doc) -> tuple[str, str | None]:
    [pod] = doc["pods"]
    return pod["status"], pod.get("message")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("point, plugin", list(ERRORS))
def test_a_missing_state_fails_the_pod_with_upstreams_error(tmp_path, version, point, plugin):
    side = run_kschedx(version, _fixture(tmp_path), "explain", _config(tmp_path, point, plugin))
    assert side.doc is not None, side.crash or side.refused
    assert _outcome(side.doc) == ("Error", ERRORS[point, plugin])


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("point, plugin", FALLBACKS)
def test_a_plugin_that_computes_its_state_still_places_the_pod(tmp_path, version, point, plugin):
    side = run_kschedx(version, _fixture(tmp_path), "explain", _config(tmp_path, point, plugin))
    assert side.doc is not None, side.crash or side.refused
    assert _outcome(side.doc)[0] == "Scheduled"


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("point, plugin", [*ERRORS, *FALLBACKS])
def test_kube_scheduler_agrees(tmp_path, version, point, plugin):
    binary_or_skip(version)
    fixture, config = _fixture(tmp_path), _config(tmp_path, point, plugin)
    want = run_oracle(version, fixture, "explain", config=config)
    side = run_kschedx(version, fixture, "explain", config)
    assert side.doc is not None, side.crash or side.refused
    assert _outcome(side.doc) == _outcome(want)
    if (point, plugin) in ERRORS:
        assert _outcome(want) == ("Error", ERRORS[point, plugin])


DRA_CASE = "tests/golden/cases/hand-dra.yaml"
DRA_OFF = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
           "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
           "    preFilter:\n      disabled: [{name: DynamicResources}]\n"
           "    filter:\n      disabled: [{name: DynamicResources}]\n")


def _dra(tmp_path, version):
    config = tmp_path / "config.yaml"
    config.write_text(DRA_OFF)
    side = run_kschedx(version, DRA_CASE, "explain", config)
    assert side.doc is not None, side.crash or side.refused
    return config, side.doc


@pytest.mark.parametrize("version", VERSIONS)
def test_dynamicresources_score_without_its_state_is_named_once(tmp_path, version):
    # Only the Score of DynamicResources left: the framework, not the plugin,
    # names the extension point and the plugin.
    _, doc = _dra(tmp_path, version)
    gpu1 = next(p for p in doc["pods"] if p["pod"] == "default/gpu-1")
    assert (gpu1["status"], gpu1["message"]) == (
        "Error", 'running Score plugins: plugin "DynamicResources" failed with: not found')


@pytest.mark.parametrize("version", VERSIONS)
def test_dynamicresources_score_without_its_state_as_kube_scheduler(tmp_path, version):
    binary_or_skip(version)
    config, doc = _dra(tmp_path, version)
    want = run_oracle(version, DRA_CASE, "explain", config=config)
    assert [(p["pod"], p["status"], p.get("message")) for p in doc["pods"]] == \
        [(p["pod"], p["status"], p.get("message")) for p in want["pods"]]
