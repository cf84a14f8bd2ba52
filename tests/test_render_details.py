"""The `--node` story's sentences for the details of verdicts and scores."""

from __future__ import annotations

from kschedx.render.details import detail_lines


def test_node_volume_limits_lines():
    d = {"driver": "ebs.csi.aws.com", "limit": 3, "attached": 3, "new": 1, "volumes": [
        {"volume": "data", "claim": "default/a", "persistentVolume": None, "driver": "ebs.csi.aws.com",
         "storageClass": "gp3"},
        {"volume": "old", "claim": "default/b", "persistentVolume": "pv-b", "driver": "ebs.csi.aws.com",
         "volumeHandle": "vol-1"},
        {"volume": "pd", "inTreePlugin": "kubernetes.io/gce-pd", "driver": "pd.csi.storage.gke.io",
         "volumeHandle": "h"}]}
    assert detail_lines("NodeVolumeLimits", d) == [
        "ebs.csi.aws.com: 3 attached + 1 new > limit 3 (CSINode allocatable.count)",
        "claim default/a: not provisioned yet, counted for class gp3",
        "claim default/b -> PV pv-b (handle vol-1)",
        "inline kubernetes.io/gce-pd volume pd as pd.csi.storage.gke.io (handle h)",
    ]


def test_volume_zone_line():
    d = {"claim": "default/c", "persistentVolume": "pv", "label": "topology.kubernetes.io/zone",
         "volumeValues": ["a", "b"], "nodeValue": None}
    assert detail_lines("VolumeZone", d) == [
        "PV pv (claim default/c) needs topology.kubernetes.io/zone in [a, b]; the node has no such label"]


def test_volume_binding_and_restrictions_lines():
    assert detail_lines("VolumeBinding", {"claims": [{"claim": "ns/c", "storageClass": "local", "verdict": "x"}]}) == [
        "claim ns/c (class local): x"]
    assert detail_lines("VolumeRestrictions", {"readWriteOncePodClaims": [{"claim": "ns/c", "usedBy": ["ns/p"]}],
                                               "conflictingReferences": 1}) == [
        "ReadWriteOncePod claim ns/c is in use by ns/p"]
    assert detail_lines("VolumeRestrictions", {"claim": "ns/x", "missing": "PersistentVolumeClaim"}) == [
        "PersistentVolumeClaim ns/x does not exist"]


def test_other_plugins_and_odd_shapes_fall_back_to_key_values():
    assert detail_lines("SomeLaterPlugin", {"conflictingPorts": ["TCP/80"]}) == ["conflictingPorts: TCP/80"]
    assert detail_lines("NodeResourcesFit", {"unexpected": [1]}) == ["unexpected: [1]"]
    assert detail_lines("PodTopologySpread", {"constraints": [{"odd": 1}]}) == ['constraints: [{"odd":1}]']
    assert detail_lines("VolumeZone", {"unexpected": 1}) == ["unexpected: 1"]
    assert detail_lines("VolumeZone", None) == []


GiB = 2**30


def test_insufficient_resources_in_units_people_write():
    d = {"insufficient": [
        {"resource": "cpu", "requested": 12000, "used": 3150, "allocatable": 3920},
        {"resource": "memory", "requested": 24 * GiB, "used": 10267656192, "allocatable": 15522086912}]}
    assert detail_lines("NodeResourcesFit", d) == [
        "cpu: requests 12, node has 770m free (3150m of 3920m allocatable requested by its pods)",
        "memory: requests 24Gi, node has 4.9Gi free (9.6Gi of 14.5Gi allocatable requested by its pods)",
    ]


def test_resource_scores_show_shares():
    fit = {"requestedAfter": {"cpu": 1900, "memory": 6 * GiB}, "allocatable": {"cpu": 3920, "memory": 12 * GiB}}
    assert detail_lines("NodeResourcesFit", fit) == [
        "requested with this pod / allocatable: cpu 1900m/3920m (48%), memory 6Gi/12Gi (50%)"]
    balanced = {"fractions": {"cpu": "1000/8000", "memory": f"{2 * GiB}/{32 * GiB}"}}
    assert detail_lines("NodeResourcesBalancedAllocation", balanced)[0].endswith(
        "cpu 1/8 (12%), memory 2Gi/32Gi (6%)")


def test_fit_score_names_the_configured_strategy():
    fit = {"strategy": "RequestedToCapacityRatio", "weights": {"cpu": 1, "memory": 3},
           "shape": [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}],
           "requestedAfter": {"cpu": 1900}, "allocatable": {"cpu": 3920}}
    assert detail_lines("NodeResourcesFit", fit) == [
        "RequestedToCapacityRatio, weights cpu 1, memory 3; shape 0%->10, 100%->0: requested with this pod / "
        "allocatable: cpu 1900m/3920m (48%)"]
    fit = {"strategy": "MostAllocated", "weights": {"cpu": 1, "memory": 1},
           "requestedAfter": {"cpu": 1900}, "allocatable": {"cpu": 3920}}
    assert detail_lines("NodeResourcesFit", fit)[0].startswith("MostAllocated, weights cpu 1, memory 1: requested")


def test_node_affinity_score_splits_added_and_own_terms():
    assert detail_lines("NodeAffinity", {"addedAffinityWeight": 80, "podAffinityWeight": 20}) == [
        "preferred terms matched: scheduler's addedAffinity +80, the pod's own +20"]


def test_taints_ports_images():
    assert detail_lines("TaintToleration", {"taint": {"key": "gpu", "value": "yes", "effect": "NoSchedule"}}) == [
        "untolerated taint gpu=yes:NoSchedule"]
    assert detail_lines("TaintToleration", {"taint": {"key": "node.kubernetes.io/unschedulable",
                                                      "effect": "NoSchedule"}}) == [
        "untolerated taint node.kubernetes.io/unschedulable:NoSchedule"]
    assert detail_lines("NodePorts", {"conflictingPorts": ["TCP/80", "TCP/443"]}) == [
        "host port(s) already in use on the node: TCP/80, TCP/443"]
    assert detail_lines("ImageLocality", {"images": [{"image": "nginx:1", "sizeBytes": 72955450,
                                                       "nodesWithImage": 3}]}) == [
        "image nginx:1 (69.6Mi) is present, on 3 node(s) of the cluster in all"]


def test_spread_filter_shows_the_skew_and_the_domain_counts():
    d = {"constraints": [{
        "topologyKey": "topology.kubernetes.io/zone", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": "app=web", "domain": "b", "matchingPods": 1, "selfMatch": True, "globalMinimum": 0,
        "eligibleDomains": 3, "skew": 2, "satisfied": False, "domainCounts": {"a": 2, "b": 1, "c": 0}}]}
    assert detail_lines("PodTopologySpread", d) == [
        "topology.kubernetes.io/zone maxSkew 1 (DoNotSchedule) over pods app=web: b has 1 + this pod, the emptiest "
        "of 3 domain(s) has 0: skew 2 > maxSkew 1",
        "  pods per domain: a 2, b 1, c 0",
    ]
    missing = {"constraints": [{"topologyKey": "zone", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule",
                                "labelSelector": "app=web", "domain": None, "missingTopologyKey": True}]}
    assert detail_lines("PodTopologySpread", missing) == [
        "zone maxSkew 1 (DoNotSchedule) over pods app=web: the node has no zone label"]


def test_spread_score_lines():
    d = {"constraints": [{"topologyKey": "kubernetes.io/hostname", "maxSkew": 3, "whenUnsatisfiable": "ScheduleAnyway",
                          "labelSelector": "app=search", "systemDefault": True, "domain": "n1", "matchingPods": 1,
                          "topologyWeight": 2.079442, "score": 4.079442}]}
    assert detail_lines("PodTopologySpread", d) == [
        "kubernetes.io/hostname maxSkew 3 (ScheduleAnyway, system default) over pods app=search: 1 matching pod(s) "
        "in n1, topology weight 2.07944, score 4.07944 (lower is better)"]
    assert detail_lines("PodTopologySpread", {"ignored": True, "note": "no key"}) == ["no key"]


def test_inter_pod_affinity_lines():
    anti = {"requiredAntiAffinityTerms": [{"topologyKey": "kubernetes.io/hostname", "labelSelector": "app=web",
                                           "namespaces": ["shop"], "nodeValue": "n1", "matchingPods": 1,
                                           "pods": [{"pod": "shop/web-1", "node": "n1", "topologyValue": "n1"}]}]}
    assert detail_lines("InterPodAffinity", anti) == [
        "anti-affinity to pods app=web in shop by kubernetes.io/hostname: n1 has 1 matching pod(s): shop/web-1 on n1"]
    existing = {"existingPods": [{"pod": "default/t", "node": "n2", "topologyValue": "a",
                                  "topologyKey": "zone"}], "matchingPods": 1}
    assert detail_lines("InterPodAffinity", existing) == [
        "default/t on n2 has required anti-affinity to this pod by zone (zone=a)"]
    score = {"domains": [{"topologyKey": "kubernetes.io/hostname", "topologyValue": "w1", "score": -10,
                          "pods": [{"pod": "default/q", "node": "w1", "term": "preferredAntiAffinity", "weight": -10}],
                          "podTerms": 1}]}
    assert detail_lines("InterPodAffinity", score) == [
        "kubernetes.io/hostname=w1: -10 from default/q (preferredAntiAffinity -10)"]


def test_every_declared_form_is_worded():
    """Each in-tree plugin's declared form of details has its words here;
    one table for every renderer (the --node story included)."""
    from kschedx.plugins.registry import IN_TREE
    from kschedx.render.details import DESCRIBERS

    forms = {d.details for d in IN_TREE if d.details}
    assert forms == set(DESCRIBERS)
