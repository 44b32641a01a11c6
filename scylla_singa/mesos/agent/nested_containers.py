"""Nested containers: a command run inside a running task or standalone container (`mesos task exec`).

The agent operator API's LAUNCH_CONTAINER with a parent (and the older
LAUNCH_NESTED_CONTAINER), LAUNCH_NESTED_CONTAINER_SESSION (the command's
output streamed back in the answer), ATTACH_CONTAINER_INPUT (its stdin
streamed in), WAIT/KILL/REMOVE of either. A nested container lives in its
parent: in a Docker task's container it is a `docker exec` (the same
filesystem, network and process namespaces, as the task's user); in a
process task or a standalone container, which have no namespaces of their
own, it is a process in the parent's sandbox as the parent's user. It never
runs as another user: a CommandInfo.user that is not the parent's is
refused (a task's user was checked when the task launched). A session may
ask for a terminal (`task exec -t`): a pseudo-terminal for a process, the
engine's for a `docker exec` (terminal.py).

What Mesos 1.12 does, measured on a live agent and kept here: a nested
container's end can be waited for again and again until REMOVE (then 404);
KILL of an ended one is 404; REMOVE of a running one is refused ("Nested
container has not terminated yet"; Mesos answers it 500, ours 400); a KILL
ends it with SIGKILL whatever the signal asked (Mesos destroys it); the
parent's end ends its nested containers. A session's container is killed
when the caller hangs up, as Mesos kills it, and what a command leaves
running dies when it ends (Mesos destroys the container then).
"""

from __future__ import annotations

import asyncio
import base64
import os
import signal
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scylla_singa.mesos.api.fields import value
from .docker_streams import STDERR, STDOUT, read_multiplexed, read_plain
from .process_runner import command_argv, command_ended, signal_group, spawn_as
from .terminal import END_OF_INPUT, Terminal, WindowSize, drain, open_terminal, take_terminal, terminal_request
from .task_user import TaskUser, TaskUserError, clean_environment, requested_user, resolve_user, task_user

if TYPE_CHECKING:
    from .agent_core import AgentCore
    from .standalone_containers import StandaloneContainers

# A ProcessIO record of output, in the JSON form Mesos streams (and its protobuf through the codec).
ProcessIO = dict[str, Any]
END = None   # what the output queue holds after the last record
STREAM_NAMES = {STDOUT: "STDOUT", STDERR: "STDERR"}   # ProcessIO.Data.Type of each of the engine's streams


class NestedRefused(Exception):
    """A nested container call answered with a status other than 200; the message is the answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Parent:
    """Where a nested container runs: a Docker container (`docker_id`), or a sandbox and a user (processes).
    A task that runs on a terminal (tty_info) has it here: its pty (`terminal`) or the engine's (`docker_tty`)."""

    name: str
    ended: Callable[[], Awaitable[Any]]   # returns once the parent ended
    docker_id: str | None = None
    docker_user: str = ""
    sandbox: Path | None = None
    user: TaskUser | None = None
    terminal: Terminal | None = None
    docker_tty: bool = False


@dataclass
class NestedContainer:
    parent: str
    child: str
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    wait_status: int | None = None
    killed: bool = False
    pid: int | None = None
    kill_now: Callable[[], None] = lambda: None
    stdin: Callable[[bytes | None], None] = lambda data: None   # None: end of input
    resize: Callable[[WindowSize], None] = lambda size: None    # a terminal session's new window size
    output: asyncio.Queue | None = None   # ProcessIO records of a session, then END
    watcher: asyncio.Future | None = None   # ends it with its parent
    followers: list[asyncio.Queue] = field(default_factory=list)   # ATTACH_CONTAINER_OUTPUT calls following it

    @property
    def name(self) -> str:
        return f"{self.parent}.{self.child}"

    def emit(self, record: ProcessIO) -> None:
        """A session's output record (or END): to the session's own answer and to whoever attached to it."""
        if self.output is not None:
            self.output.put_nowait(record)
        for queue in self.followers:
            queue.put_nowait(record)


def wait_status(exit_code: int) -> int:
    """wait(2)'s status, as Mesos reports it: an exit code in the high byte, a signal in the low one."""
    return (exit_code << 8) if exit_code >= 0 else -exit_code


class NestedContainers:
    """The nested containers of one agent. `find_parent(name)`: the running parent of that name, or None."""

    def __init__(self, find_parent: Callable[[str], Parent | None], docker_client: Any = None) -> None:
        self.find_parent = find_parent
        self.docker = docker_client
        self.containers: dict[str, NestedContainer] = {}
        self.inputs: set[str] = set()   # the containers an input stream is attached to (container_input.py)

    def known(self, container_id: dict[str, Any]) -> NestedContainer:
        """The nested container an id names; 404 in Mesos's words when there is none."""
        parent, child = _names(container_id)
        found = self.containers.get(f"{parent}.{child}")
        if found is None:
            raise NestedRefused(404, f"Container {parent}.{child} cannot be found")
        return found

    async def launch(self, body: dict[str, Any], session: bool = False) -> tuple[int, NestedContainer | None]:
        """(200 or 202, the container) for LAUNCH_CONTAINER with a parent; a session keeps its output."""
        parent_name, child = _names(body["container_id"])
        if f"{parent_name}.{child}" in self.containers:   # as Mesos: launched already (a session: no stream)
            return 202, None
        parent = self.find_parent(parent_name)
        if parent is None:
            raise NestedRefused(400, f"Parent container {parent_name} does not exist")
        try:
            terminal = terminal_request(body.get("container"))
        except ValueError as exc:
            raise NestedRefused(400, str(exc)) from None
        if terminal is not False and not session:   # a terminal is for a session's caller to type into
            raise NestedRefused(400, "The provided ContainerInfo is not supported")
        command = body.get("command") or {}
        argv, executable = command_argv(command)
        if not argv:
            raise NestedRefused(400, "'command' is invalid: CommandInfo has no value to run")
        nested = NestedContainer(parent_name, child, output=asyncio.Queue() if session else None)
        if parent.docker_id is not None:
            self._check_docker_user(command, parent)
            await self._docker_exec(nested, parent, argv, command, terminal)
        else:
            await self._process(nested, parent, argv, executable, command, terminal)
        self.containers[nested.name] = nested
        nested.watcher = asyncio.ensure_future(self._end_with(parent, nested))
        return 200, nested

    async def _end_with(self, parent: Parent, nested: NestedContainer) -> None:
        """The parent's end ends the nested container, which is then forgotten (as Mesos forgets it)."""
        await parent.ended()
        if self.containers.get(nested.name) is nested:
            if not nested.ended.is_set():
                nested.kill_now()
                await nested.ended.wait()
            del self.containers[nested.name]

    async def wait(self, container_id: dict[str, Any]) -> int:
        nested = self.known(container_id)
        await nested.ended.wait()
        assert nested.wait_status is not None
        return nested.wait_status

    def kill(self, container_id: dict[str, Any]) -> None:
        parent, child = _names(container_id)
        nested = self.containers.get(f"{parent}.{child}")
        if nested is None or nested.ended.is_set() or nested.killed:
            raise NestedRefused(404, f"Container '{parent}.{child}' cannot be found (or is already killed)")
        nested.killed = True
        nested.kill_now()

    def remove(self, container_id: dict[str, Any]) -> None:
        nested = self.known(container_id)
        if not nested.ended.is_set():
            raise NestedRefused(400, "Nested container has not terminated yet")
        del self.containers[nested.name]
        if nested.watcher is not None:
            nested.watcher.cancel()

    def attach_input(self, container_id: dict[str, Any]) -> NestedContainer:
        """The running nested container an ATTACH_CONTAINER_INPUT stream names (container_input.py)."""
        nested = self.known(container_id)
        if nested.ended.is_set():
            raise NestedRefused(404, f"Container {nested.name} has terminated")
        return nested

    def running(self) -> list[dict[str, Any]]:
        """GET_CONTAINERS' entries (show_nested), as Mesos lists them."""
        return [{"container_id": {"value": n.child},
                 "container_status": {"container_id": {"value": n.child, "parent": {"value": n.parent}},
                                      **({"executor_pid": n.pid} if n.pid else {})},
                 "resource_statistics": {"timestamp": time.time()}}
                for n in self.containers.values() if not n.ended.is_set()]

    async def shutdown(self) -> None:
        """The agent stops: no nested container outlives it."""
        for nested in self.containers.values():
            if not nested.ended.is_set():
                nested.kill_now()
        await asyncio.gather(*(n.ended.wait() for n in self.containers.values()))
        for nested in self.containers.values():
            if nested.watcher is not None:
                nested.watcher.cancel()

    # ---- process parents ------------------------------------------------------

    async def _process(self, nested: NestedContainer, parent: Parent, argv: list[str], executable: str | None,
                       command: dict[str, Any], terminal: WindowSize | None | bool = False) -> None:
        assert parent.user is not None and parent.sandbox is not None
        user = parent.user
        given = command.get("user")
        if given:
            try:
                asked = resolve_user(*requested_user(command, {}), allow_root=True)
            except TaskUserError as exc:
                raise NestedRefused(400, str(exc)) from None
            if asked.uid != user.uid:
                raise NestedRefused(400, f"a nested container runs as its parent's user ({user.name}), not "
                                         f"{given!r}: leave CommandInfo.user unset")
        env = clean_environment(command, {"MESOS_SANDBOX": str(parent.sandbox),
                                          "MESOS_DIRECTORY": str(parent.sandbox)})
        if terminal is not False:
            await self._process_on_terminal(nested, parent, user, argv, executable, env, terminal)
            return
        session = nested.output is not None
        stdio = asyncio.subprocess.PIPE if session else asyncio.subprocess.DEVNULL
        try:
            process = await spawn_as(user, argv, executable, parent.sandbox, env, stdio, stdio, stdio)
        except OSError as exc:
            raise NestedRefused(400, f"Failed to launch nested container {nested.name}: {exc}") from None
        nested.pid = process.pid
        nested.kill_now = lambda: signal_group(process, signal.SIGKILL)
        if session:
            nested.stdin = _process_stdin(process)
        asyncio.ensure_future(self._follow_process(nested, process))

    async def _process_on_terminal(self, nested: NestedContainer, parent: Parent, user: TaskUser,
                                   argv: list[str], executable: str | None, env: dict[str, str],
                                   size: WindowSize | None | bool) -> None:
        """A session's command on a pseudo-terminal of its own: stdin, stdout and stderr, its controlling
        terminal; what it writes comes back as STDOUT records."""
        assert parent.sandbox is not None and nested.output is not None
        controller, command_side = open_terminal(size if isinstance(size, WindowSize) else None)
        try:
            process = await spawn_as(user, argv, executable, parent.sandbox, env, command_side, command_side,
                                     command_side, in_child=take_terminal)
        except OSError as exc:
            os.close(controller)
            raise NestedRefused(400, f"Failed to launch nested container {nested.name}: {exc}") from None
        finally:
            os.close(command_side)
        nested.pid = process.pid
        nested.kill_now = lambda: signal_group(process, signal.SIGKILL)
        terminal = Terminal(controller, lambda chunk: nested.emit(data_record("STDOUT", chunk)))
        nested.stdin = terminal.write
        nested.resize = terminal.resize
        asyncio.ensure_future(self._follow_terminal(nested, process, terminal))

    async def _follow_terminal(self, nested: NestedContainer, process: asyncio.subprocess.Process,
                               terminal: Terminal) -> None:
        code = await process.wait()
        signal_group(process, signal.SIGKILL)   # what it left behind ends with it, as Mesos destroys the container
        await drain(terminal)
        self._ended(nested, wait_status(code))

    async def _follow_process(self, nested: NestedContainer, process: asyncio.subprocess.Process) -> None:
        readers = []
        if nested.output is not None:
            readers = [asyncio.ensure_future(_pump(stream, kind, nested))
                       for stream, kind in ((process.stdout, "STDOUT"), (process.stderr, "STDERR"))]
        await command_ended(process)
        signal_group(process, signal.SIGKILL)   # what it left running (holding its output open) ends with it
        code = await process.wait()
        await asyncio.gather(*readers, return_exceptions=True)
        self._ended(nested, wait_status(code))

    # ---- Docker parents -------------------------------------------------------

    def _check_docker_user(self, command: dict[str, Any], parent: Parent) -> None:
        given = command.get("user")
        if given and given != parent.docker_user:
            raise NestedRefused(400, f"a nested container runs as its parent's user "
                                     f"({parent.docker_user or 'the image default'}), not {given!r}: leave "
                                     "CommandInfo.user unset")

    async def _docker_exec(self, nested: NestedContainer, parent: Parent, argv: list[str],
                           command: dict[str, Any], terminal: WindowSize | None | bool = False) -> None:
        """A `docker exec` in the parent's container; with a terminal, the engine's (`docker exec -t`)."""
        api = self.docker.api
        loop = asyncio.get_running_loop()
        env = clean_environment(command, {})
        session = nested.output is not None
        tty = terminal is not False
        try:
            exec_id = (await loop.run_in_executor(None, lambda: api.exec_create(
                parent.docker_id, argv, stdin=session, stdout=True, stderr=True, tty=tty,
                environment={k: v for k, v in env.items() if k != "PATH"})))["Id"]
            sock = await loop.run_in_executor(None, lambda: api.exec_start(exec_id, socket=True, tty=tty))
        except Exception as exc:  # noqa: BLE001 - the engine's own error, said to the caller
            raise NestedRefused(400, f"Failed to launch nested container {nested.name}: {exc}") from None
        raw: socket.socket = getattr(sock, "_sock", sock)
        pid = await _exec_pid(api, exec_id, loop)
        nested.pid = pid
        nested.kill_now = lambda: _kill_pid(pid)
        if session:
            nested.stdin = socket_stdin(raw, tty)
        else:
            raw.shutdown(socket.SHUT_WR)
        if tty:
            in_order = InOrder(loop)
            write = nested.stdin
            nested.stdin = lambda data: in_order.do(lambda: write(data), in_pool=False)
            nested.resize = lambda size: in_order.do(lambda: _resize_exec(api, exec_id, size), in_pool=True)
            if isinstance(terminal, WindowSize):
                nested.resize(terminal)
        asyncio.ensure_future(self._follow_exec(nested, raw, exec_id, loop, tty))

    async def _follow_exec(self, nested: NestedContainer, raw: socket.socket, exec_id: str,
                           loop: asyncio.AbstractEventLoop, tty: bool = False) -> None:
        def put(record: ProcessIO) -> None:
            if nested.output is not None:
                loop.call_soon_threadsafe(nested.emit, record)

        def read() -> None:   # a terminal's stream is all STDOUT
            if tty:
                read_plain(raw, lambda chunk: put(data_record("STDOUT", chunk)))
            else:
                read_multiplexed(raw, lambda kind, chunk: put(data_record(STREAM_NAMES[kind], chunk)))

        await loop.run_in_executor(None, read)
        raw.close()
        code = (await loop.run_in_executor(None, lambda: self.docker.api.exec_inspect(exec_id))).get("ExitCode")
        self._ended(nested, wait_status(code if code is not None else -signal.SIGKILL))

    def _ended(self, nested: NestedContainer, status: int) -> None:
        nested.wait_status = signal.SIGKILL if nested.killed else status
        nested.ended.set()
        if nested.output is not None:
            nested.emit(END)


async def session_records(nested: NestedContainer) -> AsyncIterator[ProcessIO]:
    """A session's ProcessIO records until its command ends."""
    assert nested.output is not None
    while (record := await nested.output.get()) is not END:
        yield record


async def followed_records(nested: NestedContainer) -> AsyncIterator[ProcessIO]:
    """A running session's output from now until its command ends, for an ATTACH_CONTAINER_OUTPUT call (the
    session's own answer streams it too). Leaving the iterator early stops following."""
    queue: asyncio.Queue = asyncio.Queue()
    nested.followers.append(queue)
    try:
        while (record := await queue.get()) is not END:
            yield record
    finally:
        nested.followers.remove(queue)


def _names(container_id: dict[str, Any]) -> tuple[str, str]:
    """(the parent's name, as Mesos writes it: `a.b` for a nested parent; the child's id)."""
    return full_name(container_id["parent"]), value(container_id) or ""


def full_name(container_id: dict[str, Any]) -> str:
    """A container's name as Mesos writes it: its id, after its parents' (`parent.child`)."""
    chain = []
    current: dict[str, Any] | None = container_id
    while current is not None:
        chain.append(value(current) or "")
        current = current.get("parent")
    return ".".join(reversed(chain))


def data_record(kind: str, data: bytes) -> ProcessIO:
    """A ProcessIO DATA record of output (`kind` STDOUT or STDERR), as Mesos streams it."""
    return {"type": "DATA", "data": {"type": kind, "data": base64.b64encode(data).decode()}}


async def _pump(stream: asyncio.StreamReader | None, kind: str, nested: NestedContainer) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        nested.emit(data_record(kind, chunk))


def _process_stdin(process: asyncio.subprocess.Process) -> Callable[[bytes | None], None]:
    def write(data: bytes | None) -> None:
        if process.stdin is None or process.stdin.is_closing():
            return
        if data is None:
            process.stdin.close()
        else:
            process.stdin.write(data)
    return write


def socket_stdin(raw: socket.socket, tty: bool = False) -> Callable[[bytes | None], None]:
    def write(data: bytes | None) -> None:
        try:
            if data is None and tty:
                raw.sendall(END_OF_INPUT)   # a terminal's end of input is Ctrl-D, not a half-close
            elif data is None:
                raw.shutdown(socket.SHUT_WR)
            else:
                raw.sendall(data)
        except OSError:
            pass   # the command ended: its input goes nowhere, as in Mesos
    return write


class InOrder:
    """What an input stream asks of a `docker exec -t`, done in the order asked. A resize goes to the engine
    over HTTP (in the I/O pool) while typing goes straight to the exec's socket: typing that follows a
    resize waits for it, so a command reading a line and then its terminal's size sees the new size (the
    CLI sends 0x0, then the real size, then what is typed)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.last: asyncio.Future | None = None

    def do(self, step: Callable[[], None], in_pool: bool) -> None:
        previous = self.last
        if previous is None or previous.done():
            if not in_pool:
                step()
                return
            previous = None
        self.last = asyncio.ensure_future(self._after(previous, step, in_pool))

    async def _after(self, previous: asyncio.Future | None, step: Callable[[], None], in_pool: bool) -> None:
        if previous is not None:
            await asyncio.wait({previous})
        if in_pool:
            await self.loop.run_in_executor(None, step)
        else:
            step()


def _resize_exec(api: Any, exec_id: str, size: WindowSize) -> None:
    try:
        api.exec_resize(exec_id, height=size.rows, width=size.columns)
    except Exception:  # noqa: BLE001 - the exec ended: nothing to resize
        pass


async def _exec_pid(api: Any, exec_id: str, loop: asyncio.AbstractEventLoop) -> int | None:
    """The exec's process on the host (what a kill signals), once the engine has started it."""
    for _ in range(50):
        info = await loop.run_in_executor(None, lambda: api.exec_inspect(exec_id))
        if info.get("Pid") or not info.get("Running", True):
            return info.get("Pid") or None
        await asyncio.sleep(0.02)
    return None


def _kill_pid(pid: int | None) -> None:
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def parent_finder(core: AgentCore, standalone: StandaloneContainers | None) -> Callable[[str], Parent | None]:
    """How the agent finds a running parent by name: a standalone container, or a task's container (a
    process task, or a Docker task; tasks of a group or of a custom executor are not parents here)."""
    def find(name: str) -> Parent | None:
        if standalone is not None:
            container = standalone.containers.get(name)
            if container is not None and not container.ended.is_set():
                return Parent(name, container.ended.wait, sandbox=container.sandbox, user=container.user)
        task = next((t for t in core.tasks.values() if t.container_id == name and t.handle is not None), None)
        if task is None:
            return None
        handle = task.handle
        if isinstance(handle, asyncio.subprocess.Process) and handle.returncode is None:
            user = task_user(task.info.get("command") or {}, task.framework, allow_root=True)
            return Parent(name, _ended_with_output(handle, task.terminal), sandbox=task.sandbox, user=user,
                          terminal=task.terminal)
        attrs = getattr(handle, "attrs", None)
        if isinstance(attrs, dict) and getattr(handle, "id", None):
            config = attrs.get("Config") or {}
            return Parent(name, asyncio.Event().wait, docker_id=handle.id, docker_user=config.get("User") or "",
                          docker_tty=bool(config.get("Tty")))
        return None
    return find


def _ended_with_output(process: asyncio.subprocess.Process, terminal: Terminal | None
                       ) -> Callable[[], Awaitable[Any]]:
    """A process task's end, as its followers need it: on a terminal, once the terminal also closed (its last
    output read and logged), else when the process ended."""
    if terminal is None:
        return process.wait

    async def ended() -> None:
        await process.wait()
        await terminal.done.wait()
    return ended
