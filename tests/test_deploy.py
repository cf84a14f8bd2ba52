"""deploy/watch.yaml: the Deployment that runs explain --watch in the
cluster, with the read-only role and a locked-down container."""

from __future__ import annotations

from pathlib import Path

import yaml

from kschedx.cli.explain import explain

ROOT = Path(__file__).resolve().parents[1]


def docs() -> list[dict]:
    return list(yaml.safe_load_all((ROOT / "deploy" / "watch.yaml").read_text()))


def of_kind(kind: str) -> list[dict]:
    return [d for d in docs() if d["kind"] == kind]


def test_the_deployment_runs_explain_watch_as_its_own_read_only_account():
    [deployment] = of_kind("Deployment")
    spec = deployment["spec"]["template"]["spec"]
    [container] = spec["containers"]
    args = container["args"]
    assert args[:5] == ["explain", "--watch", "-A", "-o", "jsonl"]
    account = spec["serviceAccountName"]
    [sa] = of_kind("ServiceAccount")
    assert sa["metadata"]["name"] == account and sa["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    bindings = [b for b in of_kind("ClusterRoleBinding")
                if any(s["name"] == account for s in b["subjects"])]
    assert [b["roleRef"]["name"] for b in bindings] == ["kschedx-read"]
    rbac = list(yaml.safe_load_all((ROOT / "deploy" / "rbac.yaml").read_text()))
    assert not [b for b in rbac if b["kind"] == "ClusterRoleBinding"
                and any(s.get("name") == account for s in b["subjects"])]
    assert deployment["spec"]["replicas"] == 1


def test_the_container_is_locked_down():
    [deployment] = of_kind("Deployment")
    spec = deployment["spec"]["template"]["spec"]
    assert spec["securityContext"]["runAsNonRoot"] is True
    [container] = spec["containers"]
    sc = container["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert container["resources"]["limits"]["memory"]


def test_its_arguments_are_a_valid_explain_watch():
    from kschedx.cli.watch import check_watch_options

    [deployment] = of_kind("Deployment")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    ctx = explain.make_context("explain", list(container["args"][1:]))
    p = ctx.params
    assert p["watch"] is True and p["output"] == "jsonl" and p["metrics_addr"] == ":9090"
    check_watch_options(snapshot_paths=p["snapshot_paths"], files=[], output=p["output"], fix=p["fix"],
                        report=p["report"], jobs=p["jobs"])
    port = container["ports"][0]["containerPort"]
    assert p["metrics_addr"] == f":{port}"
    assert deployment["spec"]["template"]["metadata"]["annotations"]["prometheus.io/port"] == str(port)


def test_the_image_installs_kschedx_with_pip_from_the_checkout():
    text = (ROOT / "deploy" / "Dockerfile").read_text()
    assert 'pip install ".[metrics]"' in text
    assert "USER 65532" in text and 'ENTRYPOINT ["kschedx"]' in text
