"""Where the web pages of this machine's running scylla-singa are (for `scylla-singa ui`).

Reads the framework store ($SCYLLA_HOME/framework.sqlite): every framework
process records its job view address (`api:<framework id>`) and its master
(`master:<framework id>`). Lists the ones that answer, newest first.
"""

from __future__ import annotations

import requests

from scylla_singa.framework.store import JobStore


def _answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/health", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def running_views(store: JobStore) -> list[tuple[str, str, str | None]]:
    """(framework id, job view URL, master address) of each framework whose job view answers, newest first."""
    seen: list[str] = []
    for _job, _state, fid, _at in reversed(list(store.jobs())):
        if fid and fid not in seen:
            seen.append(fid)
    out = []
    for fid in seen:
        api = store.get_meta(f"api:{fid}")
        if api and _answers(api):
            out.append((fid, api, store.get_meta(f"master:{fid}")))
    return out
