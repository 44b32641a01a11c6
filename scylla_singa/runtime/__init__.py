"""The SINGA-compatible runtime: what runs inside a job's containers as `singa -conf job.conf`.

Pure Python (numpy for the math, pyzmq for messaging, as SINGA v0 used
ZeroMQ). It imports nothing from scylla_singa but the job model
(scylla_singa.jobconf) and itself, so the `singa:latest` image carries only
those. Layout:

    spec.py        job.conf -> TrainingSpec through the job model
    support.py     what singa-py implements; refuses the rest at start, by name, pointing to singa:latest
    layers.py      layers (forward/backward);  net.py  nets per phase over flat parameters
    params.py      parameter init and the flat layout servers slice
    updaters.py    learning-rate schedules and updaters (pure functions)
    data.py        CSV and KVFile inputs, mean/std, batching, sharding
    kvfile.py      SINGA's KVFile;  records.py  SINGA's RecordProto records in it, to and from numpy
    worker.py      worker state machine;  server.py  server state machine
    process.py     one process: rendezvous, routing, heartbeats, checkpoints, shutdown
    messages.py    addresses, messages, wire encoding;  transport.py  ZeroMQ ROUTER/DEALERs
    checkpoint.py  checkpoint files and stores (local, WebHDFS);  cluster.py  cluster.json
    progress.py    PROGRESS/FINAL lines and progress POSTs;  main.py  the `singa` command
    digits.py      the digits data sets in SINGA's formats (host side: scikit-learn; not imported by the runtime)
    data_cli.py    `scylla-singa data` (host side, the click wiring over digits.py)
    image_prepare.py  build-context preparation for images/singa (host side)
"""
