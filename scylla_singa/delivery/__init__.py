"""Getting job.conf and the cluster file into every task's sandbox.

Two ways, one interface (job_files.Delivery): `volume` writes them to a
per-job directory under an allowed root and bind-mounts them read-only (the
embedded default, and any cluster whose hosts share that directory); `hdfs`
uploads them through WebHDFS and lets the Mesos fetcher pull them
(SINGA-11's way, for real clusters). Both also provide the job's workspace
for checkpoints. Delivery knows the job model, never the framework.
"""
