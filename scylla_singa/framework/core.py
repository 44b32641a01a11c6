"""The framework's brain: jobs, held offers and gangs, as a pure state machine.

`FrameworkCore.handle(event) -> [instructions]` is the only way its state
changes; it knows nothing of pymesos, HTTP or Docker (the shell in
shell.py does). That keeps every scheduling decision testable with plain
dicts: offers trickling in, tasks failing, the framework restarting.

Gang scheduling: offers are held while any job waits; on every change the
waiting jobs (oldest first) are placed against all held offers; a job is
launched only when every one of its processes fits at once. Offers nobody
needs are declined with a filter; held offers are all released when the
gang timeout passes without a fit, so a waiting job never hoards a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from scylla_singa.common.transition_table import Story, TransitionTable
from scylla_singa.contracts import parse_task_id, task_id
from scylla_singa.jobconf.parse import parse_job_text
from scylla_singa.jobconf.plan import plan_job
from scylla_singa.placement.fit_status import Code
from scylla_singa.placement.place import NotPlaced, Placed, place
from scylla_singa.placement.policy import Policy, load_policy
from . import core_events as ev
from .agent_backoff import AgentBackoff, blames_agent
from .job_lifecycle import JobEvent as JE, advance
from .model import ENDED_TASK_STATES, Job, JobSpec, JobState as S, TaskRecord
from .offers import agent_views, role_of
from .one_machine_hint import one_machine_hint
from .retry import classify_failure, launch_refused
from .taskinfo import build_task


@dataclass(frozen=True)
class CoreConfig:
    gang_timeout_s: float = 30.0      # release held offers after this long without a fit
    refuse_seconds: float = 5.0       # filter on offers declined because nobody needs them
    retry_refuse_seconds: float = 1.0  # filter when releasing offers we may want back soon
    backoff_base_s: float = 2.0
    backoff_max_s: float = 60.0
    kill_grace_s: float = 10.0
    kill_timeout_s: float = 60.0      # after this, a task we killed counts as gone
    progress_url: str | None = None
    agent_backoff_s: float = 30.0     # an agent that could not run a container is set aside this long (doubling)
    one_machine: bool = False          # the cluster is this machine's embedded agent: say how to run anyway


@dataclass
class HeldOffer:
    offer: dict[str, Any]
    since: float


class FrameworkCore:
    def __init__(self, config: CoreConfig = CoreConfig(),
                 policy_loader: Callable[[str], Policy] = load_policy) -> None:
        self.config = config
        self.jobs: dict[str, Job] = {}
        self.held: dict[str, HeldOffer] = {}
        self.framework_id: str | None = None
        self.suppressed = False
        self.now = 0.0
        self._policies: dict[str, Policy] = {}
        self._policy_loader = policy_loader
        self.story = Story()
        self.agent_backoff = AgentBackoff(base_s=config.agent_backoff_s)

    # --- entry point ---------------------------------------------------------

    @property
    def registration(self) -> str:
        """The core's state: "unregistered" until Mesos first says who the framework is, then "registered"."""
        return "registered" if self.framework_id else "unregistered"

    def handle(self, event: ev.Event, now: float) -> list[ev.Instruction]:
        """Apply one event at time `now`; return what the shell must do. Raises InvalidTransition."""
        self.now = max(self.now, now)
        state = self.registration
        handler = CORE_TABLE.row(state, type(event), self.story)
        if type(event) is not ev.Tick:  # ticks twice a second would crowd the story out
            self.story.add(f"{state} <- {type(event).__name__}")
        return handler(self, event)

    # --- registration --------------------------------------------------------

    def _on_Registered(self, e: ev.Registered) -> list[ev.Instruction]:
        self.framework_id = e.framework_id
        self.suppressed = False
        known = tuple((t.task_id, t.agent_id) for j in self.jobs.values() for t in j.live_tasks())
        out: list[ev.Instruction] = [ev.Reconcile(known)] if known else []
        out.append(ev.Reconcile(()))  # implicit: learn of tasks we do not know (orphans)
        return out + self._schedule()

    def _on_Disconnected(self, e: ev.Disconnected) -> list[ev.Instruction]:
        self.held.clear()  # offers die with the subscription
        return []

    # --- jobs ----------------------------------------------------------------

    def policy(self, name: str) -> Policy:
        if name not in self._policies:
            self._policies[name] = self._policy_loader(name)
        return self._policies[name]

    def _on_SubmitJob(self, e: ev.SubmitJob) -> list[ev.Instruction]:
        spec = e.spec
        plan = plan_job(parse_job_text(spec.conf_text, spec.conf_path), spec.plan_options)
        self.policy(spec.policy)
        job = Job(spec, plan, progress_token=e.progress_token)
        job.history.append((self.now, S.PREPARING.value, "submitted"))
        self.jobs[spec.job_id] = job
        return [ev.PrepareJob(spec.job_id), ev.Persist(spec.job_id)]

    def _on_AdoptJob(self, e: ev.AdoptJob) -> list[ev.Instruction]:
        job: Job = e.job
        self.jobs[job.job_id] = job
        self.policy(job.spec.policy)
        if job.state is S.PREPARING:
            return [ev.PrepareJob(job.job_id)]
        return []

    def _on_JobPrepared(self, e: ev.JobPrepared) -> list[ev.Instruction]:
        job = self.jobs[e.job_id]
        job.artifacts = e.artifacts
        if job.state is not S.PREPARING:
            return []
        if e.cluster is not None:
            never = place(job.plan, e.cluster, self.policy(job.spec.policy))
            if isinstance(never, NotPlaced):
                hint = one_machine_hint(job.spec, job.plan, e.cluster, self.policy(job.spec.policy)) \
                    if self.config.one_machine else ""
                job.failure = f"can never fit this cluster: {never.summary()}" + (f"; {hint}" if hint else "")
                advance(job, JE.NEVER_FITS, job.failure, self.now)
                return [ev.Persist(job.job_id), ev.JobEnded(job.job_id)]
        advance(job, JE.PREPARED, "prepared", self.now)
        return [ev.Persist(job.job_id)] + self._wake()

    def _on_JobPrepareFailed(self, e: ev.JobPrepareFailed) -> list[ev.Instruction]:
        job = self.jobs[e.job_id]
        job.failure = e.message
        if job.state is S.PREPARING:
            advance(job, JE.PREPARE_FAILED, e.message, self.now)
        return [ev.Persist(job.job_id), ev.JobEnded(job.job_id)]

    def _on_KillJob(self, e: ev.KillJob) -> list[ev.Instruction]:
        job = self.jobs.get(e.job_id)
        if job is None or job.state.terminal or job.state in (S.KILLING, S.FAILING):
            return []
        # Nothing launched yet: KILLED at once; tasks to stop: KILLING until they have (JOB_TABLE says which).
        if advance(job, JE.USER_KILL, "killed by the user", self.now) is S.KILLED:
            return [ev.Persist(job.job_id), ev.JobEnded(job.job_id)] + self._schedule()
        return self._kill_live(job) + self._settle(job)

    # --- offers and gangs ------------------------------------------------------

    def _on_OffersReceived(self, e: ev.OffersReceived) -> list[ev.Instruction]:
        for offer in e.offers:
            self.held[offer["id"]["value"]] = HeldOffer(offer, self.now)
        return self._schedule()

    def _on_OfferRescinded(self, e: ev.OfferRescinded) -> list[ev.Instruction]:
        self.held.pop(e.offer_id, None)
        return []

    def _waiting(self) -> list[Job]:
        return sorted((j for j in self.jobs.values() if j.state is S.WAITING), key=lambda j: j.spec.submitted_at)

    def _wake(self) -> list[ev.Instruction]:
        """A job started waiting: make sure offers come."""
        out: list[ev.Instruction] = []
        if self.suppressed:
            self.suppressed = False
            out.append(ev.Revive())
        return out + self._schedule()

    def _schedule(self) -> list[ev.Instruction]:
        """Place waiting jobs on held offers; release what is not needed."""
        out: list[ev.Instruction] = self._decline_avoided()
        set_aside = self.agent_backoff.explain(self.now)
        for job in self._waiting():
            if not self.held:
                job.waiting_reason = set_aside or job.waiting_reason or "waiting for offers"
                continue
            result = place(job.plan, agent_views(h.offer for h in self.held.values()),
                           self.policy(job.spec.policy))
            if isinstance(result, Placed):
                out += self._launch(job, result)
            else:
                job.waiting_reason = result.summary() + (f"; {set_aside}" if set_aside else "")
        if not self._waiting():
            if self.held:
                out.append(ev.Decline(tuple(self.held), self.config.refuse_seconds))
                self.held.clear()
            if not self.suppressed and not self._expecting_offers():
                self.suppressed = True
                out.append(ev.Suppress())
        return out

    def _decline_avoided(self) -> list[ev.Instruction]:
        """Offers of agents set aside (agent_backoff) go back, filtered for as long as they stay aside."""
        avoided = self.agent_backoff.avoided(self.now)
        out: list[ev.Instruction] = []
        for agent, left in avoided.items():
            ids = tuple(oid for oid, h in self.held.items() if h.offer["agent_id"]["value"] == agent)
            for oid in ids:
                del self.held[oid]
            if ids:
                out.append(ev.Decline(ids, max(1.0, round(left, 1))))
        return out

    def _expecting_offers(self) -> bool:
        return any(j.state in (S.BACKOFF, S.RELAUNCHING) for j in self.jobs.values())

    def _launch(self, job: Job, placed: Placed) -> list[ev.Instruction]:
        job.attempt += 1
        job.tasks = {}
        job.waiting_reason = ""
        out: list[ev.Instruction] = []
        by_agent: dict[str, list[int]] = {}
        for pid, agent in placed.assignment.items():
            by_agent.setdefault(agent, []).append(pid)
        procs = {p.id: p for p in job.plan.procs}
        for agent, pids in by_agent.items():
            offers = [h.offer for oid, h in self.held.items() if h.offer["agent_id"]["value"] == agent]
            role, allocation = role_of(offers)
            offers_bw = any(r.get("name") == "net_bw" for o in offers for r in o.get("resources", []))
            tasks = []
            for pid in sorted(pids):
                tasks.append(build_task(job.spec, procs[pid], job.attempt, agent, job.artifacts, role, allocation,
                                        placed.proc_cross_mbps[pid] if offers_bw else None,
                                        self.config.progress_url, self.config.kill_grace_s,
                                        job.progress_token))
                tid = task_id(job.job_id, pid, job.attempt)
                job.tasks[tid] = TaskRecord(tid, pid, job.attempt, agent, offers[0].get("hostname", agent),
                                            updated_at=self.now)
            ids = tuple(o["id"]["value"] for o in offers)
            for oid in ids:
                del self.held[oid]
            out.append(ev.Accept(agent, ids, tuple(tasks), self.config.refuse_seconds))
        advance(job, JE.GANG_LAUNCHED, f"attempt {job.attempt} on {placed.agents_used} agent(s)", self.now)
        return out + [ev.Persist(job.job_id)]

    # --- task updates ---------------------------------------------------------

    def _on_StatusUpdate(self, e: ev.StatusUpdate) -> list[ev.Instruction]:
        status = e.status
        tid = status["task_id"]["value"]
        agent = status.get("agent_id", {}).get("value", "")
        state = status["state"]
        parsed = parse_task_id(tid)
        job = self.jobs.get(parsed[0]) if parsed else None
        record = job.tasks.get(tid) if job else None
        if record is None:
            # Not a task of a live attempt: an orphan from before a restart. An unreachable one may
            # still run behind a partition and come back: it is killed too.
            live = state == "TASK_UNREACHABLE" or state not in ENDED_TASK_STATES
            return [ev.KillTask(tid, agent)] if live else []
        before, record.state = record.state, state
        record.reason = status.get("reason", "")
        record.message = status.get("message", "")
        record.agent_id = agent or record.agent_id
        record.updated_at = self.now
        record.ip = _ip_of(status) or record.ip
        if state == "TASK_RUNNING":
            self.agent_backoff.succeeded(record.agent_id)
        elif record.terminal and blames_agent(record):
            self.agent_backoff.failed(record.agent_id, record.hostname, self.now,
                                      record.message or record.reason or record.state)
        return self._after_task_change(job, record, before) + [ev.Persist(job.job_id)]

    def _on_AcceptFailed(self, e: ev.AcceptFailed) -> list[ev.Instruction]:
        """An ACCEPT that may never have reached the master: its tasks count as never launched.

        They are killed anyway (the ACCEPT may have arrived and only its answer been lost), and
        its offers declined (they go back to the master if it never used them).
        """
        out: list[ev.Instruction] = [ev.Decline(e.offer_ids, self.config.retry_refuse_seconds)]
        for tid in e.task_ids:
            parsed = parse_task_id(tid)
            job = self.jobs.get(parsed[0]) if parsed else None
            record = job.tasks.get(tid) if job else None
            if record is None or record.terminal:
                continue
            out.append(ev.KillTask(tid, record.agent_id))
            record.state, record.reason = "TASK_DROPPED", ""
            record.message, record.updated_at = f"the ACCEPT launching it failed: {e.error}", self.now
            refused = job.state is S.LAUNCHING
            out += self._launch_refused(job, record) if refused else self._after_task_change(job, record)
            out.append(ev.Persist(job.job_id))
        return out

    def _after_task_change(self, job: Job, record: TaskRecord, before: str = "") -> list[ev.Instruction]:
        if job.state in (S.LAUNCHING, S.RUNNING):
            if record.state == "TASK_FINISHED":
                if all(t.state == "TASK_FINISHED" for t in job.tasks.values()):
                    advance(job, JE.ALL_FINISHED, "every process finished", self.now)
                    return [ev.JobEnded(job.job_id)]
                return []
            if record.terminal and job.state is S.LAUNCHING and launch_refused(record, before):
                return self._launch_refused(job, record)
            if record.terminal:
                return self._process_failed(job, record)
            if job.state is S.LAUNCHING and all(t.state == "TASK_RUNNING" or t.state == "TASK_FINISHED"
                                                for t in job.tasks.values()):
                advance(job, JE.ALL_RUNNING, "every process running", self.now)
            return []
        # The attempt is being stopped or is over: a task that reports itself alive (again: an
        # unreachable one whose agent came back) is killed, not left running unowned.
        alive = not record.terminal and record.state != "TASK_KILLING"
        revived = [ev.KillTask(record.task_id, record.agent_id)] if alive else []
        return revived + self._settle(job)

    def _launch_refused(self, job: Job, record: TaskRecord) -> list[ev.Instruction]:
        """The master refused a launch (an offer rescinded or already used): stop the rest, place again at once.

        Nothing failed, so no restart is used and there is no backoff (Nomad's plan
        applied in part: retry on fresh state). The tasks of the gang that did
        launch on other agents are killed first: a gang runs whole or not at all.
        The master refuses a whole ACCEPT (one per agent), so the other tasks on
        this task's agent get the same answer: they are not killed.
        """
        detail = ", ".join(x for x in (record.reason, record.message) if x)
        why = f"launch refused, placing the gang again: process {record.proc} on {record.hostname}: " \
              f"{record.state} - {detail}"
        advance(job, JE.LAUNCH_REFUSED, why, self.now)
        kills = [k for k in self._kill_live(job) if k.agent_id != record.agent_id]
        return kills + self._settle(job)

    def _process_failed(self, job: Job, record: TaskRecord) -> list[ev.Instruction]:
        verdict = classify_failure(record)
        job.failed_task = record.task_id
        job.failure = verdict.summary
        if verdict.retryable and job.restarts < job.spec.max_restarts:
            job.restarts += 1
            job.restart_reasons.append(verdict.summary)
            advance(job, JE.PROCESS_FAILED, verdict.summary, self.now)
        else:
            why = verdict.summary if not verdict.retryable else \
                f"{verdict.summary} (no restarts left of {job.spec.max_restarts})"
            job.failure = why
            advance(job, JE.GIVEN_UP, why, self.now)
        return self._kill_live(job) + self._settle(job)

    def _kill_live(self, job: Job) -> list[ev.Instruction]:
        job.kill_deadline = self.now + self.config.kill_grace_s + self.config.kill_timeout_s
        return [ev.KillTask(t.task_id, t.agent_id) for t in job.live_tasks()]

    def _settle(self, job: Job) -> list[ev.Instruction]:
        """Finish RESTARTING/RELAUNCHING/FAILING/KILLING once every task of the attempt is terminal."""
        if job.live_tasks():
            return []
        if job.state is S.RELAUNCHING:
            advance(job, JE.ATTEMPT_ENDED, "the refused launch's tasks are gone; placing the gang again", self.now)
            return [ev.Persist(job.job_id)] + self._wake()
        if job.state is S.RESTARTING:
            delay = min(self.config.backoff_max_s, self.config.backoff_base_s * 2 ** (job.restarts - 1))
            job.not_before = self.now + delay
            advance(job, JE.ATTEMPT_ENDED, f"restart {job.restarts} in {delay:g}s", self.now)
            return [ev.Persist(job.job_id)]
        if job.state is S.FAILING:
            advance(job, JE.ATTEMPT_ENDED, job.failure, self.now)
            return [ev.Persist(job.job_id), ev.JobEnded(job.job_id)] + self._schedule()
        if job.state is S.KILLING:
            advance(job, JE.ATTEMPT_ENDED, "killed by the user", self.now)
            return [ev.Persist(job.job_id), ev.JobEnded(job.job_id)] + self._schedule()
        return []

    # --- time -----------------------------------------------------------------

    def _on_Tick(self, e: ev.Tick) -> list[ev.Instruction]:
        out: list[ev.Instruction] = []
        for job in list(self.jobs.values()):
            if job.state is S.BACKOFF and self.now >= job.not_before:
                advance(job, JE.BACKOFF_OVER, f"restart {job.restarts}", self.now)
                out += [ev.Persist(job.job_id)] + self._wake()
            elif job.state in (S.RESTARTING, S.RELAUNCHING, S.FAILING, S.KILLING) and self.now >= job.kill_deadline:
                for t in job.live_tasks():
                    t.state, t.message = "TASK_LOST", "no terminal update after kill; given up on it"
                out += self._settle(job)
        if self.held and self._waiting():
            oldest = min(h.since for h in self.held.values())
            if self.now - oldest >= self.config.gang_timeout_s:
                out.append(ev.Decline(tuple(self.held), self.config.retry_refuse_seconds))
                self.held.clear()
        return out


# Which events the core takes in which state. Offers, rescinds and task updates come from the
# master only after it has said who the framework is; everything else may come first (jobs are
# submitted and adopted while the driver subscribes). Any other pair raises InvalidTransition.
_ANY_TIME = {
    ev.Registered: FrameworkCore._on_Registered, ev.Disconnected: FrameworkCore._on_Disconnected,
    ev.Tick: FrameworkCore._on_Tick, ev.SubmitJob: FrameworkCore._on_SubmitJob,
    ev.AdoptJob: FrameworkCore._on_AdoptJob, ev.JobPrepared: FrameworkCore._on_JobPrepared,
    ev.JobPrepareFailed: FrameworkCore._on_JobPrepareFailed, ev.KillJob: FrameworkCore._on_KillJob,
    ev.AcceptFailed: FrameworkCore._on_AcceptFailed,
}
_FROM_THE_MASTER = {
    ev.OffersReceived: FrameworkCore._on_OffersReceived, ev.OfferRescinded: FrameworkCore._on_OfferRescinded,
    ev.StatusUpdate: FrameworkCore._on_StatusUpdate,
}
CORE_TABLE: TransitionTable[Callable[[FrameworkCore, Any], list[ev.Instruction]]] = TransitionTable(
    "framework core", ("unregistered", "registered"), (*_ANY_TIME, *_FROM_THE_MASTER),
    {**{("unregistered", e): h for e, h in _ANY_TIME.items()},
     **{("registered", e): h for e, h in {**_ANY_TIME, **_FROM_THE_MASTER}.items()}})


def _ip_of(status: dict[str, Any]) -> str:
    for info in status.get("container_status", {}).get("network_infos", []):
        for addr in info.get("ip_addresses", []):
            if addr.get("ip_address"):
                return addr["ip_address"]
    return ""


__all__ = ["FrameworkCore", "CoreConfig", "Code", "JobSpec"]
