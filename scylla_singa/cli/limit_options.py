"""The job-size ceilings as flags, shared by `plan` and `run` (scylla_singa.jobconf.job_limits).

One decorator adds the four flags, one function turns their values into
the JobLimits the plan checks, so the two commands can never disagree on a
name or a default.
"""

from __future__ import annotations

from typing import Any, Callable

import click

from scylla_singa.jobconf.job_limits import (DEFAULT_MAX_GROUPS, DEFAULT_MAX_PROCESSES, DEFAULT_MAX_SERVERS,
                                         DEFAULT_MAX_WORKERS, JobLimits)

_FLAGS = (
    ("--max-processes", DEFAULT_MAX_PROCESSES, "Refuse a job.conf whose cluster section makes more SINGA "
                                               "processes than this (each is a container)."),
    ("--max-groups", DEFAULT_MAX_GROUPS, "Refuse a job.conf with more worker groups, or more server groups, "
                                         "than this."),
    ("--max-workers", DEFAULT_MAX_WORKERS, "Refuse a job.conf with more workers (threads, all groups) than this."),
    ("--max-servers", DEFAULT_MAX_SERVERS, "Refuse a job.conf with more servers (threads, all groups) than this."),
)


def job_limit_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add --max-processes, --max-groups, --max-workers and --max-servers to a command."""
    for flag, default, text in reversed(_FLAGS):
        f = click.option(flag, type=click.IntRange(min=1), default=default, show_default=True, metavar="N",
                         help=text + " Raise it for a bigger job.")(f)
    return f


def limits_from_flags(kw: dict[str, Any]) -> JobLimits:
    """The JobLimits of the flags' values in a command's keyword arguments (taken out of `kw`)."""
    return JobLimits(max_processes=kw.pop("max_processes"), max_groups=kw.pop("max_groups"),
                     max_workers=kw.pop("max_workers"), max_servers=kw.pop("max_servers"))
