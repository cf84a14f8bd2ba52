"""Every kind kschedx reads has a declared shape: a field of the wrong type
or a value the API server refuses is one line naming file, object and field
(exit 3), or, when a live API server served it, exit 4 — never a crash."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from cluster_scenarios import run, small_cluster  # noqa: F401
from kschedx.sources.shapes import SHAPES

GOLDEN = Path(__file__).resolve().parent / "golden" / "cases"


def _docs(case: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((GOLDEN / case).read_text()) if d]


def _first(docs, kind, where=lambda obj: True):
    return next(d for d in docs if d.get("kind") == kind and where(d))


def _set(obj: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


# What `kschedx snapshot` writes first: its objects were served by an API
# server and are not validated again (sources/strict.py), so the shapes are
# what stands between a wrongly shaped object and the plugins.
SNAPSHOT_INFO = {"apiVersion": "kschedx/v1", "kind": "SnapshotInfo", "metadata": {"name": "snapshot"},
                 "source": {"server": "https://example"}, "fields": "scheduling", "unreadableKinds": {}}


def _explain(tmp_path, docs, *, written_by_kschedx: bool = True):
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(([SNAPSHOT_INFO] if written_by_kschedx else []) + docs, sort_keys=False))
    return run("explain", "--snapshot", str(path), "-o", "json"), str(path)


def test_a_hand_written_file_gets_the_api_servers_words_first(tmp_path):
    # the same wrong shape outside a kschedx snapshot: strict validation
    # names it as the API server would, before the shapes are reached
    docs = _docs("dra-2-0.yaml")
    _set(_first(docs, "ResourceSlice"), ("spec", "pool"), "pool-a")
    result, file = _explain(tmp_path, docs, written_by_kschedx=False)
    _one_line_error(result, file, "ResourceSlice/", "field spec.pool: json: cannot unmarshal string into Go struct "
                                                    "field ResourceSliceSpec.spec.pool of type v1.ResourcePool")


def _one_line_error(result, path: str, *fragments: str) -> None:
    assert result.exit_code == 3, (result.exit_code, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"kschedx: error: {path}")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def _with_results(d):
    return bool(((d.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results"))


# The defects the issue reports, each found by mutating one field of a golden fixture.
ISSUE_EXAMPLES = [
    ("dra-2-0.yaml", "ResourceSlice", lambda d: True, ("spec",), "x",
     "field spec: must be a mapping, not str 'x'"),
    ("dra-2-0.yaml", "ResourceSlice", lambda d: True, ("spec",), 7, "field spec: must be a mapping, not int 7"),
    ("dra-2-0.yaml", "ResourceSlice", lambda d: True, ("spec", "pool"), "pool-a",
     "field spec.pool: must be a mapping, not str 'pool-a'"),
    ("dra-2-0.yaml", "ResourceClaim", lambda d: True, ("spec",), "x", "field spec: must be a mapping"),
    ("dra-2-0.yaml", "ResourceClaim", _with_results,
     ("status", "allocation", "devices", "results", 0, "driver"), ["gpu.example.com"],
     "field status.allocation.devices.results[0].driver: must be a string, not a list"),
]


@pytest.mark.parametrize("case, kind, where, path, value, message", ISSUE_EXAMPLES)
def test_reported_crashes_are_input_errors(tmp_path, case, kind, where, path, value, message):
    docs = _docs(case)
    obj = _first(docs, kind, where)
    _set(obj, path, value)
    result, file = _explain(tmp_path, docs)
    _one_line_error(result, file, f"{kind}/", message)


def test_claim_name_of_the_wrong_type(tmp_path):
    docs = _docs("case-1-10.yaml")
    pod = _first(docs, "Pod", lambda d: any("persistentVolumeClaim" in v for v in d["spec"].get("volumes") or ()))
    i = next(i for i, v in enumerate(pod["spec"]["volumes"]) if "persistentVolumeClaim" in v)
    pod["spec"]["volumes"][i]["persistentVolumeClaim"]["claimName"] = 12
    result, file = _explain(tmp_path, docs)
    _one_line_error(result, file, f"field spec.volumes[{i}].persistentVolumeClaim.claimName: must be a string, "
                                  "not int 12 (quote it in YAML)")


# Crash classes the fuzzing suite found before the shapes covered them.
FOUND_BY_FUZZING = [
    # CEL compared an attribute of the wrong type.
    ("dra-2-0.yaml", "ResourceSlice", lambda d: any(dev.get("attributes") for dev in d["spec"].get("devices") or ()),
     None, "attributes", "must be"),
    # A request given as a string, a selector as a string, a device name as a list.
    ("dra-2-29.yaml", "ResourceClaim", lambda d: True, ("spec", "devices", "requests", 0, "name"), {"a": 1},
     "field spec.devices.requests[0].name: must be a string, not a mapping"),
    ("dra-2-0.yaml", "DeviceClass", lambda d: d["spec"].get("selectors"), ("spec", "selectors", 0), "x",
     "field spec.selectors[0]: must be a mapping, not str 'x'"),
    ("dra-2-25.yaml", "ResourceSlice", lambda d: True, ("spec", "driver"), ["a"],
     "field spec.driver: must be a string, not a list"),
    # Null where the API server requires a value: a device without a name was
    # joined into a device id (TypeError), a slice without driver or pool likewise.
    ("dra-2-2.yaml", "ResourceSlice", lambda d: d["spec"].get("devices"), ("spec", "devices", 0, "name"), None,
     "field spec.devices[0].name: required value"),
    ("dra-2-2.yaml", "ResourceSlice", lambda d: True, ("spec", "driver"), None,
     "field spec.driver: required value"),
    ("dra-2-2.yaml", "ResourceSlice", lambda d: True, ("spec", "pool", "name"), None,
     "field spec.pool.name: required value"),
    ("dra-2-29.yaml", "ResourceClaim", lambda d: True, ("spec", "devices", "requests", 0, "name"), None,
     "field spec.devices.requests[0].name: required value"),
    ("dra-2-1.yaml", "ResourceClaim", _with_results,
     ("status", "allocation", "devices", "results", 0, "device"), None,
     "field status.allocation.devices.results[0].device: required value"),
]


@pytest.mark.parametrize("case, kind, where, path, value, message", FOUND_BY_FUZZING)
def test_fuzzing_finds_are_input_errors(tmp_path, case, kind, where, path, value, message):
    docs = _docs(case)
    obj = _first(docs, kind, where)
    if path is None:  # the first device attribute holding an int, made a float
        dev = next(dev for dev in obj["spec"]["devices"] if dev.get("attributes"))
        name, attr = next(iter(dev["attributes"].items()))
        key = next(iter(attr))
        attr[key] = 1.5
    else:
        _set(obj, path, value)
    result, file = _explain(tmp_path, docs)
    _one_line_error(result, file, message)


# One well-formed object per kind, and a field of each that the API server would refuse.
KIND_CASES = [
    ({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"}, "value": 5,
      "preemptionPolicy": "Sometimes"}, "preemptionPolicy", 'unsupported value \'Sometimes\': supported values: "Never"'),
    ({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "p"}, "value": "high"},
     "value", "must be an integer, not str 'high'"),
    ({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "r"}, "handler": "h",
      "overhead": {"podFixed": {"cpu": "lots"}}}, "overhead.podFixed.cpu", "invalid quantity 'lots'"),
    ({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "r"}, "handler": "h",
      "scheduling": {"tolerations": {"key": "a"}}}, "scheduling.tolerations", "must be a list, not a mapping"),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"selector": {"app": 1}}},
     "spec.selector[app]", "must be a string, not int 1"),
    ({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
      "spec": {"minAvailable": [1]}}, "spec.minAvailable", "must be an integer or a string, not a list"),
    ({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b"},
      "spec": {"selector": {"matchLabels": {"a": "b"}}}, "status": {"disruptionsAllowed": "1"}},
     "status.disruptionsAllowed", "must be an integer, not str '1'"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc"}, "provisioner": "p",
      "volumeBindingMode": "Later"}, "volumeBindingMode", "unsupported value 'Later'"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "c"},
      "storageClassName": "sc", "capacity": "-1Gi"}, "capacity", "must be greater than or equal to 0"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n"},
      "spec": {"drivers": [{"name": "d", "topologyKeys": "zone"}]}}, "spec.drivers[0].topologyKeys",
     "must be a list"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
      "spec": {"attacher": "d", "nodeName": ["n"], "source": {}}}, "spec.nodeName", "must be a string"),
    ({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
      "spec": {"capacity": {"storage": "1Gi"}, "csi": {"driver": 3}}}, "spec.csi.driver", "must be a string"),
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
      "spec": {"selector": {"matchLabels": []}}}, "spec.selector.matchLabels", "must be a mapping, not a list"),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
      "spec": {"selectors": [{"cel": {"expression": True}}]}}, "spec.selectors[0].cel.expression",
     "must be a string, not bool True"),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
      "spec": {"spec": {"devices": {"requests": "gpu"}}}}, "spec.spec.devices.requests", "must be a list"),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
      "spec": {"driver": "d", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "allNodes": True,
               "sharedCounters": [{"name": "c", "counters": {"mem": {"value": "x"}}}]}},
     "spec.sharedCounters[0].counters[mem].value", "invalid quantity 'x'"),
    ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
      "spec": {"replicas": "3", "template": {"spec": {"containers": []}}}}, "spec.replicas",
     "must be an integer, not str '3'"),
    ({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
      "spec": {"serviceName": "s", "volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": {"resources": 5}}]}},
     "spec.volumeClaimTemplates[0].spec.resources", "must be a mapping, not int 5"),
    ({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
      "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"parallelism": "2"}}}},
     "spec.jobTemplate.spec.parallelism", "must be an integer"),
    ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
      "status": {"allocatable": {"cpu": "4"}, "images": [{"names": "nginx"}]}}, "status.images[0].names",
     "must be a list"),
    ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": {"team": "a", "x": 5}}},
     "metadata.labels[x]", "must be a string, not int 5"),
]


@pytest.mark.parametrize("obj, field, message", KIND_CASES, ids=lambda v: v["kind"] if isinstance(v, dict) else None)
def test_each_kind_names_the_field(tmp_path, obj, field, message):
    docs = _docs("hand-01-resources-taint.yaml") + [copy.deepcopy(obj)]
    result, file = _explain(tmp_path, docs)
    _one_line_error(result, file, f"field {field}: ", message)


def test_every_kind_in_the_fixture_format_has_a_shape():
    kinds = {"Pod", "Node", "Namespace", "PriorityClass", "PersistentVolume", "PersistentVolumeClaim",
             "StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity", "VolumeAttachment", "RuntimeClass",
             "PodDisruptionBudget", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice", "DeviceClass",
             "Service", "ReplicaSet", "StatefulSet", "ReplicationController", "Deployment", "DaemonSet", "Job",
             "CronJob"}
    assert kinds <= set(SHAPES)


# -- live reads: the API server served it, so exit 4 ------------------------------------------------------
WRONG_SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s1"},
               "spec": "oops"}


def test_live_explain_of_a_wrongly_shaped_object_is_exit_4(kube_api):
    small_cluster(kube_api)
    kube_api.add(copy.deepcopy(WRONG_SLICE))
    r = run("explain", "--all-pending", "--kubeconfig", kube_api.kubeconfig, "-o", "json")
    assert r.exit_code == 4 and r.stdout == ""
    [line] = r.stderr.splitlines()
    assert "ResourceSlice/s1: field spec: must be a mapping, not str 'oops'" in line
    assert "served by the API server" in line


def test_live_pod_of_the_wrong_shape_is_exit_4(kube_api):
    small_cluster(kube_api)
    kube_api.add({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "odd", "namespace": "default"},
                  "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": "all"}})
    r = run("explain", "--all-pending", "--kubeconfig", kube_api.kubeconfig, "-o", "json")
    assert r.exit_code == 4
    [line] = r.stderr.splitlines()
    assert "Pod/default/odd: field spec.tolerations: must be a list" in line


def test_a_pod_file_of_the_wrong_shape_stays_exit_3_against_a_live_cluster(kube_api, tmp_path):
    small_cluster(kube_api)
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: i}]\n"
                   "  nodeSelector: [a]\n")
    r = run("explain", str(pod), "--kubeconfig", kube_api.kubeconfig, "-o", "json")
    assert r.exit_code == 3
    assert (f"{pod}: Pod/default/p: field spec.nodeSelector: json: cannot unmarshal array into Go struct field "
            "PodSpec.spec.nodeSelector of type map[string]string") in r.stderr


def test_snapshot_of_a_wrongly_shaped_object_writes_nothing(kube_api, tmp_path):
    small_cluster(kube_api)
    kube_api.add(copy.deepcopy(WRONG_SLICE))
    out = tmp_path / "snap.yaml"
    r = run("snapshot", "-o", str(out), "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 4
    assert "ResourceSlice/s1: field spec" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kubeconfig"]  # no file, no temporary left


# -- kubeconfigs: fuzzing finds --------------------------------------------------------------------

def _kubeconfig(tmp_path, cluster=None, context_name="x"):
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "x",
           "clusters": [{"name": "c", "cluster": {} if cluster is None else cluster}],
           "contexts": [{"name": context_name, "context": {"cluster": "c", "user": "u"}}],
           "users": [{"name": "u", "user": {}}]}
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


@pytest.mark.parametrize("context_name, message", [
    (["x"], "field contexts[0].name: must be a string, not a list"),
    ({"x": 1}, "field contexts[0].name: must be a string, not a mapping"),
])
def test_kubeconfig_field_of_the_wrong_type_is_named(tmp_path, context_name, message):
    # Was: TypeError unhashable type (exit 70) while looking the context up.
    path = _kubeconfig(tmp_path, {"server": "https://127.0.0.1:1"}, context_name)
    _one_line_error(run("explain", "--kubeconfig", path, "--all-pending"), path, message)


def test_kubeconfig_cluster_without_server_is_client_go_s_error(tmp_path):
    # Was: urllib3's "No host specified" with a FutureWarning on stderr.
    path = _kubeconfig(tmp_path)
    _one_line_error(run("explain", "--kubeconfig", path, "--all-pending"), path,
                    'invalid configuration: no server found for cluster "c"')


def test_kubeconfig_server_without_scheme_gets_one_as_client_go_does(tmp_path):
    path = _kubeconfig(tmp_path, {"server": "127.0.0.1:1"})
    result = run("explain", "--kubeconfig", path, "--all-pending")
    assert result.exit_code == 4, result.stderr
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert "cluster http://127.0.0.1:1 " in result.stderr


def test_kubeconfig_server_that_is_no_url_is_one_line(tmp_path):
    # A fuzzing find: a 70,000-character server made urllib3 print a FutureWarning
    # before the error, and the error repeated the whole name.
    path = _kubeconfig(tmp_path, {"server": "x" * 70_000, "insecure-skip-tls-verify": True})
    result = run("explain", "--kubeconfig", path, "--all-pending")
    assert result.exit_code == 4, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kschedx: error: cluster https://xxx"), result.stderr[:300]
    assert "https://" + "x" * 189 + "... (context" in lines[0]
    assert len(lines[0]) < 800
