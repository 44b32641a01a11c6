"""The ZooKeeper a real-SINGA job of more than one process meets in (I/O: Docker and kazoo).

Apache SINGA's distributed build finds its peers through ZooKeeper, and
singa-task's rendezvous (scylla_singa/singa_task) lives there too, so each
such job needs one its containers reach. Two kinds, one interface:

- `SharedZooKeeper`: the cluster's (`cluster up --zk`) or the one `run --zk`
  names. The job gets a chroot of its own, `/scylla/jobs/<job>`, created
  before launch, and its tasks the connect string `host:port/scylla/jobs/<job>`:
  SINGA's and singa-task's znodes all land below it, and no job's connect
  string shows it another job's znodes. `release` removes the chroot with
  everything under it.
- `OwnZooKeeper`: with no ZooKeeper at hand, a server of the job's own
  (scylla-zookeeper:latest) on the framework's Docker engine, attached only
  to the job's overlay under the alias `<job>-zk` (no published port: only
  the job's containers reach it). The tasks do not wait for it: singa-task
  retries its connection within its start timeout, so the server's start
  (a JVM, a few seconds) overlaps the launch. `release` removes it.

Which one a job got is recorded in its tasks' SCYLLA_ZK_HOSTS (persisted with
the job), so `release_job_zookeeper` needs nothing else: a resumed framework
cleans up what an earlier one made. Everything is idempotent.
"""

from __future__ import annotations

import logging
import re
from typing import Protocol

import docker
import docker.errors
import docker.types

from scylla_singa.contracts import (JOB_LABEL, MANAGED_LABEL, ZOOKEEPER_IMAGE, ZOOKEEPER_PORT, job_zookeeper_alias,
                                    job_zookeeper_root)

log = logging.getLogger("scylla_singa.framework")
_HOST_PORT = re.compile(r"[A-Za-z0-9_.-]+:\d{1,5}")
ZK_CONNECT_TIMEOUT_S = 15.0
OWN_ZK_HEAP = "64m"   # a handful of znodes per job


class ZooKeeperError(RuntimeError):
    """No ZooKeeper for the job; the message says what to fix."""


def parse_zk_hosts(text: str) -> str:
    """`host:port[,host:port...]` as given to `run --zk`, checked; ValueError says what is wrong."""
    hosts = [h.strip() for h in text.strip().split(",")]
    bad = [h for h in hosts if not _HOST_PORT.fullmatch(h)]
    if not text.strip() or bad:
        raise ValueError(f"--zk {text!r}: expected host:port[,host:port...] (e.g. 172.31.241.10:2181), "
                         f"not {', '.join(repr(b) for b in bad) or 'nothing'}; no zk:// and no path")
    return ",".join(hosts)


def split_chroot(connect: str) -> tuple[str, str]:
    """("h1:2181,h2:2181", "/chroot") of a ZooKeeper connect string; the chroot is "" when there is none."""
    hosts, slash, path = connect.partition("/")
    return hosts, (slash + path if slash else "")


def own_container_name(job_id: str) -> str:
    return f"scylla-zk-{job_id}"


class JobZooKeeper(Protocol):
    def prepare(self, job_id: str, network: str) -> str:
        """Make the job's ZooKeeper ready to be used; returns its tasks' SCYLLA_ZK_HOSTS. Raises ZooKeeperError."""


class SharedZooKeeper:
    """A ZooKeeper the cluster has; each job gets the chroot `/scylla/jobs/<job>`."""

    def __init__(self, hosts: str, kazoo_factory=None) -> None:
        self.hosts = hosts
        self._factory = kazoo_factory or _kazoo

    def prepare(self, job_id: str, network: str) -> str:
        root = job_zookeeper_root(job_id)
        client = self._connect(self.hosts)
        try:
            client.ensure_path(root)
        finally:
            _close(client)
        return f"{self.hosts}{root}"

    def _connect(self, hosts: str):
        client = self._factory(hosts)
        try:
            client.start(timeout=ZK_CONNECT_TIMEOUT_S)
        except Exception as exc:  # kazoo raises its own timeout type
            _close(client)
            raise ZooKeeperError(f"ZooKeeper at {hosts} does not answer ({exc.__class__.__name__}); "
                                 "real SINGA jobs of more than one process meet there: check `--zk` or "
                                 "the cluster's ZooKeeper (`scylla-singa cluster status`)") from None
        return client


class OwnZooKeeper:
    """A ZooKeeper server of the job's own, on its overlay (`<job>-zk:2181`)."""

    def __init__(self, client: docker.DockerClient, image: str = ZOOKEEPER_IMAGE) -> None:
        self.client, self.image = client, image

    def prepare(self, job_id: str, network: str) -> str:
        alias = job_zookeeper_alias(job_id)
        name = own_container_name(job_id)
        try:
            existing = self.client.containers.list(all=True, filters={"name": f"^{name}$"})
            if existing and existing[0].status != "running":
                existing[0].remove(force=True)
                existing = []
            if not existing:
                self._start(job_id, name, alias, network)
        except docker.errors.ImageNotFound:
            raise ZooKeeperError(f"image {self.image} is missing: it runs the ZooKeeper a real SINGA job of more "
                                 "than one process needs; build it with `scylla-singa images build zookeeper`, "
                                 "or give `run --zk HOST:PORT`") from None
        except docker.errors.APIError as exc:
            raise ZooKeeperError(f"cannot start the job's ZooKeeper ({self.image}): {exc.explanation}") from None
        return f"{alias}:{ZOOKEEPER_PORT}"

    def _start(self, job_id: str, name: str, alias: str, network: str) -> None:
        endpoint = docker.types.EndpointConfig(self.client.api._version, aliases=[alias])
        self.client.containers.run(
            self.image, name=name, hostname=alias, detach=True, labels={MANAGED_LABEL: "true", JOB_LABEL: job_id},
            environment={"ZK_HEAP": OWN_ZK_HEAP}, network=network, networking_config={network: endpoint})


def release_job_zookeeper(zk_hosts: str, job_id: str, client: docker.DockerClient | None,
                          kazoo_factory=None) -> None:
    """Remove what `prepare` made for `job_id`, told by the tasks' SCYLLA_ZK_HOSTS; idempotent.

    A chroot (a shared ZooKeeper) is deleted with everything under it; a
    job's own server is removed. Raises ZooKeeperError when the shared
    ZooKeeper cannot be reached (its znodes stay, and the message says where).
    """
    hosts, chroot = split_chroot(zk_hosts)
    if chroot:
        if chroot != job_zookeeper_root(job_id):
            raise ZooKeeperError(f"refusing to remove {chroot}: not job {job_id}'s ZooKeeper root")
        shared = SharedZooKeeper(hosts, kazoo_factory)
        zk = shared._connect(hosts)
        try:
            zk.delete(chroot, recursive=True)
        except Exception as exc:  # noqa: BLE001 - kazoo's NoNodeError: already gone
            if exc.__class__.__name__ != "NoNodeError":
                raise ZooKeeperError(f"cannot remove {chroot} from ZooKeeper at {hosts}: {exc}") from None
        finally:
            _close(zk)
    elif client is not None:
        for c in client.containers.list(all=True, filters={"name": f"^{own_container_name(job_id)}$"}):
            try:
                c.remove(force=True)
            except docker.errors.NotFound:
                pass


def _kazoo(hosts: str):
    from kazoo.client import KazooClient

    return KazooClient(hosts=hosts, timeout=10.0)


def _close(client) -> None:
    try:
        client.stop()
        client.close()
    except Exception:  # noqa: BLE001 - closing must not hide the real outcome
        log.debug("closing a ZooKeeper client", exc_info=True)
