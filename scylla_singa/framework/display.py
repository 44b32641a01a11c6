"""The terminal view of running jobs: a live progress bar per job (rich).

On a terminal it redraws in place; otherwise (CI logs, pipes) it prints a
line whenever a job changes state and a progress line at most every
`every_s` seconds, so logs stay readable.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.live import Live
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from .model import Job, JobState
from .progress_book import ProgressBook, Summary


def _fmt(x: float | None, spec: str) -> str:
    return format(x, spec) if x is not None else "-"


def describe(job: Job, s: Summary | None) -> str:
    parts = [job.state.value.lower()]
    if s:
        parts.append(f"loss {_fmt(s.loss, '.3f')}  acc {_fmt(s.accuracy, '.3f')}  {_fmt(s.samples_per_s, '.0f')} samples/s")
        if s.test_accuracy is not None:
            parts.append(f"test acc {s.test_accuracy:.3f}")
    if job.restarts:
        parts.append(f"restarts {job.restarts}")
    if job.state is JobState.WAITING and job.waiting_reason:
        parts.append(job.waiting_reason)
    return "  ".join(parts)


class ProgressDisplay:
    def __init__(self, console: Console, book: ProgressBook, every_s: float = 10.0) -> None:
        self.console, self.book, self.every_s = console, book, every_s
        self.progress = Progress(TextColumn("[bold]{task.fields[job]}"), BarColumn(), TextColumn("{task.completed:>5.0f}/{task.total:.0f}"),
                                 TimeElapsedColumn(), TextColumn("{task.fields[info]}"), console=console)
        self.tasks: dict[str, int] = {}
        self.live: Live | None = None
        self._last_state: dict[str, str] = {}
        self._last_print = 0.0

    def __enter__(self) -> "ProgressDisplay":
        if self.console.is_terminal:
            self.live = Live(self.progress, console=self.console, refresh_per_second=4, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.live:
            self.live.__exit__(*exc)

    def update(self, jobs: list[Job]) -> None:
        now = time.monotonic()
        for job in jobs:
            s = self.book.summary(job.job_id)
            # A finished job did all its steps, whatever its last report said (SINGA displays every disp_freq).
            step = self._steps(job) if job.state is JobState.FINISHED else min(s.step, self._steps(job)) if s else 0
            info = describe(job, s)
            if self.live:
                if job.job_id not in self.tasks:
                    self.tasks[job.job_id] = self.progress.add_task("", total=self._steps(job), job=job.job_id, info="")
                self.progress.update(self.tasks[job.job_id], completed=step, info=info)
            elif self._last_state.get(job.job_id) != job.state.value:
                self.console.print(f"{job.job_id}: {info}")
            self._last_state[job.job_id] = job.state.value
        if not self.live and now - self._last_print >= self.every_s:
            self._last_print = now
            for job in jobs:
                s = self.book.summary(job.job_id)
                if s and not job.state.terminal:
                    self.console.print(f"{job.job_id}: step {s.step}/{self._steps(job)}  {describe(job, s)}")

    @staticmethod
    def _steps(job: Job) -> int:
        return job.plan.train_steps
