"""The schema data generator (sources/schema/generate.py, gotypes.py): made-up
releases give the data they should, a disagreement between the OpenAPI
documents and the Go declarations fails, the output is deterministic, and
the package data is what the generator makes of the real releases."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from kschedx.sources.schema import generate
from kschedx.sources.schema.gotypes import GoSourceError, parse_package
from kschedx.sources.schema.model import RELEASES, Schema, data_file

META = "io.k8s.apimachinery.pkg.apis.meta.v1."


def _openapi(spec_properties=None):
    widget_spec = {"type": "object", "properties": spec_properties if spec_properties is not None else {
        "size": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}]},
        "replicas": {"type": "integer", "format": "int32"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "mode": {"type": "string"},
        "path": {"type": "string"},
        "data": {"type": "string", "format": "byte"},
        "port": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}]},
    }}
    doc = {
        "paths": {
            "/apis/ex.k8s.io/v1/namespaces/{namespace}/widgets": {
                "post": {"x-kubernetes-group-version-kind": {"group": "ex.k8s.io", "version": "v1", "kind": "Widget"}}},
            "/apis/ex.k8s.io/v1/namespaces/{namespace}/widgets/{name}/scale": {
                "put": {"x-kubernetes-group-version-kind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}}},
        },
        "components": {"schemas": {
            "io.k8s.api.ex.v1.Widget": {"type": "object", "properties": {
                "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                "metadata": {"allOf": [{"$ref": f"#/components/schemas/{META}ObjectMeta"}]},
                "spec": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.ex.v1.WidgetSpec"}]}},
                "x-kubernetes-group-version-kind": [{"group": "ex.k8s.io", "version": "v1", "kind": "Widget"}]},
            "io.k8s.api.ex.v1.WidgetSpec": widget_spec,
            f"{META}ObjectMeta": {"type": "object", "properties": {"name": {"type": "string"}}},
            "io.k8s.apimachinery.pkg.api.resource.Quantity": {"oneOf": [{"type": "string"}, {"type": "number"}]},
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"format": "int-or-string",
                                                                 "oneOf": [{"type": "integer"}, {"type": "string"}]},
        }},
    }
    return {"apis__ex.k8s.io__v1_openapi.json": json.dumps(doc)}


WIDGET_GO = '''package v1

import (
\tmetav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
\t"k8s.io/apimachinery/pkg/api/resource"
\t"k8s.io/apimachinery/pkg/util/intstr"
)

/* A block comment with 'pods/*' and "quotes" and a fake
type Fake struct {
*/

// Widget is made up.
type Widget struct {
\tmetav1.TypeMeta `json:",inline"`
\tmetav1.ObjectMeta `json:"metadata,omitempty"` // named: not inline
\tSpec WidgetSpec `json:"spec,omitempty"`
}

type Mode string

type (
\tModeAlias = Mode
)

type WidgetSpec struct {
\t// Size says '*/scale' in prose.
\tSize     *resource.Quantity `json:"size,omitempty"`
\tReplicas *int32             `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
\tTags     []string           `json:"tags,omitempty"`
\tLabels   map[string]string  `json:"labels,omitempty"`
\tSource   `json:",inline"`
\tData     []byte             `json:"data,omitempty"`
\tPort     intstr.IntOrString `json:"port,omitempty"`
\tIgnored  string             `json:"-"`
\tinternal string
}

type Source struct {
\tMode ModeAlias `json:"mode,omitempty"`
\tPath string    `json:"path,omitempty"`
}
'''

GO = {
    "k8s.io/api/ex/v1": {"types.go": WIDGET_GO},
    "k8s.io/apimachinery/pkg/apis/meta/v1": {"types.go": '''package v1
type TypeMeta struct {
\tKind string `json:"kind,omitempty"`
\tAPIVersion string `json:"apiVersion,omitempty"`
}
type ObjectMeta struct {
\tName string `json:"name,omitempty"`
}
'''},
    "k8s.io/apimachinery/pkg/api/resource": {"quantity.go": '''package resource
type Quantity struct {
\ti int64Amount
}
func (q *Quantity) UnmarshalJSON(value []byte) error { return nil }
'''},
    "k8s.io/apimachinery/pkg/util/intstr": {"intstr.go": '''package intstr
type IntOrString struct {
\tType   Type
\tIntVal int32
\tStrVal string
}
func (intstr *IntOrString) UnmarshalJSON(value []byte) error { return nil }
'''},
}


def _inputs(**changes):
    inputs = {"release": "v1.99.0", "openapi": _openapi(), "go": json.loads(json.dumps(GO))}
    inputs.update(changes)
    return inputs


def test_a_made_up_release():
    data = generate.build(_inputs())
    assert data["kinds"] == [["ex.k8s.io", "v1", "Widget", 0, True, "widgets"]]  # Scale is a subresource
    s = Schema("1.99", data)
    widget = s.kind("ex.k8s.io", "v1", "Widget").struct
    assert widget.name == "Widget" and widget.embeds == {"apiVersion": "TypeMeta", "kind": "TypeMeta"}
    spec = widget.fields["spec"].sub
    assert spec.name == "WidgetSpec"
    assert {name: t.go for name, t in spec.fields.items()} == {
        "size": "resource.Quantity", "replicas": "int32", "tags": "[]string", "labels": "map[string]string",
        "mode": "v1.Mode", "path": "string", "data": "[]uint8", "port": "intstr.IntOrString"}
    assert spec.embeds == {"mode": "Source", "path": "Source"}
    assert spec.fields["replicas"].low == -(1 << 31)
    assert data["structs"][2][:2] == ["WidgetSpec", "io.k8s.api.ex.v1.WidgetSpec"]
    # "name:type[:inline struct]", sorted by name
    assert [f.split(":")[0] for f in data["structs"][2][2].split(",")] == sorted(spec.fields)
    assert data["structs"][2][2].split(",")[2] == f"mode:{data['exprs'].index(['string', 'v1.Mode'])}:Source"


def test_a_made_up_release_validates_as_the_decoder_would():
    from kschedx.sources.schema.validate import _Walk

    s = Schema("1.99", generate.build(_inputs()))
    kind = s.kind("ex.k8s.io", "v1", "Widget")
    walk = _Walk(s, None)
    walk.struct({"apiVersion": "ex.k8s.io/v1", "kind": "Widget", "spec": {"mode": 1, "tag": [], "size": "2x"}},
                kind.struct, "", "")
    assert [(p.field, p.message) for p in walk.problems] == [
        ("spec.mode", "json: cannot unmarshal number into Go struct field WidgetSpec.spec.Source.mode of type v1.Mode"),
        ("spec.tag", 'unknown field "spec.tag"'),
        ("spec.size", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ]


def test_generation_is_deterministic():
    first = generate.build(_inputs())
    second = generate.build(_inputs())
    assert first == second
    blob = generate.encode(first)
    assert blob == generate.encode(second)  # no timestamp in the gzip header
    assert json.loads(gzip.decompress(blob)) == first


def test_openapi_and_go_must_agree():
    extra = _openapi(spec_properties={"size": {"type": "string"}, "colour": {"type": "string"}})
    with pytest.raises(generate.GenerationError, match="OpenAPI fields not in the Go struct: \\['colour'\\]"):
        generate.build(_inputs(openapi=extra))
    fewer = _openapi(spec_properties={"size": {"allOf": [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}]}})
    with pytest.raises(generate.GenerationError, match="Go json fields not in the OpenAPI document"):
        generate.build(_inputs(openapi=fewer))
    wrong_type = json.loads(_openapi()["apis__ex.k8s.io__v1_openapi.json"])
    wrong_type["components"]["schemas"]["io.k8s.api.ex.v1.WidgetSpec"]["properties"]["tags"] = {"type": "string"}
    with pytest.raises(generate.GenerationError, match="Go decodes a array, OpenAPI says 'string'"):
        generate.build(_inputs(openapi={"a.json": json.dumps(wrong_type)}))


def test_a_type_that_decodes_itself_must_be_declared():
    go = json.loads(json.dumps(GO))
    go["k8s.io/api/ex/v1"]["types.go"] += "\nfunc (m *Mode) UnmarshalJSON(b []byte) error { return nil }\n"
    with pytest.raises(generate.GenerationError, match="Mode decodes itself"):
        generate.build(_inputs(go=go))


def test_go_declarations_read():
    pkg = parse_package("k8s.io/api/ex/v1", {"types.go": WIDGET_GO, "types_test.go": "package v1\ntype T struct {"})
    assert pkg.name == "v1"
    assert "Fake" not in pkg.types  # inside a block comment
    spec = pkg.types["WidgetSpec"]
    assert [(f.name, f.json, f.type, f.embedded) for f in spec.fields] == [
        ("Size", "size", "*resource.Quantity", False), ("Replicas", "replicas", "*int32", False),
        ("Tags", "tags", "[]string", False), ("Labels", "labels", "map[string]string", False),
        ("Source", "", "Source", True), ("Data", "data", "[]byte", False),
        ("Port", "port", "intstr.IntOrString", False), ("Ignored", "-", "string", False),
        ("internal", "internal", "string", False)]
    assert pkg.types["ModeAlias"].alias and pkg.types["Mode"].underlying == "string"
    with pytest.raises(GoSourceError, match="cannot read the field"):
        _ = parse_package("p", {"a.go": "package p\ntype X struct {\n\tA, B func() int\n}\n"}).types["X"].fields


def _release_or_skip(minor):
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the releases' sources are Go modules")
    try:
        return generate.read_release(RELEASES[minor])
    except generate.GenerationError as exc:
        if "go mod download" in str(exc):
            pytest.skip(f"the Go module proxy could not be reached: {exc}")
        raise


@pytest.mark.parametrize("minor", sorted(RELEASES))
def test_package_data_is_what_the_generator_makes(minor):
    data = generate.build(_release_or_skip(minor))
    stored = json.loads(gzip.decompress(data_file(minor).read_bytes()))
    assert stored == data, f"data/{data_file(minor).name} is stale: run python -m kschedx.sources.schema.generate"
    assert data["release"] == RELEASES[minor]
