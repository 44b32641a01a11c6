"""Browser fixtures: Debian's Chromium driven by Python's playwright (never a downloaded browser).

`tools/ensure_browser.sh` (run by `make test`) installs /usr/bin/chromium.
One headless Chromium per test package (closed when the package ends:
playwright's sync API keeps an event loop running while it is open, which
would break every later test that calls asyncio.run) with a fresh profile in a temp dir; one
page per test, closed afterwards, and any JavaScript error on it fails the
test. Chromium is started with background networking off: otherwise it keeps
trying to reach Google's services from this closed network.

Screenshots: screenshots.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}
TIMEOUT_MS = 20_000


@pytest.fixture(scope="package")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing; run tools/ensure_browser.sh (make test does)", pytrace=False)
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_ARGS, viewport=VIEWPORT)
    except BaseException:
        pw.stop()
        raise
    try:
        yield context
    finally:
        context.close()
        pw.stop()


@pytest.fixture
def page(browser) -> Iterator:
    """A fresh tab; JavaScript errors on it fail the test."""
    tab = browser.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    yield tab
    tab.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
