"""Several profiles: each pod evaluated by the profile of its schedulerName;
a pod no profile serves is NoProfile, failing the exit code only when asked for."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from kschedx.commands.explain import explain
from kschedx.commands.load import load_workload
from kschedx.commands.simulate import simulate
from kschedx.cli.main import main
from kschedx.framework.configured import load_config
from kschedx.result.document import exit_code

CLUSTER = "fixtures/cluster"
TWO = "fixtures/config/two-profiles.yaml"


def pod_file(tmp_path, name: str, scheduler: str | None):
    pod = yaml.safe_load(open("fixtures/pods/web.yaml"))
    pod["metadata"]["name"] = name
    if scheduler:
        pod["spec"]["schedulerName"] = scheduler
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(pod))
    return str(path)


def test_each_pod_goes_to_its_profile(tmp_path):
    files = [pod_file(tmp_path, "a", None), pod_file(tmp_path, "b", "batch-scheduler")]
    doc = explain(load_workload([CLUSTER], files), tie_break="name", config=load_config(TWO))
    assert doc["profiles"] == ["default-scheduler", "batch-scheduler"]
    by_pod = {p["pod"].split("/")[1]: p for p in doc["pods"]}
    assert by_pod["a"]["profile"] == "default-scheduler"
    assert by_pod["b"]["profile"] == "batch-scheduler"
    # The batch profile has no ImageLocality score.
    plugins = {s["plugin"] for n in by_pod["b"]["nodes"] for s in n.get("scores") or ()}
    assert "ImageLocality" not in plugins
    assert "ImageLocality" in {s["plugin"] for n in by_pod["a"]["nodes"] for s in n.get("scores") or ()}


def test_pod_no_profile_serves_asked_by_name_fails(tmp_path):
    files = [pod_file(tmp_path, "c", "someone-else")]
    doc = explain(load_workload([CLUSTER], files), tie_break="name", config=load_config(TWO))
    pod = doc["pods"][0]
    assert pod["status"] == "NoProfile" and pod["askedByName"] is True and pod["profile"] is None
    assert 'no profile serves schedulerName "someone-else"' in pod["message"]
    assert "default-scheduler, batch-scheduler" in pod["message"]
    assert exit_code(doc) == 1


def test_snapshot_pending_pod_of_another_scheduler_does_not_fail(tmp_path):
    pending = yaml.safe_load(open("fixtures/pods/web.yaml"))
    pending["spec"]["schedulerName"] = "someone-else"
    path = tmp_path / "pending.yaml"
    path.write_text(yaml.safe_dump(pending))
    w = load_workload([str(tmp_path)])
    doc = simulate(w, tie_break="name", config=load_config(TWO))
    assert [p["status"] for p in doc["pods"]] == ["NoProfile"]
    assert "askedByName" not in doc["pods"][0]
    assert doc["summary"]["noProfile"] == 1
    assert exit_code(doc) == 0


def test_without_config_every_pod_gets_the_default_profile(tmp_path):
    files = [pod_file(tmp_path, "d", "someone-else")]
    doc = explain(load_workload([CLUSTER], files), tie_break="name")
    assert doc["pods"][0]["status"] == "Scheduled" and doc["pods"][0]["profile"] == "default-scheduler"
    assert "profiles" not in doc


def test_cli_human_output_names_the_profile(tmp_path):
    f = pod_file(tmp_path, "e", "batch-scheduler")
    r = CliRunner().invoke(main, ["explain", f, "--snapshot", CLUSTER, "--config", TWO, "--tie-break", "name"])
    assert r.exit_code == 0, r.stderr
    assert "profile batch-scheduler" in r.stdout
    r = CliRunner().invoke(main, ["explain", pod_file(tmp_path, "f", "x"), "--snapshot", CLUSTER, "--config", TWO,
                                  "-o", "json"])
    assert r.exit_code == 1 and json.loads(r.stdout)["pods"][0]["status"] == "NoProfile"
