"""NodePorts PreFilter/Filter (upstream node_ports_test.go TestNodePorts,
TestFits) and HostPortInfo (kube-scheduler framework types_test.go
TestHostPortInfo_AddRemove / _Check)."""

import pytest
from builders import container, handle_at, make_node, make_pod, node_info, run_filter, sidecar, verdict

from kschedx.plugins.nodeports import NodePorts
from kschedx.state.types import HostPortInfo

# The version this module holds its plugins to: named, so that a newer
# version (the default) does not change what these tables mean.
VERSION = "1.35"

CONFLICT = ("Unschedulable", ["node(s) didn't have free ports for the requested pod ports"])
OK = ("Success", [])


def ports(*specs):
    out = []
    for s in specs:
        proto, ip, port = s.split("/")
        out.append({"hostIP": ip, "hostPort": int(port), "protocol": proto})
    return out


def port_pod(*specs):
    return make_pod(containers=[container(ports=ports(*specs))])


def port_node(*specs):
    return node_info(make_node("m1"), port_pod(*specs))


CASES = [
    ("other port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/9090"], OK),
    ("same udp port", ["UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], CONFLICT),
    ("same tcp port", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], CONFLICT),
    ("different host ip", ["TCP/127.0.0.1/8080"], ["TCP/127.0.0.2/8080"], OK),
    ("different protocol", ["UDP/127.0.0.1/8080"], ["TCP/127.0.0.1/8080"], OK),
    ("second udp port conflict", ["UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"], ["UDP/127.0.0.1/8080"], CONFLICT),
    ("first tcp port conflict", ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"],
     ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"], CONFLICT),
    ("first tcp port conflict due to 0.0.0.0 hostIP", ["TCP/0.0.0.0/8001"], ["TCP/127.0.0.1/8001"], CONFLICT),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", ["TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"],
     ["TCP/127.0.0.1/8001"], CONFLICT),
    ("second tcp port conflict to 0.0.0.0 hostIP", ["TCP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], CONFLICT),
    ("second different protocol", ["UDP/127.0.0.1/8001"], ["TCP/0.0.0.0/8001"], OK),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", ["UDP/127.0.0.1/8001"],
     ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"], CONFLICT),
]


@pytest.mark.parametrize("name, want, used, expected", CASES, ids=[c[0] for c in CASES])
def test_node_ports(name, want, used, expected):
    pre, st = run_filter(NodePorts(handle_at(VERSION)), port_pod(*want), port_node(*used))
    assert pre is None
    assert verdict(st) == expected


def test_pod_without_ports_skips():
    pre, st = run_filter(NodePorts(handle_at(VERSION)), make_pod(), node_info(make_node("m1")))
    assert verdict(pre) == ("Skip", []) and st is None


def test_container_port_without_host_port_is_not_a_host_port():
    pod = make_pod(containers=[container(ports=[{"containerPort": 80, "protocol": "TCP"}])])
    pre, _ = run_filter(NodePorts(handle_at(VERSION)), pod, port_node("TCP/0.0.0.0/80"))
    assert verdict(pre) == ("Skip", [])


def test_non_sidecar_init_container_host_port_is_ignored():
    pod = make_pod(init_containers=[container("init", ports=[{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}])])
    pre, st = run_filter(NodePorts(handle_at(VERSION)), pod, port_node("TCP/0.0.0.0/8001"))
    assert verdict(pre) == ("Skip", []) and st is None


def test_sidecar_init_container_host_port_conflicts():
    pod = make_pod(init_containers=[sidecar(ports=[{"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}])])
    _, st = run_filter(NodePorts(handle_at(VERSION)), pod, port_node("TCP/0.0.0.0/8001"))
    assert verdict(st) == CONFLICT


def test_bound_sidecar_host_port_is_used_on_the_node():
    bound = make_pod(init_containers=[sidecar(ports=[{"containerPort": 9000, "hostPort": 9000, "protocol": "TCP"}])])
    ni = node_info(make_node("m1"), bound)
    _, st = run_filter(NodePorts(handle_at(VERSION)), port_pod("TCP/0.0.0.0/9000"), ni)
    assert verdict(st) == CONFLICT


def test_conflict_details_list_the_conflicting_ports():
    _, st = run_filter(NodePorts(handle_at(VERSION)), port_pod("TCP/127.0.0.1/80", "UDP/0.0.0.0/53"),
                       port_node("TCP/0.0.0.0/80", "UDP/10.0.0.1/53"))
    assert st.details == {"conflictingPorts": ["TCP/80 on 127.0.0.1", "UDP/53"]}


FITS = [
    ("non-conflicting ports", ["TCP/127.0.0.1/80"], ["TCP/127.0.0.1/9090"], True),
    ("multiple non-conflicting ports", ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"],
     ["TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"], True),
    ("same ports on different protocols", ["TCP/127.0.0.1/80"], ["UDP/127.0.0.1/80"], True),
    ("conflicting ports", ["TCP/127.0.0.1/80"], ["TCP/127.0.0.1/80"], False),
    ("multiple ports, some conflicting", ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"],
     ["TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"], False),
]


@pytest.mark.parametrize("name, want, used, fits", FITS, ids=[c[0] for c in FITS])
def test_fits(name, want, used, fits):
    _, st = run_filter(NodePorts(handle_at(VERSION)), port_pod(*want), port_node(*used))
    assert (st is None) is fits


# --- HostPortInfo -------------------------------------------------------------------

ALL8 = [("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82),
        ("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82)]


@pytest.mark.parametrize(
    "added, removed, length",
    [
        pytest.param(ALL8 + [("TCP", "0.0.0.0", 0), ("TCP", "0.0.0.0", -1)], [], 8, id="normal add case"),
        pytest.param([("", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("", "127.0.0.1", 81), ("", "127.0.0.1", 82),
                      ("", "", 79), ("UDP", "", 80), ("", "", 81), ("", "", 82), ("", "", 0), ("", "", -1)], [], 8,
                     id="empty ip and protocol add should work"),
        pytest.param(ALL8, ALL8, 0, id="normal remove case"),
        pytest.param(ALL8, [("", "127.0.0.1", 79), ("", "127.0.0.1", 81), ("", "127.0.0.1", 82), ("UDP", "127.0.0.1", 80),
                            ("", "", 79), ("", "", 81), ("", "", 82), ("UDP", "", 80)], 0,
                     id="empty ip and protocol remove should work"),
    ],
)
def test_host_port_info_add_remove(added, removed, length):
    hp = HostPortInfo()
    for proto, ip, port in added:
        hp.add(ip, proto, port)
    for proto, ip, port in removed:
        hp.remove(ip, proto, port)
    assert len(hp) == length


@pytest.mark.parametrize(
    "added, check, expect",
    [
        pytest.param([("TCP", "127.0.0.1", 80)], ("", "", 81), False, id="empty check should check 0.0.0.0 and TCP"),
        pytest.param([("TCP", "127.0.0.1", 80)], ("", "", 80), True, id="empty check conflicted"),
        pytest.param([("TCP", "127.0.0.1", 80)], ("", "", 0), False, id="empty port check should pass"),
        pytest.param([("TCP", "127.0.0.1", 80)], ("TCP", "0.0.0.0", 80), True, id="0.0.0.0 checks all registered IPs"),
        pytest.param([("UDP", "127.0.0.1", 80)], ("TCP", "0.0.0.0", 80), False, id="0.0.0.0 with different protocol"),
        pytest.param([("TCP", "127.0.0.1", 79), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82)],
                     ("TCP", "0.0.0.0", 80), False, id="0.0.0.0 with different port"),
        pytest.param([("TCP", "0.0.0.0", 80)], ("TCP", "127.0.0.1", 80), True, id="normal ip checks registered 0.0.0.0"),
        pytest.param([("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82)],
                     ("TCP", "127.0.0.1", 80), False, id="normal ip, different port/protocol on 0.0.0.0"),
        pytest.param([("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81),
                      ("TCP", "127.0.0.1", 82)], ("TCP", "127.0.0.1", 80), False,
                     id="normal ip with different port/protocol"),
    ],
)
def test_host_port_info_check(added, check, expect):
    hp = HostPortInfo()
    for proto, ip, port in added:
        hp.add(ip, proto, port)
    proto, ip, port = check
    assert hp.check_conflict(ip, proto, port) is expect
