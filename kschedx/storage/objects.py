"""Claims, volumes and classes as the scheduler's listers see them.

Lookups raise NotFound with the exact text an informer lister's error has
(`persistentvolumeclaim "data" not found`): a PVC naming a missing PV or
StorageClass is a legal cluster state, and kube-scheduler reports it with
these words.
"""

from __future__ import annotations

from ..api.labels import NodeSelector, Requirement, SelectorError, label_selector
from ..api.quantity import Quantity, parse_quantity

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

READ_WRITE_ONCE_POD = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
IMMEDIATE = "Immediate"

ZERO = Quantity.parse("0")


def go_quote(s: str) -> str:
    """fmt's %q for the names that appear in error messages."""
    out = ['"']
    for ch in s:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


class NotFound(Exception):
    """An object a lister does not have (apierrors.IsNotFound)."""

    def __init__(self, resource: str, name: str):
        self.resource = resource
        self.name = name
        super().__init__(f"{resource} {go_quote(name)} not found")


def get_pvc(cluster, namespace: str, name: str) -> dict:
    pvc = cluster.persistent_volume_claims.get(f"{namespace}/{name}")
    if pvc is None:
        raise NotFound("persistentvolumeclaim", name)
    return pvc


def get_pv(cluster, name: str) -> dict:
    pv = cluster.persistent_volumes.get(name)
    if pv is None:
        raise NotFound("persistentvolume", name)
    return pv


def get_storage_class(cluster, name: str) -> dict:
    sc = cluster.storage_classes.get(name)
    if sc is None:
        raise NotFound("storageclass.storage.k8s.io", name)
    return sc


def meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def annotations(obj: dict) -> dict:
    return meta(obj).get("annotations") or {}


def spec(obj: dict) -> dict:
    return obj.get("spec") or {}


def claim_key(pvc: dict) -> str:
    m = meta(pvc)
    return f"{m.get('namespace', '')}/{m.get('name', '')}"


def claim_class(pvc: dict) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation wins over the field."""
    ann = annotations(pvc)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return ann[BETA_STORAGE_CLASS_ANNOTATION]
    return spec(pvc).get("storageClassName") or ""


def volume_class(pv: dict) -> str:
    ann = annotations(pv)
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return ann[BETA_STORAGE_CLASS_ANNOTATION]
    return spec(pv).get("storageClassName") or ""


def is_fully_bound(pvc: dict) -> bool:
    """What the PV controller marks as done: a volume name and bind-completed."""
    return bool(spec(pvc).get("volumeName")) and ANN_BIND_COMPLETED in annotations(pvc)


def binding_mode(sc: dict) -> str:
    # The API server stores every StorageClass with a mode (Immediate when
    # the manifest has none), so an absent field reads as that default.
    return sc.get("volumeBindingMode") or IMMEDIATE


def is_delay_binding_mode(cluster, pvc: dict) -> bool:
    """IsDelayBindingMode: a missing class counts as immediate binding."""
    name = claim_class(pvc)
    if not name:
        return False
    sc = cluster.storage_classes.get(name)
    if sc is None:
        return False
    return binding_mode(sc) == WAIT_FOR_FIRST_CONSUMER


def access_modes(obj: dict) -> list:
    return spec(obj).get("accessModes") or []


def storage_request(pvc: dict) -> Quantity | None:
    requests = (spec(pvc).get("resources") or {}).get("requests") or {}
    if "storage" not in requests:
        return None
    return parse_quantity(requests["storage"])


def storage_capacity(pv: dict) -> Quantity:
    cap = (spec(pv).get("capacity") or {}).get("storage")
    return parse_quantity(cap) if cap is not None else ZERO


def volume_mode_mismatch(pvc: dict, pv: dict) -> bool:
    # Either side without a mode is Filesystem, as upstream defaults it.
    return (spec(pvc).get("volumeMode") or "Filesystem") != (spec(pv).get("volumeMode") or "Filesystem")


def check_access_modes(pvc: dict, pv: dict) -> bool:
    """Every mode the claim asks for is one the volume offers."""
    offered = set(access_modes(pv))
    return all(m in offered for m in access_modes(pvc))


def is_volume_bound_to_claim(pv: dict, pvc: dict) -> bool:
    ref = spec(pv).get("claimRef")
    if not ref:
        return False
    m = meta(pvc)
    if ref.get("name", "") != m.get("name", "") or ref.get("namespace", "") != m.get("namespace", ""):
        return False
    if ref.get("uid") and ref.get("uid") != m.get("uid"):
        return False
    return True


def claim_selector(pvc: dict):
    """The claim's label selector over PVs, or None; raises SelectorError."""
    sel = spec(pvc).get("selector")
    if sel is None:
        return None
    return label_selector(sel)


class VolumeNodeAffinity:
    """A PV's required node affinity, matched against node labels only.

    CheckNodeAffinity builds a node that has labels and no name, so
    matchFields terms never restrict anything there.
    """

    __slots__ = ("selector", "signature")

    def __init__(self, pv: dict):
        required = (spec(pv).get("nodeAffinity") or {}).get("required")
        self.selector = NodeSelector(required) if required is not None else None
        self.signature = None if required is None else _signature(required)

    def matches(self, node_labels: dict) -> bool:
        if self.selector is None:
            return True
        return self.selector.matches(node_labels, "")


def _signature(obj):
    if isinstance(obj, dict):
        return tuple(sorted((k, _signature(v)) for k, v in obj.items()))
    if isinstance(obj, list):
        return tuple(_signature(v) for v in obj)
    return obj


class AffinityCache:
    """Parsed node affinities of PVs, kept while the PV object is the same."""

    def __init__(self):
        self._by_name: dict[str, tuple[dict, VolumeNodeAffinity]] = {}

    def get(self, pv: dict) -> VolumeNodeAffinity:
        name = meta(pv).get("name", "")
        hit = self._by_name.get(name)
        if hit is not None and hit[0] is pv:
            return hit[1]
        aff = VolumeNodeAffinity(pv)
        self._by_name[name] = (pv, aff)
        return aff


def match_topology_selector_terms(terms, node_labels: dict) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match every node; an
    empty term, or one whose requirements do not parse, matches none."""
    if not terms:
        return True
    return any(all(r.matches(node_labels) for r in reqs) for reqs in _parsed_topology_terms(terms))


_TOPOLOGY_CACHE: dict[int, tuple[list, list]] = {}


def clear_caches() -> None:
    """Forget parsed topology terms (a watch compacting its state)."""
    _TOPOLOGY_CACHE.clear()


def cache_sizes() -> dict[str, int]:
    return {"topologyTerms": len(_TOPOLOGY_CACHE)}


def _parsed_topology_terms(terms: list) -> list:
    """The usable terms, each a list of `key In values` requirements; parsed
    once per StorageClass (the cache holds the list, so its id stays valid)."""
    hit = _TOPOLOGY_CACHE.get(id(terms))
    if hit is not None and hit[0] is terms:
        return hit[1]
    parsed = []
    for term in terms:
        exprs = (term or {}).get("matchLabelExpressions") or []
        if not exprs:
            continue
        try:
            parsed.append([Requirement(e.get("key"), "In", e.get("values")) for e in exprs])
        except SelectorError:
            continue
    _TOPOLOGY_CACHE[id(terms)] = (terms, parsed)
    return parsed


def controller_uid(obj: dict) -> str | None:
    """metav1.GetControllerOf: the first owner reference marked controller."""
    for ref in meta(obj).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref.get("uid")
    return None
