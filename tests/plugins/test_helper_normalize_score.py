"""helper.DefaultNormalizeScore (upstream normalize_score_test.go) and Go
integer division."""

import pytest

from kschedx.framework.interface import NodeScore
from kschedx.plugins.helper.normalize_score import default_normalize_score, go_div


@pytest.mark.parametrize(
    "reverse, scores, expected",
    [
        (False, [1, 2, 3, 4], [25, 50, 75, 100]),
        (True, [1, 2, 3, 4], [75, 50, 25, 0]),
        (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
        (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
        (False, [1, 1, 1, 1], [100, 100, 100, 100]),
        (False, [1000, 1, 1, 1], [100, 0, 0, 0]),
        (True, [0, 1, 1, 1], [100, 0, 0, 0]),
        # All zero: untouched, or all max when reversed.
        (False, [0, 0], [0, 0]),
        (True, [0, 0], [100, 100]),
    ],
)
def test_default_normalize_score(reverse, scores, expected):
    lst = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    default_normalize_score(100, reverse, lst)
    assert [s.score for s in lst] == expected


@pytest.mark.parametrize("a, b, q", [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, 5, 0), (-1, 3, 0)])
def test_go_div_truncates_toward_zero(a, b, q):
    assert go_div(a, b) == q
