"""The I/O shell around FrameworkCore: pymesos callbacks in, driver calls out.

pymesos calls the Scheduler methods from its own thread, and an exception
escaping any of them aborts the driver (and, without failover, tears every
task down). So every callback only turns its arguments into an event and
queues it; it never waits on Docker, HDFS or HTTP. One event thread feeds
events to the core and carries out the instructions it returns, and it
never blocks on the outside world either:

- preparing a job (the overlay through the swarm manager, the job's files
  delivered - an HDFS upload -, the master's /master/state for the
  never-fits check) runs on the I/O pool (`io_workers` threads), which
  posts JobPrepared or JobPrepareFailed back into the event queue;
- calls on the Mesos driver (each an HTTP POST to the master) run on one
  thread of their own, so they reach the master in the order the core gave
  them;
- a job's end (its result from the agents' sandboxes, the network and the
  files removed) runs on a thread of its own.

The store (a local SQLite file) is written on the event thread.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import docker
from pymesos import Scheduler

from scylla_singa.common.transition_table import InstructionDispatch
from scylla_singa.contracts import CLUSTER_FILE, ENV_ZK_HOSTS, JOB_CONF, job_network_name, job_zookeeper_alias
from scylla_singa.delivery.job_files import Artifacts, Delivery, DeliveryError, cluster_file
from scylla_singa.delivery.volume import share_workspace, shared_workspace_path
from scylla_singa.jobconf.parse import parse_job_text
from scylla_singa.mesos.api.credentials import Credential
from scylla_singa.swarm.overlays import SwarmError, create_job_network, remove_job_network
from . import core_events as ev
from .core import FrameworkCore
from .job_zookeeper import JobZooKeeper, ZooKeeperError, release_job_zookeeper
from .mesos_http import MesosHttp, MesosHttpError
from .model import Job, JobSpec, JobState
from .progress_book import ProgressBook
from .results import collect_result
from .scheduler_driver import SchedulerDriver
from .store import JobStore
from .subscription_watch import SubscriptionWatch

log = logging.getLogger("scylla_singa.framework")
FAILOVER_TIMEOUT_S = 7 * 24 * 3600.0
DRIVER_JOIN_S = 15.0   # how long stop() waits for pymesos's IO thread to send TEARDOWN and close


class FrameworkShell(Scheduler):
    def __init__(self, core: FrameworkCore, store: JobStore, delivery: Delivery,
                 docker_manager: docker.DockerClient | None, book: ProgressBook,
                 clock: Callable[[], float] = time.time, tick_s: float = 0.5, io_workers: int = 4,
                 notify: Callable[[str], None] = log.warning, zookeeper: JobZooKeeper | None = None) -> None:
        """`notify` tells the user what happened to the master link, one line per event (the terminal)."""
        self.core, self.store, self.delivery, self.docker = core, store, delivery, docker_manager
        self.notify = notify
        self.zookeeper = zookeeper
        self.watch = SubscriptionWatch(follows_leader=False)
        self._stopping = False
        self.book, self.clock, self.tick_s = book, clock, tick_s
        self.driver: SchedulerDriver | None = None
        self.master_uri = ""
        self.credential: Credential | None = None   # how the framework authenticates to the master and agents
        self.events: queue.Queue[ev.Event | None] = queue.Queue()
        self.lock = threading.RLock()
        self.subscribed = threading.Event()
        self.fatal: str | None = None
        self.ended: dict[str, threading.Event] = {}
        self._worker: threading.Thread | None = None
        self._cleanups: list[threading.Thread] = []
        self._io = ThreadPoolExecutor(io_workers, thread_name_prefix="scylla-io")
        self._master_calls = ThreadPoolExecutor(1, thread_name_prefix="scylla-master-calls")
        self._do = InstructionDispatch("the framework shell", {
            ev.Accept: self._do_Accept, ev.Decline: self._do_Decline, ev.Revive: self._do_Revive,
            ev.Suppress: self._do_Suppress, ev.KillTask: self._do_KillTask, ev.Reconcile: self._do_Reconcile,
            ev.Persist: self._do_Persist, ev.PrepareJob: self._do_PrepareJob, ev.JobEnded: self._do_JobEnded,
        }).require(ev.Instruction.__args__)

    # --- lifecycle ------------------------------------------------------------

    def start(self, master: str, framework_id: str | None = None, name: str = "scylla-singa",
              user: str = "root", credential: Credential | None = None,
              driver_class: Callable[..., Any] = SchedulerDriver) -> None:
        """Start the event thread and the driver (`driver_class`: ours on pymesos's, or a test's stand-in)."""
        info: dict[str, Any] = {"user": user, "name": name, "failover_timeout": FAILOVER_TIMEOUT_S,
                                "capabilities": [{"type": "GPU_RESOURCES"}]}
        if framework_id:
            info["id"] = {"value": framework_id}
        self.master_uri = master
        self.credential = credential
        self.watch = SubscriptionWatch(follows_leader=master.startswith(("zk://", "zoo://")))
        self.driver = driver_class(self, info, master, use_addict=False, failover=True,
                                   principal=credential.principal if credential else None,
                                   secret=credential.secret if credential else None)
        self._worker = threading.Thread(target=self._work, name="scylla-framework", daemon=True)
        self._worker.start()
        self.driver.start()

    def stop(self, teardown: bool) -> None:
        """Stop the driver; with `teardown`, unregister (Mesos kills whatever still runs).

        pymesos's stop() only asks its IO thread to end; that thread sends the
        TEARDOWN on its way out, and it is a daemon thread: a process exiting
        right after stop() could kill it first, leaving the framework
        registered for its whole failover timeout (a week). So the driver is
        joined, for at most DRIVER_JOIN_S.
        """
        self._stopping = True  # the stream the driver closes now is not a lost master
        if self.driver is not None:
            try:
                self.driver.stop(failover=not teardown)
            except Exception:  # noqa: BLE001
                log.exception("stopping the driver")
            if not self._join_driver(DRIVER_JOIN_S):
                log.warning("the Mesos driver did not stop within %gs%s", DRIVER_JOIN_S,
                            "; the framework may stay registered" if teardown else "")
        self.events.put(None)
        if self._worker:
            self._worker.join(10)
        # Calls the stopped driver would drop anyway, and preparations nobody will read, are not waited for.
        self._master_calls.shutdown(wait=False, cancel_futures=True)
        self._io.shutdown(wait=False, cancel_futures=True)
        for t in self._cleanups:
            t.join(60)

    def _join_driver(self, timeout_s: float) -> bool:
        """Wait for pymesos's IO thread to end (its join() takes no timeout); True when it did."""
        joiner = threading.Thread(target=self.driver.join, name="scylla-driver-join", daemon=True)
        joiner.start()
        joiner.join(timeout_s)
        return not joiner.is_alive()

    def submit(self, spec: JobSpec) -> None:
        self.ended[spec.job_id] = threading.Event()
        self.events.put(ev.SubmitJob(spec, self.store.new_progress_token(spec.job_id)))

    def adopt(self, job: Job) -> None:
        """Carry on a stored job; one stored before progress tokens existed gets one for its next launch."""
        self.ended[job.job_id] = threading.Event()
        if not job.progress_token:
            job.progress_token = self.store.new_progress_token(job.job_id)
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
                if type(event) is ev.Disconnected and self.watch.lost_at is not None and self.core.framework_id:
                    self.store.set_master_lost(self.core.framework_id, self.watch.lost_at)  # for `status`
                if type(event) is ev.Registered and event.framework_id:
                    self.store.set_meta("framework_id", event.framework_id)
                    self.store.set_master_lost(event.framework_id, None)
                    if self.master_address():  # the leader now: `ui` and `logs` read it after a failover
                        self.store.set_meta(JobStore.leader_key(event.framework_id), self.master_address())
                for ins in instructions:
                    self._do(ins)
            except Exception:  # noqa: BLE001 - one bad event must not stop the framework
                log.exception("handling %s", type(event).__name__)

    def _call(self, what: str, fn: Callable[[], Any]) -> None:
        """Queue a driver call for the master-calls thread (in order; the event thread goes on)."""
        self._master_calls.submit(self._call_now, what, fn)

    @staticmethod
    def _call_now(what: str, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - e.g. not connected: the master re-offers
            log.warning("%s failed: %s", what, exc)

    def _do_Accept(self, i: ev.Accept) -> None:
        ops = [{"type": "LAUNCH", "launch": {"task_infos": list(i.tasks)}}]
        self._master_calls.submit(self._accept_now, i, ops)

    def _accept_now(self, i: ev.Accept, ops: list[dict[str, Any]]) -> None:
        """ACCEPT on the master-calls thread; a failed one goes back to the core (its launch may never arrive)."""
        try:
            self.driver.acceptOffers([{"value": o} for o in i.offer_ids], ops, {"refuse_seconds": i.refuse_seconds})
        except Exception as exc:  # noqa: BLE001 - e.g. not subscribed yet, the stream being re-established
            log.warning("ACCEPT failed: %s", exc)
            tasks = tuple(t["task_id"]["value"] for t in i.tasks)
            self.events.put(ev.AcceptFailed(i.offer_ids, tasks, f"{type(exc).__name__}: {exc}"))

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
        self._io.submit(self._prepare, job)

    def _prepare(self, job: Job) -> None:
        """On the I/O pool: the overlay, the files delivered, the cluster sized; the outcome as an event."""
        try:
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
        except Exception:  # noqa: BLE001 - a future's exception is otherwise never seen
            log.exception("preparing job %s", job.job_id)

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
            agents = MesosHttp(master, self.credential).cluster_agents()
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
                result = collect_result(MesosHttp(master, self.credential), job)
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
        self._tell(lambda: self.watch.subscribed(driver.master, self.clock()))

    def reregistered(self, driver, master_info) -> None:
        self._queue(lambda: ev.Registered(driver.framework_id), registered=True)
        self._tell(lambda: self.watch.subscribed(driver.master, self.clock()))

    def disconnected(self, driver) -> None:
        self.subscribed.clear()
        if not self._stopping:  # first: the event thread reads when it was lost from the watch
            self._tell(lambda: self.watch.lost(driver.master, self.clock()))
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

    def _tell(self, line: Callable[[], str | None]) -> None:
        """Tell the user `line()` if it says anything; never raise into pymesos."""
        try:
            text = line()
            if text:
                self.notify(text)
        except Exception:  # noqa: BLE001
            log.exception("telling the user about the master link")

    def _queue(self, make: Callable[[], ev.Event], registered: bool = False) -> None:
        """Put the callback's event on the queue; nothing else (the event thread records the framework id)."""
        try:
            self.events.put(make())
            if registered:
                self.subscribed.set()
        except Exception:  # noqa: BLE001
            log.exception("queueing a Mesos event")
