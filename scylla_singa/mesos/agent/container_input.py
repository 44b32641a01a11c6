"""ATTACH_CONTAINER_INPUT's destination: where the records of one input stream go, and the rule that a
container takes one input stream at a time.

A nested container's session takes its stdin (`task exec -i`); a task that runs on a terminal
(ContainerInfo.tty_info) takes typing into that terminal (`task attach`): a process task's pty, or the
terminal of a container the engine created with one, reached by `docker attach` to its stdin for as long as
the stream lasts. Any other container takes no input: Mesos gives a task an input only through the I/O
switchboard of a terminal. On a task's terminal the end of input types nothing, as in Mesos (the caller
sends Ctrl-D itself; a CLI that detaches leaves the task running). A second stream to a container that has
one is refused with 409, as Mesos's switchboard refuses it.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .nested_containers import InOrder, NestedContainers, NestedRefused, Parent, full_name, socket_stdin
from .terminal import WindowSize


@dataclass
class InputStream:
    """One ATTACH_CONTAINER_INPUT stream's destination: `stdin` takes its data (None: the end of input),
    `resize` its terminal sizes, `close` what the stream held once it ended."""

    name: str
    stdin: Callable[[bytes | None], None]
    resize: Callable[[WindowSize], None]
    close: Callable[[], None] = lambda: None


async def open_input(nested: NestedContainers, container_id: dict[str, Any]) -> InputStream:
    """The destination of a stream naming `container_id`; NestedRefused (404, 400, 409) when there is none."""
    name = full_name(container_id)
    if name in nested.inputs:
        raise NestedRefused(409, "Multiple input connections are not allowed")
    nested.inputs.add(name)   # before any wait: a second stream arriving meanwhile is the second
    try:
        if "parent" in container_id:
            session = nested.attach_input(container_id)
            return InputStream(name, lambda data: session.stdin(data), lambda size: session.resize(size))
        parent = nested.find_parent(name)
        if parent is None:
            raise NestedRefused(404, f"Container {name} cannot be found (or has terminated)")
        if parent.terminal is not None:
            terminal = parent.terminal
            return InputStream(name, lambda data: terminal.write(data) if data is not None else None,
                               terminal.resize)
        if parent.docker_id is not None and parent.docker_tty:
            return await _engine_terminal(nested.docker, parent)
        raise NestedRefused(400, f"Container {name} takes no input: a task takes input only on a terminal "
                                 "(ContainerInfo type MESOS with tty_info), a nested container only in a session "
                                 "(LAUNCH_NESTED_CONTAINER_SESSION, `task exec -i`)")
    except BaseException:
        nested.inputs.discard(name)
        raise


def close_input(nested: NestedContainers, stream: InputStream) -> None:
    """The stream ended: release what it held; the container takes another stream."""
    nested.inputs.discard(stream.name)
    stream.close()


async def _engine_terminal(docker_client: Any, parent: Parent) -> InputStream:
    """Typing into a container the engine runs on a terminal: `docker attach` to its stdin (its output is
    not asked for), and resizes through the engine, in the order the stream asks them."""
    api = docker_client.api
    loop = asyncio.get_running_loop()
    try:
        sock = await loop.run_in_executor(None, lambda: api.attach_socket(
            parent.docker_id, params={"stdin": 1, "stream": 1}))
    except Exception as exc:  # noqa: BLE001 - the engine's own words, said to the caller
        raise NestedRefused(404, f"Container {parent.name} cannot be attached to (it may have just "
                                 f"terminated): {exc}") from None
    raw: socket.socket = getattr(sock, "_sock", sock)
    write = socket_stdin(raw, tty=True)
    in_order = InOrder(loop)

    def stdin(data: bytes | None) -> None:
        if data is not None:
            in_order.do(lambda: write(data), in_pool=False)

    def resize(size: WindowSize) -> None:
        in_order.do(lambda: _resize_container(api, parent.docker_id, size), in_pool=True)

    return InputStream(parent.name, stdin, resize, raw.close)


def _resize_container(api: Any, container: str | None, size: WindowSize) -> None:
    try:
        api.resize(container, height=size.rows, width=size.columns)
    except Exception:  # noqa: BLE001 - the container ended: nothing to resize
        pass

