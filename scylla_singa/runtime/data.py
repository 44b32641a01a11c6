"""Training and test data for input layers: kCSVInput (backend "textfile") and kRecordInput ("kvfile").

Both read what SINGA 0.3 reads: a CSV line is `label,v1,...,vN` (the label
only when store_conf.has_label; the separator characters are
store_conf.separator; exactly N values, N the product of store_conf.shape);
a kvfile is SINGA's KVFile of RecordProto records (records.py). Then, as
SINGA's input layers do: subtract the mean (mean_file's values, else
mean_value) and divide by the std (std_file's, else std_value), each only
when given. For a CSV input the mean and std files are CSV files whose first
line holds the N values; for a record input they are KVFiles whose first
record's data does. `random_skip`: a worker skips a random 0..random_skip
records first.

Partitioning: the training batch of a worker group is split among its
workers (worker j of n gets batchsize/n samples, the first batchsize % n
workers one more), and the training set is split into n disjoint shards, so
the workers of a group never see the same samples in a step. Each worker
walks its shard in a fresh random order every epoch; different worker groups
use different orders. Test and validation read the whole split in file order.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from scylla_singa.jobconf import job_pb2

from .runtime_errors import SingaConfigError
from .kvfile import KVFileError
from .records import RecordFormatError, read_first_record_data, read_records

# The store backend each input layer type reads here (SINGA 0.3's names).
BACKENDS = {"kCSVInput": "textfile", "kRecordInput": "kvfile"}


@dataclass(frozen=True)
class Dataset:
    """Every record of one input: features (N, *shape) float32 and labels (N,) or None."""

    features: np.ndarray
    labels: np.ndarray | None

    def __len__(self) -> int:
        return int(self.features.shape[0])


@dataclass(frozen=True)
class InputSource:
    """What decides an input layer's data: the cache key of load_dataset."""

    layer: str
    kind: str
    path: str
    separator: str
    has_label: bool
    shape: tuple[int, ...]
    mean_file: str | None
    std_file: str | None
    mean_value: float | None
    std_value: float | None


def load_dataset(layer: job_pb2.LayerProto) -> Dataset:
    """Read and normalise the data of input layer `layer`. Raises SingaConfigError naming the layer."""
    conf = layer.store_conf

    def optional(field: str):
        if not conf.HasField(field):
            return None
        value = getattr(conf, field)
        return os.path.abspath(value) if field.endswith("_file") else value
    return _load_cached(InputSource(layer.name, job_pb2.LayerType.Name(layer.type), os.path.abspath(conf.path),
                               conf.separator, conf.has_label, tuple(conf.shape), optional("mean_file"),
                               optional("std_file"), optional("mean_value"), optional("std_value")))


@lru_cache(maxsize=8)
def _load_cached(src: InputSource) -> Dataset:
    per = math.prod(src.shape)
    features, labels = _read(src, src.path, per)
    mean = _statistic(src, "mean", src.mean_file, src.mean_value, per)
    std = _statistic(src, "std", src.std_file, src.std_value, per)
    if mean is not None:
        features -= mean
    if std is not None:
        if np.any(std == 0):
            raise SingaConfigError(f'layer "{src.layer}": the std ({src.std_file or "std_value"}) has a 0, '
                                   "which SINGA would divide by")
        features /= std
    features = features.reshape((features.shape[0],) + src.shape)
    features.setflags(write=False)
    return Dataset(features, labels)


def _read(src: InputSource, path: str, per: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Features (N, per) float32 and labels of `path`, as this layer type reads it."""
    if not os.path.exists(path):
        raise SingaConfigError(f'layer "{src.layer}": store_conf.path {path} does not exist')
    if src.kind == "kCSVInput":
        features, labels = _read_csv(src, path, per, src.has_label)
    else:
        try:
            recs = read_records(path)
        except (RecordFormatError, KVFileError, OSError) as exc:
            raise SingaConfigError(f'layer "{src.layer}": store_conf.path: {exc}') from None
        features, labels = recs.features, recs.labels
    if features.shape[1] != per:
        raise SingaConfigError(f'layer "{src.layer}": store_conf.shape {list(src.shape)} means {per} values per '
                               f"record, but {path} has {features.shape[1]}")
    return features, labels


def _statistic(src: InputSource, what: str, path: str | None, value: float | None, per: int) -> np.ndarray | None:
    """The mean or std to apply: per value from a file, else one value for all, else None."""
    if path is None:
        return None if value is None else np.full(per, value, dtype=np.float32)
    if not os.path.exists(path):
        raise SingaConfigError(f'layer "{src.layer}": store_conf.{what}_file {path} does not exist')
    try:
        if src.kind == "kCSVInput":
            values = _read_csv(src, path, per, has_label=False, first_only=True)[0][0]
        else:
            values = read_first_record_data(path)
    except (RecordFormatError, KVFileError, OSError) as exc:
        raise SingaConfigError(f'layer "{src.layer}": store_conf.{what}_file: {exc}') from None
    if values.size != per:
        raise SingaConfigError(f'layer "{src.layer}": store_conf.{what}_file {path} holds {values.size} values; '
                               f"store_conf.shape {list(src.shape)} needs {per}")
    return values.astype(np.float32)


def _read_csv(src: InputSource, path: str, per: int, has_label: bool,
              first_only: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """CSV lines as SINGA's tokenizer splits them: any separator character ends a field."""
    split = re.compile("[" + re.escape(src.separator or ",") + "]")
    want = per + (1 if has_label else 0)
    rows: list[list[str]] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if line and line[-1] in (src.separator or ","):
                line = line[:-1]  # SINGA's tokenizer ends at a trailing separator
            if not line:
                continue
            fields = split.split(line)
            if len(fields) != want:
                raise SingaConfigError(f'layer "{src.layer}": {path}:{number}: {len(fields)} fields, expected {want} '
                                       f"({'a label and ' if has_label else ''}{per} values for store_conf.shape "
                                       f"{list(src.shape)})")
            rows.append(fields)
            if first_only:
                break
    if not rows:
        raise SingaConfigError(f'layer "{src.layer}": {path} has no records')
    try:
        table = np.array(rows, dtype=np.float64)
    except ValueError as exc:
        raise SingaConfigError(f'layer "{src.layer}": cannot read {path} as CSV numbers: {exc}') from None
    if has_label:
        return table[:, 1:].astype(np.float32), table[:, 0].astype(np.int64)
    return table.astype(np.float32), None


def share_of_batch(batchsize: int, nworkers: int, index: int) -> int:
    """How many samples of a group's batch worker `index` of `nworkers` computes."""
    return batchsize // nworkers + (1 if index < batchsize % nworkers else 0)


class BatchStream:
    """An endless stream of batches over `indices` of a dataset.

    shuffle: a fresh permutation of the indices every epoch (training);
    otherwise the indices in order, wrapping around (test, validation).
    """

    def __init__(self, data: Dataset, indices: np.ndarray, batch: int, rng: np.random.Generator | None = None,
                 skip: int = 0, shuffle: bool = True) -> None:
        if len(indices) == 0:
            raise SingaConfigError("a worker's share of the training data is empty; use fewer workers per group")
        self.data = data
        self.indices = np.asarray(indices)
        self.batch = batch
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.shuffle = shuffle
        self._order = self._new_order()
        self._pos = skip % len(self.indices)

    def reset(self) -> None:
        """Back to the first record (evaluation passes start from the beginning every time)."""
        self._order = self._new_order()
        self._pos = 0

    def _new_order(self) -> np.ndarray:
        return self.rng.permutation(self.indices) if self.shuffle else self.indices

    def next(self) -> tuple[np.ndarray, np.ndarray | None]:
        picked = []
        need = self.batch
        while need > 0:
            take = min(need, len(self._order) - self._pos)
            picked.append(self._order[self._pos:self._pos + take])
            self._pos += take
            need -= take
            if self._pos >= len(self._order):
                self._order = self._new_order()
                self._pos = 0
        idx = np.concatenate(picked)
        labels = self.data.labels[idx] if self.data.labels is not None else None
        return self.data.features[idx], labels


def train_stream(layer: job_pb2.LayerProto, group: int, index: int, nworkers: int, seed: int) -> BatchStream:
    """The training stream of worker (group, index) of a group of `nworkers`."""
    data = load_dataset(layer)
    conf = layer.store_conf
    batch = share_of_batch(conf.batchsize[0], nworkers, index)
    if batch == 0:
        raise SingaConfigError(f'layer "{layer.name}": batchsize {conf.batchsize[0]} cannot be split among '
                               f"{nworkers} workers of a group")
    shard = np.random.default_rng(seed).permutation(len(data))[index::nworkers]
    rng = np.random.default_rng([seed, group, index])
    skip = int(rng.integers(0, conf.random_skip + 1)) if conf.random_skip > 0 else 0
    return BatchStream(data, shard, batch, rng, skip, shuffle=True)


def eval_stream(layer: job_pb2.LayerProto) -> BatchStream:
    """The whole test or validation set in order, `batchsize` records at a time."""
    data = load_dataset(layer)
    batch = min(layer.store_conf.batchsize[0], len(data))
    return BatchStream(data, np.arange(len(data)), batch, shuffle=False)
