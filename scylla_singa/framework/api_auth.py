"""Who may call the framework's HTTP API: two kinds of secret, checked before any handler runs.

The API listens where containers can reach it (the swarm advertise
address), so anyone on that network can send it requests. It therefore
takes nothing on trust:

- `POST /progress` needs the progress token of the job the report names
  (`Authorization: Bearer <token>`): each job has its own, handed to its
  containers in their environment (contracts.ENV_PROGRESS_TOKEN), so a
  container of one job cannot report for another, and nobody else at all.
  api_server checks it (the job is named in the body).
- Every other route but `GET /health` needs the framework's control token
  ($SCYLLA_HOME/control.token, readable by root only): the command line
  sends it as `Authorization: Bearer <token>`. A browser cannot set that
  header, so a page opened once with `?token=<token>` is answered with a
  redirect to the same address without it and an HttpOnly, SameSite=Strict
  cookie holding the token; GET requests carrying that cookie are let in
  (the page's scripts never see the token, other sites' pages cannot send
  it). State-changing calls (kill) take the Bearer header only, so a
  cookie can never be used to forge one from another site.
- `GET /health` is open and says only that the process answers.
"""

from __future__ import annotations

import hmac
from typing import Awaitable, Callable

from aiohttp import web

CONTROL_COOKIE = "scylla_control"   # the browser's copy of the control token
LOGIN_PARAM = "token"               # `?token=` signs a browser in once
OPEN_PATHS = frozenset({"/health", "/progress"})   # /progress checks its own (per-job) token
READ_METHODS = frozenset({"GET", "HEAD"})
WHERE_THE_TOKEN_IS = ("the control token is in $SCYLLA_HOME/control.token (readable by root); send it as "
                      "`Authorization: Bearer <token>`, or open the address `scylla-singa ui` prints in a browser")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def bearer(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header; None when there is no such header."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def same_secret(given: str | None, expected: str | None) -> bool:
    """Whether `given` is the (non-empty) secret `expected`, compared in constant time."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def refusal(status: int, message: str) -> web.Response:
    headers = {"WWW-Authenticate": 'Bearer realm="scylla-singa"'} if status == 401 else {}
    return web.Response(status=status, text=message + "\n", headers={**headers, "Cache-Control": "no-store"})


def control_middleware(control_token: str) -> Callable:
    """An aiohttp middleware letting a request through only with the control token (see the module docstring)."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path in OPEN_PATHS:
            return await handler(request)
        given = bearer(request.headers.get("Authorization"))
        if given is not None:
            if same_secret(given, control_token):
                return await handler(request)
            return refusal(401, f"{request.path}: the Bearer token is not this framework's control token; "
                                f"{WHERE_THE_TOKEN_IS}")
        if request.method in READ_METHODS:
            login = request.query.get(LOGIN_PARAM)
            if login is not None:
                if same_secret(login, control_token):
                    return signed_in_redirect(request, control_token)
                return refusal(401, f"{request.path}: the ?{LOGIN_PARAM}= in the address is not this framework's "
                                    f"control token; {WHERE_THE_TOKEN_IS}")
            if same_secret(request.cookies.get(CONTROL_COOKIE), control_token):
                return await handler(request)
        return refusal(401, f"{request.path} needs the framework's control token; {WHERE_THE_TOKEN_IS}")

    return check


def signed_in_redirect(request: web.Request, control_token: str) -> web.Response:
    """303 to the same address without `?token=`, setting the cookie: the token leaves the address bar."""
    url = request.rel_url
    target = url.with_query([(k, v) for k, v in url.query.items() if k != LOGIN_PARAM])
    resp = web.Response(status=303, headers={"Location": str(target), "Cache-Control": "no-store",
                                             "Referrer-Policy": "no-referrer"})
    resp.set_cookie(CONTROL_COOKIE, control_token, httponly=True, samesite="Strict", path="/")
    return resp
