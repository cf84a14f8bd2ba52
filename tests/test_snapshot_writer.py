"""The snapshot writer: what it writes, the fixture reader reads back unchanged,
whatever the strings look like (YAML's implicit types, unicode, newlines)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedx.sources.snapshot_info import snapshot_info
from kschedx.util.errors import UsageError
from kschedx.sources.writer import output_format, sort_key, write_snapshot
from kschedx.sources.fixtures import read_objects

# Strings YAML 1.1 would read as something else if written plain.
TRICKY = st.sampled_from(["yes", "No", "on", "~", "null", "1e3", "0x1F", "012", "1_000", "12:30:45",
                          "2025-11-03T09:14:27Z", "2025-11-03", ".inf", "-.NaN", "", " lead", "trail ",
                          "a: b", "- x", "#c", "{x}", "[y]", "'q'", '"dq"', "multi\nline", "tab\tx",
                          "ünïcødé", "emoji 🚀", "*alias", "&anchor", "!tag", "%pct", "@at", "`tick`"])
TEXT = st.one_of(TRICKY, st.text(max_size=20))
VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1), TEXT),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(TEXT, children, max_size=3)),
    max_leaves=12)


@st.composite
def objects(draw):
    out = []
    for i in range(draw(st.integers(1, 4))):
        out.append({"apiVersion": "v1", "kind": draw(st.sampled_from(["Node", "Pod", "Namespace", "Service"])),
                    "metadata": {"name": f"o{i}", "namespace": "ns", "labels": draw(st.dictionaries(TEXT, TEXT,
                                                                                                     max_size=3))},
                    "data": draw(VALUE)})
    return out


@pytest.mark.parametrize("ext", ["yaml", "json.gz"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(objs=objects())
def test_written_objects_read_back_unchanged(tmp_path, ext, objs):
    path = str(tmp_path / f"snap.{ext}")
    info = snapshot_info(server="https://x", context="c", unreadable={"CSINode": "forbidden: no"},
                         fields="scheduling")
    write_snapshot(path, [dict(o) for o in objs], info)
    back = [obj for obj, _ in read_objects([path])]
    assert back[0] == info
    assert back[1:] == sorted(objs, key=sort_key)


def test_objects_are_written_in_the_api_servers_list_order():
    """By storage key ("namespace/name" as one string), as a live list returns
    them: a namespace that extends another's name with '-' sorts before it."""
    pods = [{"kind": "Pod", "metadata": {"namespace": ns, "name": name}}
            for ns, name in (("a", "x"), ("a-b", "x"), ("a", "a-b"), ("ab", "x"))]
    ordered = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in sorted(pods, key=sort_key)]
    assert ordered == ["a-b/x", "a/a-b", "a/x", "ab/x"]


@pytest.mark.parametrize("name, expected", [
    ("c.yaml", ("yaml", False)), ("c.YML", ("yaml", False)), ("c.json.gz", ("json", True)),
    ("dir.d/c.yaml.gz", ("yaml", True)),
])
def test_format_from_the_file_name(name, expected):
    assert output_format(name) == expected


@pytest.mark.parametrize("name", ["c", "c.gz", "c.txt", "c.yaml.bz2", "c.json.gz.tmp"])
def test_other_names_are_refused(name):
    with pytest.raises(UsageError, match=r"\.yaml, \.yml or \.json"):
        output_format(name)


def test_a_failed_write_leaves_nothing(tmp_path):
    class Unserializable:
        pass

    with pytest.raises(TypeError):
        write_snapshot(str(tmp_path / "c.json"), [{"apiVersion": "v1", "kind": "Node",
                                                   "metadata": {"name": "n"}, "x": Unserializable()}],
                       snapshot_info(server=None, context=None, unreadable={}, fields="full"))
    assert os.listdir(tmp_path) == []
