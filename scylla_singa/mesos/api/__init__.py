"""The public Mesos v1 API as this project speaks it: shared by the master and the agent.

    recordio         RecordIO framing of the scheduler's event stream (sans I/O)
    protocol         the agent <-> master messages, TaskStatus and UPDATE shapes, the endpoint paths
    resources        Mesos resources (scalars, ranges, sets) and attributes, JSON and text forms
    task_states      Mesos's task states: the ONE terminal set, the active ones, the metric counters
    container_info   the ContainerInfo rules a task must pass (the master checks, the agent applies)
    leader_znodes    where the leading master is published in ZooKeeper (json.info_<seq>)
    fields           small helpers over Mesos JSON (`{"value": ...}` ids), the API version we answer

Nothing here knows the master's or the agent's state: `master` and `agent`
both build on this package and never on each other (lint-imports checks it).
    codec            request bodies in application/json or application/x-protobuf -> the dicts the master
                     handles, and events/responses back in either
    call_validation  the stateless checks Mesos makes on every decoded Call (one place for all four APIs)
    http_answers     the HTTP answers all v1 endpoints share (405 with Allow, 202, 404, a body read as a Call)
    proto/           our .proto files for Mesos's v1 messages (Mesos's own package, message and field
                     names and numbers) and their generated *_pb2 modules
"""
