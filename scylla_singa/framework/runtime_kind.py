"""Which task contract a job's image keeps: Apache SINGA (singa-task) or the Python runtime (pure).

The two runtimes share the task contract (docs/contracts.md), but real SINGA
needs more from the framework: a ZooKeeper for jobs of more than one process
(SCYLLA_ZK_HOSTS), the attempt number of the gang (SCYLLA_ATTEMPT), and a
local workspace (it cannot write checkpoints to HDFS). The framework learns
which runtime an image is from the image itself: its `io.scylla.runtime`
label (images/singa says apache-singa, images/singa-py says singa-py), read
from this machine's engine. `run --runtime` says it for an image without the
label or one this engine does not have; an unlabelled image is taken for the
base contract (the Python runtime's), which needs nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scylla_singa.contracts import RUNTIME_APACHE_SINGA, RUNTIME_LABEL, RUNTIME_SINGA_PY

AUTO = "auto"
RUNTIMES = (RUNTIME_APACHE_SINGA, RUNTIME_SINGA_PY)
RUNTIME_CHOICES = (AUTO, *RUNTIMES)


class RuntimeKindError(ValueError):
    """The image's label names a runtime this scylla-singa does not know."""


@dataclass(frozen=True)
class RuntimeKind:
    """The runtime a job's image is, and how that was decided (shown to the user when it was a guess)."""

    name: str
    because: str
    guessed: bool = False

    @property
    def apache_singa(self) -> bool:
        return self.name == RUNTIME_APACHE_SINGA


def runtime_kind(choice: str, image: str, labels: Mapping[str, str] | None) -> RuntimeKind:
    """The runtime of `image` given `run --runtime CHOICE` and the image's labels (None: not on this engine)."""
    if choice in RUNTIMES:
        return RuntimeKind(choice, "--runtime " + choice)
    if choice != AUTO:
        raise RuntimeKindError(f"--runtime {choice!r}: expected one of {', '.join(RUNTIME_CHOICES)}")
    if labels is None:
        return RuntimeKind(RUNTIME_SINGA_PY, f"image {image} is not on this machine's Docker engine, so its "
                                            f"{RUNTIME_LABEL} label cannot be read", guessed=True)
    value = labels.get(RUNTIME_LABEL)
    if value is None:
        return RuntimeKind(RUNTIME_SINGA_PY, f"image {image} has no {RUNTIME_LABEL} label", guessed=True)
    if value not in RUNTIMES:
        raise RuntimeKindError(f"image {image} says {RUNTIME_LABEL}={value}, a runtime this scylla-singa does not "
                               f"know ({', '.join(RUNTIMES)}); give --runtime {RUNTIME_APACHE_SINGA} or "
                               f"--runtime {RUNTIME_SINGA_PY} to say which contract it keeps")
    return RuntimeKind(value, f"image {image} says {RUNTIME_LABEL}={value}")


def guess_note(kind: RuntimeKind) -> str:
    """What to tell the user when the runtime of a job of several processes was guessed."""
    return (f"note: {kind.because}: its processes get the base task contract (no ZooKeeper); "
            f"if it is Apache SINGA, give --runtime {RUNTIME_APACHE_SINGA}")
