"""Kubernetes versions and feature gates: which kube-scheduler kschedx
reproduces (versions.py), each version's gate table (v1_35.py, v1_36.py),
`--feature-gates` checked against it (gates.py), and the Features value
every plugin reads (features.py)."""

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
