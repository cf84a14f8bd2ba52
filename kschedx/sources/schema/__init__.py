"""Strict input: objects checked against the schema of a Kubernetes version,
as the API server and kubectl (`--validate=strict`) check them.

    from kschedx.sources.schema import validate
    for problem in validate(obj, "1.36"):
        print(problem.field, problem)   # spec.nodeSelectr  unknown field "spec.nodeSelectr" (did you mean "nodeSelector"?)

The schemas (data/, one gzip'd JSON document per minor) are generated from
the release's OpenAPI documents and Go declarations by generate.py, and read
only when a version is first validated against.
"""

from .problem import (BAD_API_VERSION, DUPLICATE_FIELD, MISSING_KIND, NO_KIND_MATCH, UNKNOWN_FIELD, WRONG_TYPE,
                      Problem, server_message)
from .validate import is_custom_resource, validate

__all__ = [
    "Problem", "validate", "is_custom_resource", "server_message",
    "UNKNOWN_FIELD", "DUPLICATE_FIELD", "WRONG_TYPE", "NO_KIND_MATCH", "MISSING_KIND", "BAD_API_VERSION",
]
