"""Mesos JSON helpers, credentials files and Basic authentication."""

from __future__ import annotations

import base64

import pytest

from scylla_singa.mesos.api.fields import split_hostport
from scylla_singa.mesos.api.credentials import CredentialsError, authenticate, load_credentials


def test_split_hostport() -> None:
    assert split_hostport("h:1", 5050) == ("h", 1) and split_hostport("h", 5050) == ("h", 5050)
    assert split_hostport("http://h:2/x", 1) == ("h", 2)


@pytest.mark.parametrize("content", ['{"credentials": [{"principal": "p", "secret": "s"}]}', "# c\np s\n"],
                         ids=["json", "text"])
def test_credentials_files(tmp_path, content) -> None:
    path = tmp_path / "creds"
    path.write_text(content)
    creds = load_credentials(path)
    assert creds == {"p": "s"}
    good = "Basic " + base64.b64encode(b"p:s").decode()
    bad = "Basic " + base64.b64encode(b"p:x").decode()
    assert authenticate(good, creds) == "p"
    assert authenticate(bad, creds) is None and authenticate(None, creds) is None
    assert authenticate("Basic !!!", creds) is None


def test_bad_credentials_file(tmp_path) -> None:
    path = tmp_path / "creds"
    path.write_text("just-one-field\n")
    with pytest.raises(CredentialsError, match=":1:"):
        load_credentials(path)
    with pytest.raises(CredentialsError, match="cannot read"):
        load_credentials(tmp_path / "missing")
