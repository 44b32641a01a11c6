"""A Mesos-compatible agent: runs tasks (Docker, process, simulated), keeps their status updates, serves sandboxes.

    agent_server      Agent and AgentConfig: the agent process (HTTP endpoints + master link + core)
    agent_core        one agent's tasks and reliable status updates, independent of transport
    task_lifecycle    a task's transition table (STAGING -> ... -> an end state)
    task_runner       the TaskRunner interface, AgentTask, and the runner that picks one by task kind
    docker_runner     Docker tasks (the Mesos Docker containerizer's job);  docker_spec  TaskInfo -> container
    process_runner    command tasks as plain processes;  simulated_runner  nothing runs (scale tests)
    fetcher           the Mesos fetcher: URIs into the sandbox (http, file, hdfs through WebHDFS)
    master_link       the WebSocket to the master: registration, pings, NOT_LEADER, reconnects
    agent_http        /state, /files/{read,browse,download}, /health
    simulated_fleet   thousands of simulated agents on one link

Builds on scylla_singa.mesos.api only; never imports the master.
"""
