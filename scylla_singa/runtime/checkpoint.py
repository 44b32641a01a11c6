"""Checkpoints: servers' parameter slices in `<workspace>/checkpoint/`, on a local path or HDFS.

Names (docs/contracts.md):

    step<N>-proc<K>.npz   the slices of the server-group-0 servers process K hosts,
                          after N training steps of worker group 0
    step<N>.done          marker: every slice of step N is written

Every file is written atomically: to a temporary name (a dot-file with a
`.tmp-` suffix, which readers ignore), then renamed; a half-written
checkpoint is never visible under its final name. A step counts only once
its marker exists. Every process of a job writes the same marker, possibly
into one shared workspace and all as pid 1 of their containers, so the
temporary names carry a random token, and a writer that finds the final file
already there with the very bytes it meant to write is done.

The .npz holds `meta` (JSON as uint8: step, proc, the model signature, and
for each slice its server, lo, hi and updater-state names), and per slice i
`s<i>_values` and `s<i>_state_<name>`.

Stores: LocalStore (a directory; the workspace may be a mounted host path)
and WebHdfsStore (an `hdfs://host[:port]/path` workspace through WebHDFS's
REST API: CREATE with its two-step redirect, RENAME, LISTSTATUS, OPEN,
MKDIRS, DELETE), with urllib only.
"""

from __future__ import annotations

import io
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from scylla_singa.common.files import temporary_name, write_atomic
from .machine_events import SaveSlice
from .runtime_errors import SingaConfigError

CKPT_RE = re.compile(r"^step(\d+)-proc(\d+)\.npz$")
MARKER_RE = re.compile(r"^step(\d+)\.done$")


def checkpoint_name(step: int, proc: int) -> str:
    return f"step{step}-proc{proc}.npz"


def marker_name(step: int) -> str:
    return f"step{step}.done"


class StoreError(OSError):
    """A checkpoint store operation failed; the message names the store and the file."""


class Store(Protocol):
    def write_atomic(self, name: str, data: bytes) -> None: ...
    def read(self, name: str) -> bytes: ...
    def names(self) -> list[str]: ...
    def describe(self) -> str: ...


class LocalStore:
    """A directory on a local or mounted filesystem."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def describe(self) -> str:
        return str(self.root)

    def write_atomic(self, name: str, data: bytes) -> None:
        try:
            write_atomic(self.root / name, data)
        except OSError as exc:
            raise StoreError(f"cannot write {self.root / name}: {exc}") from None

    def read(self, name: str) -> bytes:
        return (self.root / name).read_bytes()

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return [p.name for p in self.root.iterdir() if not p.name.startswith(".")]


class WebHdfsStore:
    """A directory in HDFS, reached through WebHDFS (`base_url` like http://namenode:9870)."""

    def __init__(self, base_url: str, path: str, user: str = "singa", timeout_s: float = 30.0) -> None:
        self.base = base_url.rstrip("/")
        self.path = "/" + path.strip("/")
        self.user = user
        self.timeout = timeout_s

    def describe(self) -> str:
        return f"{self.base}/webhdfs/v1{self.path}"

    def _url(self, path: str, op: str, **params: str) -> str:
        query = urllib.parse.urlencode({"op": op, "user.name": self.user, **params})
        return f"{self.base}/webhdfs/v1{urllib.parse.quote(path)}?{query}"

    def _call(self, method: str, url: str, data: bytes | None = None,
              headers: dict | None = None) -> tuple[int, bytes, dict]:
        req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.status, resp.read(), dict(resp.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), dict(exc.headers or {})
        except (urllib.error.URLError, OSError) as exc:
            raise StoreError(f"WebHDFS {method} {url.split('?')[0]}: {exc}") from None

    def _put(self, path: str, data: bytes) -> None:
        url = self._url(path, "CREATE", overwrite="true")
        code, body, headers = self._call("PUT", url)
        location = headers.get("Location") or headers.get("location")
        if code == 200 and not location and body:
            location = json.loads(body).get("Location")
        if code not in (200, 201, 307) or (code != 201 and not location):
            raise StoreError(f"WebHDFS CREATE {path}: HTTP {code} {body[:200]!r}")
        if code != 201:
            code, body, _ = self._call("PUT", location, data, {"Content-Type": "application/octet-stream"})
            if code not in (200, 201):
                raise StoreError(f"WebHDFS CREATE {path} (data): HTTP {code} {body[:200]!r}")

    def write_atomic(self, name: str, data: bytes) -> None:
        self._call("PUT", self._url(self.path, "MKDIRS"))
        final = f"{self.path}/{name}"
        tmp = f"{self.path}/{temporary_name(name)}"
        self._put(tmp, data)
        for _ in range(3):
            code, body, _ = self._call("PUT", self._url(tmp, "RENAME", destination=final))
            if code == 200 and json.loads(body or b"{}").get("boolean"):
                return
            if self._holds(final, data):  # another process wrote the same bytes (the step's marker)
                self._call("DELETE", self._url(tmp, "DELETE"))
                return
            self._call("DELETE", self._url(final, "DELETE"))  # HDFS refuses to rename onto an existing file
        self._call("DELETE", self._url(tmp, "DELETE"))
        raise StoreError(f"WebHDFS RENAME {tmp} -> {final} failed: HTTP {code} {body[:200]!r}")

    def _holds(self, path: str, data: bytes) -> bool:
        """Whether `path` exists with exactly `data` (its length is checked before its bytes)."""
        code, body, _ = self._call("GET", self._url(path, "GETFILESTATUS"))
        if code != 200 or json.loads(body).get("FileStatus", {}).get("length") != len(data):
            return False
        code, body, _ = self._call("GET", self._url(path, "OPEN"))
        return code == 200 and body == data

    def read(self, name: str) -> bytes:
        code, body, _ = self._call("GET", self._url(f"{self.path}/{name}", "OPEN"))
        if code != 200:
            raise StoreError(f"WebHDFS OPEN {self.path}/{name}: HTTP {code}")
        return body

    def names(self) -> list[str]:
        code, body, _ = self._call("GET", self._url(self.path, "LISTSTATUS"))
        if code == 404:
            return []
        if code != 200:
            raise StoreError(f"WebHDFS LISTSTATUS {self.path}: HTTP {code} {body[:200]!r}")
        statuses = json.loads(body).get("FileStatuses", {}).get("FileStatus", [])
        return [s["pathSuffix"] for s in statuses if not s["pathSuffix"].startswith(".")]


def open_store(workspace: str, webhdfs_url: str | None = None, user: str | None = None) -> Store:
    """The checkpoint store of `workspace`: `<workspace>/checkpoint` locally or in HDFS."""
    if workspace.startswith("hdfs://"):
        parts = urllib.parse.urlsplit(workspace)
        base = webhdfs_url or f"http://{parts.hostname}:9870"
        return WebHdfsStore(base, parts.path.rstrip("/") + "/checkpoint", user or "singa")
    if "://" in workspace:
        raise SingaConfigError(f"workspace {workspace}: only local paths and hdfs:// are supported")
    return LocalStore(Path(workspace) / "checkpoint")


# ---- file contents


def encode_checkpoint(step: int, proc: int, slices: tuple[SaveSlice, ...], signature: list) -> bytes:
    arrays: dict[str, np.ndarray] = {}
    entries = []
    for i, s in enumerate(slices):
        arrays[f"s{i}_values"] = np.asarray(s.values, dtype=np.float32)
        for name, arr in s.state.items():
            arrays[f"s{i}_state_{name}"] = np.asarray(arr, dtype=np.float32)
        entries.append({"server": s.server, "lo": s.lo, "hi": s.hi, "state": sorted(s.state)})
    meta = {"format": 1, "step": step, "proc": proc, "signature": signature, "slices": entries}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


@dataclass(frozen=True)
class Slice:
    lo: int
    hi: int
    values: np.ndarray
    state: dict


def decode_checkpoint(data: bytes) -> tuple[dict, list[Slice]]:
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        meta = json.loads(bytes(z["meta"]).decode())
        slices = [Slice(e["lo"], e["hi"], z[f"s{i}_values"].copy(),
                        {n: z[f"s{i}_state_{n}"].copy() for n in e["state"]}) for i, e in enumerate(meta["slices"])]
    return meta, slices


def complete_steps(store: Store) -> set[int]:
    """Steps whose marker exists."""
    return {int(m.group(1)) for m in map(MARKER_RE.match, store.names()) if m}


def resumable_steps(store: Store, proc: int, writes_slices: bool) -> tuple[int, ...]:
    """Complete steps this process can resume from (with its own slice file, when it hosts group-0 servers)."""
    names = store.names()
    done = {int(m.group(1)) for m in map(MARKER_RE.match, names) if m}
    if writes_slices:
        own = {int(m.group(1)) for m in map(CKPT_RE.match, names) if m and int(m.group(2)) == proc}
        done &= own
    return tuple(sorted(done))


def load_slice(store: Store, step: int, proc: int, lo: int, hi: int, signature: list) -> Slice:
    """The slice [lo, hi) of step `step`: from this process's own file, else any file of the step."""
    names = [n for n in store.names() if (m := CKPT_RE.match(n)) and int(m.group(1)) == step]
    names.sort(key=lambda n: (n != checkpoint_name(step, proc), n))
    for name in names:
        meta, slices = decode_checkpoint(store.read(name))
        if meta.get("signature") != signature:
            raise SingaConfigError(f"checkpoint {store.describe()}/{name} was written for a different model "
                                   "(parameter names or shapes differ); remove it or use another workspace")
        for s in slices:
            if (s.lo, s.hi) == (lo, hi):
                return s
    raise SingaConfigError(f"checkpoint step {step} in {store.describe()} has no slice [{lo}, {hi}) "
                           "(was it written with another number of servers per group?)")
