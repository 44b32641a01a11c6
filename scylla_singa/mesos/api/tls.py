"""TLS for the master's and agents' HTTP servers and the agent's link to its master.

With `--tls-cert/--tls-key` a master or agent serves HTTPS (and the agent
link, wss) on its one port, so secrets in Basic headers never cross the
network in clear. Clients verify the server against `--tls-ca` (a CA or the
self-signed certificate itself), else the system's trust store.

pymesos 0.3.15, the driver the framework uses, opens plain TCP sockets only
(its Connection has no TLS): a framework reaches a TLS master through a local
TLS-terminating proxy (stunnel, socat OPENSSL:), as README "Security" shows.
"""

from __future__ import annotations

import ssl
from pathlib import Path

HTTPS = "https://"


class TlsError(ValueError):
    """A certificate, key or CA that cannot be used; the message names the file and the fix."""


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    """What an HTTPS server presents: `cert` (PEM, with its chain) and its private `key`."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except FileNotFoundError as exc:
        raise TlsError(f"cannot read {exc.filename}: no such file (--tls-cert/--tls-key)") from None
    except ssl.SSLError as exc:
        raise TlsError(f"{cert} / {key}: not a PEM certificate and its matching private key ({exc.reason}); "
                       "make them with e.g. `openssl req -x509 -newkey rsa:2048 -nodes ...`") from None
    return context


def client_context(ca: Path | None) -> ssl.SSLContext:
    """What a client verifies servers with: the CA file `ca` (or a self-signed server certificate), else the
    system's trust store. Host names are checked."""
    try:
        return ssl.create_default_context(cafile=str(ca) if ca else None)
    except FileNotFoundError:
        raise TlsError(f"cannot read the CA file {ca} (--tls-ca)") from None
    except ssl.SSLError as exc:
        raise TlsError(f"{ca}: not a PEM CA certificate ({exc.reason})") from None


def split_scheme(address: str) -> tuple[bool, str]:
    """(TLS?, host:port or zk://...) of a master address that may start with https://."""
    if address.startswith(HTTPS):
        return True, address[len(HTTPS):].rstrip("/")
    return False, address.removeprefix("http://").rstrip("/")
