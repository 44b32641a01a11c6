"""Third-party Mesos clients, as shipped, against our master and a process agent: each does its own job and
shows its own sign of success (tools/mesos_clients/try_clients.py defines how each is driven).

- mesos-go example-scheduler, protobuf and JSON: two tasks on its own executor (example-executor, fetched from
  the scheduler's artifact server, subscribed to the agent's /api/v1/executor), to "mission accomplished";
- mesos-go msh: one command task over the scheduler API in protobuf, to TASK_FINISHED;
- mesos-go msh -pod: the same as a LAUNCH_GROUP under the default executor;
- mesos-go mwatch: follows the operator API's SUBSCRIBE (protobuf) and sees TASK_ADDED while msh runs a task;
- mesoshttp and avmesos samples: subscribe in JSON, launch a command task, kill it (TASK_KILLED);
- avmesos-cli: lists agents, frameworks and tasks from the read-only endpoints;
- @dcos/mesos-client: every read-only operator call in JSON, then SUBSCRIBE (SUBSCRIBED, HEARTBEAT).

Not here: the samples' MESOS-container-with-image task (it needs a Docker agent:
tests/docker/mesos/test_client_samples_with_image.py), mesos_exporter (the Go module proxy refuses it here;
tests/mesos/test_exporter_shapes.py checks the shapes it reads).
"""

from __future__ import annotations

import pytest

from .client_scenarios import run_scenario

WORKING = ["mesos-go example-scheduler (protobuf)", "mesos-go example-scheduler (json)", "mesos-go msh",
           "mesos-go msh -pod", "mesos-go mwatch", "mesoshttp sample (command)", "avmesos sample (command)", "avmesos-cli mesos agent list", "avmesos-cli mesos framework list --all",
           "avmesos-cli mesos task list --all", "@dcos/mesos-client"]


@pytest.mark.parametrize("name", WORKING)
def test_client_does_its_job_against_our_master(process_cluster, name: str) -> None:
    works, output = run_scenario(process_cluster, name)
    assert works, f"{name} did not show its sign of success; its output:\n{output}"

