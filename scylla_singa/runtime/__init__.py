"""The SINGA-compatible runtime: what runs inside a job's containers as `singa -conf job.conf`.

Pure Python (numpy for the math, pyzmq for messaging, as SINGA v0 used
ZeroMQ). It imports nothing from scylla_singa but the job model
(scylla_singa.jobconf) and itself, so the `singa-py:latest` image carries only
those. Layout:

    spec.py        job.conf -> TrainingSpec through the job model; refuses what is not implemented
    layers.py      layers (forward/backward);  net.py  nets per phase over flat parameters
    params.py      parameter init and the flat layout servers slice
    updaters.py    learning-rate schedules and updaters (pure functions)
    data.py        CSV and record-store inputs, batching, sharding;  records.py  the record format
    worker.py      worker state machine;  server.py  server state machine
    process.py     one process: rendezvous, routing, heartbeats, checkpoints, shutdown
    messages.py    addresses, messages, wire encoding;  transport.py  ZeroMQ ROUTER/DEALERs
    checkpoint.py  checkpoint files and stores (local, WebHDFS);  cluster.py  cluster.json
    progress.py    PROGRESS/FINAL lines and progress POSTs;  main.py  the `singa` command
    data_cli.py    `scylla-singa data` (host side, not imported by the runtime)
    image_prepare.py  build-context preparation for images/singa-py (host side)
"""
