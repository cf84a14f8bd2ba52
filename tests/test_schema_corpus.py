"""The valid corpus passes strict validation: every object of the golden
cases, the bundled fixtures, the deploy manifests, the test fixture files
and the manifests shown in the documentation, under every version kschedx
reproduces, with no problem at all (a duplicate key included). Something
valid flagged would be a schema or validator bug."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kschedx.sources.schema import validate
from kschedx.sources.schema.duplicates import load_json, load_yaml
from kschedx.sources.schema.model import RELEASES
from kschedx.sources.yaml_loader import FastSafeLoader

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = sorted(RELEASES)


def _corpus_files() -> list[Path]:
    files = sorted((ROOT / "tests/golden/cases").glob("*.yaml"))
    files += sorted((ROOT / "tests/golden-config/cases").glob("*.json"))
    for folder in ("fixtures", "deploy", "tests/config"):
        files += sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    return files


def _doc_blocks() -> list[tuple[str, str]]:
    """The YAML and JSON blocks of the documentation that are Kubernetes objects."""
    blocks = []
    for page in sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "fixtures").rglob("*.md")]):
        for i, m in enumerate(re.finditer(r"```(?:yaml|yml|json)\n(.*?)```", page.read_text(encoding="utf-8"), re.S)):
            if re.search(r"^\s*kind:|\"kind\":", m.group(1), re.M) and re.search(r"apiVersion", m.group(1)):
                blocks.append((f"{page.relative_to(ROOT)}#{i}", m.group(1)))
    return blocks


def _objects(value):
    """The objects of a document, List kinds flattened as sources/fixtures.py
    flattens them (an item of a NodeList without kind is a Node)."""
    if isinstance(value, dict) and isinstance(value.get("kind"), str) and value["kind"].endswith("List") \
            and isinstance(value.get("items"), list):
        kind = value["kind"][:-4]
        for item in value["items"]:
            if isinstance(item, dict) and kind and "kind" not in item:
                item = dict(item, kind=kind)
                if "apiVersion" in value and "apiVersion" not in item:
                    item["apiVersion"] = value["apiVersion"]
            yield from _objects(item)
    elif value is not None:
        yield value


def _load(name: str, text: str):
    if name.endswith(".json"):
        value, duplicates = load_json(text)
        return list(_objects(value)), duplicates
    docs, duplicates = load_yaml(text, FastSafeLoader)
    return [o for d in docs for o in _objects(d)], duplicates


def _check(name: str, text: str) -> int:
    objects, duplicates = _load(name, text)
    found = []
    for version in VERSIONS:
        for obj in objects:
            for problem in validate(obj, version, duplicates=duplicates):
                found.append(f"{name} {version} {obj.get('kind')}/{(obj.get('metadata') or {}).get('name')}: "
                             f"{problem.field}: {problem}")
    assert not found, "\n".join(found[:20])
    return len(objects)


FILES = _corpus_files()


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_corpus_file_is_valid_in_every_version(path):
    _check(str(path), path.read_text(encoding="utf-8"))


def test_documentation_manifests_are_valid_in_every_version():
    for name, text in _doc_blocks():
        _check(name, text)


def test_the_corpus_is_what_it_should_be():
    # the corpus holds real objects of the kinds kschedx reads (a test over
    # nothing would pass whatever the validator did)
    kinds = set()
    for path in FILES:
        objects, _ = _load(str(path), path.read_text(encoding="utf-8"))
        kinds.update(o.get("kind") for o in objects)
    assert {"Pod", "Node", "Namespace", "PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode",
            "CSIDriver", "PodDisruptionBudget", "PriorityClass", "Service", "ReplicaSet", "StatefulSet",
            "ReplicationController", "Deployment", "DaemonSet", "RuntimeClass", "ResourceSlice", "DeviceClass",
            "ResourceClaim", "ResourceClaimTemplate"} <= kinds
    assert len(FILES) > 170
