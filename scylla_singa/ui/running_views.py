"""Where the web pages of this machine's running scylla-singa are (for `scylla-singa ui`).

Reads the framework store ($SCYLLA_HOME/framework.sqlite): every framework
process records its job view address (`api:<framework id>`), the master it
was given (`--master`, maybe a zk:// URL) and the master it last subscribed
to. Lists the ones that answer, newest first.

The master named is the one leading now, not the one the framework
subscribed to first (which may have died since): found in ZooKeeper when
the framework was given a zk:// URL, else by asking a known master's
/master/redirect (a standby answers with the leader, as Mesos's do).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

import requests

from scylla_singa.framework.store import JobStore
from scylla_singa.mesos.api.leader_znodes import resolve_zk_leader

LOOKUP_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class RunningView:
    framework_id: str
    job_view: str            # URL of the job view
    master: str | None       # "host:port" of the master to show
    master_note: str = ""    # how `master` was found, when it is not simply the leader


def _answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/health", timeout=2).status_code == 200
    except requests.RequestException:
        return False


def _redirect_target(master: str) -> str | None:
    """The leader `master` points to with /master/redirect (itself when it leads), or None if it does not answer."""
    try:
        resp = requests.get(f"http://{master}/master/redirect", timeout=LOOKUP_TIMEOUT_S, allow_redirects=False)
    except requests.RequestException:
        return None
    location = resp.headers.get("Location", "") if resp.status_code in (301, 302, 307) else ""
    return urlparse(location if "//" in location else f"//{location}").netloc or None


def current_leader(master_url: str | None, last_known: str | None) -> tuple[str | None, str]:
    """(the leading master's "host:port", a note when that is not sure) from what the framework recorded."""
    if master_url and master_url.startswith(("zk://", "zoo://")):
        try:
            return resolve_zk_leader(master_url, timeout=LOOKUP_TIMEOUT_S), ""
        except Exception:  # noqa: BLE001 - ZooKeeper unreachable or empty: try the masters themselves
            pass
    asked = [m for m in (last_known, master_url) if m and "://" not in m]
    for master in dict.fromkeys(asked):
        leader = _redirect_target(master)
        if leader:
            return leader, ""
    if last_known:
        return last_known, "last known; not answering"
    return None, ""


def running_views(store: JobStore) -> list[RunningView]:
    """The frameworks whose job view answers, newest first, each with the master leading now."""
    seen: list[str] = []
    for _job, _state, fid, _at in reversed(list(store.jobs())):
        if fid and fid not in seen:
            seen.append(fid)
    out = []
    for fid in seen:
        api = store.get_meta(f"api:{fid}")
        if api and _answers(api):
            master, note = current_leader(store.get_meta(JobStore.master_url_key(fid)),
                                          store.get_meta(JobStore.leader_key(fid)))
            out.append(RunningView(fid, api, master, note))
    return out
