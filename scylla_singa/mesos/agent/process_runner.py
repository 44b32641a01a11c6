"""Tasks without a ContainerInfo: a plain process in the sandbox (Mesos containerizer, no isolation).

shell=true runs `/bin/sh -c value`; shell=false executes `value` with
`arguments` as its argv. stdout/stderr go to the sandbox's files. A kill
sends SIGTERM to the process group, then SIGKILL after the grace period;
when the command ends, what it left running in its session is killed, as
Mesos destroys a task's container when its command ends.
Such tasks do not survive an agent restart (they are reported FAILED).
A task whose MESOS ContainerInfo has `tty_info` runs on a pseudo-terminal
of its own instead (terminal.py), which `mesos task attach` types into.

The process runs as the task's user (task_user.py: CommandInfo.user, else
FrameworkInfo.user; root refused unless the agent allows it), switched in
the child before exec (setgid, supplementary groups dropped, setuid), in a
sandbox handed to that user, with a clean environment.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scylla_singa.contracts import ENV_TASK_ID
from scylla_singa.mesos.api.protocol import container_status
from .confined_paths import open_sandbox_file
from .persistent_volumes import hand_to
from .terminal import Terminal, WindowSize, drain, open_terminal, take_terminal, task_terminal
from .task_events import TaskContainerUp, TaskExited, TaskInvalid, TaskLaunchFailed, TaskStarting, TaskStopped
from .task_runner import AgentTask, Emit, TaskRunner
from .task_user import TaskUser, TaskUserError, clean_environment, hand_sandbox_to, task_user, unreachable_parent


class ProcessRunner(TaskRunner):
    """Runs command tasks as child processes of the agent, each as its task's user.

    `allow_root_tasks`: whether a task may run as uid 0 (the agent flag --allow-root-tasks)."""

    def __init__(self, ip: str = "127.0.0.1", allow_root_tasks: bool = False) -> None:
        self.ip = ip
        self.allow_root_tasks = allow_root_tasks
        self._procs: dict[str, asyncio.subprocess.Process] = {}

    async def launch(self, task: AgentTask, emit: Emit) -> None:
        command = task.info.get("command") or {}
        argv, executable = command_argv(command)
        if not argv:
            emit(TaskInvalid(message="CommandInfo has no value to run"))
            return
        try:
            user = task_user(command, task.framework, self.allow_root_tasks)
            _prepare_sandbox(task, user)
            _link_volumes(task, user)
        except TaskUserError as exc:
            emit(TaskLaunchFailed(message=f"Failed to launch command: {exc}"))
            return
        emit(TaskStarting())
        sandbox = task.sandbox
        size = task_terminal(task.info.get("container"))
        with open_sandbox_file(sandbox / "stdout", "ab") as out, open_sandbox_file(sandbox / "stderr", "ab") as err:
            try:
                if size is False:
                    proc = await spawn_as(user, argv, executable, sandbox, _env(task, command), stdout=out,
                                          stderr=err)
                else:
                    proc, task.terminal = await _spawn_on_terminal(user, argv, executable, sandbox,
                                                                   _env(task, command), size)
            except OSError as exc:
                emit(TaskLaunchFailed(message=f"Failed to launch command as user {user.name} "
                                              f"(uid {user.uid}): {exc}"))
                return
        task.handle = proc
        task.pid = proc.pid
        self._procs[task.container_id] = proc
        emit(TaskContainerUp(container_status(task.container_id, self.ip, None)))
        try:
            code = await proc.wait()
            signal_group(proc, signal.SIGKILL)   # what it left running ends with it, as Mesos destroys the container
            if task.terminal is not None:
                await drain(task.terminal)
        finally:
            self._procs.pop(task.container_id, None)
            if task.terminal is not None:
                task.terminal.close()
        emit(TaskExited(_exit_code(code), message=_exit_message(code)))

    async def kill(self, task: AgentTask, grace_s: float, emit: Emit) -> None:
        proc = task.handle
        if proc is None:
            if task.launch is not None:
                task.launch.cancel()
            emit(TaskStopped())
            return
        signal_group(proc, signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), grace_s)
        except asyncio.TimeoutError:
            signal_group(proc, signal.SIGKILL)

    async def shutdown(self) -> None:
        for proc in list(self._procs.values()):
            signal_group(proc, signal.SIGKILL)


async def spawn_as(user: TaskUser, argv: list[str], executable: str | None, cwd: Path, env: dict[str, str],
                   stdin: Any = asyncio.subprocess.DEVNULL, stdout: Any = asyncio.subprocess.DEVNULL,
                   stderr: Any = asyncio.subprocess.DEVNULL, in_child: Callable[[], None] | None = None
                   ) -> asyncio.subprocess.Process:
    """A command as `user` (switched in the child: its gid, no supplementary groups, its uid), in its own
    session (a kill reaches everything it starts), with exactly `env`; `in_child` runs in the child once it
    is that user in its session (a terminal session takes its terminal). OSError when it cannot start."""
    return await asyncio.create_subprocess_exec(
        *argv, executable=executable, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
        start_new_session=True, user=user.uid, group=user.gid, extra_groups=[], preexec_fn=in_child)


async def _spawn_on_terminal(user: TaskUser, argv: list[str], executable: str | None, sandbox: Path,
                             env: dict[str, str], size: WindowSize | None | bool
                             ) -> tuple[asyncio.subprocess.Process, Terminal]:
    """A task asking for a terminal (ContainerInfo.tty_info) on a pseudo-terminal of its own, of the size
    asked: its stdin, stdout and stderr, its controlling terminal. What it writes is appended to the sandbox's
    stdout (where Mesos's I/O switchboard logs it; stderr stays empty); ATTACH_CONTAINER_INPUT types into it."""
    log = open_sandbox_file(sandbox / "stdout", "ab")   # before the task runs: it may not swap the file yet
    controller, command_side = open_terminal(size if isinstance(size, WindowSize) else None)
    try:
        proc = await spawn_as(user, argv, executable, sandbox, env, command_side, command_side, command_side,
                              in_child=take_terminal)
    except OSError:
        os.close(controller)
        log.close()
        raise
    finally:
        os.close(command_side)
    return proc, Terminal(controller, log.write, closed=log.close)


async def command_ended(process: asyncio.subprocess.Process) -> None:
    """Returns once the process itself ended, even while what it started still holds its pipes open (on
    Python 3.11 asyncio's `wait()` also waits for its pipes to close). Watches a pidfd: loop-agnostic."""
    if process.returncode is not None:
        return
    try:
        pidfd = os.pidfd_open(process.pid)
    except ProcessLookupError:   # ended and reaped already
        return
    loop = asyncio.get_running_loop()
    ended = loop.create_future()
    loop.add_reader(pidfd, lambda: ended.done() or ended.set_result(None))
    try:
        await ended
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


def command_argv(command: dict[str, Any]) -> tuple[list[str], str | None]:
    """(argv, the executable or None) of a CommandInfo, as Mesos runs it; an empty argv: nothing to run."""
    value = command.get("value")
    if command.get("shell", True):
        return (["/bin/sh", "-c", value] if value else []), None
    args = [str(a) for a in command.get("arguments") or []]
    if not value:
        return [], None
    return (args or [value]), value


def _env(task: AgentTask, command: dict[str, Any]) -> dict[str, str]:
    return clean_environment(command, {ENV_TASK_ID: task.task_id, "MESOS_FRAMEWORK_ID": task.framework_id,
                                       "MESOS_AGENT_ID": task.agent_id, "MESOS_SANDBOX": str(task.sandbox),
                                       "MESOS_DIRECTORY": str(task.sandbox)})


def _prepare_sandbox(task: AgentTask, user: TaskUser) -> None:
    """Hand the sandbox to the task's user (a task group's run directory too: its tasks live inside it) and
    check the user can reach it; TaskUserError says which directory stops it."""
    sandbox = task.sandbox
    group_run = sandbox.parent.parent if task.in_default_group and sandbox.parent.name == "tasks" else None
    hand_sandbox_to(sandbox, user, up_to=group_run)
    blocked = unreachable_parent(sandbox, user)
    if blocked is not None:
        raise TaskUserError(f"user {user.name} (uid {user.uid}) cannot reach its sandbox {sandbox}: {blocked} is "
                            "not searchable by it (make the agent's work dir and the directories above it "
                            "mode 0711 or wider)")


def _link_volumes(task: AgentTask, user: TaskUser) -> None:
    """A process has no mount namespace of its own: its persistent volumes appear in its sandbox as links to
    their directories (handed to its user when new). An absolute container path needs a container."""
    for mount in task.volume_mounts:
        if mount.container_path.startswith("/"):
            raise TaskUserError(f"persistent volume at {mount.container_path}: an absolute container path needs "
                                "a container (ContainerInfo); a task without one sees volumes in its sandbox")
        link = task.sandbox / mount.container_path
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(mount.directory, target_is_directory=True)
    hand_to(task.volume_mounts, user.uid, user.gid)


def signal_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    """Signal the process and everything it started (its own session's group); gone already is fine."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _exit_code(code: int) -> int:
    return 128 - code if code < 0 else code


def _exit_message(code: int) -> str:
    if code < 0:
        return f"Command terminated with signal {signal.Signals(-code).name}"
    return f"Command exited with status {code}"
