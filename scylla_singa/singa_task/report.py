"""SINGA's displayed metrics as the contract's PROGRESS and FINAL payloads (pure).

Only group 0's worker 0 displays training metrics in SINGA 0.3.0 (and runs
the tests), so every report is `"group": 0, "worker": 0` of the process that
hosts it. `samples_per_s` is group 0's rate: steps between two displays
times the training batch size, over the log-time between them.

FINAL reports the last test SINGA ran. SINGA tests at step `test_after`
(0) and every `test_freq` steps, not after the last step, so `test_step`
says which step the accuracy belongs to (e.g. 400 for train_steps 600 and
test_freq 200); `steps` is the number of steps trained.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .glog import SingaMetrics


@dataclass
class Reporter:
    job: str
    proc: int
    batchsize: int | None
    last_train: SingaMetrics | None = None
    last_test: SingaMetrics | None = None
    last_validation: SingaMetrics | None = None
    train_values: dict[str, float] = field(default_factory=dict)

    def progress(self, m: SingaMetrics) -> dict[str, Any]:
        """The PROGRESS payload for one SingaMetrics event (a second display of the same phase and step merges into it)."""
        samples_per_s = None
        if m.phase == "train":
            prev = self.last_train
            if prev is not None and prev.step == m.step:
                self.train_values.update(m.values)
                prev = None
            else:
                if prev is not None and m.step > prev.step and m.t > prev.t and self.batchsize:
                    samples_per_s = round((m.step - prev.step) * self.batchsize / (m.t - prev.t), 3)
                self.train_values = dict(m.values)
                self.last_train = m
            values = self.train_values
        else:
            last = self.last_test if m.phase == "test" else self.last_validation
            values = {**last.values, **m.values} if last and last.step == m.step else dict(m.values)
            merged = SingaMetrics(m.phase, m.step, values, m.t)
            if m.phase == "test":
                self.last_test = merged
            else:
                self.last_validation = merged
        loss = values.get("loss", values.get("squared_error"))
        return {"job": self.job, "proc": self.proc, "group": 0, "worker": 0, "step": m.step,
                "loss": loss, "accuracy": values.get("accuracy"), "samples_per_s": samples_per_s,
                "phase": m.phase, "metrics": dict(values)}

    def final(self, steps: int, wall_s: float) -> dict[str, Any]:
        test = self.last_test
        values = test.values if test else {}
        return {"job": self.job, "steps": steps,
                "test_loss": values.get("loss", values.get("squared_error")),
                "test_accuracy": values.get("accuracy"), "test_step": test.step if test else None,
                "wall_s": round(wall_s, 3)}
