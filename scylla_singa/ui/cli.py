"""`scylla-singa ui`: where the web pages of this machine's running scylla-singa are.

Reads the framework store ($SCYLLA_HOME/framework.sqlite): every framework
process records its job view address (`api:<framework id>`) and its master
(`master:<framework id>`). Prints the ones that answer, newest first.
"""

from __future__ import annotations

import sys

import click
import requests

from ..framework.store import JobStore
from ..home import scylla_home


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


@click.command()
def ui() -> None:
    """Print the addresses of the job view and the Mesos master's web UI.

    The job view (jobs, processes on hosts, loss and accuracy curves, why a
    job waits) is served by the running `scylla-singa run`/`resume`; the
    master's page (agents, offers, DRF shares, tasks and their logs) by the
    master. Both also serve Prometheus text at /metrics.
    """
    home = scylla_home()
    path = home / "framework.sqlite"
    views = running_views(JobStore(path)) if path.exists() else []
    if not views:
        click.echo(f"no running scylla-singa on this machine (SCYLLA_HOME={home}); "
                   "`scylla-singa run` prints its job view address when it starts", err=True)
        sys.exit(1)
    for fid, api, master in views:
        click.echo(f"framework {fid}")
        click.echo(f"  job view    {api}/")
        if master:
            click.echo(f"  master UI   http://{master}/")
        click.echo(f"  metrics     {api}/metrics" + (f"  http://{master}/metrics" if master else ""))
