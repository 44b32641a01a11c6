"""Calls from a member machine to the cluster's leading master (HTTP Basic), wherever it leads from.

A machine knows one or more masters' addresses; any of them may be a
standby, which answers 307 with the leader in `Location` (or 503 while
none leads). The redirect is followed here, not by requests: requests drops
the Authorization header on a redirect to another port, which the leader
would then refuse with 401.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import requests

from scylla_singa.mesos.api.credentials import Credential


class MasterUnreachable(RuntimeError):
    """No master answered as the leader; the message lists what each said."""


def call(masters: list[str], cred: Credential, method: str, path: str, timeout_s: float = 10,
         **kw: Any) -> requests.Response:
    """`method path` on the leading master among `masters` ("host:port"), as `cred`."""
    tried: list[str] = []
    for master in masters:
        target = master
        for _hop in range(2):   # the master asked, then the leader it names
            try:
                got = requests.request(method, f"http://{target}{path}", headers=cred.headers(), timeout=timeout_s,
                                       allow_redirects=False, **kw)
            except requests.RequestException as exc:
                tried.append(f"{target}: {exc.__class__.__name__}")
                break
            if got.status_code == 307 and got.headers.get("Location"):
                leader = urlsplit(got.headers["Location"]).netloc
                if leader and leader != target:
                    target = leader
                    continue
            if got.status_code in (307, 503):
                tried.append(f"{target}: {got.status_code} (no leader)")
                break
            return got
    raise MasterUnreachable(f"no master answers as the leader ({'; '.join(tried) or 'none given'})")
