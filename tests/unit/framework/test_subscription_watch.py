"""The lines a user reads about the framework's link to the master, from pymesos's callbacks."""

from __future__ import annotations

import pytest

from scylla_singa.framework.subscription_watch import SubscriptionWatch

A, B = "172.31.240.11:5050", "172.31.240.12:5050"


@pytest.mark.parametrize("follows_leader, calls, lines", [
    pytest.param(True, [("subscribed", A, 0.0), ("lost", A, 10.0), ("lost", A, 12.0), ("lost", A, 19.0),
                        ("subscribed", B, 19.8)],
                 ["master 172.31.240.11:5050 lost; following the new leader ...",
                  "re-subscribed to 172.31.240.12:5050 in 9.8 s"], id="zk-failover-one-line-each"),
    pytest.param(False, [("subscribed", A, 0.0), ("lost", A, 5.0), ("subscribed", A, 7.25)],
                 ["master 172.31.240.11:5050 lost; reconnecting ...", "re-subscribed to 172.31.240.11:5050 in 2.2 s"],
                 id="one-master-restarted"),
    pytest.param(False, [("lost", A, 1.0), ("lost", A, 3.0), ("subscribed", A, 4.0)], [],
                 id="first-connection-attempts-are-not-a-loss"),
    pytest.param(True, [("subscribed", A, 0.0), ("subscribed", A, 1.0)], [], id="resubscribing-without-a-loss"),
    pytest.param(True, [("subscribed", A, 0.0), ("lost", A, 1.0), ("subscribed", B, 2.0), ("lost", B, 3.0),
                        ("subscribed", A, 5.0)],
                 ["master 172.31.240.11:5050 lost; following the new leader ...",
                  "re-subscribed to 172.31.240.12:5050 in 1.0 s",
                  "master 172.31.240.12:5050 lost; following the new leader ...",
                  "re-subscribed to 172.31.240.11:5050 in 2.0 s"], id="two-failovers"),
    pytest.param(False, [("subscribed", None, 0.0), ("lost", None, 1.0)], ["the master lost; reconnecting ..."],
                 id="no-address-known"),
])
def test_one_line_per_event_a_user_cares_about(follows_leader, calls, lines) -> None:
    watch = SubscriptionWatch(follows_leader)
    said = [line for what, master, now in calls if (line := getattr(watch, what)(master, now))]
    assert said == lines
