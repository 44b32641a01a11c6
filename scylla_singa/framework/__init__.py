"""The Scylla framework: a pymesos scheduler that runs SINGA jobs as gangs of Docker containers.

In the order a job goes through it:

    model          JobSpec (what was submitted), Job (its live record), TaskRecord
    core_events    the core's events (offers, status updates, timers, submits) and instructions
    core           FrameworkCore: the pure state machine (gangs, held offers, restarts)
    job_lifecycle  a job's transition table
    offers         Mesos offers -> the AgentViews placement reads
    taskinfo       one SINGA process -> its Mesos TaskInfo
    retry          which failures are worth a gang restart
    shell          FrameworkShell: pymesos callbacks in, driver/Docker/delivery calls out
    mesos_http     what the framework reads from Mesos's operator endpoints (sizes, sandboxes, logs)
    results        FINAL lines and a failed process's last log lines
    progress_report one progress report from the network, every field typed and bounded
    progress_book  the runtime's progress reports, summarised per job
    api_auth       who may call the API: each job's progress token, the framework's control token
    control_token  the control token's file: made by `run`, read by the commands that call the API
    api_server     the HTTP endpoint: progress intake, /api/jobs, kill (job view routes added by the caller)
    store          the durable memory: framework id, jobs, progress, progress tokens (SQLite, owner only)
    display        the terminal's live progress bars
    session        `run`/`resume`: everything wired together, given a SessionWiring from the command line
"""
