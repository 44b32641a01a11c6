"""The web UI and metrics: the master's cluster page, the framework's job view, Prometheus text.

    master_page.routes(master)   -> `/`, `/ui/state`, `/ui/log`, `/metrics` on the master
    job_view.routes(session)     -> `/`, `/ui/api/...`, `/metrics` on the framework's API server

The pages are static HTML shells with a small script each (static/) that
polls JSON view models; the view models are pure functions of the master's
state (master_view.py) and of the framework's jobs (job_model.py), so they
are tested without servers. Nothing is fetched from the internet.

The master and the framework do not import this package: the command line
adds these routes when it composes them (MasterServer's `extra_routes`,
EmbeddedMesos's `master_routes`, SessionWiring's `ui_routes`).
"""
