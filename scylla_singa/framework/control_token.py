"""The framework's control token: made by the first `run`, read by the commands that call its API.

It lives in $SCYLLA_HOME/control.token, mode 0600, so only the user who
runs the framework (root, as a rule) can read it: reading it is what it
means to be allowed to control the framework (api_auth.py). The file is
made once and kept, so a `resume`d framework and the commands and browser
sessions of before go on working.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

CONTROL_TOKEN_FILE = "control.token"


class ControlTokenError(Exception):
    """The token cannot be read: the message says where it is and how to get at it."""


def control_token_path(home: Path) -> Path:
    return home / CONTROL_TOKEN_FILE


def ensure_control_token(home: Path) -> str:
    """The control token, made (0600, random) when there is none yet."""
    path = control_token_path(home)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_control_token(home)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_urlsafe(32))
    return read_control_token(home)


def read_control_token(home: Path) -> str:
    """The control token as the framework wrote it. Raises ControlTokenError saying why it cannot be read."""
    path = control_token_path(home)
    try:
        token = path.read_text().strip()
    except FileNotFoundError:
        raise ControlTokenError(f"{path} does not exist: no `scylla-singa run` has used SCYLLA_HOME={home} yet "
                                "(set SCYLLA_HOME to the directory the framework runs with)") from None
    except PermissionError:
        raise ControlTokenError(f"cannot read {path} (permission denied): it is readable only by the user who runs "
                                "the framework; run this command as that user (e.g. with sudo)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ControlTokenError(f"cannot read {path}: {exc}") from None
    if not token:
        raise ControlTokenError(f"{path} is empty; remove it and restart the framework to make a new one")
    return token
