"""Builds the Mesos TaskInfo of one SINGA process (pure).

Only what Apache Mesos's own Docker containerizer understands is used, so
the same TaskInfo runs on a real Mesos cluster: a DOCKER ContainerInfo on a
USER network (the job's attachable overlay), the process's name on that
overlay given as a `network-alias` docker parameter (Docker's DNS resolves
aliases and container names, not hostnames), the job label, the job.conf
and cluster file as read-only volumes or fetcher URIs, and a kill policy.
Real SINGA's tasks also get the gang's attempt number (their ZooKeeper
connect string comes with the job's artifacts).
"""

from __future__ import annotations

from typing import Any

from scylla_singa.contracts import (ENV_ATTEMPT, ENV_JOB_ID, ENV_PROC_ID, ENV_PROGRESS_TOKEN, ENV_PROGRESS_URL,
                                    ENV_TASK_ID, JOB_LABEL, PROC_LABEL, proc_hostname, task_id)
from scylla_singa.delivery.job_files import Artifacts
from scylla_singa.jobconf.plan import ProcessPlan
from .model import JobSpec


def scalar_resource(name: str, value: float, role: str, allocation_info: dict | None) -> dict[str, Any]:
    r: dict[str, Any] = {"name": name, "type": "SCALAR", "scalar": {"value": value}, "role": role}
    if allocation_info:
        r["allocation_info"] = allocation_info
    return r


def command_line(spec: JobSpec, proc: int, artifacts: Artifacts, resume: bool) -> str:
    """The template with {proc}, {job}, {workspace} and {resume} filled in.

    {resume} is " -resume" on restarts and "" otherwise; a template without
    it gets " -resume" appended on restarts.
    """
    flag = " -resume" if resume else ""
    cmd = spec.command.format(proc=proc, job=spec.job_id, workspace=artifacts.workspace, resume=flag)
    return cmd if "{resume" in spec.command else cmd + flag


def build_task(spec: JobSpec, proc: ProcessPlan, attempt: int, agent_id: str, artifacts: Artifacts,
               role: str = "*", allocation_info: dict | None = None, net_bw_mbps: float | None = None,
               progress_url: str | None = None, kill_grace_s: float = 10.0,
               progress_token: str = "") -> dict[str, Any]:
    """The TaskInfo (v1 JSON) for process `proc` of `spec`, attempt `attempt`, on `agent_id`.

    `progress_token`, the job's secret for its progress POSTs, goes into the
    environment only (the command line shows in `ps` and `docker inspect`'s Args).

    `net_bw_mbps` is added as a `net_bw` resource only when the agent offers
    one (it is the process's estimated cross-agent traffic).
    """
    tid = task_id(spec.job_id, proc.id, attempt)
    alias = proc_hostname(spec.job_id, proc.id)
    d = proc.demand
    resources = [scalar_resource("cpus", d.cpus, role, allocation_info),
                 scalar_resource("mem", float(d.mem_mb), role, allocation_info)]
    if d.gpus:
        resources.append(scalar_resource("gpus", float(d.gpus), role, allocation_info))
    if net_bw_mbps:
        resources.append(scalar_resource("net_bw", round(net_bw_mbps, 3), role, allocation_info))
    env = {**dict(spec.env), ENV_JOB_ID: spec.job_id, ENV_PROC_ID: str(proc.id), ENV_TASK_ID: tid,
           **dict(artifacts.env)}
    if progress_url:
        env[ENV_PROGRESS_URL] = progress_url
        if progress_token:
            env[ENV_PROGRESS_TOKEN] = progress_token
    if spec.apache_singa:
        # singa-task keys the attempt's meeting place in ZooKeeper by it: the same in every task of a
        # gang, a new one for each restart, so a new gang never meets the remains of the old one.
        env[ENV_ATTEMPT] = str(attempt)
    command: dict[str, Any] = {
        "shell": True,
        "value": command_line(spec, proc.id, artifacts, resume=attempt > 1),
        "environment": {"variables": [{"name": k, "value": v} for k, v in sorted(env.items())]},
    }
    if artifacts.uris:
        command["uris"] = [dict(u) for u in artifacts.uris]
    return {
        "name": f"{spec.job_id} proc {proc.id}",
        "task_id": {"value": tid},
        "agent_id": {"value": agent_id},
        "resources": resources,
        "command": command,
        "container": {
            "type": "DOCKER",
            "docker": {
                "image": spec.image,
                "network": "USER",
                "force_pull_image": False,
                "parameters": [{"key": "network-alias", "value": alias},
                               {"key": "label", "value": f"{JOB_LABEL}={spec.job_id}"}],
            },
            "network_infos": [{"name": artifacts.network}],
            "hostname": alias,
            "volumes": [dict(v) for v in artifacts.volumes],
        },
        "kill_policy": {"grace_period": {"nanoseconds": int(kill_grace_s * 1e9)}},
        "labels": {"labels": [{"key": JOB_LABEL, "value": spec.job_id},
                              {"key": PROC_LABEL, "value": str(proc.id)}]},
    }
