"""The SINGA-compatible runtime: what runs inside a job's containers as `singa -conf job.conf`.

Pure Python (numpy for the math, pyzmq for messaging, as SINGA v0 used
ZeroMQ). It imports nothing from scylla_singa but the job model
(scylla_singa.jobconf), the shared identifiers (scylla_singa.contracts),
the stdlib-only helpers (scylla_singa.common) and itself, and no third-party
package but numpy, zmq and protobuf: lint-imports checks that (pyproject.toml),
so the `singa-py:latest` image, which carries only those, can run it. Layout:

    spec.py        job.conf -> TrainingSpec through the job model
    support.py     what singa-py implements; refuses the rest at start, by name, pointing to singa:latest
    layers.py      layers (forward/backward);  net.py  nets per phase over flat parameters
    params.py      parameter init and the flat layout servers slice
    updaters.py    learning-rate schedules and updaters (pure functions)
    data.py        CSV and KVFile inputs, mean/std, batching, sharding
    kvfile.py      SINGA's KVFile;  records.py  SINGA's RecordProto records in it, to and from numpy
    machine_events.py  the machines' events and instructions
    worker.py      worker state machine;  server.py  server state machine
    process.py     one process: rendezvous, routing, heartbeats, checkpoints, shutdown
    messages.py    addresses, messages, wire encoding;  transport.py  ZeroMQ ROUTER/DEALERs
    checkpoint.py  checkpoint files and stores (local, WebHDFS);  cluster_file.py  cluster.json
    progress_sink.py  PROGRESS/FINAL lines and progress POSTs;  main.py  the `singa` command
    runtime_errors.py  the error types and the exit codes they map to

Host-side helpers live elsewhere: the data sets in scylla_singa.datasets,
the image's build context in scylla_singa.images.singa_context.
"""
