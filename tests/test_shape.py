"""A field of the wrong type is an input error naming the field, never a crash."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kschedx.commands.explain import explain
from kschedx.commands.load import Workload
from kschedx.state.cluster import build_cluster
from kschedx.util.errors import InputError
from kschedx.framework.queue import queue_order
from kschedx.render.layout import build
from kschedx.state.types import PodInfo
from kschedx.sources.admission import object_ref
from kschedx.sources.fixtures import Origin, read_objects
from kschedx.sources.shape import check_shape

ROOT = Path(__file__).resolve().parent.parent
OBJECTS = read_objects([str(ROOT / "fixtures" / "cluster"), str(ROOT / "fixtures" / "pods")])


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


FIELDS = [(i, p) for i, (obj, _) in enumerate(OBJECTS) for p in _paths(obj) if p and p[0] not in ("kind", "apiVersion")]
WRONG = st.one_of(st.integers(-3, 3_000_000_000), st.booleans(), st.floats(allow_nan=False), st.text(max_size=5),
                  st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
                  st.none())


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(FIELDS), value=WRONG)
def test_any_field_of_any_type_is_evaluated_or_rejected_cleanly(field, value):
    index, path = field
    objects = copy.deepcopy(OBJECTS)
    target = objects[index][0]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    try:
        cluster = build_cluster(objects)
        workload = Workload(cluster, queue_order([PodInfo(p) for p in cluster.pending_pods()]))
        build(explain(workload, tie_break="name"))
    except InputError:
        pass  # one line naming file, object and field; anything else fails the test


@pytest.mark.parametrize(
    "patch, field, message",
    [
        ({"metadata": {"name": "p", "labels": {"gpu": True}}}, "metadata.labels[gpu]",
         "must be a string, not bool True (quote it in YAML)"),
        ({"spec": {"tolerations": {"key": "a"}}}, "spec.tolerations", "must be a list, not a mapping"),
        ({"spec": {"nodeSelector": ["a"]}}, "spec.nodeSelector", "must be a mapping, not a list"),
        ({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}},
         "spec.containers[0].ports[0].containerPort", "must be an integer, not str '80'"),
    ],
)
def test_wrong_types_name_the_field(patch, field, message):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    for key, value in patch.items():
        pod[key] = {**pod[key], **value}
    with pytest.raises(InputError) as err:
        check_shape(pod, Origin("pod.yaml"), object_ref(pod))
    assert (err.value.field, err.value.detail) == (field, message)


def test_the_bundled_example_has_the_right_shape():
    for obj, origin in OBJECTS:
        check_shape(obj, origin, object_ref(obj))
