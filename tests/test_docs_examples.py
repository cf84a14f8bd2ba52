"""Every example command of docs/ runs as written, and shows what its page
says it shows.

Each `kschedx ...` line of a `sh` or `console` block is run in a shell of
its own from the repository's root (globs expand as a user's shell expands
them). A page that names a file a reader brings (`pod.yaml`, `cluster/`) is
run with the bundled file that stands for it (PLACEHOLDERS); an example
against a live cluster runs against the test API server with the bundled
cluster in it. Where a `console` block shows the output, every line it
shows is in the output (`...` stands for lines left out)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

# A file a page names for the reader's own, and the bundled file run in its place.
PLACEHOLDERS = {
    "pod.yaml": "fixtures/pods/web.yaml",
    "my-pod.yaml": "fixtures/pods/web.yaml",
    "deploy.yaml": "fixtures/simulate/deploy.yaml",
    "pods/*.yaml": "fixtures/pods/*.yaml",
    "cluster/": "fixtures/cluster/",
    "big.json.gz": "fixtures/cluster/",
    "scheduler-config.yaml": "fixtures/config/bin-packing.yaml",
}

# Examples not run here, each with the reason. Follows a live cluster until
# Ctrl-C (tests/test_watch_cli.py runs --watch against the test API server):
NOT_RUN = {
    "kschedx explain --watch -A": "--watch runs until stopped",
    "kschedx explain -w -n shop -l app=web": "--watch runs until stopped",
    "kschedx explain -w shop/web-7d9c5": "--watch runs until stopped",
    "kschedx explain -w -A -o jsonl --nodes top=3 | jq -c 'select(.kind==\"WatchEvent\")'": "--watch runs until stopped",
    "kschedx explain -w -A -o jsonl --metrics-addr :9090": "--watch runs until stopped",
    # binds for real after a confirmation on a terminal (tests/test_bind.py)
    "kschedx bind shop/web-7d9c5 --context prod": "asks for a confirmation on a terminal",
}

# The examples shown on a page that stand for a syntax, not a command.
SYNOPSES = re.compile(r"^kschedx (\w+) ([A-Z\[]|.* [A-Z_]{4,}$)")


@dataclass
class Example:
    page: str
    command: str
    shown: list[str]  # the output the page shows (console blocks)

    @property
    def id(self) -> str:
        return f"{self.page}: {self.command}"


def _examples() -> list[Example]:
    out = []
    for page in sorted(DOCS.glob("*.md")):
        if page.name == "changelog.md":
            continue  # history, not instructions
        for lang, body in re.findall(r"^```(\w*)\n(.*?)^```", page.read_text(), flags=re.M | re.S):
            if lang not in ("sh", "console", ""):
                continue
            current = None
            for line in body.splitlines():
                text = line.strip()
                prompt = text.startswith("$ ")
                if prompt:
                    text = text[2:]
                if re.match(r"(kubectl )?kschedx ", text) and (prompt or lang != "console"):
                    if SYNOPSES.match(text):
                        current = None
                        continue
                    command = re.sub(r"\s+#.*$", "", text).strip()
                    current = Example(page.name, command, [])
                    out.append(current)
                elif prompt:
                    current = None  # another program's command (kubectl patch ...)
                elif current is not None and lang == "console" and text:
                    current.shown.append(line.rstrip())
    return out


EXAMPLES = _examples()


def _live(command: str) -> bool:
    return bool(re.search(r"--context |--kubeconfig |^kubectl kschedx|--all-pending|-A\b", command)) \
        and "--snapshot" not in command


def _substitute(command: str, kubeconfig: str | None) -> str:
    words = shlex.split(command)
    out = []
    for word in words:
        out.append(PLACEHOLDERS.get(word, word))
    text = " ".join(w if "*" in w or w in (">", "|") else shlex.quote(w) for w in out)
    if kubeconfig is not None:
        text = re.sub(r"--context \S+|--kubeconfig \S+", "", text)
        text = re.sub(r"^kubectl kschedx", "kschedx", text)
        text += f" --kubeconfig {kubeconfig}"
    return text


def _normal(text: str) -> str:
    return " ".join(text.split())


def test_the_examples_are_found():
    pages = {e.page for e in EXAMPLES}
    assert {"explain.md", "simulate.md", "capacity.md", "fix.md", "fixtures.md", "live-clusters.md",
            "output.md", "configuration.md", "volumes.md", "watch.md"} <= pages
    commands = {e.command for e in EXAMPLES}
    assert set(NOT_RUN) <= commands, set(NOT_RUN) - commands  # a stale entry here


@pytest.fixture
def live(kube_api, tmp_path):
    """The test API server with the bundled cluster in it, and the pending pod
    live-clusters.md names (shop/web-7d9c5, app=web); the kubeconfig's
    context is in namespace shop, as the page's `prod` context is."""
    for path in sorted((ROOT / "fixtures" / "cluster").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                kube_api.add(*(doc.get("items") or [doc]))
    web = yaml.safe_load((ROOT / "fixtures" / "pods" / "web.yaml").read_text())
    web["metadata"]["name"] = "web-7d9c5"
    kube_api.add(web)
    kube_api.kubeconfig = kube_api.write_kubeconfig(tmp_path / "kubeconfig", namespace="shop")
    return kube_api


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.command not in NOT_RUN], ids=lambda e: e.id)
def test_a_docs_example_runs_as_written(example, request, tmp_path):
    kubeconfig = None
    if _live(example.command):
        kubeconfig = request.getfixturevalue("live").kubeconfig
    if "--snapshot prod.json.gz" in example.command:
        # the snapshot the page's previous line wrote (`kschedx snapshot -o prod.json.gz --context prod`)
        kubeconfig = request.getfixturevalue("live").kubeconfig
        subprocess.run([sys.executable, "-m", "kschedx", "snapshot", "-o", str(tmp_path / "prod.json.gz"),
                        "--kubeconfig", str(kubeconfig)], cwd=ROOT, check=True, capture_output=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
        command = _substitute(example.command.replace("prod.json.gz", str(tmp_path / "prod.json.gz")), None)
    else:
        command = _substitute(example.command, kubeconfig)
    command = command.replace("kschedx ", f"'{sys.executable}' -m kschedx ", 1)
    if "fixtures.md" == example.page:
        # the page's pod.yaml is the one with typos it shows refused
        typo = tmp_path / "pod.yaml"
        typo.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: typo\nspec:\n  nodeSelectr:\n"
                        "    disktype: ssd\n  containers:\n  - name: app\n    image: nginx\n    resources:\n"
                        "      request:\n        cpu: 500m\n")
        command = command.replace(PLACEHOLDERS["pod.yaml"], "pod.yaml")
    cwd = tmp_path if example.page == "fixtures.md" else ROOT
    if cwd != ROOT:
        os.symlink(ROOT / "fixtures", tmp_path / "fixtures")
    for writes in ("-o ", "--report "):  # files a command writes go to the test's folder
        command = re.sub(rf"{writes}(\S+\.(?:json\.gz|json|html|xml|tap))\b", rf"{writes}{tmp_path}/\1", command)
    command = re.sub(r"> (\S+)", rf"> {tmp_path}/\1", command)
    r = subprocess.run(command, shell=True, executable="/bin/bash", cwd=cwd, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200"), timeout=300)
    output = r.stdout + r.stderr
    assert "Traceback" not in output, output
    shows_error = any(line.startswith("kschedx: error:") for line in example.shown)
    if shows_error:
        assert r.returncode in (2, 3), output
    else:
        assert r.returncode in (0, 1), (command, output)
        # an example that picks pods picks some (not "no pending pods")
        assert "No pods to evaluate" not in output and "no pending pods" not in output, (command, output)
    normal = _normal(output)
    for line in example.shown:
        if line.strip() in ("...", "…") or not line.strip():
            continue
        assert _normal(line) in normal, f"{example.page} shows {line.strip()!r}; the run printed:\n{output}"
