"""Where a framework (and the job commands) find the credential they authenticate to Mesos with.

Secrets come from files or the environment, never from a command-line
argument (which any local user reads in `ps`). In order:

1. `--credential FILE` (run, resume, status, logs, plan);
2. `SCYLLA_CREDENTIAL=FILE`, or `SCYLLA_PRINCIPAL` with `SCYLLA_SECRET`;
3. the local cluster's framework credential (`scylla-singa cluster up` writes one);
4. `$SCYLLA_HOME/master/framework.credential`, which `scylla-singa master`
   writes on first start when it runs on this machine with its default work dir.

None found is not an error here: an insecure master needs none, and a secure
one answers 401, which the session turns into advice naming these places.
An embedded master hands its framework the secret directly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from scylla_singa.common.home import scylla_home
from scylla_singa.mesos.api.credentials import FRAMEWORK_CREDENTIAL_FILE, Credential, CredentialsError, load_credential

ENV_CREDENTIAL = "SCYLLA_CREDENTIAL"
ENV_PRINCIPAL = "SCYLLA_PRINCIPAL"
ENV_SECRET = "SCYLLA_SECRET"

WHERE_CREDENTIALS_COME_FROM = (
    f"give --credential FILE (or set {ENV_CREDENTIAL}=FILE, or {ENV_PRINCIPAL} and {ENV_SECRET}); a master "
    f"writes {FRAMEWORK_CREDENTIAL_FILE} in its work dir on first start")


def default_credential_file() -> Path:
    return scylla_home() / "master" / FRAMEWORK_CREDENTIAL_FILE


def find_credential(explicit: Path | None, cluster_file: Path | None = None,
                    environ: Mapping[str, str] = os.environ) -> Credential | None:
    """The credential to use (see the module docstring); raises CredentialsError for a bad file or variable."""
    if explicit is not None:
        return load_credential(explicit)
    if environ.get(ENV_CREDENTIAL):
        return load_credential(Path(environ[ENV_CREDENTIAL]))
    principal, secret = environ.get(ENV_PRINCIPAL), environ.get(ENV_SECRET)
    if principal or secret:
        if not (principal and secret):
            raise CredentialsError(f"{ENV_PRINCIPAL} and {ENV_SECRET} go together: set both, or neither")
        return Credential(principal, secret)
    for path in (cluster_file, default_credential_file()):
        if path is not None and path.is_file() and os.access(path, os.R_OK):
            return load_credential(path)
    return None
