"""The runtime's transition tables: every (state, event) pair a worker, a server or a process has no row for
is refused with InvalidTransition and the machine's story."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scylla_singa.common.transition_table import UnknownInstruction
from scylla_singa.runtime.machine_events import (Begin, CheckpointWritten, Deliver, ProcReceived, ProcRunLocal,
                                                 ProcStarted, ProcTick)
from scylla_singa.runtime.messages import Msg
from scylla_singa.runtime.process import ENTITY_MESSAGE, PROCESS_TABLE, ProcessConfig, ProcessMachine
from scylla_singa.runtime.server import GROUP_SERVER_TABLE, MASTER_SERVER_TABLE, ServerMachine
from scylla_singa.runtime.spec import load_spec
from scylla_singa.runtime.worker import WORKER_TABLE, WorkerMachine
from tests.support.transition_tables import assert_refused_with_story, missing_pairs
from .rt_helpers import write_conf


@pytest.fixture(scope="module")
def hogwild(tmp_path_factory, digits_dir: Path):
    return load_spec(write_conf(tmp_path_factory.mktemp("hogwild"), "hogwild", digits_dir))


def entity_event(key: str, src: str, dst: str) -> Begin | Deliver:
    return Begin() if key == "BEGIN" else Deliver(Msg(key, src, dst, 0, np.zeros(2, np.float32)))


@pytest.mark.parametrize("state,key", missing_pairs(WORKER_TABLE))
def test_every_worker_pair_without_a_row_is_refused_with_the_story(hogwild, state, key) -> None:
    worker = WorkerMachine(hogwild, 0, 0, hogwild.build_model(), {}, 0, lambda: 0.0, "j", 0, 0.0)
    worker.state = state
    event = entity_event(key, "s0.0", "w0.0")
    err = assert_refused_with_story(lambda: worker.handle(event), worker, state, str(event))
    assert err.machine == "w0.0" and worker.state == state


@pytest.mark.parametrize("state,key", missing_pairs(MASTER_SERVER_TABLE))
def test_every_group_0_server_pair_without_a_row_is_refused_with_the_story(hogwild, state, key) -> None:
    server = ServerMachine(hogwild, 0, 0, 0, np.zeros(hogwild.layout.total, np.float32))
    server.state = state
    event = entity_event(key, "w0.0", "s0.0")
    assert_refused_with_story(lambda: server.handle(event), server, state, str(event))


@pytest.mark.parametrize("state,key", missing_pairs(GROUP_SERVER_TABLE))
def test_every_other_group_server_pair_without_a_row_is_refused_with_the_story(hogwild, state, key) -> None:
    server = ServerMachine(hogwild, 1, 0, 0)
    server.state = state
    event = entity_event(key, "w1.0", "s1.0")
    assert_refused_with_story(lambda: server.handle(event), server, state, str(event))


def test_only_group_0_takes_syncs_and_only_the_others_take_replies() -> None:
    assert ("serving", "SYNC") in MASTER_SERVER_TABLE.rows and ("serving", "SYNC") not in GROUP_SERVER_TABLE.rows
    assert ("serving", "SYNC_REPLY") in GROUP_SERVER_TABLE.rows
    assert ("serving", "SYNC_REPLY") not in MASTER_SERVER_TABLE.rows


def process_event(key):
    if key is ProcStarted or key is ProcTick or key is ProcRunLocal:
        return key(1.0)
    if key is CheckpointWritten:
        return CheckpointWritten(5, True)
    kind = "PARAM" if key == ENTITY_MESSAGE else key
    return ProcReceived(Msg(kind, "p1", "p0", 0, None, {}, 1), 1.0)


@pytest.mark.parametrize("state,key", missing_pairs(PROCESS_TABLE))
def test_every_process_pair_without_a_row_is_refused_with_the_story(state, key) -> None:
    m = ProcessMachine(ProcessConfig(proc=0, nprocs=2), {}, lambda start: ([], []))
    m.state = state
    event = process_event(key)
    shown = repr(event.msg) if isinstance(event, ProcReceived) else key
    err = assert_refused_with_story(lambda: m.handle(event), m, state, shown)
    assert err.machine == "process 0" and m.state == state


def test_a_process_tells_its_story_of_peers_and_states() -> None:
    m = ProcessMachine(ProcessConfig(proc=0, nprocs=2), {}, lambda start: ([], []))
    m.handle(ProcStarted(0.0))
    m.handle(ProcReceived(Msg("HEARTBEAT", "p1", "p0", 0, None, {}, 1), 0.1))
    m.handle(ProcTick(0.2))
    story = list(m.story)
    assert story[0] == "new <- ProcStarted -> waiting"
    assert story[1].startswith("waiting <- HEARTBEAT(p1->p0") and story[1].endswith("-> done")
    assert len(story) == 2  # ticks are not told


def test_an_entity_instruction_the_process_does_not_know_raises() -> None:
    class Stray:
        def __init__(self) -> None:
            self.addr = "w0.0"

        def handle(self, event):
            return ["not an instruction"]

    m = ProcessMachine(ProcessConfig(proc=0, nprocs=1), {"w0.0": 0}, lambda start: ([Stray()], []))
    with pytest.raises(UnknownInstruction, match="not an instruction"):
        m.handle(ProcStarted(0.0))
