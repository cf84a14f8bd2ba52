"""The kubeconfig fields kschedx and the official client read (client-go's
clientcmd/api/v1 Config). kubectl refuses a file whose fields have the wrong
type when it decodes it; kschedx does the same before the client sees it."""

from __future__ import annotations

from .checks import BOOL, LIST, MAP, STR
from .common import string_list, string_map

_NAMED = [("[]", MAP), ("[].name", STR)]

KUBECONFIG = [
    ("", MAP),
    ("current-context", STR),
    ("preferences", MAP),
    ("clusters", LIST), *[("clusters" + p, c) for p, c in _NAMED],
    ("clusters[].cluster", MAP),
    ("clusters[].cluster.server", STR),
    ("clusters[].cluster.tls-server-name", STR),
    ("clusters[].cluster.insecure-skip-tls-verify", BOOL),
    ("clusters[].cluster.certificate-authority", STR),
    ("clusters[].cluster.certificate-authority-data", STR),
    ("clusters[].cluster.proxy-url", STR),
    ("contexts", LIST), *[("contexts" + p, c) for p, c in _NAMED],
    ("contexts[].context", MAP),
    ("contexts[].context.cluster", STR),
    ("contexts[].context.user", STR),
    ("contexts[].context.namespace", STR),
    ("users", LIST), *[("users" + p, c) for p, c in _NAMED],
    ("users[].user", MAP),
    ("users[].user.client-certificate", STR),
    ("users[].user.client-certificate-data", STR),
    ("users[].user.client-key", STR),
    ("users[].user.client-key-data", STR),
    ("users[].user.token", STR),
    ("users[].user.tokenFile", STR),
    ("users[].user.username", STR),
    ("users[].user.password", STR),
    ("users[].user.auth-provider", MAP),
    ("users[].user.auth-provider.name", STR),
    *string_map("users[].user.auth-provider.config"),
    ("users[].user.exec", MAP),
    ("users[].user.exec.command", STR),
    ("users[].user.exec.apiVersion", STR),
    *string_list("users[].user.exec.args"),
    ("users[].user.exec.env", LIST),
    ("users[].user.exec.env[]", MAP),
    ("users[].user.exec.env[].name", STR),
    ("users[].user.exec.env[].value", STR),
]
