"""What the user is told about the framework's link to the master: lost, and back after how long.

pymesos calls `disconnected` for the lost stream and again for every
connection attempt that fails while it looks for a master, and then
`reregistered` once subscribed again. The user wants one line for each
event they care about: the master lost (and what the framework does about
it), and the subscription back (where, after how long). Pure: the shell
feeds it the callbacks with the time and prints what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SubscriptionWatch:
    """`follows_leader`: the master is a zk:// URL, so the driver follows whichever master leads."""

    follows_leader: bool
    ever_subscribed: bool = False
    lost_at: float | None = None

    def subscribed(self, master: str | None, now: float) -> str | None:
        """The driver (re-)subscribed to `master`; the line to print, if the user was told it was lost."""
        self.ever_subscribed = True
        if self.lost_at is None:
            return None
        took, self.lost_at = now - self.lost_at, None
        return f"re-subscribed to {master or 'the master'} in {took:.1f} s"

    def lost(self, master: str | None, now: float) -> str | None:
        """The driver's stream to `master` closed; the line to print the first time after a subscription."""
        if not self.ever_subscribed or self.lost_at is not None:
            return None
        self.lost_at = now
        who = f"master {master}" if master else "the master"
        then = "following the new leader ..." if self.follows_leader else "reconnecting ..."
        return f"{who} lost; {then}"
