"""A Mesos-compatible master: the v1 scheduler API, agents, offers by DRF, operator endpoints.

    master_core              Master: frameworks, their calls, offers, allocation rounds, recovery
    agent_registry           AgentRegistry: the master's agents and their links (a collaborator of Master)
    registration_lifecycles  frameworks' and agent links' transition tables
    master_records           the master's records (frameworks, agents, tasks, offers) and its config
    allocator, sorter        the allocation module: hierarchical DRF (or FIFO) behind a Sorter
    master_http              the HTTP shell: scheduler API, agent WebSocket, operator endpoints; MasterServer
    operator_views           /master/state and /metrics/snapshot in Mesos's shapes
    master_store             what survives a restart (registered frameworks)
    election                 leader election (standalone, ZooKeeper)
    credentials              framework authentication (HTTP Basic against a credentials file)

Builds on scylla_singa.mesos.api only; never imports the agent or the web UI
(routes are added by whoever composes a master: MasterServer(extra_routes=...)).
"""
