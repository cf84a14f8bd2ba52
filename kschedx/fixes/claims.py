"""What the device fixes share: the pod's ResourceClaims and where a change
of one is written, whether a device matches a class and a request, and
reading the DynamicResources explanation of a node.

A change of a claim's spec is written where the user makes it:
- a claim the pod names (`resourceClaimName`): the ResourceClaim (its spec
  cannot change in place: recreate it with the change);
- a claim made from a ResourceClaimTemplate: the template (`/spec/spec/...`:
  recreate it, then the pod), followed by the same change of the claim the
  resourceclaim controller then makes (`by: resourceclaim-controller`: a
  replay patches the claim the pod points to). A pod of a POD_FILE, whose
  claim kschedx made as the controller would, lists only the template.
Allocated claims are never changed, and neither are DeviceClasses (a
cluster administrator's).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from ..config import names
from .jsonpatch import PatchError, apply_patch, pointer

CONTROLLER = "resourceclaim-controller"
_GENERIC_LABELS = {"com", "io", "org", "net", "example", "k8s", "x-k8s", "dev"}


@dataclass
class PodClaim:
    name: str  # the pod's name for it (spec.resourceClaims[].name)
    key: str  # "namespace/name" of the ResourceClaim
    claim: dict
    template: dict | None  # the ResourceClaimTemplate it was made from, when the snapshot has it
    offline: bool  # made by kschedx for a POD_FILE pod (not an object of the user's)

    @property
    def allocated(self) -> bool:
        return bool((self.claim.get("status") or {}).get("allocation"))


def ctx_claims(ctx) -> list[PodClaim]:
    """The pod's claims as a part computes against them: in a chain, with
    the first change's claim edits made."""
    claims = pod_claims(ctx.search)
    edits = ctx.claim_edits()
    if not edits:
        return claims
    out = []
    for pc in claims:
        if pc.key in edits:
            try:
                pc = PodClaim(pc.name, pc.key, apply_patch(pc.claim, edits[pc.key]), pc.template, pc.offline)
            except PatchError:
                pass
        out.append(pc)
    return out


def pod_claims(search) -> list[PodClaim]:
    """The pod's claims the cluster holds, in the pod's order."""
    pod = search.pod_info.pod
    ns = search.pod_info.namespace
    cluster = search.cluster
    written = {s.get("name") for s in (search.raw_pod.get("status") or {}).get("resourceClaimStatuses") or ()}
    made = {s.get("name"): s.get("resourceClaimName")
            for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()}
    out = []
    for pc in search.pod_info.spec.get("resourceClaims") or ():
        name = pc.get("resourceClaimName")
        template = None
        offline = False
        if name is None and pc.get("resourceClaimTemplateName") is not None:
            name = made.get(pc.get("name"))
            template = cluster.resource_claim_templates.get(f"{ns}/{pc['resourceClaimTemplateName']}")
            offline = pc.get("name") not in written
        claim = cluster.resource_claims.get(f"{ns}/{name}") if name else None
        if claim is not None:
            out.append(PodClaim(pc.get("name", ""), f"{ns}/{name}", claim, template, offline))
    return out


def claim_by_key(search, key: str) -> PodClaim | None:
    return next((c for c in pod_claims(search) if c.key == key), None)


def target_of(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    return {"apiVersion": obj.get("apiVersion") or "resource.k8s.io/v1", "kind": obj["kind"],
            "namespace": meta.get("namespace"), "name": meta.get("name")}


def claim_changes(search, edits: dict[str, list[dict]]):
    """(changes as a fix lists them, the (kind, key, object) to make for a
    cycle, words to add) for JSON Patch operations on claims (paths from
    `/spec`); None when one cannot be made (an allocated claim, a patch
    that does not apply)."""
    changes, made, notes = [], [], []
    for key, ops in edits.items():
        pc = claim_by_key(search, key)
        if pc is None or pc.allocated or not ops:
            return None
        try:
            patched = apply_patch(pc.claim, ops)
        except PatchError:
            return None
        made.append(("ResourceClaim", key, patched))
        if pc.template is not None:
            tops = [dict(op, path="/spec" + op["path"]) for op in ops]
            try:
                apply_patch(pc.template, tops)
            except PatchError:
                return None
            changes.append({"action": "patch", "target": target_of(pc.template), "patch": tops})
            if not pc.offline:
                changes.append({"action": "patch", "target": target_of(pc.claim), "patch": ops, "by": CONTROLLER})
            notes.append(f"ResourceClaimTemplate {pc.template['metadata']['name']}: recreate it and the pod")
        else:
            changes.append({"action": "patch", "target": target_of(pc.claim), "patch": ops})
            notes.append(f"ResourceClaim {pc.claim['metadata']['name']}: recreate it with the change")
    return changes, made, notes


# -- requests ----------------------------------------------------------------------------------
@dataclass
class Request:
    """One request (or firstAvailable subrequest) of a claim, where it is written."""

    claim: PodClaim
    label: str  # "gpu" or "gpu/a100", as the explanation names it
    path: tuple  # ("spec", "devices", "requests", i, "exactly") or (..., "firstAvailable", j)
    spec: dict

    @property
    def device_class(self) -> str:
        return self.spec.get("deviceClassName") or ""

    @property
    def mode(self) -> str:
        return self.spec.get("allocationMode") or "ExactCount"

    @property
    def count(self) -> int:
        return int(self.spec.get("count") or 1) if self.mode == "ExactCount" else 0

    @property
    def selectors(self) -> list:
        return self.spec.get("selectors") or []

    def pointer(self, *more) -> str:
        return pointer(*self.path, *more)


def requests_of(pc: PodClaim) -> list[Request]:
    out = []
    for i, req in enumerate(((pc.claim.get("spec") or {}).get("devices") or {}).get("requests") or ()):
        if req.get("exactly") is not None:
            out.append(Request(pc, req.get("name", ""), ("spec", "devices", "requests", i, "exactly"),
                               req["exactly"]))
        for j, sub in enumerate(req.get("firstAvailable") or ()):
            out.append(Request(pc, f"{req.get('name', '')}/{sub.get('name', '')}",
                               ("spec", "devices", "requests", i, "firstAvailable", j), sub))
    return out


def open_requests(ctx):
    """(claim, request) for every request of the pod's claims still to be
    allocated: what a device change can alter (an allocated claim's devices
    are fixed)."""
    for pc in ctx_claims(ctx):
        if not pc.allocated:
            for req in requests_of(pc):
                yield pc, req


def explained(blockers, node: str) -> dict:
    """claim key -> request label -> the node's explanation of that request."""
    out: dict = {}
    for c in (blockers.detail(node, names.DynamicResources) or {}).get("claims") or ():
        out[c["claim"]] = {r["request"]: r for r in c.get("requests") or ()}
    return out


def dra_nodes(ctx, node: str | None) -> list[str]:
    """The nodes a device change is drawn for: `node`, or every node only
    DynamicResources keeps the pod off (its Filter ran there)."""
    if node is not None:
        return [node] if ctx.blockers.detail(node, names.DynamicResources) else []
    return [n for n in ctx.blockers.only(names.DynamicResources) if ctx.blockers.detail(n, names.DynamicResources)]


def edit_op(spec: dict, path: str, key: str, value) -> dict:
    return {"op": "replace" if key in spec else "add", "path": path, "value": value}


# -- devices -----------------------------------------------------------------------------------
_CEL_DEVICES: dict[int, tuple] = {}


def _cel_device(driver: str, device: dict):
    """The device as CEL sees it, built once per device object (it keeps
    each expression's result)."""
    from ..plugins.dynamicresources.cel import compile as cel

    hit = _CEL_DEVICES.get(id(device))
    if hit is None or hit[0] is not device:
        if len(_CEL_DEVICES) > 100_000:
            _CEL_DEVICES.clear()
        hit = _CEL_DEVICES[id(device)] = (device, cel.CelDevice(driver, device))
    return hit[1]


def selector_true(expression: str, driver: str, device: dict) -> bool:
    """One CEL selector on one device; False when it does not compile or fails."""
    from ..plugins.dynamicresources.cel import compile as cel

    compiled = cel.compile_selector(expression)
    if compiled.error is not None:
        return False
    try:
        return bool(compiled.matches(_cel_device(driver, device)))
    except cel.CelRuntimeError:
        return False


def device_matches(cluster, class_name: str, selectors: list, driver: str, device: dict) -> bool:
    """Whether the DeviceClass's and the request's CEL selectors accept the
    device (allocation left aside); False for a class that does not exist
    or a selector that does not compile or fails."""
    cls = cluster.device_classes.get(class_name)
    if cls is None:
        return False
    for sel in list((cls.get("spec") or {}).get("selectors") or ()) + list(selectors or ()):
        if not selector_true((sel.get("cel") or {}).get("expression", ""), driver, device):
            return False
    return True


def usable_shape(device: dict) -> bool:
    """A device kschedx may copy or count on: none that needs a feature off
    in v1.35 (partitionable devices, binding conditions)."""
    return not device.get("consumesCounters") and not device.get("bindingConditions")


def slice_devices(cluster):
    """(slice, device) of every ResourceSlice, slices by name."""
    for s in sorted(cluster.resource_slices.values(), key=lambda s: s["metadata"]["name"]):
        for d in (s.get("spec") or {}).get("devices") or ():
            yield s, d


def allocated_devices(cluster) -> dict:
    """(driver, pool, device) -> claim key holding it."""
    out = {}
    for key, claim in sorted(cluster.resource_claims.items()):
        alloc = (claim.get("status") or {}).get("allocation") or {}
        for r in (alloc.get("devices") or {}).get("results") or ():
            if not r.get("adminAccess"):
                out.setdefault((r.get("driver", ""), r.get("pool", ""), r.get("device", "")), key)
    return out


def device_id(s: dict, d: dict) -> tuple:
    spec = s.get("spec") or {}
    return (spec.get("driver", ""), (spec.get("pool") or {}).get("name", ""), d.get("name", ""))


def free_matching(search, class_name: str, selectors: list) -> int:
    """Devices the class and selectors accept that no claim holds."""
    taken = allocated_devices(search.cluster)
    n = 0
    for s, d in slice_devices(search.cluster):
        if not usable_shape(d) or device_id(s, d) in taken:
            continue
        if device_matches(search.cluster, class_name, selectors, (s.get("spec") or {}).get("driver", ""), d):
            n += 1
    return n


def class_tokens(name: str) -> set[str]:
    return {t for t in re.split(r"[.\-]", name) if t and t not in _GENERIC_LABELS}


def near_classes(cluster, missing: str) -> list[str]:
    """Existing DeviceClasses whose name shares labels with a missing one:
    a suffix match first (mig-1g.gpu.example.com -> gpu.example.com), then by
    labels in common."""
    want = class_tokens(missing)
    scored = []
    for name in cluster.device_classes:
        common = class_tokens(name) & want
        suffix = missing.endswith("." + name) or name.endswith("." + missing)
        if common or suffix:
            scored.append((0 if suffix else 1, -len(common), name))
    return [name for *_, name in sorted(scored)]


def copy_device(device: dict, name: str) -> dict:
    out = copy.deepcopy(device)
    out["name"] = name
    return out
