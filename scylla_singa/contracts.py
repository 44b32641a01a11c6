"""Identifiers every part of scylla-singa shares: one definition each (docs/contracts.md).

The framework names tasks, containers and networks; the agent labels what
it starts; the runtime reads the environment the framework sets and prints
the lines the framework parses; leak checks and cleanups find things by
these labels. Each of those names is defined here once and imported by both
ends, so a change is made in one place. Stdlib only: the runtime image
carries this module.
"""

from __future__ import annotations

import re

# ---- Docker labels --------------------------------------------------------
# On every container an agent starts (and on every job network): scylla-singa made it.
MANAGED_LABEL = "scylla.managed"
# On an agent's containers: which agent, task and framework it belongs to.
AGENT_LABEL = "scylla.agent"
TASK_LABEL = "scylla.task"
FRAMEWORK_LABEL = "scylla.framework"
# On a job's containers (through docker parameters), its network and its TaskInfo labels.
JOB_LABEL = "scylla.job"
# On a job's TaskInfo: the SINGA process id.
PROC_LABEL = "scylla.proc"
# On a cluster-in-a-box's services (never MANAGED_LABEL: job leak checks must not sweep them).
CLUSTER_LABEL = "scylla.cluster"
# On a runtime image: which task contract it keeps (RUNTIME_APACHE_SINGA or RUNTIME_SINGA_PY).
RUNTIME_LABEL = "io.scylla.runtime"
RUNTIME_APACHE_SINGA = "apache-singa"   # Apache SINGA 0.3.0 through singa-task (images/singa)
RUNTIME_SINGA_PY = "singa-py"           # the project's Python runtime (images/singa-py)

# ---- names ------------------------------------------------------------------
NETWORK_PREFIX = "scylla-"
_NETWORK_UNSAFE = re.compile(r"[^a-zA-Z0-9_.-]")
_TASK_ID = re.compile(r"(.+)\.proc-(\d+)\.a(\d+)")


def task_id(job_id: str, proc: int, attempt: int) -> str:
    """The Mesos task id of process `proc` of `job_id`, attempt `attempt`: `<job>.proc-<k>.a<n>`."""
    return f"{job_id}.proc-{proc}.a{attempt}"


def parse_task_id(value: str) -> tuple[str, int, int] | None:
    """(job id, proc, attempt) of a task id made by task_id(), else None."""
    m = _TASK_ID.fullmatch(value)
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def proc_hostname(job_id: str, proc: int) -> str:
    """The name process `proc` has on the job's overlay (a network alias): `<job>-proc-<k>`."""
    return f"{job_id}-proc-{proc}"


def job_network_name(job_id: str) -> str:
    """The overlay network name for a job: `scylla-<job>` made safe for Docker."""
    return NETWORK_PREFIX + _NETWORK_UNSAFE.sub("-", job_id)[:50]


def container_name(container_id: str) -> str:
    """The Docker name of the container an agent runs a task in (as Mesos's Docker containerizer names it)."""
    return f"mesos-{container_id}"


# ---- what the framework hands every task --------------------------------------
JOB_CONF = "job.conf"          # the job's configuration
CLUSTER_FILE = "cluster.json"  # every process's name on the overlay and its port
# Where a task finds both files: mounted read-only at an absolute path outside the Mesos sandbox.
# Apache Mesos makes sandboxes 0750 and root-owned, and the images run as uid 1000, so a file
# inside the sandbox cannot be read by the task; a bind-mounted file is read through its own
# mode (0644) and directories Docker creates (0755). Volume delivery mounts the host's copy,
# HDFS delivery the copy the agent's fetcher put into the sandbox (a relative host_path).
JOB_FILES_DIR = "/mnt/scylla"
# In a job directory under an agent's allowed roots: the FrameworkID whose tasks may mount it, written by the
# agent at the first mount (mesos/agent/job_volumes.py); `run --workspace` removes it to hand a shared
# workspace to its new framework.
VOLUME_OWNER_FILE = ".scylla-framework-id"
TASK_JOB_CONF = f"{JOB_FILES_DIR}/{JOB_CONF}"
TASK_CLUSTER_FILE = f"{JOB_FILES_DIR}/{CLUSTER_FILE}"
ENV_JOB_ID = "SCYLLA_JOB_ID"
ENV_PROC_ID = "SCYLLA_PROC_ID"
ENV_PROGRESS_URL = "SCYLLA_PROGRESS_URL"   # optional: where the runtime POSTs its progress
# With SCYLLA_PROGRESS_URL: the job's own secret, sent as `Authorization: Bearer <token>` with each POST. In the
# environment only (never on a command line, never printed): the framework takes a report only with the token
# of the job it names.
ENV_PROGRESS_TOKEN = "SCYLLA_PROGRESS_TOKEN"
ENV_WEBHDFS_URL = "SCYLLA_WEBHDFS_URL"     # optional: for hdfs:// workspaces
ENV_TASK_ID = "MESOS_TASK_ID"             # Mesos never sets it itself: the framework does
ENV_ZK_HOSTS = "SCYLLA_ZK_HOSTS"          # real SINGA, > 1 process: the ZooKeeper its processes meet in
ENV_ATTEMPT = "SCYLLA_ATTEMPT"            # real SINGA: the gang's attempt number (the same in every task)
ENV_STARTUP_TIMEOUT = "SCYLLA_STARTUP_TIMEOUT"  # optional: seconds to wait for peers at start
# The ZooKeeper a framework starts for a real-SINGA job that has none: its image and its name on the job's overlay.
ZOOKEEPER_IMAGE = "scylla-zookeeper:latest"
ZOOKEEPER_PORT = 2181


def job_zookeeper_alias(job_id: str) -> str:
    """The name a job's own ZooKeeper has on the job's overlay: `<job>-zk`."""
    return f"{job_id}-zk"


def job_zookeeper_root(job_id: str) -> str:
    """The chroot a job gets in a shared ZooKeeper: every znode of the job lives below it."""
    return f"/scylla/jobs/{job_id}"
# `exec`: the command runs as `/bin/sh -c ...` (CommandInfo.shell), and a shell that is the
# container's PID 1 ignores SIGTERM, so a kill would always wait out its grace period; singa
# as PID 1 handles SIGTERM and stops at once. Absolute paths: the working directory is the
# image's (Apache Mesos sets none), and the files are not in the sandbox (see JOB_FILES_DIR).
DEFAULT_COMMAND = (f"exec singa -conf {TASK_JOB_CONF} -procs_id {{proc}} -cluster {TASK_CLUSTER_FILE} "
                   "-workspace {workspace}")

# ---- what the runtime prints ------------------------------------------------------
PROGRESS_PREFIX = "PROGRESS"   # `PROGRESS {json}` every disp_freq steps per worker
FINAL_PREFIX = "FINAL"         # `FINAL {json}` once, by process 0, at the end
