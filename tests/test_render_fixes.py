"""explain --fix in every output: the human report prints each change's
kubectl command (cluster-side changes), the CI formats one line per fix,
and the HTML report a fixes section whose patches and commands copy."""

from __future__ import annotations

import io
import json

import pytest

import chromium
from fixhelp import explain, node, pod, pv, pvc, storage_class, with_claim
from kschedx.render import fixes as words
from kschedx.render.github import to_github
from kschedx.render.html import to_html
from kschedx.render.human import render
from kschedx.render.junit import to_junit
from kschedx.render.tap import to_tap

TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}


def _doc():
    return explain([node("a", cpu="8", taints=[TAINT]), node("b", cpu="1"), pod("web", cpu="2")])


def _human(doc, **kw) -> str:
    out = io.StringIO()
    render(doc, out=out, color=False, **kw)
    return out.getvalue()


def test_kubectl_commands_for_changes_made_on_a_cluster():
    patch = {"action": "patch", "target": {"kind": "Node", "namespace": None, "name": "a"},
             "patch": [{"op": "remove", "path": "/spec/taints/0"}]}
    assert words.kubectl_command(patch) == \
        "kubectl patch node a --type=json -p '[{\"op\":\"remove\",\"path\":\"/spec/taints/0\"}]'"
    quoted = dict(patch, patch=[{"op": "add", "path": "/metadata/labels/x", "value": "it's"}])
    assert words.kubectl_command(quoted).endswith("""-p '[{"op":"add","path":"/metadata/labels/x","value":"it'\\''s"}]'""")
    delete = {"action": "delete", "target": {"kind": "Pod", "namespace": "shop", "name": "x"}, "patch": []}
    assert words.kubectl_command(delete) == "kubectl delete pod -n shop x"
    deploy = {"action": "patch", "target": {"kind": "Deployment", "namespace": "shop", "name": "web"},
              "patch": [{"op": "add", "path": "/spec/template/spec/tolerations", "value": []}]}
    assert words.kubectl_command(deploy).startswith("kubectl patch deployment web -n shop --type=json -p ")
    # What must be recreated, and what a controller does, has no command.
    assert words.kubectl_command(dict(deploy, target={"kind": "Pod", "namespace": "shop", "name": "web"})) is None
    assert words.kubectl_command(dict(patch, by="persistentvolume-controller")) is None
    assert words.change_line(dict(patch, by="persistentvolume-controller")).startswith(
        "then the persistentvolume-controller: patch Node a:")


def test_human_output_prints_the_command_of_a_cluster_side_fix():
    text = _human(_doc())
    assert "patch Node a: remove /spec/taints/0\n" in text
    assert "$ kubectl patch node a --type=json -p '[{\"op\":\"remove\",\"path\":\"/spec/taints/0\"}]'" in text
    # A change of the pod has none: a pod's spec is recreated, not patched.
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "patch Pod default/web: add /spec/tolerations" in line)
    assert "kubectl" not in lines[at + 1]


def test_human_output_says_what_no_kind_covers_and_gives_advice():
    objects = [node("a"), storage_class("fast", provisioner="ebs.csi.aws.com", mode="Immediate"),
               pvc("data", cls="fast"), with_claim(pod("web"))]
    text = _human(explain(objects))
    assert "fixes: none found: no change kschedx tried makes the pod schedulable (0 candidates checked)" in text
    assert "not covered: VolumeBinding: claim default/data waits for its StorageClass fast's provisioner" in text
    assert "advice (await-provisioning, not a change kschedx can check): claim default/data" in text


def test_wide_output_shows_a_created_object_with_kubectl_create():
    objects = [node("a"), pv("spare", size="5Gi"), with_claim(pod("web"))]
    text = _human(explain(objects), wide=True)
    assert "$ kubectl create -f - <<'EOF'" in text
    assert "kind: PersistentVolumeClaim" in text


def test_ci_formats_give_one_line_per_fix():
    doc = _doc()
    (p,) = doc["pods"]
    lines = [f"[{f['kind']}] {f['description']} ({_widens(f)})" for f in p["fixes"]]
    import xml.etree.ElementTree as ET

    failure = ET.fromstring(to_junit(doc)).find("testsuite/testcase/failure")
    assert f"fix 1: {lines[0]}" in failure.text
    notices = [line for line in to_github(doc).splitlines() if line.startswith("::notice")]
    assert len(notices) == len(p["fixes"])
    # The smaller request widens less than tolerating a taint that reserves node a.
    assert notices[0].startswith("::notice title=default/web fix 1::[reduce-request] lower the cpu request")
    assert notices[0].endswith("(widens: asks for less cpu (2 -> 1))")
    tolerate = next(line for line in notices if "[add-toleration]" in line)
    assert "widens: tolerates taint dedicated=infra:NoSchedule, which reserves 1 node(s) (a) for other pods" in tolerate
    import yaml

    tap = to_tap(doc).splitlines()
    block = yaml.safe_load("\n".join(tap[tap.index("  ---") + 1:tap.index("  ...")]))
    assert block["fixes"] == lines


def _widens(fix: dict) -> str:
    return "widens: " + "; ".join(e["text"] for e in fix["widens"]) if fix["widens"] else "widens nothing"


def test_html_report_has_a_fixes_section_with_copyable_patches():
    page = to_html(_doc())
    assert '<section class="fixes"><h3>Fixes</h3>' in page
    assert '<span class="kind pod">add-toleration</span>' in page
    assert '<span class="kind cluster">remove-taint</span>' in page
    assert '<pre class="command">kubectl patch node a --type=json' in page
    assert page.count('<button type="button" class="copy"') >= 3


CHROMIUM = chromium.find_chromium()


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH (apt-get install chromium; .ci/run does)")
def test_html_copy_button_in_chromium(tmp_path):
    path = tmp_path / "fix.html"
    path.write_text(to_html(_doc()), encoding="utf-8")
    browser = chromium.Browser(CHROMIUM)
    try:
        browser.load(str(path))
        patch = browser.evaluate("document.querySelector('section.fixes pre.patch').innerText")
        assert json.loads(patch)[0]["path"] == "/spec/containers/0/resources/requests"  # the first fix's
        # file:// pages get no clipboard: the text is selected for the reader to copy.
        browser.evaluate("document.querySelector('section.fixes button.copy').click()")
        selected = browser.evaluate("window.getSelection().toString()")
        assert json.loads(selected) == json.loads(patch)
        assert browser.problems() == []
    finally:
        browser.close()
