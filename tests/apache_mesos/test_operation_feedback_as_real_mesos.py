"""Operation feedback (offer operations with an `id`): the same scheduler conversation with a live Apache
Mesos 1.12 master and agent and with ours, compared step by step: UPDATE_OPERATION_STATUS for a finished
and an invalid RESERVE, TASK_ERROR for a LAUNCH with an id, RECONCILE_OPERATIONS (explicit and implicit),
ACKNOWLEDGE_OPERATION_STATUS, and the reservation offered back."""

from __future__ import annotations

import pprint

import pytest

from scylla_singa.mesos.api.codec import MediaType
from scylla_singa.mesos.embedded import EmbeddedMesos

from .operation_feedback import comparable, converse
from .real_mesos import MesosProcess


@pytest.mark.parametrize("media_type", [MediaType.JSON, MediaType.PROTOBUF])
def test_operation_feedback_is_the_same_conversation_as_with_mesos(
        real_master: MesosProcess, real_agent: MesosProcess, our_one_agent_cluster: EmbeddedMesos,
        media_type: MediaType) -> None:
    theirs = comparable(converse(real_master.address, media_type))
    ours = comparable(converse(our_one_agent_cluster.master_address, media_type))
    differing = [(step, t, o) for (step, t), (_, o) in zip(theirs, ours) if t != o]
    assert not differing and len(theirs) == len(ours), pprint.pformat(differing or (theirs, ours), width=120)
