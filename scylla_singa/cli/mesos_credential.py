"""The credential the job commands (run, resume, logs, plan) authenticate to Mesos with.

framework/credential_source.py knows the places; this adds the one only the
command line can know of, the local cluster's (`cluster up` records it).
"""

from __future__ import annotations

from pathlib import Path

import click

from scylla_singa.cluster.local import local_cluster
from scylla_singa.framework.credential_source import find_credential
from scylla_singa.mesos.api.credentials import Credential, CredentialsError


def mesos_credential() -> Credential | None:
    """--credential's places, then the local cluster's; a bad file is a clear error."""
    info = local_cluster()
    try:
        return find_credential(None, Path(info.credential_file) if info and info.credential_file else None)
    except CredentialsError as exc:
        raise click.ClickException(str(exc)) from None
