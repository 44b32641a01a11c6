"""tests/support/browser.goto: a navigation aborted because the network changed is tried again; others fail."""

from __future__ import annotations

import pytest
from playwright.sync_api import Error

from tests.support.browser import goto


class FlakyPage:
    def __init__(self, failures: list[str]) -> None:
        self.failures = failures
        self.tries = 0

    def goto(self, url: str) -> str:
        self.tries += 1
        if self.failures:
            raise Error(self.failures.pop(0))
        return f"loaded {url}"


def test_a_navigation_aborted_by_a_network_change_is_tried_again() -> None:
    page = FlakyPage(["Page.goto: net::ERR_NETWORK_CHANGED at http://x/"] * 2)
    assert goto(page, "http://x/") == "loaded http://x/" and page.tries == 3


def test_any_other_navigation_error_fails_at_once() -> None:
    page = FlakyPage(["Page.goto: net::ERR_CONNECTION_REFUSED at http://x/"])
    with pytest.raises(Error, match="ERR_CONNECTION_REFUSED"):
        goto(page, "http://x/")
    assert page.tries == 1


def test_a_network_that_keeps_changing_fails_after_the_deadline() -> None:
    page = FlakyPage(["net::ERR_NETWORK_CHANGED"] * 1000)
    with pytest.raises(Error, match="ERR_NETWORK_CHANGED"):
        goto(page, "http://x/", timeout_s=0.5)
    assert 2 <= page.tries < 10
