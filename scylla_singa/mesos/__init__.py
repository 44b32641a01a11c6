"""A Mesos-compatible master and agent (Mesos v1 scheduler API, DRF, Docker tasks).

The master (`master_*` modules) speaks the Mesos 1.x scheduler HTTP API that
pymesos drives; allocation is a pure module (`allocator`, `sorter`) in the
Mesos paper's sense; agents (`agent*`, `runner_*`, `fetcher`) run tasks as
Docker containers, plain processes, or simulated ones (`fleet`).
`embedded.EmbeddedMesos` starts a master and agents in-process.
"""
