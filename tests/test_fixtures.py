"""Fixture reading (fixture-format.md): files, directories, stdin, gzip, JSON,
multi-document YAML, List kinds, and one-line InputErrors for bad input."""

import gzip
import io
import json
import sys

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from builders import fixture_node as node
from builders import fixture_pod
from kschedx.util.errors import InputError
from kschedx.sources.fixtures import Origin, expand_paths, parse_documents, read_objects


def pod(name, ns="default"):
    return fixture_pod(name, ns)


def names(objs):
    return [(o["kind"], o["metadata"]["name"]) for o, _ in objs]


def write(path, text):
    path.write_text(text)
    return str(path)


def one_line_error(paths, *fragments):
    with pytest.raises(InputError) as ei:
        read_objects(paths)
    msg = str(ei.value)
    assert "\n" not in msg
    for f in fragments:
        assert f in msg, msg
    assert ei.value.exit_code == 3
    return msg


def test_single_yaml_file(tmp_path):
    p = write(tmp_path / "n.yaml", yaml.safe_dump(node("a")))
    objs = read_objects([p])
    assert names(objs) == [("Node", "a")]
    assert objs[0][1] == Origin(p, 1)
    assert str(objs[0][1]) == p


def test_multi_document_yaml_keeps_order_and_skips_empty_documents(tmp_path):
    text = "---\n" + yaml.safe_dump(node("a")) + "---\n---\n# just a comment\n---\n" + yaml.safe_dump(pod("p"))
    p = write(tmp_path / "m.yml", text)
    objs = read_objects([p])
    assert names(objs) == [("Node", "a"), ("Pod", "p")]
    assert str(objs[1][1]).endswith("(document 4)")


def test_json_file(tmp_path):
    p = write(tmp_path / "n.json", json.dumps({"kind": "List", "apiVersion": "v1", "items": [node("a"), pod("p")]}))
    assert names(read_objects([p])) == [("Node", "a"), ("Pod", "p")]


def test_yaml_flow_style_starting_with_brace_is_yaml(tmp_path):
    p = write(tmp_path / "n.yaml", "{kind: Node, apiVersion: v1, metadata: {name: a}}\n")
    assert names(read_objects([p])) == [("Node", "a")]


@pytest.mark.parametrize("list_kind, item_kind", [("NodeList", "Node"), ("PodList", "Pod")])
def test_typed_list_items_take_kind_and_api_version_from_the_list(tmp_path, list_kind, item_kind):
    items = [{"metadata": {"name": "x"}}, {"metadata": {"name": "y"}, "kind": item_kind, "apiVersion": "v9"}]
    p = write(tmp_path / "l.yaml", yaml.safe_dump({"apiVersion": "v1", "kind": list_kind, "items": items}))
    objs = read_objects([p])
    assert names(objs) == [(item_kind, "x"), (item_kind, "y")]
    assert objs[0][0]["apiVersion"] == "v1"
    assert objs[1][0]["apiVersion"] == "v9"


def test_nested_lists_are_flattened(tmp_path):
    inner = {"apiVersion": "v1", "kind": "NodeList", "items": [{"metadata": {"name": "b"}}]}
    outer = {"apiVersion": "v1", "kind": "List", "items": [node("a"), inner, pod("p")]}
    p = write(tmp_path / "l.yaml", yaml.safe_dump(outer))
    assert names(read_objects([p])) == [("Node", "a"), ("Node", "b"), ("Pod", "p")]


def test_empty_list(tmp_path):
    p = write(tmp_path / "l.yaml", "apiVersion: v1\nkind: List\nitems: []\n")
    assert read_objects([p]) == []


def test_plain_list_items_need_a_kind(tmp_path):
    p = write(tmp_path / "l.yaml", yaml.safe_dump({"kind": "List", "items": [{"metadata": {"name": "x"}}]}))
    one_line_error([p], p, "field kind", "object has no kind", "'x'")


def test_gzip_file(tmp_path):
    path = tmp_path / "n.yaml.gz"
    path.write_bytes(gzip.compress(yaml.safe_dump_all([node("a"), node("b")]).encode()))
    assert names(read_objects([str(path)])) == [("Node", "a"), ("Node", "b")]


def test_gzip_json_file(tmp_path):
    path = tmp_path / "n.json.gz"
    path.write_bytes(gzip.compress(json.dumps(node("a")).encode()))
    assert names(read_objects([str(path)])) == [("Node", "a")]


def test_directory_is_read_recursively_in_sorted_order(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "deeper").mkdir()
    write(tmp_path / "z.yaml", yaml.safe_dump(node("z")))
    write(tmp_path / "m.json", json.dumps(node("m")))
    write(tmp_path / "b" / "b1.yml", yaml.safe_dump(node("b1")))
    write(tmp_path / "a" / "a2.yaml", yaml.safe_dump(node("a2")))
    write(tmp_path / "a" / "a1.yaml", yaml.safe_dump(node("a1")))
    write(tmp_path / "a" / "deeper" / "d.yaml", yaml.safe_dump(node("d")))
    (tmp_path / "a" / "g.yaml.gz").write_bytes(gzip.compress(yaml.safe_dump(node("g")).encode()))
    write(tmp_path / "README.md", "not a fixture")
    write(tmp_path / "notes.txt", "kind: Node")
    write(tmp_path / ".hidden.yaml", yaml.safe_dump(node("hidden")))
    got = [o["metadata"]["name"] for o, _ in read_objects([str(tmp_path)])]
    # Files of a directory (sorted) before its subdirectories (sorted), depth first.
    assert got == ["m", "z", "a1", "a2", "g", "d", "b1"]


def test_paths_keep_the_order_given(tmp_path):
    a = write(tmp_path / "a.yaml", yaml.safe_dump(node("a")))
    b = write(tmp_path / "b.yaml", yaml.safe_dump(node("b")))
    assert names(read_objects([b, a])) == [("Node", "b"), ("Node", "a")]
    assert expand_paths([b, "-", a]) == [b, "-", a]


def test_stdin(monkeypatch):
    data = yaml.safe_dump_all([node("s1"), pod("p")]).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    objs = read_objects(["-"])
    assert names(objs) == [("Node", "s1"), ("Pod", "p")]
    assert objs[0][1].path == "<stdin>"


def test_gzipped_stdin(monkeypatch):
    data = gzip.compress(json.dumps(node("s1")).encode())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert names(read_objects(["-"])) == [("Node", "s1")]


def test_utf8_bom_is_accepted(tmp_path):
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + yaml.safe_dump(node("a")).encode())
    assert names(read_objects([str(path)])) == [("Node", "a")]


# --- bad input -------------------------------------------------------------------


def test_malformed_yaml_names_the_file_and_line(tmp_path):
    p = write(tmp_path / "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels: [x\nspec: {}\n")
    msg = one_line_error([p], p, "malformed YAML", "line 6")
    assert msg.startswith(p + ": ")


def test_malformed_yaml_in_a_later_document(tmp_path):
    p = write(tmp_path / "bad.yaml", yaml.safe_dump(node("a")) + "---\nkind: Node\nmetadata: {name: b\n")
    one_line_error([p], p, "malformed YAML", "line 8", "flow mapping at line 7")


def test_invalid_json_is_reported(tmp_path):
    p = write(tmp_path / "bad.json", '{"kind": "Node", "metadata": {"name": "a"}')
    one_line_error([p], p)


def test_object_without_kind(tmp_path):
    p = write(tmp_path / "nokind.yaml", "apiVersion: v1\nmetadata: {name: x}\n")
    one_line_error([p], p, "field kind", "object has no kind", "metadata.name 'x'")


def test_object_without_kind_in_a_later_document_names_the_document(tmp_path):
    p = write(tmp_path / "nokind.yaml", yaml.safe_dump(node("a")) + "---\nmetadata: {name: x}\n")
    one_line_error([p], p + " (document 2)", "field kind")


@pytest.mark.parametrize("doc", ["- a\n- b\n", "just a string\n", "42\n"])
def test_document_that_is_not_a_mapping(tmp_path, doc):
    p = write(tmp_path / "x.yaml", doc)
    one_line_error([p], p, "expected a Kubernetes object")


def test_list_items_must_be_a_list(tmp_path):
    p = write(tmp_path / "x.yaml", "kind: List\nitems: {a: 1}\n")
    one_line_error([p], p, "field items", "List.items must be a list")


def test_missing_file(tmp_path):
    p = str(tmp_path / "nope.yaml")
    msg = one_line_error([p], p, "no such file or directory")
    assert msg == f"{p}: no such file or directory"


def test_empty_directory(tmp_path):
    (tmp_path / "readme.txt").write_text("x")
    one_line_error([str(tmp_path)], str(tmp_path), "directory holds no .yaml, .yml or .json files")


def test_non_utf8(tmp_path):
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"kind: Node\nmetadata:\n  name: \xff\xfe\n")
    one_line_error([str(path)], str(path), "not UTF-8 text", "at byte 29")


def test_truncated_gzip(tmp_path):
    path = tmp_path / "bad.yaml.gz"
    path.write_bytes(gzip.compress(yaml.safe_dump(node("a")).encode())[:20])
    one_line_error([str(path)], str(path), "not a valid gzip file")


def test_corrupted_gzip_body(tmp_path):
    good = gzip.compress(yaml.safe_dump(node("a")).encode() * 20)
    path = tmp_path / "bad.yaml.gz"
    path.write_bytes(good[:12] + bytes(b ^ 0x5A for b in good[12:-8]) + good[-8:])
    one_line_error([str(path)], str(path), "not a valid gzip file")


def test_gz_name_without_gzip_content(tmp_path):
    path = tmp_path / "plain.yaml.gz"
    path.write_bytes(b"\xff\x00 garbage")
    one_line_error([str(path)], str(path), "not a gzip file")


def test_unreadable_path_is_an_input_error(tmp_path):
    d = tmp_path / "dir.yaml"
    d.mkdir()
    (d / "inner.yaml").write_text(yaml.safe_dump(node("a")))
    # A directory named like a file is still a directory.
    assert names(read_objects([str(d)])) == [("Node", "a")]


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"kind: Node\nmetadata: {name: [a\n", "malformed YAML"),
        (b"apiVersion: v1\nmetadata: {name: x}\n", "object has no kind"),
        (b"kind: Pod\nmetadata: {name: p}\nspec: {priorityClassName: gone, containers: [{name: c}]}\n",
         "no PriorityClass with name gone"),
    ],
)
def test_cli_reports_bad_input_on_one_line_with_exit_code_3(tmp_path, content, fragment):
    from click.testing import CliRunner

    from kschedx.cli.main import main

    path = tmp_path / "f.yaml"
    path.write_bytes(content)
    result = CliRunner().invoke(main, ["explain", "--snapshot", str(path), "-o", "json"])
    assert result.exit_code == 3
    err = result.stderr.strip()
    assert err.count("\n") == 0 and err.startswith(f"kschedx: error: {path}") and fragment in err
    assert "Traceback" not in result.output


@pytest.mark.parametrize("name, data, expected", [
    ("pod.json", b'{"kind": "Pod", "metadata": {"name": "x"} "spec": {}}',
     "pod.json: malformed JSON: line 1, column 43: Expecting ',' delimiter"),
    ("pod.json", b'{"kind": "Pod",\n "metadata": {"name": "x"}',
     "pod.json: malformed JSON: line 2, column 27: Expecting ',' delimiter"),
    ("pod.json", b"\x00\x01", "pod.json: malformed JSON: line 1, column 1: Expecting value"),
    ("pod.yaml", b"\x00abc", "pod.yaml: malformed YAML: character #x0000 at position 0: control characters are "
                             "not allowed"),
])
def test_syntax_errors_are_one_line_in_the_file_s_own_language(tmp_path, name, data, expected):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as exc:
        read_objects([str(path)])
    assert str(exc.value) == f"{tmp_path}/{expected}"
    assert "\n" not in str(exc.value)


def test_yaml_flow_style_is_still_yaml(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text("{kind: Pod, metadata: {name: x}}\n")
    assert read_objects([str(path)])[0][0]["kind"] == "Pod"


# parse_documents given the bytes in a list lets go of them once decoded
# (a big snapshot's bytes are not held next to its objects); what it
# returns or reports must be what it gives for the bytes themselves.
_TEXTS = st.one_of(
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                 max_leaves=8).map(lambda v: json.dumps({"kind": "List", "items": [], "x": v}).encode()),
    st.sampled_from([b'{"kind": "Pod", "metadata": {"name": "a"}}', b'{kind: Pod, metadata: {name: a}}',
                     b'{"kind": "Pod", "x": "\\ud800"}', b'{"kind": "Pod", "x": 1', b'[1, 2', b'{"a": NaN}',
                     b'{"kind": "Pod", "x": "\xff"}', b'{"kind": "Pod", "x": "\xed\xa0\x80"}']),
)


@settings(max_examples=150, deadline=None)
@given(text=_TEXTS, bom=st.booleans(), name=st.sampled_from(["c.json", "c.yaml", "<stdin>"]))
def test_parsing_from_a_list_gives_what_parsing_the_bytes_gives(text, bom, name):
    data = (b"\xef\xbb\xbf" if bom else b"") + text

    def parsed(arg):
        try:
            return ("ok", json.dumps(parse_documents(name, arg), default=repr))
        except InputError as exc:
            return ("error", str(exc))

    box = [bytes(data)]
    result = parsed(box)
    assert result == parsed(bytes(data))
    assert box == [] or result[0] == "error"  # invalid UTF-8 is never decoded


@pytest.mark.parametrize("lines", [False, True])
def test_read_objects_notes_the_classes_among_them_in_order(tmp_path, lines):
    """ObjectList.classes: the PriorityClass and RuntimeClass pairs, as
    build_cluster's first pass would find them among all pairs."""
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 9}
    rc = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"}, "handler": "kata"}
    listed = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClassList",
              "items": [{"metadata": {"name": "low"}, "value": 1}]}
    (tmp_path / "a.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        node("n1"), pc, fixture_pod("p", "ns"), listed, {"apiVersion": "v1", "kind": "List", "items": [rc]}]}))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump_all([fixture_pod("q", "ns"), dict(pc, metadata={"name": "mid"})]))
    objects = read_objects([str(tmp_path)], lines=lines)
    expected = [pair for pair in objects if pair[0]["kind"] in ("PriorityClass", "RuntimeClass")]
    assert [o["metadata"]["name"] for o, _ in expected] == ["high", "low", "kata", "mid"]
    assert len(objects.classes) == len(expected)
    assert all(a[0] is b[0] and a[1] == b[1] for a, b in zip(objects.classes, expected))
