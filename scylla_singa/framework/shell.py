"""The I/O shell around FrameworkCore: pymesos callbacks in, driver calls out.

pymesos calls the Scheduler methods from its own thread, and an exception
escaping any of them aborts the driver (and, without failover, tears every
task down). So every callback only turns its arguments into an event and
queues it; one worker thread feeds events to the core and carries out the
instructions it returns. Everything that touches the outside world - the
Mesos driver, Docker (job networks), delivery, the store - happens here.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import docker
from pymesos import MesosSchedulerDriver, Scheduler

from scylla_singa.contracts import CLUSTER_FILE, ENV_ZK_HOSTS, JOB_CONF, job_network_name, job_zookeeper_alias
from scylla_singa.delivery.job_files import Artifacts, Delivery, DeliveryError, cluster_file
from scylla_singa.delivery.volume import share_workspace, shared_workspace_path
from scylla_singa.jobconf.parse import parse_job_text
from scylla_singa.swarm.overlays import SwarmError, create_job_network, remove_job_network
from . import core_events as ev
from .core import FrameworkCore
from .job_zookeeper import JobZooKeeper, ZooKeeperError, release_job_zookeeper
from .mesos_http import MesosHttp, MesosHttpError
from .model import Job, JobSpec, JobState
from .progress_book import ProgressBook
from .results import collect_result
from .store import JobStore

log = logging.getLogger("scylla_singa.framework")
FAILOVER_TIMEOUT_S = 7 * 24 * 3600.0


class FrameworkShell(Scheduler):
    def __init__(self, core: FrameworkCore, store: JobStore, delivery: Delivery,
                 docker_manager: docker.DockerClient | None, book: ProgressBook,
                 clock: Callable[[], float] = time.time, tick_s: float = 0.5,
                 zookeeper: JobZooKeeper | None = None) -> None:
        self.core, self.store, self.delivery, self.docker = core, store, delivery, docker_manager
        self.zookeeper = zookeeper
        self.book, self.clock, self.tick_s = book, clock, tick_s
        self.driver: MesosSchedulerDriver | None = None
        self.master_uri = ""
        self.events: queue.Queue[ev.Event | None] = queue.Queue()
        self.lock = threading.RLock()
        self.subscribed = threading.Event()
        self.fatal: str | None = None
        self.ended: dict[str, threading.Event] = {}
        self._worker: threading.Thread | None = None
        self._cleanups: list[threading.Thread] = []

    # --- lifecycle ------------------------------------------------------------

    def start(self, master: str, framework_id: str | None = None, name: str = "scylla-singa",
              user: str = "root", principal: str | None = None, secret: str | None = None) -> None:
        info: dict[str, Any] = {"user": user, "name": name, "failover_timeout": FAILOVER_TIMEOUT_S,
                                "capabilities": [{"type": "GPU_RESOURCES"}]}
        if framework_id:
            info["id"] = {"value": framework_id}
        self.master_uri = master
        self.driver = MesosSchedulerDriver(self, info, master, use_addict=False, failover=True,
                                           principal=principal, secret=secret)
        self._worker = threading.Thread(target=self._work, name="scylla-framework", daemon=True)
        self._worker.start()
        self.driver.start()

    def stop(self, teardown: bool) -> None:
        """Stop the driver; with `teardown`, unregister (Mesos kills whatever still runs)."""
        if self.driver is not None:
            try:
                self.driver.stop(failover=not teardown)
            except Exception:  # noqa: BLE001
                log.exception("stopping the driver")
        self.events.put(None)
        if self._worker:
            self._worker.join(10)
        for t in self._cleanups:
            t.join(60)

    def submit(self, spec: JobSpec) -> None:
        self.ended[spec.job_id] = threading.Event()
        self.events.put(ev.SubmitJob(spec))

    def adopt(self, job: Job) -> None:
        self.ended[job.job_id] = threading.Event()
        self.events.put(ev.AdoptJob(job))

    def kill(self, job_id: str) -> bool:
        with self.lock:
            known = job_id in self.core.jobs
        if known:
            self.events.put(ev.KillJob(job_id))
        return known

    def master_address(self) -> str | None:
        return self.driver.master if self.driver else None

    def job(self, job_id: str) -> Job | None:
        with self.lock:
            return self.core.jobs.get(job_id)

    # --- the worker -----------------------------------------------------------

    def _work(self) -> None:
        while True:
            try:
                event = self.events.get(timeout=self.tick_s)
            except queue.Empty:
                event = ev.Tick(self.clock())
            if event is None:
                return
            try:
                with self.lock:
                    instructions = self.core.handle(event, self.clock())
                for ins in instructions:
                    self._do(ins)
            except Exception:  # noqa: BLE001 - one bad event must not stop the framework
                log.exception("handling %s", type(event).__name__)

    def _do(self, ins: ev.Instruction) -> None:
        getattr(self, "_do_" + type(ins).__name__)(ins)

    def _call(self, what: str, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - e.g. not connected: the master re-offers
            log.warning("%s failed: %s", what, exc)

    def _do_Accept(self, i: ev.Accept) -> None:
        ops = [{"type": "LAUNCH", "launch": {"task_infos": list(i.tasks)}}]
        self._call("ACCEPT", lambda: self.driver.acceptOffers([{"value": o} for o in i.offer_ids], ops,
                                                               {"refuse_seconds": i.refuse_seconds}))

    def _do_Decline(self, i: ev.Decline) -> None:
        self._call("DECLINE", lambda: self.driver.declineOffer([{"value": o} for o in i.offer_ids],
                                                                {"refuse_seconds": i.refuse_seconds}))

    def _do_Revive(self, i: ev.Revive) -> None:
        self._call("REVIVE", self.driver.reviveOffers)

    def _do_Suppress(self, i: ev.Suppress) -> None:
        self._call("SUPPRESS", self.driver.suppressOffers)

    def _do_KillTask(self, i: ev.KillTask) -> None:
        self._call("KILL", lambda: self.driver.killTask({"value": i.task_id}))

    def _do_Reconcile(self, i: ev.Reconcile) -> None:
        tasks = [{"task_id": {"value": t}, "agent_id": {"value": a}} for t, a in i.task_ids]
        self._call("RECONCILE", lambda: self.driver.reconcileTasks(tasks))

    def _do_Persist(self, i: ev.Persist) -> None:
        with self.lock:
            job = self.core.jobs[i.job_id]
            self.store.save(job, self.core.framework_id)

    def _do_PrepareJob(self, i: ev.PrepareJob) -> None:
        with self.lock:
            job = self.core.jobs[i.job_id]
        try:
            network = job_network_name(job.job_id)
            if self.docker is not None:
                network = create_job_network(self.docker, job.job_id).name
            files = {JOB_CONF: job.spec.conf_text.encode(), CLUSTER_FILE: cluster_file(job.job_id, job.plan)}
            artifacts = self.delivery.prepare(job.job_id, files, network)
            artifacts = self._for_runtime(job, artifacts)
        except (DeliveryError, SwarmError, ZooKeeperError, docker.errors.DockerException) as exc:
            self.events.put(ev.JobPrepareFailed(job.job_id, f"cannot prepare the job: {exc}"))
            return
        self.events.put(ev.JobPrepared(job.job_id, artifacts, self._cluster()))

    def _for_runtime(self, job: Job, artifacts: Artifacts) -> Artifacts:
        """What the job's runtime needs beyond delivery: a shared workspace (`run --workspace`), and for
        real SINGA of more than one process a ZooKeeper (its connect string goes into every task)."""
        spec = job.spec
        if spec.workspace_dir:
            conf_workspace = parse_job_text(spec.conf_text, spec.conf_path).proto.cluster.workspace
            artifacts = share_workspace(artifacts, Path(spec.workspace_dir), shared_workspace_path(conf_workspace))
        if spec.apache_singa and job.plan.nprocs > 1:
            if self.zookeeper is None:
                raise ZooKeeperError("this framework has no ZooKeeper to give a real SINGA job of "
                                     f"{job.plan.nprocs} processes")
            hosts = self.zookeeper.prepare(job.job_id, artifacts.network)
            artifacts = replace(artifacts, env=tuple(kv for kv in artifacts.env if kv[0] != ENV_ZK_HOSTS)
                                + ((ENV_ZK_HOSTS, hosts),))
        return artifacts

    def _cluster(self):
        master = self.master_address()
        if not master:
            return None
        try:
            agents = MesosHttp(master).cluster_agents()
        except MesosHttpError as exc:
            log.warning("cannot size the cluster (never-fits check skipped): %s", exc)
            return None
        return agents or None

    def _do_JobEnded(self, i: ev.JobEnded) -> None:
        t = threading.Thread(target=self._finish_job, args=(i.job_id,), name=f"end-{i.job_id}", daemon=True)
        self._cleanups.append(t)
        t.start()

    def _finish_job(self, job_id: str) -> None:
        """Gather the result, remove the job's ZooKeeper, network and delivery files, then signal the end."""
        with self.lock:
            job = self.core.jobs[job_id]
        try:
            master = self.master_address()
            if master and job.tasks:
                result = collect_result(MesosHttp(master), job)
                with self.lock:
                    job.result.update(result)
            zk_hosts = dict(job.artifacts.env).get(ENV_ZK_HOSTS) if job.artifacts else None
            if zk_hosts is None and job.spec.apache_singa and job.plan.nprocs > 1:
                zk_hosts = job_zookeeper_alias(job_id)   # prepared no further: at most its own server
            if zk_hosts:   # before the network: the job's own ZooKeeper is attached to it
                self._release_zookeeper(job, zk_hosts)
            if self.docker is not None:
                remove_job_network(self.docker, job_id, timeout_s=60)
            self.delivery.cleanup(job_id, keep_workspace=job.state is JobState.FINISHED)
        except Exception as exc:  # noqa: BLE001 - report, never hang the waiter
            log.warning("cleaning up job %s: %s", job_id, exc)
            with self.lock:
                job.result.setdefault("cleanup_error", str(exc))
        finally:
            with self.lock:
                self.store.save(job, self.core.framework_id)
            self.ended.setdefault(job_id, threading.Event()).set()

    def _release_zookeeper(self, job: Job, zk_hosts: str) -> None:
        try:
            release_job_zookeeper(zk_hosts, job.job_id, self.docker)
        except (ZooKeeperError, docker.errors.DockerException) as exc:  # the rest of the cleanup still runs
            log.warning("removing job %s's ZooKeeper: %s", job.job_id, exc)
            with self.lock:
                job.result.setdefault("cleanup_error", str(exc))

    # --- pymesos callbacks (never raise) ----------------------------------------

    def registered(self, driver, framework_id, master_info) -> None:
        self._queue(lambda: ev.Registered(framework_id["value"]), registered=True)

    def reregistered(self, driver, master_info) -> None:
        self._queue(lambda: ev.Registered(driver.framework_id), registered=True)

    def disconnected(self, driver) -> None:
        self.subscribed.clear()
        self._queue(ev.Disconnected)

    def resourceOffers(self, driver, offers) -> None:
        self._queue(lambda: ev.OffersReceived(tuple(offers)))

    def offerRescinded(self, driver, offer_id) -> None:
        self._queue(lambda: ev.OfferRescinded(offer_id["value"]))

    def statusUpdate(self, driver, status) -> None:
        self._queue(lambda: ev.StatusUpdate(status))

    def slaveLost(self, driver, agent_id) -> None:
        log.warning("agent %s lost", agent_id.get("value"))

    def executorLost(self, driver, executor_id, agent_id, status) -> None:
        log.warning("executor %s on agent %s lost", executor_id.get("value"), agent_id.get("value"))

    def error(self, driver, message) -> None:
        log.error("master says: %s", message)
        self.fatal = message
        self.subscribed.clear()

    def _queue(self, make: Callable[[], ev.Event], registered: bool = False) -> None:
        try:
            self.events.put(make())
            if registered:
                fid = self.driver.framework_id if self.driver else None
                if fid:
                    self.store.set_meta("framework_id", fid)
                self.subscribed.set()
        except Exception:  # noqa: BLE001
            log.exception("queueing a Mesos event")
