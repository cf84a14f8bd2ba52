"""A report that reads no score explanations (human output without --node)
has the run skip asking for them: on every golden case, and with two
workers, the text is the same as when every node's are computed."""

from __future__ import annotations

import io

import pytest

from kschedx.commands.explain import explain_into
from kschedx.commands.load import load_workload
from kschedx.render.human import HumanSink
from golden_compare import GOLDEN, case_names


def _text(path: str, reads: bool | None, jobs: int = 1) -> str:
    out = io.StringIO()
    sink = HumanSink(out=out, color=False, wide=jobs > 1)
    if reads is not None:
        sink.reads_score_details = reads
    code = explain_into(sink, load_workload([path]), tie_break="name", jobs=jobs)
    return f"{code}\n{out.getvalue()}"


@pytest.mark.parametrize("name", case_names())
def test_the_report_is_the_same_without_score_explanations(name):
    path = str(GOLDEN / "cases" / f"{name}.yaml")
    assert _text(path, None) == _text(path, True)


def test_only_node_stories_read_score_explanations():
    assert not HumanSink(out=io.StringIO()).reads_score_details
    assert not HumanSink(out=io.StringIO(), wide=True).reads_score_details
    assert HumanSink(out=io.StringIO(), node="n1").reads_score_details


def test_workers_skip_them_too():
    name = case_names()[0]
    path = str(GOLDEN / "cases" / f"{name}.yaml")
    assert _text(path, None, jobs=2) == _text(path, True, jobs=2)
