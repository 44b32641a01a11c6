"""Stdlib-only helpers every layer may use: one of each, so nobody writes them again.

    home           $SCYLLA_HOME and the directories under it
    waiting        waiting on a condition with a deadline (threads and asyncio)
    files          atomic file writes, JSON read back
    durations      "30s", "500ms", "2m" -> seconds
    resource_text  Mesos's "cpus:4;mem:8192;ports:[31000-32000]" text form, split into its parts

Nothing here imports a third-party package or another scylla_singa package
(lint-imports checks it), so the runtime image can carry it too.
"""
