"""Limits stay honest: YAML alias bombs, compression bombs, huge files and
huge workloads are handled in bounded time and memory, or refused in one
line with exit 3."""

from __future__ import annotations

import gzip

import pytest
from click.testing import CliRunner

from kschedx.sources import workloads
from kschedx.cli.main import main

NODE = """apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def _bomb(indent: str) -> str:
    """A billion laughs: nine levels of nine aliases, 9**9 leaves once expanded."""
    lines = [f"{indent}- &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 9):
        refs = ", ".join([f"*l{i - 1}"] * 9)
        lines.append(f"{indent}- &l{i} [{refs}]")
    return "\n".join(lines) + "\n"


def run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("command", ["explain", "simulate"])
def test_alias_bomb_in_a_field_kschedx_ignores_is_refused_unexpanded(tmp_path, command):
    # lists of lists where the API has lists of objects: the API server would
    # refuse them; the check never expands the aliases (a type error at the
    # first level stops it)
    cluster = _write(tmp_path, "c.yaml", NODE.replace("metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}",
                                                       "metadata:\n  name: n1\n  managedFields:\n" + _bomb("    ")))
    pod = _write(tmp_path, "p.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                     "  containers:\n  - name: c\n    image: i\n    env:\n" + _bomb("    "))
    r = run(command, pod, "--snapshot", cluster, "-o", "json")
    assert r.exit_code == 3
    lines = r.stderr.splitlines()
    assert len(lines) == 18 and lines[0].endswith(
        "Node/n1: field metadata.managedFields[0]: json: cannot unmarshal array into Go struct field "
        "ObjectMeta.metadata.managedFields of type v1.ManagedFieldsEntry")
    assert lines[9].endswith("Pod/default/p: field spec.containers[0].env[0]: json: cannot unmarshal array into Go "
                             "struct field Container.spec.containers.env of type v1.EnvVar")


def test_alias_bomb_in_a_field_kschedx_reads_is_a_line_per_element(tmp_path):
    pod = _write(tmp_path, "p.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                     "  containers: [{name: c, image: i}]\n  affinity:\n    nodeAffinity:\n"
                                     "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                                     "        nodeSelectorTerms:\n" + _bomb("        "))
    r = run("explain", pod, "--snapshot", _write(tmp_path, "c.yaml", NODE), "-o", "json")
    assert r.exit_code == 3
    lines = r.stderr.splitlines()
    assert len(lines) == 9
    assert "field spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]: " \
           "json: cannot unmarshal array into Go struct field NodeSelector" in lines[0]


def test_alias_bomb_of_valid_nested_schemas_is_walked_once(tmp_path):
    # a CustomResourceDefinition's schemas nest without end: nine levels of
    # nine aliases would be 9**9 schemas walked one by one
    lines = ["apiVersion: apiextensions.k8s.io/v1", "kind: CustomResourceDefinition",
             "metadata: {name: ws.example.com}", "spec:", "  group: example.com", "  names: {kind: W, plural: ws}",
             "  scope: Namespaced", "  versions:", "  - name: v1", "    served: true", "    storage: true",
             "    schema:", "      openAPIV3Schema:", "        type: object", "        properties:",
             "          l0: &l0 {type: object, properties: {a: {type: string, maxLength: many}}}"]
    for i in range(1, 10):
        refs = ", ".join(f"p{j}: *l{i - 1}" for j in range(9))
        lines.append(f"          l{i}: &l{i} {{type: object, properties: {{{refs}}}}}")
    crd = _write(tmp_path, "crd.yaml", "\n".join(lines) + "\n")
    pod = _write(tmp_path, "p.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                     "  containers: [{name: c, image: i}]\n")
    r = run("explain", pod, "--snapshot", _write(tmp_path, "c.yaml", NODE), "--snapshot", crd)
    assert r.exit_code == 3
    [line] = r.stderr.splitlines()  # named once, at its first place
    assert line.endswith("field spec.versions[0].schema.openAPIV3Schema.properties.l0.properties.a.maxLength: "
                         "json: cannot unmarshal string into Go struct field JSONSchemaProps.spec.versions.schema."
                         "openAPIV3Schema.properties.properties.maxLength of type int64")


def test_alias_bomb_in_free_form_driver_parameters_is_harmless(tmp_path):
    claim = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
             "spec:\n  devices:\n    requests: [{name: r, exactly: {deviceClassName: gpu}}]\n"
             "    config:\n    - requests: [r]\n      opaque:\n        driver: gpu.example.com\n"
             "        parameters:\n" + _bomb("        "))
    cluster = _write(tmp_path, "c.yaml", NODE + "---\n" + claim)
    pod = _write(tmp_path, "p.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                     "  containers: [{name: c, image: i}]\n")
    r = run("explain", pod, "--snapshot", cluster, "-o", "json")
    assert r.exit_code == 0, r.stderr


def test_compression_bomb_is_refused_before_parsing(tmp_path):
    data = gzip.compress(NODE.encode() + b" " * (64 * 1024**2), 9)
    assert len(data) < 200_000
    bomb = tmp_path / "c.yaml.gz"
    bomb.write_bytes(data)
    r = run("explain", "--snapshot", bomb, env={"KSCHEDX_MAX_INPUT_BYTES": str(16 * 1024**2)})
    assert r.exit_code == 3
    [line] = r.stderr.splitlines()
    assert line == (f"kschedx: error: {bomb}: decompresses to more than 16,777,216 bytes: refused "
                    "(set KSCHEDX_MAX_INPUT_BYTES to allow more)")


def test_a_file_over_the_input_limit_is_refused(tmp_path):
    big = _write(tmp_path, "c.yaml", NODE + "#" * 5000 + "\n")
    r = run("explain", "--snapshot", big, env={"KSCHEDX_MAX_INPUT_BYTES": "4096"})
    assert r.exit_code == 3
    assert "holds more than 4,096 bytes: refused" in r.stderr
    assert run("explain", "--snapshot", big).exit_code in (0, 1)  # the default limit is far above


def test_multi_member_gzip_is_read_whole(tmp_path):
    path = tmp_path / "c.yaml.gz"
    path.write_bytes(gzip.compress(NODE.encode()) + gzip.compress(b"---\n" + NODE.replace("n1", "n2").encode()))
    pod = _write(tmp_path, "p.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                     "  containers: [{name: c, image: i}]\n")
    r = run("explain", pod, "--snapshot", path, "-o", "json", env={"KSCHEDX_MAX_INPUT_BYTES": str(1024**2)})
    assert r.exit_code == 0, r.stderr
    assert '"name": "n1"' in r.stdout and '"name": "n2"' in r.stdout


def test_many_workloads_together_are_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(workloads, "MAX_EXPANDED_PODS", 250)
    deploy = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{i}}}\nspec:\n  replicas: 100\n"
              "  selector: {{matchLabels: {{app: d{i}}}}}\n  template:\n    metadata: {{labels: {{app: d{i}}}}}\n"
              "    spec: {{containers: [{{name: c, image: i}}]}}\n")
    pods = _write(tmp_path, "w.yaml", "---\n".join(deploy.format(i=i) for i in range(3)))
    r = run("simulate", pods, "--snapshot", _write(tmp_path, "c.yaml", NODE), "-o", "json")
    assert r.exit_code == 3
    [line] = r.stderr.splitlines()
    assert "Deployment/d2: expanding it brings the pods to create to 300: kschedx expands at most 250" in line
