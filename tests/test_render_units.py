"""Resource amounts in the human output: milli-CPU and bytes as people write them."""

from kschedx.render import units


def test_cpu_in_cores_or_millicores():
    assert units.cpu(2000) == "2" and units.cpu(1500) == "1500m" and units.cpu(0) == "0"


def test_bytes_in_the_largest_unit_exact_or_one_decimal():
    assert units.size(12 * 2**30) == "12Gi"
    assert units.size(1536 * 2**20) == "1.5Gi"
    assert units.size(512 * 2**20) == "512Mi"
    assert units.size(10267656192) == "9.6Gi"
    assert units.size(1000) == "1000" and units.size(0) == "0"
    assert units.size(-2**30) == "-1Gi"


def test_amount_by_resource_name():
    assert units.amount("cpu", 250) == "250m"
    assert units.amount("memory", 2**30) == "1Gi"
    assert units.amount("ephemeral-storage", 2**31) == "2Gi"
    assert units.amount("hugepages-2Mi", 2**21) == "2Mi"
    assert units.amount("nvidia.com/gpu", 2) == "2" and units.amount("pods", 110) == "110"
