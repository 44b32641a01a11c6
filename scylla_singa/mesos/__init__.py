"""A Mesos-compatible master and agent (Mesos v1 scheduler API, DRF, Docker tasks).

    api/        the public Mesos v1 API both sides speak (recordio, statuses, resources, task states, ...)
    master/     the master: scheduler API, allocation, agents' registry, operator endpoints
    agent/      the agent: task runners (Docker, process, simulated), status updates, sandboxes
    embedded    EmbeddedMesos: a master and agents in-process (run without --master, and tests)

`api` is below `master` and `agent`, which never import each other;
`embedded` composes both (lint-imports checks all of it).
"""
