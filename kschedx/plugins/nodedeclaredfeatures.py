"""NodeDeclaredFeatures: a pod that needs a node feature (one the kubelet
declares in node.status.declaredFeatures) fits only on nodes declaring it.

Enabled by the NodeDeclaredFeatures gate (alpha, off in v1.35; beta, on in
v1.36, where it is the default profile's last plugin). PreFilter infers the
pod's requirements from its spec (component-helpers/nodedeclaredfeatures)
and Skips when there are none, as for nearly every pod; Filter checks that
the node declares them all, UnschedulableAndUnresolvable otherwise.

Features a pod's spec implies at scheduling:
- RestartAllContainersOnContainerExits: a container or init container with a
  restartPolicyRules entry whose action is RestartAllContainers;
- UserNamespacesHostNetworkSupport (from the v1.36 registry): hostNetwork
  with hostUsers false;
- VolumeBindMountOptions (from the v1.37 registry): a container, init
  container or ephemeral container mounting a volume with bindMountOptions.
The other registered features are inferred only on pod updates.

The node's side differs by version: v1.35 takes the declared names as a set;
v1.36 maps them onto its sorted registry with a merge walk that assumes the
list is sorted (the kubelet writes it sorted), dropping unknown names, so an
unsorted list can lose a known one. The failure reason changed too (v1.35
names the missing features).
"""

from __future__ import annotations

from ..config import names
from ..framework.declaration import Declaration
from ..framework.events import ActionType as A, NODE, POD, Register
from ..framework.interface import Plugin, features_of
from ..framework.status import Code, Status

NAME = names.NodeDeclaredFeatures
STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't match Pod's required features"
ERR_REASON_V135 = "node declared features check failed - unsatisfied requirements: "

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"

# The features each version's framework registers (features.AllFeatures).
REGISTRY_V135 = ("RestartAllContainersOnContainerExits", "GuaranteedQoSPodCPUResize",
                 "InPlacePodLevelResourcesVerticalScaling")
REGISTRY_V136 = tuple(sorted(("RestartAllContainersOnContainerExits", "InPlacePodLevelResourcesVerticalScaling",
                              "ExtendWebSocketsToKubelet", "InPlacePodVerticalScalingInitContainers",
                              "UserNamespacesHostNetworkSupport")))
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"
REGISTRY_V137 = tuple(sorted(REGISTRY_V136 + ("InPlacePodVerticalScalingMemoryBackedVolumes",
                                              "DRANodeAllocatableResources", VOLUME_BIND_MOUNT_OPTIONS,
                                              "DRAOptionalNodeOperations")))


def _restarts_all_containers(spec: dict) -> bool:
    for group in ("containers", "initContainers"):
        for c in spec.get(group) or ():
            for rule in c.get("restartPolicyRules") or ():
                if rule.get("action") == "RestartAllContainers":
                    return True
    return False


def _user_namespaces_host_network(spec: dict) -> bool:
    return spec.get("hostNetwork") is True and spec.get("hostUsers") is False


def _bind_mount_options(spec: dict) -> bool:
    for group in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(group) or ():
            for mount in c.get("volumeMounts") or ():
                if mount.get("bindMountOptions"):
                    return True
    return False


_INFER = {
    RESTART_ALL_CONTAINERS: _restarts_all_containers,
    USER_NAMESPACES_HOST_NETWORK: _user_namespaces_host_network,
    VOLUME_BIND_MOUNT_OPTIONS: _bind_mount_options,
}


def infer_requirements(spec: dict, registry) -> tuple[str, ...]:
    """InferForPodScheduling: the registered features the pod's spec needs,
    in registry order."""
    return tuple(name for name in registry if name in _INFER and _INFER[name](spec))


def try_map(declared, registry_sorted) -> frozenset:
    """FeatureMapper.TryMap (v1.36): a merge walk of the node's list, taken
    as sorted, against the sorted registry; unknown names are dropped."""
    out = set()
    i = j = 0
    declared = list(declared)
    while i < len(declared) and j < len(registry_sorted):
        a, b = declared[i], registry_sorted[j]
        if a == b:
            out.add(a)
            i += 1
            j += 1
        elif a < b:
            i += 1
        else:
            j += 1
    return frozenset(out)


class NodeDeclaredFeatures(Plugin):
    name = NAME

    def __init__(self, handle, args=None):
        super().__init__(handle, args)
        fts = features_of(handle)
        self.enabled = fts.enable_node_declared_features
        self.mapped = fts.node_declared_features_mapped
        self.registry = (REGISTRY_V137 if fts.node_declared_features_infer_bind_mount_options
                         else REGISTRY_V136 if self.mapped else REGISTRY_V135)
        self._node_features: dict[int, frozenset] = {}

    def node_features(self, node_info) -> frozenset:
        """NodeInfo's DeclaredFeatures, as SetNode builds it."""
        node = node_info.node
        key = id(node)
        fs = self._node_features.get(key)
        if fs is None:
            declared = [str(x) for x in (node.get("status") or {}).get("declaredFeatures") or ()]
            fs = try_map(declared, self.registry) if self.mapped else frozenset(declared)
            self._node_features[key] = fs
        return fs

    def pre_filter(self, state, pod_info, nodes):
        if not self.enabled:
            return None, Status(Code.SKIP)
        reqs = infer_requirements(pod_info.spec, self.registry)
        if not reqs:
            return None, Status(Code.SKIP)
        state.write(STATE_KEY, reqs)
        return None, None

    def filter(self, state, pod_info, node_info):
        if not self.enabled:
            return None
        reqs = state.read(STATE_KEY)
        if reqs is None:
            return Status.as_error(f'error reading "{STATE_KEY}" from cycle-state: not found')
        have = self.node_features(node_info)
        missing = [r for r in reqs if r not in have]
        if not missing:
            return None
        details = {"required": list(reqs), "declared": sorted(have), "missing": sorted(missing)}
        if self.mapped:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON, details=details)
        # v1.35 lists them in Go map order; kschedx by name.
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_V135 + ", ".join(sorted(missing)),
                      details=details)


DECLARATION = Declaration(
    name=names.NodeDeclaredFeatures,
    factory=NodeDeclaredFeatures,
    points=frozenset({"preFilter", "filter"}),
    events=(Register(NODE, A.Add | A.UpdateNodeDeclaredFeature, gate="NodeDeclaredFeatures"),
            Register(POD, A.Update, gate="NodeDeclaredFeatures")),
    gates=frozenset({"NodeDeclaredFeatures"}),
    node_local=True,
)
