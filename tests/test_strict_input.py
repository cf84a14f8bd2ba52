"""Strict input through the command line (sources/strict.py): every object a
user hands kschedx is checked against the API of the run's Kubernetes
version, as `kubectl apply --validate=strict` and the API server check it;
a typo is exit 3 naming the file, the object and the field. kschedx's own
snapshots and a live cluster's objects are not checked again."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kschedx.cli.main import main
from kschedx.commands.load import load_workload
from kschedx.sources.fixtures import read_objects
from kschedx.sources.schema.model import schema
from kschedx.sources.strict import MAX_ERROR_LINES, Validation
from kschedx.sources.writer import write_snapshot
from kschedx.util.errors import InvalidObjects

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = str(ROOT / "fixtures" / "cluster")
WEB = str(ROOT / "fixtures" / "pods" / "web.yaml")


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)


def kschedx(*args, cwd=None) -> subprocess.CompletedProcess:
    """The installed command line in a process of its own, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "kschedx", *map(str, args)], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=120)


def write(tmp_path: Path, name: str, *objects) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return path


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("kschedx: error: ")]


def _pod_spec(**extra) -> dict:
    return {"containers": [{"name": "app", "image": "nginx"}], **extra}


def _template(**spec) -> dict:
    return {"metadata": {"labels": {"app": "x"}}, "spec": _pod_spec(**spec)}


# -- the typos, each through a real kschedx process ----------------------------------

POD_TYPOS = """\
apiVersion: v1
kind: Pod
metadata:
  name: typo
spec:
  nodeSelectr:
    disktype: ssd
  containers:
  - name: app
    image: nginx
    resources:
      request:
        cpu: 500m
"""

DEPLOYMENT_TYPOS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replica: 6
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      topologySpreadConstraint:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: DoNotSchedule
        labelSelector: {matchLabels: {app: web}}
      containers:
      - name: app
        image: nginx
"""


def test_a_pod_with_misspelled_fields_is_refused(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(POD_TYPOS)
    r = kschedx("explain", path, "--snapshot", CLUSTER)
    assert r.returncode == 3 and r.stdout == ""
    assert errors(r.stderr) == [
        f'kschedx: error: {path}: Pod/default/typo: unknown field "spec.nodeSelectr" (did you mean "nodeSelector"?)',
        f'kschedx: error: {path}: Pod/default/typo: unknown field "spec.containers[0].resources.request" '
        '(did you mean "requests"?)',
    ]


def test_a_deployment_with_misspelled_fields_is_refused(tmp_path):
    path = tmp_path / "deploy.yaml"
    path.write_text(DEPLOYMENT_TYPOS)
    for command in ("explain", "simulate"):
        r = kschedx(command, path, "--snapshot", CLUSTER)
        assert r.returncode == 3, r.stderr
        assert errors(r.stderr) == [
            f'kschedx: error: {path}: Deployment/shop/web: unknown field "spec.replica" (did you mean "replicas"?)',
            f'kschedx: error: {path}: Deployment/shop/web: unknown field "spec.template.spec.topologySpreadConstraint" '
            '(did you mean "topologySpreadConstraints"?)',
        ]


@pytest.mark.parametrize("api_version, kind, expected", [
    ("v2", "Pod", 'field apiVersion: no matches for kind "Pod" in version "v2" (Kubernetes 1.36 serves Pod as v1)'),
    ("extensions/v1beta1", "Deployment", 'field apiVersion: no matches for kind "Deployment" in version '
                                         '"extensions/v1beta1" (Kubernetes 1.36 serves Deployment as apps/v1)'),
    ("v1", "Pdo", 'field kind: no matches for kind "Pdo" in version "v1" (did you mean Pod?)'),
    ("apps/v1", "deployment", 'field kind: no matches for kind "deployment" in version "apps/v1" '
                              '(did you mean Deployment?)'),
])
def test_an_apiversion_or_kind_the_version_does_not_serve_is_refused(tmp_path, api_version, kind, expected):
    text = (DEPLOYMENT_TYPOS.replace("replica:", "replicas:").replace("Constraint:", "Constraints:")
            if kind.lower() == "deployment" else POD_TYPOS.replace("nodeSelectr", "nodeSelector")
            .replace("request:", "requests:"))
    text = text.replace("apiVersion: apps/v1", f"apiVersion: {api_version}", 1) \
        .replace("apiVersion: v1", f"apiVersion: {api_version}", 1) \
        .replace("kind: Deployment", f"kind: {kind}").replace("kind: Pod", f"kind: {kind}")
    path = tmp_path / "typo.yaml"
    path.write_text(text)
    r = kschedx("explain", path, "--snapshot", CLUSTER, "--kube-version", "1.36")
    assert r.returncode == 3
    [line] = errors(r.stderr)
    assert line.startswith(f"kschedx: error: {path}: ") and line.endswith(expected), line


# -- one typo in every kind kschedx reads ---------------------------------------------------

def _typos() -> list[tuple[dict, str]]:
    """(an object with one misspelled field, the field as the API server names it)."""
    ns = {"namespace": "default"}
    objects = [
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p9", **ns},
          "spec": _pod_spec(nodeSelectr={"a": "b"})}, "spec.nodeSelectr"),
        ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n9"}, "spec": {"unschedulabel": True}},
         "spec.unschedulabel"),
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns9", "label": {"a": "b"}}},
         "metadata.label"),
        ({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv9"},
          "spec": {"capacit": {"storage": "1Gi"}, "hostPath": {"path": "/x"}}}, "spec.capacit"),
        ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c9", **ns},
          "spec": {"accessMode": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
         "spec.accessMode"),
        ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s9", **ns}, "spec": {"selectr": {"a": "b"}}},
         "spec.selectr"),
        ({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc9", **ns},
          "spec": {"replica": 1, "selector": {"app": "x"}, "template": _template()}}, "spec.replica"),
        ({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs9", **ns},
          "spec": {"replica": 1, "selector": {"matchLabels": {"app": "x"}}, "template": _template()}},
         "spec.replica"),
        ({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "ss9", **ns},
          "spec": {"serviceNam": "x", "selector": {"matchLabels": {"app": "x"}}, "template": _template()}},
         "spec.serviceNam"),
        ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d9", **ns},
          "spec": {"replica": 1, "selector": {"matchLabels": {"app": "x"}}, "template": _template()}},
         "spec.replica"),
        ({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds9", **ns},
          "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": _template(toleration=[])}},
         "spec.template.spec.toleration"),
        ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j9", **ns},
          "spec": {"parallelsm": 2, "template": {"spec": _pod_spec(restartPolicy="Never")}}}, "spec.parallelsm"),
        ({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj9", **ns},
          "spec": {"schedul": "* * * * *",
                   "jobTemplate": {"spec": {"template": {"spec": _pod_spec(restartPolicy="Never")}}}}},
         "spec.schedul"),
        ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc9"},
          "provisioner": "x", "volumeBindingMod": "WaitForFirstConsumer"}, "volumeBindingMod"),
        ({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n9"}, "spec": {"driver": []}},
         "spec.driver"),
        ({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d9"},
          "spec": {"attachRequire": True}}, "spec.attachRequire"),
        ({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "cap9", **ns},
          "storageClasName": "sc"}, "storageClasName"),
        ({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va9"},
          "spec": {"attacher": "x", "nodeNam": "n1", "source": {"persistentVolumeName": "pv"}}}, "spec.nodeNam"),
        ({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb9", **ns},
          "spec": {"minAvailabe": 1}}, "spec.minAvailabe"),
        ({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "pc9"}, "valu": 1000},
         "valu"),
        ({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc9"}, "handlr": "runc"},
         "handlr"),
        ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "rsl9"},
          "spec": {"drivr": "x", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                   "nodeName": "n1", "devices": []}}, "spec.drivr"),
        ({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "dc9"},
          "spec": {"selector": []}}, "spec.selector"),
        ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "rcl9", **ns},
          "spec": {"device": {}}}, "spec.device"),
        ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "rct9", **ns},
          "spec": {"spec": {"device": {}}}}, "spec.spec.device"),
        ({"apiVersion": "resource.k8s.io/v1beta2", "kind": "DeviceTaintRule", "metadata": {"name": "dtr9"},
          "spec": {"taint": {"key": "k", "effect": "NoSchedule"}, "selectr": {}}}, "spec.selectr"),
    ]
    return objects


TYPOS = _typos()


def test_the_typos_cover_every_kind_kschedx_reads():
    from kschedx.sources.kinds import KINDS
    from kschedx.sources.workloads import WORKLOAD_KINDS
    from kschedx.state.cluster import _INDEXED_KINDS

    covered = {obj["kind"] for obj, _ in TYPOS}
    assert {k.kind for k in KINDS} | set(WORKLOAD_KINDS) | set(_INDEXED_KINDS) <= covered


@pytest.mark.parametrize("obj, field", TYPOS, ids=[obj["kind"] for obj, _ in TYPOS])
def test_one_typo_in_every_kind_is_exit_3_naming_file_object_and_field(tmp_path, obj, field):
    from kschedx.sources.admission import object_ref

    ref = object_ref(obj)
    typo = field.rpartition(".")[2]
    # the same object without its typo is valid: the typo is the one problem
    fixed = copy.deepcopy(obj)
    parent = fixed
    for key in field.split(".")[:-1]:
        parent = parent[key]
    del parent[typo]
    assert not [p for p in __import__("kschedx.sources.schema", fromlist=["validate"]).validate(fixed, "1.36")]

    path = write(tmp_path, "objects.yaml", obj)
    # where a user would give it: pods and workloads as POD_FILEs, the rest in the cluster
    if obj["kind"] in ("Pod", "Deployment", "ReplicaSet", "StatefulSet", "ReplicationController", "DaemonSet",
                       "Job", "CronJob"):
        args = ("explain", path, "--snapshot", CLUSTER)
    else:
        args = ("explain", WEB, "--snapshot", CLUSTER, "--snapshot", path)
    r = run(*args, "--kube-version", "1.36")
    assert r.exit_code == 3, r.output
    [line] = errors(r.stderr)
    assert line.startswith(f"kschedx: error: {path}: {ref}: unknown field \"{field}\""), line


# -- --validate ------------------------------------------------------------------------------

def test_validate_warn_reports_unknown_fields_and_goes_on(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(POD_TYPOS)
    r = run("explain", path, "--snapshot", CLUSTER, "--validate", "warn", "-o", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["pods"][0]["status"] == "Scheduled"
    expected = [f'{path}: Pod/default/typo: unknown field "spec.nodeSelectr" (did you mean "nodeSelector"?)',
                f'{path}: Pod/default/typo: unknown field "spec.containers[0].resources.request" '
                '(did you mean "requests"?)']
    assert [w for w in doc["warnings"] if "unknown field" in w] == expected
    assert [line for line in r.stderr.splitlines() if "unknown field" in line] == \
        [f"kschedx: warning: {w}" for w in expected]


def test_validate_ignore_does_not_report_unknown_fields(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(POD_TYPOS)
    for value in ("ignore", "false", "IGNORE"):
        r = run("explain", path, "--snapshot", CLUSTER, "--validate", value)
        assert r.exit_code == 0 and "unknown field" not in r.stderr, r.stderr
    assert run("explain", path, "--snapshot", CLUSTER, "--validate", "true").exit_code == 3


def test_what_the_api_server_cannot_decode_is_refused_whatever_the_setting(tmp_path):
    # kubectl --validate=ignore still fails on these: the server cannot decode
    # a wrong type, and kubectl finds no resource for an unknown kind
    wrong_type = write(tmp_path, "wrong.yaml", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w"},
                                                "spec": {"containers": {"name": "app", "image": "nginx"}}})
    no_kind = write(tmp_path, "pdo.yaml", {"apiVersion": "v1", "kind": "Pdo", "metadata": {"name": "w"}})
    for mode in ("strict", "warn", "ignore"):
        r = run("explain", wrong_type, "--snapshot", CLUSTER, "--validate", mode)
        assert r.exit_code == 3
        assert errors(r.stderr) == [
            f"kschedx: error: {wrong_type}: Pod/default/w: field spec.containers: json: cannot unmarshal object "
            "into Go struct field PodSpec.spec.containers of type []v1.Container"]
        r = run("explain", no_kind, "--snapshot", CLUSTER, "--validate", mode)
        assert r.exit_code == 3 and "did you mean Pod?" in r.stderr


def test_validate_takes_kubectls_values_only():
    r = run("explain", WEB, "--snapshot", CLUSTER, "--validate", "lenient")
    assert r.exit_code == 2
    assert "must be one of strict (or true), warn, ignore (or false)" in r.stderr


@pytest.mark.parametrize("command", ["explain", "simulate", "capacity"])
def test_every_command_reading_files_validates_them(tmp_path, command):
    pod = tmp_path / "pod.yaml"
    pod.write_text(POD_TYPOS)
    assert run(command, pod, "--snapshot", CLUSTER).exit_code == 3
    r = run(command, pod, "--snapshot", CLUSTER, "--validate=warn")
    assert r.exit_code in (0, 1) and 'unknown field "spec.nodeSelectr"' in r.stderr


def test_the_snapshot_files_are_validated_too(tmp_path):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}, "capacitty": {}}}
    path = write(tmp_path, "cluster.yaml", node)
    r = run("explain", WEB, "--snapshot", path)
    assert r.exit_code == 3
    assert errors(r.stderr) == [f'kschedx: error: {path}: Node/n1: unknown field "status.capacitty" '
                                '(did you mean "capacity"?)']
    # stdin too, and a List's items, and the document named
    text = "---\n" + yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [node]})
    r = run("explain", WEB, "--snapshot", "-", input="kind: Namespace\napiVersion: v1\nmetadata: {name: a}\n" + text)
    assert r.exit_code == 3
    assert errors(r.stderr) == ['kschedx: error: <stdin> (document 2): Node/n1: unknown field "status.capacitty" '
                                '(did you mean "capacity"?)']


def test_a_key_given_twice_is_a_duplicate_field(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: twice}\nspec:\n"
                    "  containers: [{name: a, image: nginx}]\n  containers: [{name: b, image: nginx}]\n")
    r = run("explain", path, "--snapshot", CLUSTER)
    assert r.exit_code == 3
    assert errors(r.stderr) == [f'kschedx: error: {path}: Pod/default/twice: duplicate field "spec.containers"']
    r = run("explain", path, "--snapshot", CLUSTER, "--validate=warn")
    assert r.exit_code == 0 and 'kschedx: warning: ' in r.stderr and 'duplicate field "spec.containers"' in r.stderr
    # in JSON as well
    json_path = tmp_path / "pod.json"
    json_path.write_text('{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "j", "name": "j"},'
                         ' "spec": {"containers": [{"name": "a", "image": "nginx"}]}}')
    r = run("explain", json_path, "--snapshot", CLUSTER)
    assert r.exit_code == 3 and 'duplicate field "metadata.name"' in r.stderr


def test_a_systematic_problem_is_not_printed_once_per_object(tmp_path):
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
             "spec": _pod_spec(nodeSelectr={"a": "b"})} for i in range(50)]
    path = write(tmp_path, "pods.yaml", *pods)
    r = run("explain", path, "--snapshot", CLUSTER)
    assert r.exit_code == 3
    lines = errors(r.stderr)
    assert len(lines) == MAX_ERROR_LINES + 1
    assert lines[-1] == ("kschedx: error: 30 more problems (50 in 50 objects, checked against the API of "
                         "Kubernetes 1.37)")
    r = run("explain", path, "--snapshot", CLUSTER, "--validate", "warn", "--tie-break", "name")
    warned = [line for line in r.stderr.splitlines() if "unknown field" in line]
    assert warned == [f'kschedx: warning: {path}: unknown field "spec.nodeSelectr" (did you mean "nodeSelector"?), '
                      "in 50 objects (Pod/default/p0, Pod/default/p1, Pod/default/p2 and 47 more)"]


def test_a_custom_resource_is_not_validated_and_is_ignored(tmp_path):
    crd_object = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                  "spec": {"anything": [1, 2]}}
    path = write(tmp_path, "widget.yaml", crd_object)
    r = run("explain", WEB, "--snapshot", CLUSTER, "--snapshot", path)
    assert r.exit_code == 0 and "error" not in r.stderr and "warning" not in r.stderr
    # but a built-in group's name under Kubernetes' own domain is a mistake
    path = write(tmp_path, "mistake.yaml", dict(crd_object, apiVersion="apps.k8s.io/v1", kind="Deployment"))
    assert run("explain", WEB, "--snapshot", CLUSTER, "--snapshot", path).exit_code == 3


# -- the version validated against -----------------------------------------------------------

def _field_of_136_only() -> str:
    added = set(schema("1.36").structs_by_definition["io.k8s.api.core.v1.PodSpec"].fields) \
        - set(schema("1.35").structs_by_definition["io.k8s.api.core.v1.PodSpec"].fields)
    return sorted(added)[0]


def test_the_version_is_the_runs_kube_version_or_the_snapshots(tmp_path):
    field = _field_of_136_only()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "new"}, "spec": _pod_spec(**{field: None})}
    path = write(tmp_path, "pod.yaml", pod)
    assert run("explain", path, "--snapshot", CLUSTER, "--kube-version", "1.36").exit_code == 0
    r = run("explain", path, "--snapshot", CLUSTER, "--kube-version", "1.35")
    assert r.exit_code == 3
    assert f'unknown field "spec.{field}" (a field of PodSpec in Kubernetes 1.36' in r.stderr
    # without --kube-version: the version a snapshot recorded (SnapshotInfo, anywhere in the files)
    info = {"apiVersion": "kschedx/v1", "kind": "SnapshotInfo", "metadata": {"name": "snapshot"},
            "source": {"server": "https://x", "gitVersion": "v1.35.4"}, "unreadableKinds": {}}
    recorded = write(tmp_path, "info.yaml", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "z"}},
                     info)
    r = run("explain", path, "--snapshot", CLUSTER, "--snapshot", recorded)
    assert r.exit_code == 3 and f'"spec.{field}"' in r.stderr
    assert run("explain", path, "--snapshot", CLUSTER, "--snapshot", recorded, "--kube-version", "1.36").exit_code == 0


# -- what is not validated: kschedx's own snapshots, live objects ------------------------------

def _snapshot_objects() -> list[dict]:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "someFieldOfANewerServer": {"x": 1}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
           "spec": _pod_spec(), "status": {"phase": "Pending"}}
    return [node, pod]


@pytest.mark.parametrize("name", ["snap.json", "snap.yaml", "snap.json.gz", "snap.yaml.gz"])
def test_a_snapshot_kschedx_wrote_is_not_validated_again(tmp_path, name):
    info = {"apiVersion": "kschedx/v1", "kind": "SnapshotInfo", "metadata": {"name": "snapshot"},
            "source": {"server": "https://x"}, "fields": "scheduling", "unreadableKinds": {}}
    path = str(tmp_path / name)
    write_snapshot(path, _snapshot_objects(), info)
    objects = read_objects([path], note_duplicates=True)
    [part] = objects.files
    assert part.own and part.duplicates is None  # no key noted: the plain, fast loaders read it
    r = run("explain", "--snapshot", path, "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["pods"][0]["status"] == "Scheduled"


def test_the_same_objects_without_kschedxs_snapshotinfo_are_validated(tmp_path):
    path = write(tmp_path, "hand.yaml", *_snapshot_objects())
    r = run("explain", "--snapshot", path)
    assert r.exit_code == 3 and '"status.someFieldOfANewerServer"' in r.stderr
    # a SnapshotInfo that is not the file's first object does not make it kschedx's
    info = {"apiVersion": "kschedx/v1", "kind": "SnapshotInfo", "metadata": {"name": "snapshot"},
            "source": {"server": "https://x"}, "unreadableKinds": {}}
    path = write(tmp_path, "late-info.yaml", *_snapshot_objects(), info)
    assert not read_objects([str(path)]).files[0].own
    assert run("explain", "--snapshot", path).exit_code == 3


def test_objects_a_live_cluster_serves_are_not_validated_pod_files_are(kube_api, tmp_path):
    node, pod = _snapshot_objects()
    kube_api.add(node, pod)
    r = run("explain", "default/web", "--kubeconfig", kube_api.kubeconfig, "-o", "json")
    assert r.exit_code == 0, r.stderr
    path = tmp_path / "pod.yaml"
    path.write_text(POD_TYPOS)
    r = run("explain", path, "--kubeconfig", kube_api.kubeconfig)
    assert r.exit_code == 3
    assert f'{path}: Pod/default/typo: unknown field "spec.nodeSelectr"' in r.stderr


def test_load_workload_validates_by_default_and_takes_a_validation(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(POD_TYPOS)
    with pytest.raises(InvalidObjects) as e:
        load_workload([CLUSTER], [str(path)])
    assert len(e.value.lines()) == 2 and e.value.exit_code == 3
    workload = load_workload([CLUSTER], [str(path)], validation=Validation("warn"))
    assert sum("unknown field" in w for w in workload.warnings) == 2
    assert not any("unknown field" in w for w in
                   load_workload([CLUSTER], [str(path)], validation=Validation("ignore")).warnings)


# -- the valid corpus: no warning, no error ---------------------------------------------------

EXAMPLES = [("explain", "fixtures/pods/", "fixtures/cluster/"), ("explain", "fixtures/fix/", "fixtures/cluster/"),
            ("explain", None, "fixtures/cluster/"), ("simulate", "fixtures/simulate/deploy.yaml",
                                                     "fixtures/simulate/cluster.yaml"),
            ("capacity", "fixtures/capacity/web.yaml", "fixtures/capacity/cluster.yaml"),
            ("capacity", "fixtures/capacity/api.yaml", "fixtures/capacity/cluster.yaml"),
            ("explain", None, "fixtures/gpu/"), ("explain", None, "fixtures/preemption/"),
            *[("explain", None, f"fixtures/volumes/{p.name}") for p in sorted((ROOT / "fixtures/volumes").glob("*.yaml"))],
            ("explain", None, "fixtures/zone-spread/"),
            ("explain", None, "fixtures/preemption-search/")]


@pytest.mark.parametrize("command, pods, cluster", EXAMPLES, ids=[f"{c} {p or ''} {s}" for c, p, s in EXAMPLES])
def test_the_bundled_examples_load_without_a_validation_problem(command, pods, cluster):
    args = [command] + ([pods] if pods else []) + ["--snapshot", cluster, "-o", "json"]
    for version in ("1.35", "1.36"):
        r = run(*args, "--kube-version", version)
        assert r.exit_code in (0, 1), r.stderr
        assert "unknown field" not in r.stderr and "duplicate field" not in r.stderr and "error" not in r.stderr


ADD_NODES = ROOT / "fixtures" / "whatif" / "add-nodes"


@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_a_node_templates_typo_is_refused_like_any_other_file(tmp_path, command):
    template = (ADD_NODES / "templates" / "pool-c.yaml").read_text()
    assert "  labels:" in template
    typo = tmp_path / "pool-c.yaml"
    typo.write_text(template.replace("  labels:", "  lables:", 1))
    args = [command, ADD_NODES / "web.yaml", "--snapshot", ADD_NODES / "cluster.yaml", "--node-template", typo]
    if command == "simulate":
        args += ["--add-nodes", "auto"]
    r = kschedx(*args)
    assert r.returncode == 3 and r.stdout == ""
    assert f'{typo}: Node/pool-c: unknown field "metadata.lables" (did you mean "labels"?)' in r.stderr
    warned = kschedx(*args, "--validate=warn")
    assert warned.returncode in (0, 1) and 'unknown field "metadata.lables"' in warned.stderr
