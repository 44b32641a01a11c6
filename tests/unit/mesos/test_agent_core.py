"""The agent core without a master: at-least-once status updates, ACKs, persistence across restarts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from scylla_singa.common.waiting import wait_until_async
from scylla_singa.mesos.agent.agent_core import AgentCore, AgentInfo
from scylla_singa.mesos.agent.simulated_runner import SimulatedRunner
from scylla_singa.mesos.agent.task_events import TaskContainerUp, TaskExited, TaskStarting, TaskStopped
from scylla_singa.mesos.agent.task_runner import AgentTask, Emit, TaskRunner
from scylla_singa.mesos.api.resources import Resources


class StepRunner(TaskRunner):
    """Emits starting and running, then waits to be told to exit; survives 'restarts' as running."""

    needs_sandbox = False

    def __init__(self) -> None:
        self.emits: dict[str, Emit] = {}

    async def launch(self, task: AgentTask, emit: Emit) -> None:
        self.emits[task.task_id] = emit
        emit(TaskStarting())
        emit(TaskContainerUp())

    async def kill(self, task: AgentTask, grace_s: float, emit: Emit) -> None:
        emit(TaskStopped())

    async def recover(self, task: AgentTask, emit: Emit) -> None:
        self.emits[task.task_id] = emit


def _run(coro):
    return asyncio.run(coro)


async def until(predicate, what: str, timeout_s: float = 5.0):
    """Let the loop run until `predicate()` is truthy (its value), or fail naming `what`."""
    return await wait_until_async(predicate, timeout_s, what, interval_s=0.002)


def _core(runner: TaskRunner, work_dir: Path | None = None) -> tuple[AgentCore, list[dict]]:
    sent: list[dict] = []
    core = AgentCore(AgentInfo("h", Resources.parse("cpus:1;mem:64")), runner, work_dir=work_dir,
                     retry_interval=1.0)
    core.send = sent.append
    return core, sent


def _run_task(task_id: str = "t1") -> dict:
    return {"type": "RUN_TASK", "agent_id": "a1", "framework_id": "f1", "framework": {"name": "x"},
            "task": {"task_id": {"value": task_id}, "name": task_id, "command": {"value": "exit 0"}}}


def test_updates_are_sent_one_at_a_time_and_resent_until_acked() -> None:
    async def go() -> None:
        runner = StepRunner()
        core, sent = _core(runner)
        core.on_registered("a1")
        core.on_message(_run_task())
        await until(lambda: "t1" in runner.emits and sent, "the task to start and run")
        assert [m["status"]["state"] for m in sent] == ["TASK_STARTING"]  # RUNNING waits for the ACK
        first = sent[0]["status"]
        assert first["agent_id"] == {"value": "a1"} and first["uuid"]
        core.retry(now=first["timestamp"] + 10 ** 9)
        assert [m["status"]["uuid"] for m in sent] == [first["uuid"]] * 2
        core.on_message({"type": "ACK", "framework_id": "f1", "task_id": "t1", "uuid": "stale"})
        assert len(sent) == 2
        core.on_message({"type": "ACK", "framework_id": "f1", "task_id": "t1", "uuid": first["uuid"]})
        assert sent[-1]["status"]["state"] == "TASK_RUNNING"
        await core.shutdown()
    _run(go())


def test_offline_updates_wait_for_registration() -> None:
    async def go() -> None:
        core, sent = _core(SimulatedRunner())
        core.agent_id = "a1"
        core.on_message(_run_task())
        await until(lambda: [t for t in core.tasks.values() if t.state == "TASK_FINISHED"], "the task to end")
        assert sent == []
        core.on_registered("a1")
        assert [m["status"]["state"] for m in sent] == ["TASK_STARTING"]
        await core.shutdown()
    _run(go())


def test_terminal_task_is_completed_after_its_last_ack() -> None:
    async def go() -> None:
        core, sent = _core(SimulatedRunner())
        core.on_registered("a1")
        core.on_message(_run_task())
        for i in range(3):
            await until(lambda: len(sent) > i, f"update {i + 1}")
            last = sent[-1]["status"]
            core.on_message({"type": "ACK", "framework_id": "f1", "task_id": "t1", "uuid": last["uuid"]})
        assert [m["status"]["state"] for m in sent] == ["TASK_STARTING", "TASK_RUNNING", "TASK_FINISHED"]
        assert not core.tasks and [t.task_id for t in core.completed] == ["t1"]
        await core.shutdown()
    _run(go())


def test_pending_updates_and_tasks_survive_a_restart(tmp_path) -> None:
    async def first() -> str:
        runner = StepRunner()
        core, sent = _core(runner, tmp_path)
        core.on_registered("a1")
        core.on_message(_run_task())
        await until(lambda: "t1" in runner.emits and sent, "the task to start and run")
        await core.shutdown(kill=False)
        return sent[0]["status"]["uuid"]

    async def second(uuid: str) -> None:
        runner = StepRunner()
        core, sent = _core(runner, tmp_path)
        await core.recover()
        assert core.agent_id == "a1" and list(core.tasks) == [("f1", "t1")]
        reg = core.registration()["agent"]
        assert reg["agent_id"] == "a1" and reg["tasks"][0]["state"] == "TASK_RUNNING"
        core.on_registered("a1")
        assert sent[0]["status"]["uuid"] == uuid  # the unacknowledged STARTING again, same uuid
        core.on_message({"type": "ACK", "framework_id": "f1", "task_id": "t1", "uuid": uuid})
        assert sent[-1]["status"]["state"] == "TASK_RUNNING"
        runner.emits["t1"](TaskExited(0))
        await core.shutdown(kill=False)
    _run(second(_run(first())))


def test_a_refused_agent_forgets_its_id_tasks_and_reservations_across_a_restart(tmp_path) -> None:
    """Removed by the master, the agent kills its tasks and registers anew: a restart after that must not
    bring back the old id, its tasks (they were killed) nor what the master had reserved for the old id."""
    async def refused() -> None:
        runner = StepRunner()
        core, sent = _core(runner, tmp_path)
        core.on_registered("a1")
        core.on_message(_run_task())
        core.on_message({"type": "CHECKPOINT_RESOURCES", "agent_id": "a1", "resources": [
            {"name": "cpus", "type": "SCALAR", "scalar": {"value": 1},
             "reservations": [{"type": "DYNAMIC", "role": "ml"}]},
            {"name": "disk", "type": "SCALAR", "scalar": {"value": 8}, "reservations": [
                {"type": "DYNAMIC", "role": "ml"}], "disk": {"persistence": {"id": "v"},
                                                             "volume": {"mode": "RW", "container_path": "v"}}}]})
        volume = tmp_path / "volumes" / "roles" / "ml" / "v"
        assert volume.is_dir()
        await until(lambda: "t1" in runner.emits and sent, "the task to start")
        core.on_refused("Agent was removed by the master")
        assert volume.is_dir()   # volume data goes only with DESTROY
        await core.shutdown(kill=False)

    async def restarted() -> None:
        core, _ = _core(StepRunner(), tmp_path)
        await core.recover()
        assert (core.agent_id, core.tasks, core.checkpointed) == (None, {}, [])
        assert "agent_id" not in core.registration()["agent"]
        await core.shutdown(kill=False)
    _run(refused())
    _run(restarted())


def test_kill_of_framework_tasks_on_shutdown_framework() -> None:
    async def go() -> None:
        runner = StepRunner()
        core, sent = _core(runner)
        core.on_registered("a1")
        core.on_message(_run_task("t1"))
        core.on_message(_run_task("t2"))
        await until(lambda: len(runner.emits) == 2, "both tasks to run")
        core.on_message({"type": "SHUTDOWN_FRAMEWORK", "framework_id": "f1", "agent_id": "a1"})
        await until(lambda: {t.state for t in core.tasks.values()} == {"TASK_KILLED"}, "both tasks to be killed")
        await core.shutdown()
    _run(go())


def test_gc_removes_old_sandboxes(tmp_path) -> None:
    core, _ = _core(SimulatedRunner(), tmp_path)
    old = AgentTask("f", {}, {"task_id": {"value": "t"}}, None, "c", sandbox=tmp_path / "sb", finished_at=100.0)
    old.sandbox.mkdir()
    core.completed.append(old)
    assert core.gc(delay_s=50, now=120) == 0 and core.gc(delay_s=50, now=200) == 1
    assert not old.sandbox.exists()
