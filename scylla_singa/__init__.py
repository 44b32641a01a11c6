"""scylla-singa: distributed SINGA training jobs on Mesos, in Docker, on Swarm overlays."""

__version__ = "0.1.0"
