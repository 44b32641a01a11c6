"""SINGA 0.3.0's checkpoint files and the choice of the step to resume from.

Group 0's workers write `<workspace>/checkpoint/step<N>-worker<K>`, a
serialized `BlobProtos` (repeated int32 version = 3, string name = 4,
BlobProto blob = 5), at step 0, every checkpoint_freq steps and after the
last step. They are written in place (no temp file), so a process killed
while writing leaves a truncated newest file, and a job restarted from it
resumes in the middle of a write.

SINGA's own `-resume` takes the highest step number it finds, complete or
not. The wrapper instead picks the newest step whose files are all there
(one per worker of group 0) and parse to the end with as many names and
versions as blobs, copies them into `<workspace>/resume/job-<id>/` (the run
itself rewrites the step's files when it checkpoints at that step again,
while other processes may still be reading them) and hands the copies to
SINGA the way its -resume does: `step: N`, `checkpoint_path` per file and
`reset_param_version: false` unless the conf sets it.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

CHECKPOINT_NAME = re.compile(r"^step(?P<step>\d+)-worker(?P<worker>\d+)$")


@dataclass(frozen=True)
class ResumePoint:
    step: int
    files: tuple[Path, ...]


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def blobprotos_complete(data: bytes) -> bool:
    """Whether `data` is a whole BlobProtos: every field ends inside it and names = versions = blobs.

    An empty file parses (zero of each): see `newest_complete` for when it counts.
    """
    counts = {3: 0, 4: 0, 5: 0}
    pos = 0
    try:
        while pos < len(data):
            key, pos = _varint(data, pos)
            number, wire = key >> 3, key & 7
            if wire == 0:
                _, pos = _varint(data, pos)
            elif wire == 2:
                length, pos = _varint(data, pos)
                pos += length
            elif wire == 5:
                pos += 4
            elif wire == 1:
                pos += 8
            else:
                return False
            if pos > len(data):
                return False
            if number in counts:
                counts[number] += 1
    except ValueError:
        return False
    return counts[3] == counts[4] == counts[5]


def steps_on_disk(folder: Path) -> dict[int, dict[int, Path]]:
    """{step: {worker: file}} of the checkpoint files in `folder` (missing folder: empty)."""
    found: dict[int, dict[int, Path]] = {}
    if not folder.is_dir():
        return found
    for f in folder.iterdir():
        m = CHECKPOINT_NAME.match(f.name)
        if m and f.is_file():
            found.setdefault(int(m.group("step")), {})[int(m.group("worker"))] = f
    return found


def newest_complete(folder: Path, writers: int) -> ResumePoint | None:
    """The newest step > 0 with files from workers 0..writers-1, each complete; None if there is none.

    A worker that owns no parameters (data parallelism: the group's other
    workers share worker 0's) writes empty files; an empty file counts only
    for a worker whose files are all empty, else it is a write cut short.
    """
    on_disk = steps_on_disk(folder)
    always_empty = {w for w in range(writers)
                    if all(w not in files or files[w].stat().st_size == 0 for files in on_disk.values())}

    def complete(worker: int, f: Path) -> bool:
        data = f.read_bytes()
        return blobprotos_complete(data) and (len(data) > 0 or worker in always_empty)

    for step in sorted(on_disk, reverse=True):
        if step == 0:
            break
        files = on_disk[step]
        if all(w in files and complete(w, files[w]) for w in range(writers)):
            return ResumePoint(step, tuple(files[w] for w in range(writers)))
    return None


def snapshot(point: ResumePoint, dest: Path) -> ResumePoint:
    """Copies of the point's files in `dest` (each written to a temp name, then renamed)."""
    dest.mkdir(parents=True, exist_ok=True)
    copies = []
    for f in point.files:
        target = dest / f.name
        tmp = dest / f".{f.name}.tmp"
        shutil.copyfile(f, tmp)
        tmp.replace(target)
        copies.append(target)
    return ResumePoint(point.step, tuple(copies))
