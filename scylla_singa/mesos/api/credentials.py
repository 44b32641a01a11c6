"""Credentials: who may talk to a master or an agent, and how a client proves it is one of them.

Two file forms, as Apache Mesos reads them:

- a *credentials* file (the master's `--credentials`, an agent's
  `--http-credentials`): JSON `{"credentials": [{"principal": P, "secret": S}]}`
  or text with one `principal secret` pair per line;
- a *credential* file (what one client holds: `run --credential`, an agent's
  `--credential`): JSON `{"principal": P, "secret": S}`, or a one-line
  `principal secret`, or a credentials file with exactly one entry.

A master started without `--credentials` (and without `--insecure`) makes
its own on first start (`ensure_master_credentials`): one principal for
frameworks and operators, one for agents, each also written as a credential
file an administrator copies to the machine that needs it. Files are 0600 and
created with O_EXCL, so a secret is never world-readable, not even briefly.
Secrets travel only in files, the environment and HTTP headers: never on a
command line (where `ps` shows them) and never in a log line.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

# What a master makes on first start, in its work dir.
CREDENTIALS_FILE = "credentials.json"
FRAMEWORK_CREDENTIAL_FILE = "framework.credential"
AGENT_CREDENTIAL_FILE = "agent.credential"
FRAMEWORK_PRINCIPAL = "scylla"
AGENT_PRINCIPAL = "scylla-agent"
REALM = "mesos"


class CredentialsError(ValueError):
    """A credentials or credential file cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class Credential:
    """One principal and its secret: what a client sends. repr() never shows the secret."""

    principal: str
    secret: str

    def __repr__(self) -> str:
        return f"Credential(principal={self.principal!r}, secret=<hidden>)"

    def basic_header(self) -> str:
        """The `Authorization` header value (HTTP Basic, as Mesos's HTTP APIs take it)."""
        token = base64.b64encode(f"{self.principal}:{self.secret}".encode()).decode()
        return f"Basic {token}"

    def headers(self) -> dict[str, str]:
        return {"Authorization": self.basic_header()}


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise CredentialsError(f"cannot read credentials file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CredentialsError(f"{path}: not UTF-8 text; expected JSON or 'principal secret' lines") from None


def parse_credentials(text: str, origin: str) -> dict[str, str]:
    """principal -> secret from a credentials file's text (`origin` names it in errors)."""
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
            entries = data["credentials"] if "credentials" in data else [data]
            out = {c["principal"]: c["secret"] for c in entries}
        except (ValueError, KeyError, TypeError):
            raise CredentialsError(f'{origin}: expected {{"credentials": [{{"principal": P, "secret": S}}]}} '
                                   f'or {{"principal": P, "secret": S}}') from None
    else:
        out = {}
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip() and not line.lstrip().startswith("#"):
                parts = line.split()
                if len(parts) != 2:
                    raise CredentialsError(f"{origin}:{n}: expected 'principal secret'")
                out[parts[0]] = parts[1]
    for principal, secret in out.items():
        if not isinstance(principal, str) or not isinstance(secret, str) or not principal or not secret \
                or ":" in principal:
            raise CredentialsError(f"{origin}: principal {principal!r}: principals and secrets are non-empty "
                                   "strings, and a principal has no ':'")
    if not out:
        raise CredentialsError(f"{origin}: no credentials in it")
    return out


def load_credentials(path: Path) -> dict[str, str]:
    """principal -> secret from the credentials file `path`."""
    return parse_credentials(_read(path), str(path))


def load_credential(path: Path) -> Credential:
    """The one credential in the file `path`."""
    found = load_credentials(path)
    if len(found) != 1:
        raise CredentialsError(f"{path}: holds {len(found)} credentials; a client's credential file holds "
                               f"exactly one (e.g. the master's {FRAMEWORK_CREDENTIAL_FILE})")
    (principal, secret), = found.items()
    return Credential(principal, secret)


def authenticate(header: str | None, credentials: dict[str, str]) -> str | None:
    """The principal a Basic `Authorization` header proves, or None."""
    if not header or not header.startswith("Basic "):
        return None
    try:
        principal, _, secret = base64.b64decode(header[6:].strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    expected = credentials.get(principal)
    if expected is None or not hmac.compare_digest(expected.encode(), secret.encode()):
        return None
    return principal


def write_private(path: Path, text: str) -> None:
    """Create `path` readable by its owner only (0600 from the first byte); refuses to overwrite."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def credential_json(cred: Credential) -> str:
    return json.dumps({"principal": cred.principal, "secret": cred.secret}) + "\n"


def new_credential(principal: str) -> Credential:
    return Credential(principal, secrets.token_urlsafe(32))


def ensure_master_credentials(work_dir: Path) -> tuple[dict[str, str], Path]:
    """The master's credentials, made in `work_dir` on first start; (principal -> secret, the file).

    Made once and kept: frameworks and agents given the credential files keep
    working across master restarts. The framework and agent credential files
    beside it are what an administrator copies to the machines that need them.
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    path = work_dir / CREDENTIALS_FILE
    if not path.exists():
        framework, agent = new_credential(FRAMEWORK_PRINCIPAL), new_credential(AGENT_PRINCIPAL)
        for name, cred in ((FRAMEWORK_CREDENTIAL_FILE, framework), (AGENT_CREDENTIAL_FILE, agent)):
            target = work_dir / name
            if target.exists():
                target.unlink()
            write_private(target, credential_json(cred))
        entries = [{"principal": c.principal, "secret": c.secret} for c in (framework, agent)]
        tmp = work_dir / (CREDENTIALS_FILE + ".new")
        if tmp.exists():
            tmp.unlink()
        write_private(tmp, json.dumps({"credentials": entries}, indent=1) + "\n")
        os.replace(tmp, path)
    return load_credentials(path), path
