"""Framework authentication: HTTP Basic against a credentials file (as Mesos's --credentials).

The file is Mesos's JSON (`{"credentials": [{"principal": P, "secret": S}]}`)
or text with one `principal secret` pair per line.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from pathlib import Path


class CredentialsError(ValueError):
    """The credentials file cannot be read; the message names the file and the problem."""


def load_credentials(path: Path) -> dict[str, str]:
    """principal -> secret from `path`."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise CredentialsError(f"cannot read credentials file {path}: {exc.strerror}") from None
    if text.lstrip().startswith("{"):
        try:
            return {c["principal"]: c["secret"] for c in json.loads(text)["credentials"]}
        except (ValueError, KeyError, TypeError):
            raise CredentialsError(f"{path}: expected {{\"credentials\": [{{\"principal\", \"secret\"}}]}}") from None
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            parts = line.split()
            if len(parts) != 2:
                raise CredentialsError(f"{path}:{n}: expected 'principal secret'")
            out[parts[0]] = parts[1]
    return out


def authenticate(header: str | None, credentials: dict[str, str]) -> str | None:
    """The principal a Basic `Authorization` header proves, or None."""
    if not header or not header.startswith("Basic "):
        return None
    try:
        principal, _, secret = base64.b64decode(header[6:].strip()).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    expected = credentials.get(principal)
    if expected is None or not hmac.compare_digest(expected.encode(), secret.encode()):
        return None
    return principal
