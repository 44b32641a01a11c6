"""A hand-made agent link to a master: what an attacker (or a forged agent) would open."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from scylla_singa.mesos.api.credentials import Credential
from scylla_singa.mesos.api.protocol import AGENT_WS_PATH


def agent_link_exchange(master: str, credential: Credential | None, messages: list[dict[str, Any]],
                        listen_s: float = 3.0) -> tuple[int, list[dict[str, Any]]]:
    """Open an agent link to `master` as `credential`, send `messages`, collect what the master answers for
    `listen_s`. Returns (the handshake's HTTP status, the messages received)."""
    async def run() -> tuple[int, list[dict[str, Any]]]:
        got: list[dict[str, Any]] = []
        async with aiohttp.ClientSession() as http:
            try:
                async with http.ws_connect(f"http://{master}{AGENT_WS_PATH}",
                                           headers=credential.headers() if credential else None) as ws:
                    for m in messages:
                        await ws.send_str(json.dumps(m))
                    loop = asyncio.get_running_loop()
                    end = loop.time() + listen_s
                    while (left := end - loop.time()) > 0:
                        try:
                            msg = await ws.receive(timeout=left)
                        except asyncio.TimeoutError:
                            break
                        if msg.type != aiohttp.WSMsgType.TEXT:
                            break
                        data = json.loads(msg.data)
                        got += data if isinstance(data, list) else [data]
                    return 101, got
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status, got
    return asyncio.run(run())
