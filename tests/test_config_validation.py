"""ValidateKubeSchedulerConfiguration: the facts of upstream's
TestValidateKubeSchedulerConfigurationV1 (apis/config/validation), on the
defaulted v1 document kschedx validates.

Cases that a v1 file cannot express are left out and say why below:
metricsBindAddress / healthzBindAddress are not v1 fields (strict decoding
rejects them), and an empty leaderElection.resourceName / resourceNamespace
is defaulted before validation. The removed plugin of "invalid-plugins"
(SelectorSpread) is simply unknown in v1.35, which lists the removed volume
limit plugins instead (EBSLimits here)."""

from __future__ import annotations

import copy

import pytest

from kschedx.config.defaults import default_configuration
from kschedx.framework.configured import parse_config
from kschedx.config.validation import validate_configuration
from kschedx.util.errors import InputError

VALID = {
    "parallelism": 8,
    "clientConnection": {"acceptContentTypes": "application/json", "contentType": "application/json", "qps": 10,
                         "burst": 10},
    "leaderElection": {"resourceLock": "leases", "leaderElect": True, "leaseDuration": "30s",
                       "renewDeadline": "15s", "retryPeriod": "5s", "resourceNamespace": "name",
                       "resourceName": "name"},
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 1,
    "profiles": [
        {"schedulerName": "me", "percentageOfNodesToScore": 35,
         "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}, "score": {"disabled": [{"name": "*"}]}},
         "pluginConfig": [{"name": "DefaultPreemption",
                           "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}}]},
        {"schedulerName": "other", "percentageOfNodesToScore": 35,
         "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}, "bind": {"enabled": [{"name": "CustomBind"}]}}},
    ],
    "extenders": [{"prioritizeVerb": "prioritize", "weight": 1}],
}


def changed(change) -> dict:
    cfg = copy.deepcopy(VALID)
    change(cfg)
    return cfg


def _set(path, value):
    def change(cfg):
        *parents, last = path
        target = cfg
        for key in parents:
            target = target[key]
        target[last] = value
    return change


def _mismatch_queue_sort(cfg):
    cfg["profiles"] = [
        {"schedulerName": "me", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
         "pluginConfig": [{"name": "PrioritySort"}]},
        {"schedulerName": "other", "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
         "pluginConfig": [{"name": "CustomSort"}]},
    ]


def _second_binder(cfg):
    cfg["extenders"][0]["bindVerb"] = "foo"
    cfg["extenders"].append({"prioritizeVerb": "prioritize", "bindVerb": "bar", "weight": 1})


# name -> (change, [(field path, error type)])
SCENARIOS = {
    "good": (lambda cfg: None, []),
    "bad-parallelism-invalid-value": (_set(["parallelism"], 0), [("parallelism", "Invalid value")]),
    "bad-resource-lock-not-leases": (_set(["leaderElection", "resourceLock"], "configmap"),
                                     [("leaderElection.resourceLock", "Invalid value")]),
    "bad-percentage-of-nodes-to-score": (_set(["percentageOfNodesToScore"], 101),
                                         [("percentageOfNodesToScore", "Invalid value")]),
    "negative-percentage-of-nodes-to-score": (_set(["percentageOfNodesToScore"], -1),
                                              [("percentageOfNodesToScore", "Invalid value")]),
    "scheduler-name-not-set": (_set(["profiles", 1, "schedulerName"], ""),
                               [("profiles[1].schedulerName", "Required value")]),
    "repeated-scheduler-name": (_set(["profiles", 0, "schedulerName"], "other"),
                                [("profiles[1].schedulerName", "Duplicate value")]),
    "greater-than-100-profile-percentage-of-nodes-to-score": (
        _set(["profiles", 1, "percentageOfNodesToScore"], 101),
        [("profiles[1].percentageOfNodesToScore", "Invalid value")]),
    "negative-profile-percentage-of-nodes-to-score": (
        _set(["profiles", 1, "percentageOfNodesToScore"], -1),
        [("profiles[1].percentageOfNodesToScore", "Invalid value")]),
    "different-queue-sort": (_set(["profiles", 1, "plugins", "queueSort", "enabled", 0, "name"], "AnotherSort"),
                             [("profiles[1].plugins.queueSort", "Invalid value")]),
    "one-empty-queue-sort": (_set(["profiles", 0, "plugins"], None),
                             [("profiles[1].plugins.queueSort", "Invalid value")]),
    "extender-negative-weight": (_set(["extenders", 0, "weight"], -1), [("extenders[0].weight", "Invalid value")]),
    "extender-duplicate-managed-resources": (
        _set(["extenders", 0, "managedResources"], [{"name": "example.com/foo", "ignoredByScheduler": False},
                                                    {"name": "example.com/foo", "ignoredByScheduler": False}]),
        [("extenders[0].managedResources[1].name", "Invalid value")]),
    "extender-duplicate-bind": (_second_binder, [("extenders", "Invalid value")]),
    "invalid-node-percentage": (
        _set(["profiles", 0, "pluginConfig"], [{"name": "DefaultPreemption", "args": {
            "minCandidateNodesPercentage": 200, "minCandidateNodesAbsolute": 100}}]),
        [("profiles[0].pluginConfig[0].args.minCandidateNodesPercentage", "Invalid value")]),
    "duplicated-plugin-config": (_set(["profiles", 0, "pluginConfig"], [{"name": "config"}, {"name": "config"}]),
                                 [("profiles[0].pluginConfig[1]", "Duplicate value")]),
    "mismatch-queue-sort": (_mismatch_queue_sort, [("profiles[1].plugins.queueSort", "Invalid value")]),
    "invalid-plugins": (_set(["profiles", 0, "plugins", "score", "enabled"], [{"name": "EBSLimits"}]),
                        [("profiles[0].plugins.score.enabled[0]", "Invalid value")]),
    "valid-plugins": (_set(["profiles", 0, "plugins", "score", "enabled"], [{"name": "PodTopologySpread", "weight": 2}]),
                      []),
}


def field_and_type(error: str) -> tuple[str, str]:
    path, rest = error.split(": ", 1)
    return path, rest.split(":", 1)[0]


@pytest.mark.parametrize("name", SCENARIOS)
def test_validate_kube_scheduler_configuration_v1(name):
    change, want = SCENARIOS[name]
    errors = validate_configuration(default_configuration(changed(change)))
    assert [field_and_type(e) for e in errors] == want, errors


def test_invalid_plugin_args_type_is_a_decoding_error():
    """Upstream's "invalid-plugin-args" (InterPodAffinityArgs given to
    DefaultPreemption): in a file, the args' kind says so, and decoding fails."""
    text = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
            "- pluginConfig:\n  - name: DefaultPreemption\n    args: {kind: InterPodAffinityArgs}\n")
    with pytest.raises(InputError) as e:
        parse_config(text, "s.yaml")
    assert ("args for plugin DefaultPreemption were not of type DefaultPreemptionArgs.kubescheduler.config.k8s.io, "
            "got InterPodAffinityArgs.kubescheduler.config.k8s.io") in str(e.value)
