"""Durations, credentials files and Basic authentication."""

from __future__ import annotations

import base64

import pytest

from scylla_singa.mesos.credentials import CredentialsError, authenticate, load_credentials
from scylla_singa.mesos.util import parse_duration, split_hostport


@pytest.mark.parametrize("text,seconds", [("1s", 1), ("500ms", 0.5), ("2m", 120), ("1.5h", 5400), ("3", 3),
                                          ("2d", 172800), ("10secs", 10), (5, 5)],
                         ids=["s", "ms", "m", "h", "bare", "d", "secs", "number"])
def test_parse_duration(text, seconds) -> None:
    assert parse_duration(text) == seconds


def test_parse_duration_none_and_errors() -> None:
    assert parse_duration("none", allow_none=True) is None
    with pytest.raises(ValueError, match="bad duration"):
        parse_duration("1 fortnight")
    with pytest.raises(ValueError):
        parse_duration("none")


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
