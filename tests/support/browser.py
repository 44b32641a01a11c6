"""Opening a page in the test browser when the machine's network changes under it.

Why: Chromium aborts a navigation with net::ERR_NETWORK_CHANGED when an
interface or address appears or goes (its network change notifier), and the
Docker tests create and remove container interfaces and networks all the
time (CI saw one such abort in a UI test while a job's containers started).
The navigation is tried again then, within a deadline; any other error fails
at once.
"""

from __future__ import annotations

import time
from typing import Any

from scylla_singa.common.waiting import Deadline

NETWORK_CHANGED = "net::ERR_NETWORK_CHANGED"


def goto(page: Any, url: str, timeout_s: float = 30.0) -> Any:
    """`page.goto(url)`, again while Chromium reports the network changed (until `timeout_s`)."""
    from playwright.sync_api import Error   # noqa: PLC0415 (playwright is only needed by browser tests)

    deadline = Deadline(timeout_s)
    while True:
        try:
            return page.goto(url)
        except Error as exc:
            if NETWORK_CHANGED not in str(exc) or deadline.passed():
                raise
            time.sleep(0.2)   # a pause between tries, while the interfaces settle
