"""The master's side of agents: registration, re-registration (soft state), status updates, pings.

A collaborator of `master_core.Master`. An agent link may carry many agents (a
simulated fleet); a link that closes disconnects all of them. A
disconnected agent offers nothing; if it does not come back within
`agent_reregister_timeout` it is removed and its tasks are LOST. A link
silent for `agent_ping_misses` ping intervals makes its agents unreachable:
they are removed at once (tasks LOST), as Mesos does after its ping
timeouts. A re-registering agent reports its tasks, and the master
rebuilds its view from them (after a master restart or failover, this is
how tasks are recovered); a removed agent is refused and kills its tasks.
An agent whose containerizer stops working reports itself unhealthy
(AGENT_HEALTH) and offers nothing until it is healthy again.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scylla_singa.common.transition_table import InstructionDispatch, emitted_types
from scylla_singa.mesos.api.fields import VERSION, value
from scylla_singa.mesos.api.protocol import make_status, update_event
from scylla_singa.mesos.api.resources import ResourceError, Resources, with_checkpointed
from scylla_singa.mesos.api.task_states import TERMINAL_TASK_STATES
from .master_metrics import count_terminal
from .master_records import AgentRec, Outbox, TaskRec
from .registration_lifecycles import (AGENT_TABLE, ActivateAgent, AddAgent, AgentDisconnected, AgentLinkLifecycle,
                                      AgentRegisters, AgentReregisters, AgentReregisterTimeout, AgentUnreachable,
                                      DeactivateAgent, ReconcileAgentTasks, RemoveAgent, RescindAgentOffers,
                                      SendAgentRegistered, StartReregisterTimer)

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from .master_core import Master
    from .master_records import FrameworkRec


class AgentRegistry:
    """The master's agents and their links: the agent-side half of the master's behaviour.

    The Master owns one and hands it agent messages; the registry calls back
    into the master for what frameworks, offers and the allocator own.
    """

    def __init__(self, master: Master) -> None:
        self.master = master
        self.agents: dict[str, AgentRec] = {}
        self.links: dict[Outbox, set[str]] = {}
        self.removed_agents: set[str] = set()
        self.gone_agents: set[str] = set()   # removed by MARK_AGENT_GONE or their machine going DOWN
        self._agent_do = InstructionDispatch("the master's agent shell", {
            AddAgent: self._add_agent, SendAgentRegistered: self._send_registered,
            ReconcileAgentTasks: self._reconcile_agent_tasks, ActivateAgent: self._activate_agent,
            DeactivateAgent: self._deactivate_agent, RescindAgentOffers: self._rescind_agent_offers,
            StartReregisterTimer: self._start_reregister_timer, RemoveAgent: self._remove_agent,
        }).require(emitted_types(AGENT_TABLE))

    # ---- links --------------------------------------------------------
    def link_opened(self, link: Outbox) -> None:
        self.links[link] = set()
        link.last_seen = self.master.now()

    def link_closed(self, link: Outbox) -> None:
        """The link's socket ended: disconnect every agent that was on it."""
        if self.master.stopping:
            return
        for agent_id in self.links.pop(link, set()):
            agent = self.agents.get(agent_id)
            if agent is not None and agent.link is link:
                self._agent_event(agent, AgentDisconnected())

    def close_links(self) -> None:
        for link in list(self.links):
            link.close()

    @property
    def agent_ping_timeout(self) -> float:
        """How long an agent link may be silent before its agents are unreachable."""
        return self.master.cfg.agent_ping_interval * self.master.cfg.agent_ping_misses

    def ping_agents(self) -> None:
        """Ping every link; the agents of a link silent for agent_ping_misses intervals are unreachable."""
        for link in list(self.links):
            silent = self.master.now() - link.last_seen
            if silent > self.agent_ping_timeout:
                for agent_id in list(self.links.get(link, ())):
                    agent = self.agents.get(agent_id)
                    if agent is not None and agent.link is link:
                        self.master.count("master/slave_removals/reason_unhealthy")
                        self.master.count("master/slave_unreachable_completed")
                        self._agent_event(agent, AgentUnreachable(
                            f"Agent {agent.hostname} unreachable: no answer to pings for {silent:.0f}s"))
                link.close()
                self.link_closed(link)
            else:
                link.send({"type": "PING"})

    def agent_message(self, link: Outbox, msg: dict[str, Any]) -> None:
        """One message from an agent link (REGISTER, STATUS, PONG). Bad messages are dropped."""
        link.last_seen = self.master.now()
        kind = msg.get("type")
        if kind == "REGISTER":
            self._register(link, msg)
        elif kind in ("STATUS", "EXECUTOR_EXITED", "EXECUTOR_MESSAGE") and not self._speaks_for(link, msg):
            # Only the link an agent registered on speaks for it: a forged TASK_FINISHED from
            # another connection would free resources a running task still uses.
            self.master.count("master/invalid_status_updates" if kind == "STATUS" else
                              "master/invalid_executor_to_framework_messages")
            log.warning("dropped a %s for agent %r from a link that did not register it", kind,
                        msg.get("agent_id"))
        elif kind == "STATUS":
            self._status(msg)
        elif kind == "EXECUTOR_EXITED":
            self._executor_exited(msg)
        elif kind == "EXECUTOR_MESSAGE":
            self._executor_message(msg)
        elif kind == "AGENT_HEALTH":
            agent = self.agents.get(msg.get("agent_id"))
            if agent is not None and agent.link is link:
                agent.healthy, agent.health_message = bool(msg.get("healthy")), str(msg.get("message") or "")
                self.apply_health(agent)

    def _speaks_for(self, link: Outbox, msg: dict[str, Any]) -> bool:
        agent = self.agents.get(msg.get("agent_id"))
        return agent is not None and agent.link is link

    # ---- registration -------------------------------------------------
    def _refusal(self, link: Outbox, info: dict[str, Any]) -> str | None:
        """Why the principal of `link` may not register the agent `info` describes (None: it may).

        An agent id is bound to the principal that first registered it: a
        re-registration with that id from another principal is an attempt to
        receive the real agent's tasks (and the secrets in their environment).
        """
        principal = getattr(link, "principal", None)
        agent = self.agents.get(info.get("agent_id") or "")
        if agent is not None and agent.principal is not None and agent.principal != principal:
            return (f"Agent {agent.id} was registered by principal {agent.principal!r}; a re-registration "
                    f"from principal {principal!r} is refused")
        return None

    def _register(self, link: Outbox, msg: dict[str, Any]) -> None:
        info, ref = msg.get("agent") or {}, msg.get("ref")
        principal = getattr(link, "principal", None)
        acls = self.master.cfg.acls
        if acls is not None and not acls.may_register_agent(principal):
            message = f"Principal {principal!r} is not authorized to register agents (ACL register_agents)"
            log.warning("refused an agent registration: %s", message)
            link.send({"type": "REGISTER_REFUSED", "ref": ref, "message": message})
            return
        refused = self._refusal(link, info)
        if refused is not None:   # the agent may register anew, under an id of its own
            log.warning("refused an agent re-registration: %s", refused)
            link.send({"type": "REREGISTER_REFUSED", "ref": ref, "agent_id": info.get("agent_id"),
                       "message": refused})
            return
        try:
            # The reservations it keeps for the masters (CHECKPOINT_RESOURCES) are part of its total.
            total = with_checkpointed(Resources.from_json(info.get("resources")),
                                      Resources.from_json(info.get("checkpointed_resources")))
        except ResourceError as exc:
            link.send({"type": "REREGISTER_REFUSED", "ref": ref, "message": f"bad resources: {exc}"})
            return
        machine = self.master.maintenance.machine_of(str(info.get("hostname") or "localhost"),
                                                     str(info.get("ip") or info.get("hostname") or "127.0.0.1"))
        if machine is not None and self.master.maintenance.mode(machine) == "DOWN":
            link.send({"type": "REGISTER_REFUSED", "ref": ref,
                       "message": "Agent attempted to register while its machine is DOWN (STOP_MAINTENANCE "
                                  "brings it up)"})
            return
        agent_id = info.get("agent_id")
        if agent_id in self.removed_agents:
            link.send({"type": "REREGISTER_REFUSED", "ref": ref, "agent_id": agent_id,
                       "message": "Agent was removed by the master; kill its tasks and register anew"})
            return
        agent = self.agents.get(agent_id) if agent_id else None
        if agent is None:
            agent_id = agent_id or self.master.next_id("S")
            agent = AgentRec(agent_id, info.get("hostname") or "localhost", int(info.get("port") or 0),
                             info.get("ip") or info.get("hostname") or "127.0.0.1", total,
                             list(info.get("attributes") or []), AgentLinkLifecycle("NEW", f"agent {agent_id}"),
                             time.time())
            agent.version = str(info.get("version") or VERSION)
            agent.principal = getattr(link, "principal", None)
            self.agents[agent_id] = agent
        else:
            agent.reregistered_time = time.time()
        agent.pid = str(info.get("pid") or f"slave(1)@{agent.ip}:{agent.port}")
        self.master.count("master/messages_reregister_slave" if info.get("agent_id") else
                          "master/messages_register_slave")
        if agent.link is not None and agent.link is not link and agent.link in self.links:
            self.links[agent.link].discard(agent_id)
        agent.link = link
        self.links.setdefault(link, set()).add(agent_id)
        agent.healthy, agent.health_message = info.get("healthy", True) is not False, str(info.get("health") or "")
        self._agent_event(agent, (AgentReregisters if info.get("agent_id") else AgentRegisters)(info, ref))
        if isinstance(info.get("operations"), list):   # what it keeps for a master that did not follow them
            self.master.operation_feedback.recovered(agent.id, info["operations"])
        self.apply_health(agent)
        self.master.answer_parked(agent.id)

    def apply_health(self, agent: AgentRec) -> None:
        """Offer a connected agent's resources only while it is healthy and not deactivated by the
        operator (Mesos: DEACTIVATE_AGENT)."""
        if not agent.active:
            return
        if agent.healthy and not agent.operator_deactivated:
            self.master.allocator.activate_agent(agent.id)
            self.master.schedule_allocation()
        else:
            self.master.allocator.deactivate_agent(agent.id)
            for offer_id in list(agent.offers):
                self.master.remove_offer(offer_id, rescind=True, recover=True)

    def _agent_event(self, agent: AgentRec, event: object) -> None:
        """Drive the agent's link lifecycle; carry out what it returns (an unknown instruction raises)."""
        for ins in agent.lifecycle.handle(event):
            self._agent_do(ins, agent)

    def _agent_timeout(self, agent_id: str) -> None:
        agent = self.agents.get(agent_id)
        if agent is not None:
            self._agent_event(agent, AgentReregisterTimeout())

    # ---- the agent link lifecycle's instructions -----------------------
    def _add_agent(self, _: AddAgent, agent: AgentRec) -> None:
        self.master.allocator.add_agent(agent.id, agent.total)
        self.master.count("master/slave_registrations")
        self.master.operator_events.agent_added(agent)

    def _send_registered(self, ins: SendAgentRegistered, agent: AgentRec) -> None:
        agent.link.send({"type": "REGISTERED", "ref": ins.ref, "agent_id": agent.id,
                         "ping_timeout_s": self.agent_ping_timeout})
        self.master.schedule_allocation()

    def _reconcile_agent_tasks(self, ins: ReconcileAgentTasks, agent: AgentRec) -> None:
        self.master.count("master/slave_reregistrations")
        self._reconcile_agent(agent, ins.info.get("tasks") or [])

    def _activate_agent(self, _: ActivateAgent, agent: AgentRec) -> None:
        if agent.timer:
            agent.timer.cancel()
            agent.timer = None
        self.master.allocator.activate_agent(agent.id)

    def _deactivate_agent(self, _: DeactivateAgent, agent: AgentRec) -> None:
        self.master.allocator.deactivate_agent(agent.id)

    def _rescind_agent_offers(self, _: RescindAgentOffers, agent: AgentRec) -> None:
        for offer_id in list(agent.offers):
            self.master.remove_offer(offer_id, rescind=True)

    def _start_reregister_timer(self, _: StartReregisterTimer, agent: AgentRec) -> None:
        agent.timer = self.master.loop.call_later(self.master.cfg.agent_reregister_timeout, self._agent_timeout,
                                                  agent.id)

    def _reconcile_agent(self, agent: AgentRec, reported: list[dict[str, Any]]) -> None:
        """Make the master's view of the agent's tasks what the agent reports (soft state)."""
        seen: set[tuple[str, str]] = set()
        for item in reported:
            task = self._adopt_task(agent, item)
            if task is not None:
                seen.add((task.framework_id, task.task_id))
        for key, task in list(agent.tasks.items()):
            if key not in seen and task.state not in TERMINAL_TASK_STATES:
                fw = self.master.frameworks.get(task.framework_id)
                state = "TASK_LOST"
                if fw is not None and fw.has_capability("PARTITION_AWARE"):
                    state = "TASK_GONE"
                status = make_status(task.task_id, state, agent_id=agent.id, source="SOURCE_MASTER",
                                     reason="REASON_RECONCILIATION", message="Task is not on the agent any more")
                self._finish_task(task, status)
                if fw is not None and fw.stream:
                    fw.stream.send(update_event(status))
        # The allocator's view of this agent is rebuilt from the tasks now known.
        self.master.allocator.remove_agent(agent.id)
        used: dict[str, Resources] = {}
        for task in agent.tasks.values():   # a shared volume is never held by a task: it stays offerable
            used[task.framework_id] = used.get(task.framework_id, Resources()) + task.resources.without_shared()
        self.master.allocator.add_agent(agent.id, agent.total, used)
        for offer_id in list(agent.offers):
            self.master.remove_offer(offer_id, rescind=True, recover=False)
        for task in agent.tasks.values():
            if task.kill_grace is not None:
                self.send_kill(task)

    def _adopt_task(self, agent: AgentRec, item: dict[str, Any]) -> TaskRec | None:
        fw_id = item.get("framework_id")
        task_info = item.get("task") or {}
        task_id = value(task_info.get("task_id"))
        if not fw_id or not task_id or item.get("state") in TERMINAL_TASK_STATES:
            return None
        fw = self.master.frameworks.get(fw_id)
        if fw is None:
            brief = item.get("framework") or {}
            fw = self.master.recover_framework(fw_id, brief, self.master.cfg.recovered_framework_timeout)
        task = fw.tasks.get(task_id)
        if task is None:
            try:
                need = Resources.from_json(task_info.get("resources"))
            except ResourceError:
                need = Resources()
            task = TaskRec(fw_id, task_id, agent.id, task_info, need)
            fw.tasks[task_id] = task
        task.agent_id = agent.id
        status = item.get("status")
        if isinstance(status, dict) and status.get("state") and status["state"] not in TERMINAL_TASK_STATES:
            task.record(status)
        elif item.get("state"):
            task.state = item["state"]
        agent.tasks[(fw_id, task_id)] = task
        return task

    def mark_gone(self, agent: AgentRec, why: str = "marked gone by the operator") -> None:
        """MARK_AGENT_GONE (or its machine DOWN): remove the agent (its tasks are lost) and make it kill them;
        its id never returns."""
        link = agent.link
        self.gone_agents.add(agent.id)
        self._agent_event(agent, AgentUnreachable(f"Agent {agent.hostname} {why}"))
        if link is not None:
            link.send({"type": "REREGISTER_REFUSED", "agent_id": agent.id, "message": f"Agent {why}"})

    def _remove_agent(self, ins: RemoveAgent, agent: AgentRec) -> None:
        """The agent did not come back (or is unreachable): its tasks are lost, frameworks get FAILURE."""
        message = ins.message
        for offer_id in list(agent.offers):
            self.master.remove_offer(offer_id, rescind=True, recover=False)
        for task in list(agent.tasks.values()):
            fw = self.master.frameworks.get(task.framework_id)
            pa = fw is not None and fw.has_capability("PARTITION_AWARE")
            status = make_status(task.task_id, "TASK_UNREACHABLE" if pa else "TASK_LOST", agent_id=agent.id,
                                 source="SOURCE_MASTER", reason="REASON_AGENT_REMOVED",
                                 message=message or f"Agent {agent.hostname} removed: no contact")
            self._finish_task(task, status, recover=False)
            if fw is not None and fw.stream:
                fw.stream.send(update_event(status))
        self.master.allocator.remove_agent(agent.id)
        self.agents.pop(agent.id, None)
        self.removed_agents.add(agent.id)
        self.master.operation_feedback.agent_removed(agent.id, gone=agent.id in self.gone_agents)
        self.master.count("master/slave_removals")
        self.master.operator_events.agent_removed(agent.id)
        for fw in self.master.frameworks.values():
            if fw.stream:
                fw.stream.send({"type": "FAILURE", "failure": {"agent_id": {"value": agent.id}}})

    # ---- tasks --------------------------------------------------------
    def _status(self, msg: dict[str, Any]) -> None:
        """A status update from an agent: record it, forward it, or ack it for a gone framework."""
        status, fw_id, agent_id = msg.get("status") or {}, msg.get("framework_id"), msg.get("agent_id")
        task_id = value(status.get("task_id"))
        if not task_id or not status.get("state"):
            return
        fw = self.master.frameworks.get(fw_id)
        task = fw.tasks.get(task_id) if fw else None
        if task is not None and task.agent_id == agent_id:
            if status["state"] in TERMINAL_TASK_STATES:
                self._finish_task(task, status)
            else:
                task.record(status)
                self.master.operator_events.task_updated(task, status)
        self.master.count("master/messages_status_update")
        self.master.count("master/valid_status_updates")
        if fw is None:
            agent = self.agents.get(agent_id)
            if agent is not None and agent.link and status.get("uuid"):
                agent.link.send({"type": "ACK", "agent_id": agent_id, "framework_id": fw_id,
                                 "task_id": task_id, "uuid": status["uuid"]})
        elif fw.stream:
            fw.stream.send(update_event(status))

    def _executor_exited(self, msg: dict[str, Any]) -> None:
        """An executor ended on its agent: free what it held and tell its framework (FAILURE with the
        executor's id and exit status), as Mesos does."""
        fw, agent_id = self.master.frameworks.get(msg.get("framework_id")), msg.get("agent_id")
        executor_id = str(msg.get("executor_id") or "")
        if fw is None or agent_id not in self.agents:
            return
        executor = fw.executors.pop((agent_id, executor_id), None)
        if executor is not None and not executor["resources"].is_empty():
            self.master.allocator.recover(fw.id, agent_id, executor["resources"])
            self.master.schedule_allocation()
        if fw.stream:
            fw.stream.send({"type": "FAILURE", "failure": {
                "agent_id": {"value": agent_id}, "executor_id": {"value": executor_id},
                "status": int(msg.get("status") or 0)}})

    def _executor_message(self, msg: dict[str, Any]) -> None:
        """An executor's MESSAGE: to its framework as a MESSAGE event."""
        self.master.count("master/messages_executor_to_framework")
        fw = self.master.frameworks.get(msg.get("framework_id"))
        if fw is None or not fw.stream:
            self.master.count("master/invalid_executor_to_framework_messages")
            return
        self.master.count("master/valid_executor_to_framework_messages")
        fw.stream.send({"type": "MESSAGE", "message": {"agent_id": {"value": msg.get("agent_id")},
                                                       "executor_id": {"value": msg.get("executor_id")},
                                                       "data": msg.get("data") or ""}})

    def _finish_task(self, task: TaskRec, status: dict[str, Any], recover: bool = True) -> None:
        """A task reached a terminal state: free its resources, keep it among the completed."""
        task.record(status)
        fw = self.master.frameworks.get(task.framework_id)
        agent = self.agents.get(task.agent_id)
        if fw is None or fw.tasks.get(task.task_id) is not task:
            return  # already finished (a retried update)
        self.master.operator_events.task_updated(task, status)
        count_terminal(self.master, fw, status)
        del fw.tasks[task.task_id]
        fw.completed.append(task)
        self.master.count(f"master/tasks_{task.state[5:].lower()}")
        if agent is not None:
            agent.tasks.pop((fw.id, task.task_id), None)
            if recover:
                self.master.allocator.recover(fw.id, agent.id, task.resources.without_shared())
                self.master.schedule_allocation()

    def send_kill(self, task: TaskRec) -> None:
        agent = self.agents.get(task.agent_id)
        if agent is not None and agent.active and agent.link:
            agent.link.send({"type": "KILL_TASK", "agent_id": agent.id, "framework_id": task.framework_id,
                             "task_id": task.task_id, "grace_s": task.kill_grace})

    def forward_ack(self, fw: FrameworkRec, agent_id: str, task_id: str, uid: str) -> None:
        agent = self.agents.get(agent_id)
        if agent is not None and agent.link and agent.active:
            agent.link.send({"type": "ACK", "agent_id": agent_id, "framework_id": fw.id,
                             "task_id": task_id, "uuid": uid})

    def shutdown_framework_on_agents(self, fw: FrameworkRec) -> None:
        """Tell agents to kill the framework's tasks; the tasks count as killed now."""
        agents = {t.agent_id for t in fw.tasks.values()}
        for task in list(fw.tasks.values()):
            status = make_status(task.task_id, "TASK_KILLED", agent_id=task.agent_id, source="SOURCE_MASTER",
                                 reason="REASON_FRAMEWORK_REMOVED", message="Framework removed")
            self._finish_task(task, status, recover=False)
        for agent_id in agents:
            agent = self.agents.get(agent_id)
            if agent is not None and agent.link and agent.active:
                agent.link.send({"type": "SHUTDOWN_FRAMEWORK", "agent_id": agent_id, "framework_id": fw.id})
