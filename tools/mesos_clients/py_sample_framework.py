"""Run a framework built on PyPI's mesoshttp or avmesos the way their own sample does.

Both libraries' repositories ship one sample (sample/test.py, the same in
both): a MesosClient in a thread, callbacks on SUBSCRIBED, OFFERS and UPDATE,
the first offer accepted with one task (1 cpu, 1000 MB, `sleep 30` in a MESOS
container with the Docker image `debian`), the others declined, and the task
killed once it runs. The sample is not in the PyPI packages and uses
`Thread.isAlive`, gone since Python 3.9, so this driver makes the same calls
with the task's sizes and container as options, and ends by itself.

    .cache/clients/venv/bin/python tools/mesos_clients/py_sample_framework.py \\
        --lib mesoshttp|avmesos --master http://HOST:PORT [--container none|mesos-docker]
        [--image debian] [--cpus 1] [--mem 1000] [--timeout 60]

Prints `EVENT <what>` lines; exits 0 when the task reached TASK_KILLED (the
sample's end), 1 when it ended otherwise or timed out.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import threading
import time
import uuid
from typing import Any


def task_for(offer: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    task: dict[str, Any] = {
        "name": "sample test", "task_id": {"value": uuid.uuid4().hex},
        "agent_id": {"value": offer["agent_id"]["value"]},
        "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": args.cpus}},
                      {"name": "mem", "type": "SCALAR", "scalar": {"value": args.mem}}],
        "command": {"value": "sleep 30"}}
    if args.container == "mesos-docker":
        task["container"] = {"type": "MESOS", "mesos": {"image": {"type": "DOCKER", "docker": {"name": args.image}}}}
    return task


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", choices=("mesoshttp", "avmesos"), required=True)
    parser.add_argument("--master", required=True, help="http://HOST:PORT")
    parser.add_argument("--container", choices=("none", "mesos-docker"), default="mesos-docker")
    parser.add_argument("--image", default="debian")
    parser.add_argument("--cpus", type=float, default=1.0)
    parser.add_argument("--mem", type=float, default=1000.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()

    logging.basicConfig(level=logging.WARNING, format="LOG %(name)s %(levelname)s %(message)s")
    MesosClient = importlib.import_module(f"{args.lib}.client").MesosClient
    client = MesosClient(mesos_urls=[args.master])
    state: dict[str, Any] = {"driver": None, "launched": False, "end": None}
    done = threading.Event()

    def subscribed(driver: Any) -> None:
        print("EVENT SUBSCRIBED", flush=True)
        state["driver"] = driver

    def offers(received: list[Any]) -> None:
        print(f"EVENT OFFERS {len(received)}", flush=True)
        for i, offer in enumerate(received):
            if i == 0 and not state["launched"]:
                state["launched"] = True
                offer.accept([task_for(offer.get_offer(), args)])
                print("EVENT ACCEPTED", flush=True)
            else:
                offer.decline()

    def update(event: dict[str, Any]) -> None:
        status = event["status"]
        print(f"EVENT UPDATE {status['state']} {status.get('reason', '')} {status.get('message', '')}", flush=True)
        if status["state"] == "TASK_RUNNING":
            state["driver"].kill(status["agent_id"]["value"], status["task_id"]["value"])
        elif status["state"] in ("TASK_KILLED", "TASK_FINISHED", "TASK_FAILED", "TASK_ERROR", "TASK_LOST",
                                 "TASK_DROPPED"):
            state["end"] = status["state"]
            done.set()

    def error(message: Any) -> None:
        print(f"EVENT ERROR {message}", flush=True)

    client.on(MesosClient.SUBSCRIBED, subscribed)
    client.on(MesosClient.OFFERS, offers)
    client.on(MesosClient.UPDATE, update)
    client.on(MesosClient.ERROR, error)
    thread = threading.Thread(target=client.register, daemon=True)
    thread.start()
    deadline = time.monotonic() + args.timeout
    while not done.is_set() and thread.is_alive() and time.monotonic() < deadline:
        done.wait(0.5)
    if state["driver"] is not None:
        client.stop = True
        state["driver"].tearDown()
    if state["end"] is None:
        print("EVENT END " + ("register() returned" if not thread.is_alive() else "timeout"), flush=True)
        return 1
    print(f"EVENT END {state['end']}", flush=True)
    return 0 if state["end"] == "TASK_KILLED" else 1


if __name__ == "__main__":
    sys.exit(main())
