"""kschedx's RFC 6902 JSON Patch / RFC 6901 JSON Pointer: the examples of
RFC 6902 Appendix A and RFC 6901 section 5, as facts, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from kschedx.fixes.jsonpatch import PatchError, apply_patch, escape, parse_pointer, pointer, resolve

RFC6902_A = [
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"baz": "qux", "foo": "bar"}),  # A.1
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),  # A.3
    ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),  # A.4
    ({"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo", "foo": "bar"}),
    ({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
     [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
     {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}),  # A.6
    ({"foo": ["all", "grass", "cows", "eat"]}, [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
     {"foo": ["all", "cows", "eat", "grass"]}),  # A.7
    ({"baz": "qux", "foo": ["a", 2, "c"]},
     [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
     {"baz": "qux", "foo": ["a", 2, "c"]}),  # A.8
    ({"foo": "bar"}, [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
     {"foo": "bar", "child": {"grandchild": {}}}),  # A.10
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}], {"foo": "bar", "baz": "qux"}),
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),  # A.14
    ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
     {"foo": ["bar", ["abc", "def"]]}),  # A.16
    (None, [{"op": "add", "path": "", "value": {"kind": "Node"}}], {"kind": "Node"}),  # the whole document
]

RFC6902_ERRORS = [
    ({"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}]),  # A.9
    ({"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": "qux"}]),  # A.12
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": "10"}]),  # A.15
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/3", "value": 1}]),  # index out of range
    ({"foo": ["bar"]}, [{"op": "remove", "path": "/foo/01"}]),  # leading zero
    ({"foo": 1}, [{"op": "remove", "path": "/bar"}]),
    ({"foo": 1}, [{"op": "replace", "path": "/bar", "value": 2}]),
    ({"foo": 1}, [{"op": "frobnicate", "path": "/foo"}]),
    ({"foo": {"a": 1}}, [{"op": "move", "from": "/foo", "path": "/foo/a/b"}]),  # into its own child
    ({"foo": 1}, [{"op": "test", "path": "/foo", "value": True}]),  # true is not 1
]


@pytest.mark.parametrize("doc,patch,expected", RFC6902_A)
def test_rfc6902_appendix_a(doc, patch, expected):
    assert apply_patch(doc, patch) == expected


@pytest.mark.parametrize("doc,patch", RFC6902_ERRORS)
def test_rfc6902_errors(doc, patch):
    with pytest.raises(PatchError):
        apply_patch(doc, patch)


def test_the_document_given_is_never_changed():
    doc = {"a": {"b": [1, 2]}}
    apply_patch(doc, [{"op": "add", "path": "/a/b/-", "value": 3}, {"op": "remove", "path": "/a/b/0"}])
    assert doc == {"a": {"b": [1, 2]}}


def test_rfc6901_examples():
    doc = {"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5, 'k"l': 6, " ": 7,
           "m~n": 8}
    for path, value in [("", doc), ("/foo", ["bar", "baz"]), ("/foo/0", "bar"), ("/", 0), ("/a~1b", 1),
                        ("/c%d", 2), ("/e^f", 3), ("/g|h", 4), ("/i\\j", 5), ('/k"l', 6), ("/ ", 7), ("/m~0n", 8)]:
        assert resolve(doc, path) == value
    with pytest.raises(PatchError):
        parse_pointer("foo")
    with pytest.raises(PatchError):
        parse_pointer("/a~2b")


def test_pointer_escapes_label_keys():
    assert pointer("metadata", "labels", "kubernetes.io/hostname") == "/metadata/labels/kubernetes.io~1hostname"
    assert pointer("spec", "containers", 0) == "/spec/containers/0"
    assert pointer() == ""


@given(st.lists(st.text(max_size=6), max_size=5))
def test_pointer_round_trips(tokens):
    assert parse_pointer(pointer(*tokens)) == tokens
    assert all("/" not in escape(t) for t in tokens)


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                       max_size=3), max_leaves=8)


@given(st.dictionaries(st.text(max_size=4), json_values, max_size=4), st.text(max_size=4), json_values)
def test_add_then_remove_restores_a_new_member(doc, key, value):
    if key in doc:
        return
    added = apply_patch(doc, [{"op": "add", "path": pointer(key), "value": value}])
    assert resolve(added, pointer(key)) == value
    assert apply_patch(added, [{"op": "remove", "path": pointer(key)}]) == doc
