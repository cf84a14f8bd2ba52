"""What the resourceclaim controller does for a new pod, done offline.

A pod whose claim comes from a ResourceClaimTemplate is not schedulable
until the controller has created the claim (named `<pod>-<claim>-<5
random>`, annotated with the pod's claim name, controlled by the pod) and
recorded it in pod.status.resourceClaimStatuses. Pods read from a cluster or
a snapshot are taken as they are (the scheduler gates them until then);
pods a user asks about ("where would this go?") never met the controller,
so kschedx creates their claims the way it would.
"""

from __future__ import annotations

import copy
import hashlib

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # the API server's generateName alphabet
_MAX_BASE_LEN = 57


def generate_name(pod_name: str, claim_name: str) -> str:
    base = f"{pod_name}-{claim_name}-"
    if len(base) > _MAX_BASE_LEN:
        # Both parts are shortened in proportion, so the claim name survives.
        base = (pod_name[: len(pod_name) * _MAX_BASE_LEN // len(base)] + "-"
                + claim_name[: len(claim_name) * _MAX_BASE_LEN // len(base)])
    return base


def _suffix(seed: str) -> str:
    # Random upstream; derived from the pod here so runs are reproducible.
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_ALPHANUMS[b % len(_ALPHANUMS)] for b in digest[:5])


def instantiate_pod_claims(pod: dict, templates: dict, claims: dict) -> list[str]:
    """Create the missing claims of `pod` from their templates, in `claims`
    ("ns/name" -> claim), and record them in the pod's status. Returns what
    was done, one sentence per claim. A missing template is left alone: the
    pod then waits, as it would in a cluster."""
    meta = pod["metadata"]
    ns = meta.get("namespace", "default")
    status = pod.setdefault("status", {})
    recorded = {s.get("name") for s in status.get("resourceClaimStatuses") or ()}
    notes = []
    for pc in (pod.get("spec") or {}).get("resourceClaims") or ():
        tmpl_name = pc.get("resourceClaimTemplateName")
        if tmpl_name is None or pc.get("name") in recorded:
            continue
        template = templates.get(f"{ns}/{tmpl_name}")
        if template is None:
            continue
        tspec = template.get("spec") or {}
        tmeta = tspec.get("metadata") or {}
        name = generate_name(meta["name"], pc["name"])
        name = name[:58] + _suffix(f"{ns}/{meta['name']}/{meta.get('uid', '')}/{pc['name']}")
        annotations = dict(tmeta.get("annotations") or {})
        annotations[POD_CLAIM_NAME_ANNOTATION] = pc["name"]
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": name,
                "namespace": ns,
                "uid": "claim-" + _suffix("uid/" + name) + "-" + (meta.get("uid") or ""),
                "annotations": annotations,
                "ownerReferences": [{
                    "apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta.get("uid"),
                    "controller": True, "blockOwnerDeletion": True}],
            },
            "spec": copy.deepcopy(tspec.get("spec") or {}),
        }
        if tmeta.get("labels"):
            claim["metadata"]["labels"] = dict(tmeta["labels"])
        claims[f"{ns}/{name}"] = claim
        status.setdefault("resourceClaimStatuses", []).append({"name": pc["name"], "resourceClaimName": name})
        notes.append(f"pod {ns}/{meta['name']}: created ResourceClaim {ns}/{name} from template {tmpl_name}, "
                     "as the resourceclaim controller would")
    return notes
