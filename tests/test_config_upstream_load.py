"""--config read exactly as kube-scheduler reads it, where a probe found
kschedx apart: each case is kube-scheduler's verdict per version (None:
it starts), checked against kschedx always and against the oracle (the
real kube-scheduler) when Go is there.

- Score weights: the overflow check runs in int64, so a negative weight
  makes every later Score plugin "overflow"; on the last plugin it passes.
- Repeated keys: go-yaml's strict errors (the line of the repeated value),
  or the JSON codec's `duplicate field` among the unknown fields.
- YAML numbers: `2.0` and `1e2` are whole numbers once re-encoded as JSON.
- queueSort: compared as the internal type, an unset weight being 0; a
  differing one printed as json.Marshal prints that type (Go field names,
  weight 0, an empty list null after the v1 merge, HTML characters escaped).
- A repeated schedulerName: the bad value is a *field.Path, marshalled `{}`.
- A removed plugin: listed under core "v1"; the configuration's own version
  is empty on the internal object.
"""

from __future__ import annotations

import pytest

from kschedx.features import default_features
from kschedx.framework.configured import parse_config
from kschedx.util.errors import InputError
from tests.oracle import GOLDEN, OracleError, binary_or_skip, run

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
JSON_HEAD = '{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration",'
VERSIONS = ("1.35", "1.36", "1.37")


def _score(*plugins: str) -> str:
    return HEAD + "profiles:\n- plugins:\n    score:\n      enabled:\n" + "".join(
        f"      - {p}\n" for p in plugins)


REMOVED = 'was invalid in version "v1" (KubeSchedulerConfiguration is version "")'
OVERFLOW = "total score of Score plugins could overflow"

# name -> (document, {version: kube-scheduler's error, None when it starts}); a str is every version's.
CASES = {
    "negative-weight-then-defaults": (_score("{name: TaintToleration, weight: -5}"), {
        "1.35": f"creating profile for scheduler name default-scheduler: {OVERFLOW}",
        "1.36": f"creating profile for scheduler name default-scheduler: score plugins: {OVERFLOW}",
        "1.37": f"creating profile for scheduler name default-scheduler: score plugins: {OVERFLOW}"}),
    "negative-weight-last": (HEAD + "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n"
                             "      - {name: ImageLocality, weight: -1}\n", None),
    "repeated-profile-key": (HEAD + "profiles:\n- schedulerName: default-scheduler\n  schedulerName: other\n",
                             'strict decoding error: yaml: unmarshal errors:\n'
                             '  line 5: key "schedulerName" already set in map'),
    "repeated-keys-in-order": (
        HEAD + "bogus: 1\nprofiles:\n- schedulerName: a\n  plugins:\n    score:\n"
        "      enabled: [{name: ImageLocality, weight: 2, weight: 3}]\n  plugins:\n    filter: {}\n"
        "  pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy: {type: MostAllocated}\n"
        "      scoringStrategy:\n        type: MostAllocated\n  schedulerName:\nparallelism: 2\nparallelism: 3\n",
        'strict decoding error: yaml: unmarshal errors:\n  line 8: key "weight" already set in map\n'
        '  line 10: key "plugins" already set in map\n  line 16: key "scoringStrategy" already set in map\n'
        '  line 17: key "schedulerName" already set in map\n  line 19: key "parallelism" already set in map, '
        'unknown field "bogus"'),
    "json-duplicate-field": (JSON_HEAD + '"profiles":[{"schedulerName":"default-scheduler","schedulerName":"x"}]}',
                             'strict decoding error: duplicate field "profiles[0].schedulerName"'),
    "json-duplicates-among-unknown-fields": (
        JSON_HEAD + '"zzz":1,"profiles":[{"schedulerName":"a","foo":2,"schedulerName":"x","pluginConfig":'
        '[{"name":"NodeResourcesFit","args":{"scoringStrategy":{"type":"MostAllocated"},"scoringStrategy":'
        '{"type":"MostAllocated"}}}]}],"zzz":3}',
        'strict decoding error: unknown field "zzz", unknown field "profiles[0].foo", duplicate field '
        '"profiles[0].schedulerName", decoding .profiles[0].pluginConfig[0]: strict decoding error: decoding args '
        'for plugin NodeResourcesFit: strict decoding error: duplicate field "scoringStrategy"'),
    "yaml-whole-float-weight": (_score("{name: ImageLocality, weight: 2.0}"), None),
    "yaml-exponent-weight": (_score("{name: ImageLocality, weight: 1e2}"), None),
    "yaml-fraction-weight": (_score("{name: ImageLocality, weight: 2.5}"),
                             "json: cannot unmarshal number 2.5 into Go struct field "
                             "Plugin.profiles.plugins.score.enabled.weight of type int32"),
    "json-whole-float-weight": (JSON_HEAD + '"profiles":[{"plugins":{"score":{"enabled":[{"name":"ImageLocality",'
                                '"weight":2.0}]}}}]}',
                                "json: cannot unmarshal number 2.0 into Go struct field "
                                "Plugin.profiles.plugins.score.enabled.weight of type int32"),
    "queue-sort-weight-zero-is-unset": (
        HEAD + "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled:\n      - name: PrioritySort\n"
        "- schedulerName: default-scheduler\n  plugins:\n    queueSort:\n      enabled:\n"
        "      - name: PrioritySort\n        weight: 0\n", None),
    "duplicate-scheduler-name": (HEAD + "profiles:\n- schedulerName: a\n- schedulerName: b\n- schedulerName: a\n",
                                 "profiles[2].schedulerName: Duplicate value: {}"),
    "removed-plugin-enabled": (HEAD + "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: EBSLimits\n",
                               'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": ' + REMOVED),
    "removed-plugin-configured": (HEAD + "profiles:\n- pluginConfig:\n  - name: GCEPDLimits\n    args: {}\n",
                                  'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": ' + REMOVED),
    "queue-sort-differs-disabled-only": (
        HEAD + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
        "      disabled:\n      - name: \"*\"\n",
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":null,"Disabled":[{"Name":"*","Weight":0}]}: '
        "must be the same for all profiles"),
    "queue-sort-differs-unset": (
        HEAD + "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled: [{name: PrioritySort}]\n"
        "      disabled: [{name: \"*\"}]\n- schedulerName: b\n  plugins:\n    queueSort:\n      enabled: []\n",
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":null,"Disabled":null}: '
        "must be the same for all profiles"),
    "queue-sort-differs-weights-and-escapes": (
        HEAD + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n      enabled:\n"
        "      - {name: \"a<b&c>\", weight: 3}\n      - name: PrioritySort\n      disabled:\n"
        "      - {name: \"*\", weight: 7}\n",
        'profiles[1].plugins.queueSort: Invalid value: {"Enabled":[{"Name":"a\\u003cb\\u0026c\\u003e","Weight":3},'
        '{"Name":"PrioritySort","Weight":0}],"Disabled":[{"Name":"*","Weight":0}]}: must be the same for all profiles'),
}


def _expected(name: str, version: str):
    verdict = CASES[name][1]
    return verdict.get(version) if isinstance(verdict, dict) else verdict


PARAMS = [(name, v) for name in CASES for v in VERSIONS]


@pytest.mark.parametrize("name, version", PARAMS)
def test_kschedx_reads_the_configuration_as_kube_scheduler(name, version):
    text, expected = CASES[name][0], _expected(name, version)
    features = default_features(version)
    if expected is None:
        parse_config(text, "sched.yaml", features=features)
        return
    with pytest.raises(InputError) as e:
        parse_config(text, "sched.yaml", features=features)
    assert str(e.value) == f"sched.yaml: {expected}"


@pytest.mark.parametrize("name, version", PARAMS)
def test_the_oracle_agrees(name, version, tmp_path):
    binary_or_skip(version)
    text, expected = CASES[name][0], _expected(name, version)
    config = tmp_path / ("sched.json" if text.startswith("{") else "sched.yaml")
    config.write_text(text)
    case = GOLDEN / "cases" / "hand-01-resources-taint.yaml"
    if expected is None:
        run(version, case, "explain", config=config)
        return
    with pytest.raises(OracleError) as e:
        run(version, case, "explain", config=config)
    # The oracle names a profile's framework errors its own way.
    assert expected.replace("creating profile for scheduler name ", "profile ") in str(e.value)
