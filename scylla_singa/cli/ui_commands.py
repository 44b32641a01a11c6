"""`scylla-singa ui`: where the web pages of this machine's running scylla-singa are (ui.running_views)."""

from __future__ import annotations

import sys

import click

from scylla_singa.common.home import home_refusal, scylla_home
from scylla_singa.framework.api_auth import LOGIN_PARAM
from scylla_singa.framework.control_token import ControlTokenError, read_control_token
from scylla_singa.framework.store import JobStore, JobStoreError
from scylla_singa.ui.running_views import running_views


@click.command()
def ui() -> None:
    """Print the addresses of the job view and the Mesos master's web UI.

    The job view (jobs, processes on hosts, loss and accuracy curves, why a
    job waits) is served by the running `scylla-singa run`/`resume`; the
    master's page (agents, offers, DRF shares, tasks and their logs) by the
    master leading now (asked of ZooKeeper or of the masters). Both also
    serve Prometheus text at /metrics.

    The job view needs the framework's control token: the address printed
    carries it once (`?token=`); the page then keeps it in a cookie and
    drops it from the address. It is printed only to a user who can read
    the token file (the one who runs the framework).
    """
    try:
        home = scylla_home()
        path = home / "framework.sqlite"
        views = running_views(JobStore(path)) if path.exists() else []
    except JobStoreError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(home_refusal(exc)) from None
    if not views:
        click.echo(f"no running scylla-singa on this machine (SCYLLA_HOME={home}); "
                   "`scylla-singa run` prints its job view address when it starts", err=True)
        sys.exit(1)
    try:
        sign_in, note = f"?{LOGIN_PARAM}={read_control_token(home)}", ""
    except ControlTokenError as exc:
        sign_in, note = "", f"  (it needs the control token: {exc})"
    for view in views:
        api, master = view.job_view, view.master
        click.echo(f"framework {view.framework_id}")
        click.echo(f"  job view    {api}/{sign_in}{note}")
        if master:
            click.echo(f"  master UI   http://{master}/" + (f"  ({view.master_note})" if view.master_note else ""))
        click.echo(f"  metrics     {api}/metrics (Bearer control token)" +
                   (f"  http://{master}/metrics" if master else ""))
