"""The Mesos fetcher: put a task's CommandInfo URIs into its sandbox before it starts.

Schemes: file:// (and plain paths), http://, https://, and hdfs:// through a
WebHDFS endpoint (`http://namenode:9870`: `GET /webhdfs/v1<path>?op=OPEN`,
which redirects to a datanode). Archives (.tar, .tar.gz, .tgz, .tar.bz2,
.tbz2, .tar.xz, .txz, .zip) are extracted unless `extract` is false; a
single .gz is gunzipped; `executable` sets the run bits (and skips
extraction); `output_file` renames the download. Any failure raises
FetchError naming the URI, and the task fails with that message.

A local file (file:// or a bare path) is copied only from under the
agent's fetcher roots (AgentConfig.fetcher_allowed_roots, flag
--fetcher-allowed-roots), resolved with its symlinks and opened without
following any (confined_paths.py): a task must never get a copy of
/etc/shadow or another job's files into a sandbox it can read.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import aiohttp

from .confined_paths import PathRefused, open_confined

ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".zip")
TIMEOUT_S = 300
ROOTS_FLAG = "--fetcher-allowed-roots"


class FetchError(RuntimeError):
    """A URI could not be fetched or extracted; the message names it and why."""


async def fetch_all(uris: list[dict[str, Any]], sandbox: Path, hdfs_url: str | None = None,
                    local_roots: Sequence[Path] = ()) -> list[Path]:
    """Fetch every URI into `sandbox` in order; the paths written. Local files only from under `local_roots`."""
    out = []
    for uri in uris:
        if not isinstance(uri, dict) or not uri.get("value"):
            raise FetchError(f"bad URI entry {uri!r}")
        out.append(await fetch_one(uri, sandbox, hdfs_url, local_roots))
    return out


async def fetch_one(uri: dict[str, Any], sandbox: Path, hdfs_url: str | None = None,
                    local_roots: Sequence[Path] = ()) -> Path:
    src = uri["value"]
    name = uri.get("output_file") or _basename(src)
    dest = (sandbox / name).resolve()
    if not str(dest).startswith(str(sandbox.resolve()) + os.sep):
        raise FetchError(f"{src}: output_file {name!r} leaves the sandbox")
    dest.parent.mkdir(parents=True, exist_ok=True)
    scheme = urlparse(src).scheme
    try:
        if scheme in ("", "file"):
            await asyncio.to_thread(_copy_file, src, dest, local_roots)
        elif scheme in ("http", "https"):
            await _download(src, dest)
        elif scheme == "hdfs":
            if not hdfs_url:
                raise FetchError(f"{src}: hdfs:// needs the agent's --hdfs WebHDFS URL")
            await _download(webhdfs_open_url(hdfs_url, src), dest)
        else:
            raise FetchError(f"{src}: unsupported URI scheme {scheme!r}")
        os.chmod(dest, 0o755 if uri.get("executable") else 0o644)
        if not uri.get("executable") and uri.get("extract", True):
            await asyncio.to_thread(_extract, dest, sandbox)
    except FetchError:
        raise
    except (OSError, aiohttp.ClientError, asyncio.TimeoutError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise FetchError(f"{src}: {exc.__class__.__name__}: {exc}") from None
    return dest


def webhdfs_open_url(base: str, hdfs_uri: str) -> str:
    """WebHDFS OPEN URL of an hdfs:// URI (its path) against `base` (http://namenode:9870)."""
    path = urlparse(hdfs_uri).path or "/"
    return f"{base.rstrip('/')}/webhdfs/v1{path}?op=OPEN"


def _basename(src: str) -> str:
    path = unquote(urlparse(src).path) or src
    name = os.path.basename(path.rstrip("/"))
    if not name:
        raise FetchError(f"{src}: cannot tell a file name; give output_file")
    return name


def _copy_file(src: str, dest: Path, roots: Sequence[Path]) -> None:
    path = unquote(urlparse(src).path) if src.startswith("file:") else src
    try:
        fd = open_confined(os.path.abspath(path), roots, flags=os.O_RDONLY)
    except PathRefused:
        allowed = ":".join(str(r) for r in roots) or "(none)"
        raise FetchError(f"{src}: local files are fetched only from under the agent's allowed roots {allowed}, "
                         f"and {path} (resolved: {os.path.realpath(path)}) is not there: put it there or "
                         f"serve it over http(s)/hdfs (agent flag {ROOTS_FLAG})") from None
    except FileNotFoundError:
        raise FetchError(f"{src}: no such file") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise FetchError(f"{src}: not a regular file")
        out_fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(out_fd, "wb") as out:
            shutil.copyfileobj(f, out)


async def _download(url: str, dest: Path) -> None:
    timeout = aiohttp.ClientTimeout(total=TIMEOUT_S)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async with session.get(url, allow_redirects=True) as resp:
            if resp.status != 200:
                body = (await resp.text(errors="replace"))[:200]
                raise FetchError(f"{url}: HTTP {resp.status} {body}".strip())
            with open(dest, "wb") as f:
                async for chunk in resp.content.iter_chunked(1 << 16):
                    f.write(chunk)


def _extract(path: Path, sandbox: Path) -> None:
    name = path.name.lower()
    if name.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            for member in z.namelist():
                target = (sandbox / member).resolve()
                if not str(target).startswith(str(sandbox.resolve())):
                    raise FetchError(f"{path.name}: archive member {member!r} leaves the sandbox")
            z.extractall(sandbox)
    elif name.endswith(ARCHIVES):
        with tarfile.open(path) as t:
            t.extractall(sandbox, filter="data")
    elif name.endswith(".gz"):
        with gzip.open(path, "rb") as src, open(path.with_suffix(""), "wb") as dst:
            shutil.copyfileobj(src, dst)

