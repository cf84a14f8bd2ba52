"""metav1.Status bodies exactly as kube-apiserver writes them for each error."""

from __future__ import annotations

from kubeapi_store import dumps


class ApiError(Exception):
    """Raised inside request handling; the server answers with its Status."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None,
                 retry_after: int | None = None, metadata: dict | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.retry_after = retry_after
        self.metadata = metadata or {}

    def body(self) -> bytes:
        return status_body(self.code, self.reason, self.message, self.details, self.metadata)


def status_body(code: int, reason: str, message: str, details: dict | None = None,
                metadata: dict | None = None) -> bytes:
    status = {"kind": "Status", "apiVersion": "v1", "metadata": metadata or {},
              "status": "Failure", "message": message}
    if reason:
        status["reason"] = reason
    if details is not None:
        status["details"] = details
    status["code"] = code
    return dumps(status)


def success_body(code: int) -> bytes:
    return dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                  "code": code})


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def _details(name: str | None, group: str, kind: str, **extra) -> dict:
    d = {}
    if name:
        d["name"] = name
    if group:
        d["group"] = group
    d["kind"] = kind
    d.update(extra)
    return d


def not_found(resource: str, group: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{_qualified(resource, group)} "{name}" not found',
                    _details(name, group, resource))


def path_not_found() -> ApiError:
    # What the server answers for a group/version or resource it does not serve.
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def conflict(resource: str, group: str, name: str, cause: str) -> ApiError:
    return ApiError(409, "Conflict",
                    f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {cause}',
                    _details(name, group, resource))


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def internal_error(message: str) -> ApiError:
    return ApiError(500, "InternalError", f"Internal error occurred: {message}",
                    {"causes": [{"message": message}]})


def plain_error(code: int, message: str) -> ApiError:
    # A non-API error returned from a REST handler: no reason, code 500 by default.
    return ApiError(code, "", message)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(*, user: str, verb: str, resource: str, subresource: str, group: str,
              namespace: str | None, name: str | None) -> ApiError:
    """RBAC's denial, worded as the apiserver's authorization filter words it."""
    full = f"{resource}/{subresource}" if subresource else resource
    if namespace:
        where = f'in the namespace "{namespace}"'
    else:
        where = "at the cluster scope"
    why = f'User "{user}" cannot {verb} resource "{full}" in API group "{group}" {where}'
    head = _qualified(resource, group)
    message = f'{head} "{name}" is forbidden: {why}' if name else f"{head} is forbidden: {why}"
    return ApiError(403, "Forbidden", message, _details(name, group, resource))


def too_many_requests(retry_after: int | None, message: str | None = None,
                      causes: list | None = None) -> ApiError:
    details = {}
    if causes:
        details["causes"] = causes
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return ApiError(429, "TooManyRequests",
                    message or "Too many requests, please try again later.", details,
                    retry_after=retry_after or None)


def service_unavailable(message: str | None = None, retry_after: int | None = None) -> ApiError:
    details = {"retryAfterSeconds": retry_after} if retry_after else None
    return ApiError(503, "ServiceUnavailable",
                    message or "the server is currently unable to handle the request", details,
                    retry_after=retry_after)


def expired(continue_token: str) -> ApiError:
    return ApiError(
        410, "Expired",
        "The provided continue parameter is too old to display a consistent list result. "
        "You can start a new list without the continue parameter, or use the continue token "
        "in this response to retrieve the remainder of the results. Continuing with the "
        "provided token results in an inconsistent list - objects that were created, "
        "modified, or deleted between the time the first chunk was returned and now may "
        "show up in the list.",
        metadata={"continue": continue_token})
