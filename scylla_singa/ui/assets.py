"""The pages' files (package data in static/): HTML shells, one small script each, shared style.

Served from memory, read once; only names that exist in static/ are served
(no paths), so nothing outside the package can be reached.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from aiohttp import web

TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}


@cache
def files() -> dict[str, bytes]:
    """name -> content of every servable file in static/."""
    root = resources.files(f"{__package__}.static")
    return {f.name: f.read_bytes() for f in root.iterdir()
            if f.is_file() and any(f.name.endswith(ext) for ext in TYPES)}


def _response(name: str) -> web.Response:
    body = files().get(name)
    if body is None:
        raise web.HTTPNotFound(text=f"no file {name}")
    ctype = next(t for ext, t in TYPES.items() if name.endswith(ext))
    return web.Response(body=body, headers={"Content-Type": ctype, "Cache-Control": "no-cache"})


def page(name: str) -> web.Response:
    """An HTML shell from static/."""
    return _response(name)


async def _serve(request: web.Request) -> web.Response:
    return _response(request.match_info["name"])


def route() -> web.RouteDef:
    """GET /ui/static/{name}."""
    return web.get("/ui/static/{name}", _serve)
