"""Kubernetes versions and feature gates: which kube-scheduler kschedx
reproduces and each version's gate table derived from the gates' history
(versions.py, history.py), the behaviour that changes between versions
keyed by the version it starts at (behaviour.py), which gates kschedx
reproduces or refuses (policy.py), `--feature-gates` checked against the
table (gates.py), and the Features value every plugin reads (features.py)."""

from .features import FIELDS, SWITCHES, Features, default_features
from .gates import FeatureGateError, parse_flag_values
from .versions import (
    NEWEST,
    OLDEST,
    SUPPORTED_VERSIONS,
    VersionError,
    parse_kube_version,
    reference,
    server_minor,
    supported_text,
    version_for_server,
)

__all__ = [
    "FIELDS", "NEWEST", "OLDEST", "SUPPORTED_VERSIONS", "SWITCHES", "FeatureGateError", "Features", "VersionError",
    "default_features", "parse_flag_values", "parse_kube_version", "reference", "server_minor", "supported_text",
    "version_for_server",
]
