"""The runtime's error types; each maps to one exit code of the `singa` contract.

    SingaConfigError -> 2  the job cannot run as configured (unsupported layer,
                            bad flag, unreadable data or cluster file); the
                            message names the culprit
    PeerError        -> 3  a peer process was lost or never appeared; the
                            message names it
    anything else    -> 1  (among them common.transition_table.InvalidTransition:
                            a machine got an event it has no transition for)

A job.conf problem found by the job model (scylla_singa.jobconf.JobConfError)
is also exit 2.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_OTHER = 1
EXIT_CONFIG = 2
EXIT_PEER = 3


class SingaConfigError(Exception):
    """The job cannot run as configured. Exit code 2."""


class PeerError(Exception):
    """A peer process was lost or never appeared. Exit code 3."""

