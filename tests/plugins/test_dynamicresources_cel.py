"""CEL selectors in the DRA environment: values, errors and their wording,
compared with what cel-go does in kube-scheduler v1.35."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from kschedx.plugins.dynamicresources.cel.compile import CelDevice, CelRuntimeError, compile_selector
from kschedx.plugins.dynamicresources.cel.semver import Semver, SemverError

DEVICE = CelDevice("gpu.example.com", {
    "name": "gpu-0",
    "attributes": {
        "model": {"string": "a100"}, "index": {"int": 0}, "mig": {"bool": True},
        "driverVersion": {"version": "1.2.3"}, "other.example.com/numa": {"int": 1},
    },
    "capacity": {"memory": {"value": "40Gi"}, "cores": {"value": "108"}},
})
G = 'device.attributes["gpu.example.com"]'
C = 'device.capacity["gpu.example.com"]'


@pytest.mark.parametrize("expr,want", [
    ('device.driver == "gpu.example.com"', True),
    (f'{G}.model == "a100"', True),
    (f'{G}["model"] == "a100"', True),
    (f'{C}.memory.compareTo(quantity("40Gi")) >= 0', True),
    (f'{C}.memory.isGreaterThan(quantity("32Gi"))', True),
    (f'{C}.memory == quantity("40960Mi")', True),
    (f'{G}.driverVersion.isGreaterThan(semver("1.0.0"))', True),
    (f'{G}.driverVersion == semver("1.2.3")', True),
    (f'{G}.driverVersion.major() == 1 && isSemver("v1.2", true)', True),
    (f'{G}.index < 4 && {G}.mig', True),
    ('"gpu.example.com" in device.attributes && !("nvidia.com" in device.attributes)', True),
    ('device.attributes["other.example.com"].numa == 1', True),
    (f'cel.bind(g, {G}, g.model.startsWith("a1") && g.index >= 0)', True),
    (f'{G}.model.matches("^a[0-9]+$")', True),
    (f'{G}.model.upperAscii() == "A100"', True),
    (f'["a100", "h100"].exists(m, m == {G}.model)', True),
    (f'{G}.exists_one(k, k == "model")', True),
    (f'has({G}.model) && !has({G}.nope)', True),
    (f'{C}.cores.asInteger() >= 100 && quantity("50k").add(20) == quantity("50020")', True),
    (f'{G}.missing == "x" || true', True),
    (f'false && {G}.missing == "x"', False),
    (f'{G}.model == 1', False),
    (f'{G}.index == 0.0', True),
    ('has(device.attributes["nvidia.com"].model)', False),
    (f'"1.2.3" == {G}.driverVersion', False),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
])
def test_values(expr, want):
    c = compile_selector(expr)
    assert c.error is None
    assert c.matches(DEVICE) is want


@pytest.mark.parametrize("expr,msg", [
    ('device.attributes["nvidia.com"].model == "a100"', "no such key: model"),
    (f'{G}.missing == "x"', "no such key: missing"),
    (f'{G}.model > 5', "no such overload"),
    (f'{G}.driverVersion == "1.2.3"', "no such overload"),
    ('quantity("200K").sign() == 1', "unable to parse quantity's suffix"),
    ('quantity("2x3").sign() == 1',
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ('semver("1.2").major() == 1', "No Major.Minor.Patch elements found"),
    (f'{G}.index / 0 == 0', "division by zero"),
])
def test_runtime_errors(expr, msg):
    c = compile_selector(expr)
    assert c.error is None
    with pytest.raises(CelRuntimeError) as exc:
        c.matches(DEVICE)
    assert str(exc.value) == msg


@pytest.mark.parametrize("expr,msg", [
    ("device.driver > 5", "compilation failed: ERROR: <input>:1:15: found no matching overload for '_>_' applied "
                          "to '(string, int)'\n | device.driver > 5\n | ..............^"),
    ("device.driver", "must evaluate to bool or the unknown type, not string"),
    ("frobnicate(device.driver)", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'frobnicate' "
                                  "(in container '')\n | frobnicate(device.driver)\n | ^"),
    ("device.allowMultipleAllocations", "compilation failed: ERROR: <input>:1:7: undefined field "
                                        "'allowMultipleAllocations'\n | device.allowMultipleAllocations\n | ......^"),
    (f'{C}.memory < quantity("1")', "found no matching overload for '_<_' applied to "
                                     "'(kubernetes.Quantity, kubernetes.Quantity)'"),
    ('device.driver == 1', "found no matching overload for '_==_' applied to '(string, int)'"),
    (f'{G}.model ==', "Syntax error"),
])
def test_compile_errors(expr, msg):
    c = compile_selector(expr)
    assert c.error is not None and msg in c.error


def test_bad_version_attribute_fails_every_selector():
    dev = CelDevice("d", {"name": "x", "attributes": {"v": {"version": "1.02.3"}}})
    with pytest.raises(CelRuntimeError, match='attribute v: parse semantic version: Minor number must not contain '
                                              'leading zeroes "02"'):
        compile_selector('device.driver == "d"').matches(dev)


@pytest.mark.parametrize("text,ok", [
    ("1.2.3", True), ("1.2.3-alpha.1+build.5", True), ("1.2", False), ("01.2.3", False), ("1.2.3-01", False),
    ("1.2.3-", False), ("1.2.3+", False), ("v1.2.3", False), ("1.2.x", False),
])
def test_semver_parse(text, ok):
    if ok:
        Semver.parse(text)
    else:
        with pytest.raises(SemverError):
            Semver.parse(text)


def test_semver_normalized():
    assert str(Semver.parse_normalized("v1.02")) == "1.2.0"
    with pytest.raises(SemverError, match="short version cannot contain PreRelease/Build meta data"):
        Semver.parse_normalized("1.2-beta")


def test_semver_precedence():
    order = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
             "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0"]
    vs = [Semver.parse(v) for v in order]
    for a, b in zip(vs, vs[1:]):
        assert a.compare(b) == -1 and b.compare(a) == 1
    assert Semver.parse("1.0.0+a") == Semver.parse("1.0.0+b")


@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6),
       st.lists(st.one_of(st.integers(0, 999), st.from_regex(r"[a-z][a-z0-9-]{0,5}", fullmatch=True)), max_size=3))
def test_semver_round_trip(major, minor, patch, pre):
    text = f"{major}.{minor}.{patch}" + ("-" + ".".join(map(str, pre)) if pre else "")
    v = Semver.parse(text)
    assert str(v) == text and Semver.parse(str(v)) == v


FAST_PATH_CASES = [
    'device.driver == "gpu.example.com"', f'{G}.model.startsWith("a1")', f'{G}.model == 1', f'{G}.index == 0',
    f'{C}.memory.compareTo(quantity("40Gi")) >= 0', f'{G}.driverVersion.isGreaterThan(semver("1.0.0"))',
    f'{G}.missing == "x" || true', f'false && {G}.missing == "x"', f'{G}.missing == "x" && true',
    'device.attributes["nvidia.com"].model == "a100"', f'{G}.model > 5', f'{G}.driverVersion == "1.2.3"',
    f'"1.2.3" == {G}.driverVersion', f'!{G}.mig || {G}.index < 4', f'{G}["model"] != "t4"',
    'quantity("2x3").sign() == 1', f'{C}.memory == quantity("40960Mi")', f'{G}.model.matches("^a[0-9]+$")',
]


@pytest.mark.parametrize("expr", FAST_PATH_CASES)
def test_fast_path_agrees_with_celpy(expr):
    c = compile_selector(expr)
    fresh = CelDevice(DEVICE.driver, DEVICE.device)
    slow = c.evaluate_slow(fresh)
    fast = c._evaluate(fresh)
    if isinstance(slow, CelRuntimeError):
        assert isinstance(fast, CelRuntimeError) and str(fast) == str(slow)
    else:
        assert fast is slow
