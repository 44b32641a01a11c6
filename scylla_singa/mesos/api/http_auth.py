"""Authentication of HTTP callers, one aiohttp middleware for a master's or an agent's every endpoint.

Mesos splits its HTTP endpoints into read-write ones (always authenticated
when credentials are configured) and read-only ones (authenticated when
`--authenticate_http_readonly` is set). We do the same, with read-only
authentication on by default: `/master/state` names every framework, task
and agent, which is exactly what an attacker on a public address wants.
Only `/health`, `/version` and `/redirect` stay open; they reveal nothing a
port scan would not. A request that is let through carries its principal in
`request["principal"]` (None when the server is insecure or the path open).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

from .credentials import REALM, authenticate

OPEN_PATHS = frozenset({"/health", "/master/health", "/version", "/redirect", "/master/redirect"})
PRINCIPAL_KEY = web.RequestKey("principal", str)   # request[PRINCIPAL_KEY]: who called (None: nobody asked)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class AuthPolicy:
    """Which requests must prove a principal, and against which credentials.

    `credentials` None means insecure: nobody is asked. `self_checked` paths
    authenticate in their own handler (the scheduler API answers 307/503 from
    a standby before it asks for credentials, as Mesos does). `always_paths`
    are authenticated even as GETs when read-only authentication is off
    (an agent's link to the master is a GET upgraded to a WebSocket).
    """

    credentials: dict[str, str] | None
    authenticate_readonly: bool = True
    open_paths: frozenset[str] = OPEN_PATHS
    self_checked: frozenset[str] = frozenset()
    always_paths: frozenset[str] = field(default_factory=frozenset)

    @property
    def secure(self) -> bool:
        return self.credentials is not None

    def requires(self, method: str, path: str) -> bool:
        """Must a request of `method` on `path` authenticate (before its handler runs)?"""
        if self.credentials is None or path in self.open_paths or path in self.self_checked:
            return False
        if method in ("GET", "HEAD") and path not in self.always_paths:
            return self.authenticate_readonly
        return True


def unauthorized(detail: str = "") -> web.Response:
    """401 with the Basic challenge (a browser asks for a user and password; clients retry with them)."""
    message = "Unauthorized: this endpoint needs HTTP Basic credentials (a principal and its secret)"
    return web.Response(status=401, text=message + (f"; {detail}" if detail else ""),
                        headers={"WWW-Authenticate": f'Basic realm="{REALM}"'})


def authentication_middleware(policy: AuthPolicy, hint: str = "") -> Callable[..., Awaitable[web.StreamResponse]]:
    """The middleware enforcing `policy`; `hint` tells a refused caller where credentials come from."""
    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        request[PRINCIPAL_KEY] = None
        if policy.credentials is not None and policy.requires(request.method, request.path):
            principal = authenticate(request.headers.get("Authorization"), policy.credentials)
            if principal is None:
                return unauthorized(hint)
            request[PRINCIPAL_KEY] = principal
        return await handler(request)
    return check
