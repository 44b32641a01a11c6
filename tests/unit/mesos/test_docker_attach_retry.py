"""A container whose start timed out attaching to a swarm overlay is made again, not reported failed.

On a fresh swarm under load, a worker's engine sometimes gets no answer in
time from the managers when it asks for a container's attachment to an
attachable overlay, and `start` fails with "attaching to network failed ...
context deadline exceeded" (seen twice in twenty jobs right after `cluster
up`, load average 3.5). The agent removes that container and creates it
again, a few times with a pause; any other error, or the last attempt's,
is the launch's failure as before. These use a fake engine: the real one
cannot be made to time out on purpose (the cluster suites run the real path).
"""

from __future__ import annotations

from typing import Any

import docker.errors
import pytest

from scylla_singa.mesos.agent import docker_runner
from scylla_singa.mesos.agent.docker_runner import ATTACH_ATTEMPTS, start_created

TIMED_OUT = ("attaching to network failed, make sure your network options are correct and check manager logs: "
             "context deadline exceeded")


class _Container:
    def __init__(self, engine: _Engine, number: int) -> None:
        self.engine, self.id = engine, f"c{number}"

    def start(self) -> None:
        self.engine.starts.append(self.id)
        if self.engine.failures:
            raise docker.errors.APIError("500 Server Error", explanation=self.engine.failures.pop(0))


class _Engine:
    """create/start/remove as docker's client does them, failing the first starts with `failures`."""

    def __init__(self, failures: list[str]) -> None:
        self.failures = list(failures)
        self.created: list[dict[str, Any]] = []
        self.starts: list[str] = []
        self.removed: list[str] = []
        self.containers = self
        self.api = self

    def create(self, **kwargs: Any) -> _Container:
        self.created.append(kwargs)
        return _Container(self, len(self.created))

    def remove_container(self, container_id: str, force: bool = False) -> None:
        assert force
        self.removed.append(container_id)


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker_runner, "ATTACH_PAUSE_S", 0.0)


def test_an_attachment_that_timed_out_is_made_again_in_a_new_container() -> None:
    engine = _Engine([TIMED_OUT, TIMED_OUT])
    container = start_created(engine, {"name": "t1", "image": "x"})  # type: ignore[arg-type]
    assert container.id == "c3" and engine.starts == ["c1", "c2", "c3"]
    assert engine.removed == ["c1", "c2"]                               # the failed ones do not linger
    assert engine.created == [{"name": "t1", "image": "x"}] * 3         # the same container each time


def test_the_last_attempt_fails_the_launch() -> None:
    engine = _Engine([TIMED_OUT] * ATTACH_ATTEMPTS)
    with pytest.raises(docker.errors.APIError, match="context deadline exceeded"):
        start_created(engine, {"name": "t1"})  # type: ignore[arg-type]
    assert len(engine.starts) == ATTACH_ATTEMPTS and len(engine.removed) == ATTACH_ATTEMPTS - 1


@pytest.mark.parametrize("failure", [
    "driver failed programming external connectivity on endpoint t1: port is already allocated",
    "attaching to network failed: network job-a not found",       # not a timeout: no point in waiting
    "context deadline exceeded",                                   # a timeout of something else
])
def test_other_failures_are_the_launchs_at_once(failure: str) -> None:
    engine = _Engine([failure])
    with pytest.raises(docker.errors.APIError):
        start_created(engine, {"name": "t1"})  # type: ignore[arg-type]
    assert engine.starts == ["c1"] and engine.removed == []
