"""Training and test data for input layers: kCSVInput (textfile) and kRecordInput (record store).

store_conf fields honoured: `path`, `backend`, `separator` (CSV), `shape`,
`batchsize` (the first), `has_label` (the label is a CSV line's first
column), `mean_value` and `std_value` (x = (x - mean) / std, each only when
set), `random_skip` (a worker skips a random 0..random_skip records first).

Partitioning: the training batch of a worker group is split among its
workers (worker j of n gets batchsize/n samples, the first batchsize % n
workers one more), and the training set is split into n disjoint shards, so
the workers of a group never see the same samples in a step. Each worker
walks its shard in a fresh random order every epoch; different worker groups
use different orders. Test and validation read the whole split in file order.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from scylla_singa.jobconf import job_pb2
from .records import RecordFormatError, read_records
from .runtime_errors import SingaConfigError

CSV_BACKENDS = ("", "textfile")
RECORD_BACKENDS = ("", "kvfile", "recordfile")


@dataclass(frozen=True)
class Dataset:
    """Every record of one input: features (N, *shape) float32 and labels (N,) or None."""

    features: np.ndarray
    labels: np.ndarray | None

    def __len__(self) -> int:
        return int(self.features.shape[0])


def load_dataset(layer: job_pb2.LayerProto) -> Dataset:
    """Read and normalise the data of input layer `layer`. Raises SingaConfigError naming the layer."""
    conf = layer.store_conf
    kind = job_pb2.LayerType.Name(layer.type)
    key = (kind, os.path.abspath(conf.path), conf.separator, conf.has_label, tuple(conf.shape),
           conf.mean_value if conf.HasField("mean_value") else None,
           conf.std_value if conf.HasField("std_value") else None)
    return _load_cached(layer.name, *key)


@lru_cache(maxsize=8)
def _load_cached(name: str, kind: str, path: str, sep: str, has_label: bool, shape: tuple[int, ...],
                 mean: float | None, std: float | None) -> Dataset:
    if not os.path.exists(path):
        raise SingaConfigError(f'layer "{name}": store_conf.path {path} does not exist')
    if kind == "kCSVInput":
        features, labels = _read_csv(name, path, sep, has_label)
    else:
        try:
            recs = read_records(path)
        except (RecordFormatError, OSError) as exc:
            raise SingaConfigError(f'layer "{name}": {exc}') from None
        if has_label and recs.labels is None:
            raise SingaConfigError(f'layer "{name}": {path} holds no labels but store_conf.has_label is true')
        features = recs.features.reshape(recs.count, -1)
        labels = recs.labels if has_label else None
    per = int(np.prod(shape)) if shape else features.shape[1]
    if features.shape[1] != per:
        raise SingaConfigError(f'layer "{name}": store_conf.shape {list(shape)} means {per} values per record, '
                               f"but {path} has {features.shape[1]}")
    features = features.astype(np.float32)
    if mean is not None:
        features -= np.float32(mean)
    if std is not None:
        if std == 0:
            raise SingaConfigError(f'layer "{name}": store_conf.std_value must not be 0')
        features /= np.float32(std)
    features = features.reshape((features.shape[0],) + (shape or (per,)))
    features.setflags(write=False)
    return Dataset(features, labels)


def _read_csv(name: str, path: str, sep: str, has_label: bool) -> tuple[np.ndarray, np.ndarray | None]:
    try:
        table = np.loadtxt(path, delimiter=sep or ",", dtype=np.float64, ndmin=2)
    except (ValueError, OSError) as exc:
        raise SingaConfigError(f'layer "{name}": cannot read {path} as CSV: {exc}') from None
    if table.shape[0] == 0:
        raise SingaConfigError(f'layer "{name}": {path} has no records')
    if has_label:
        return table[:, 1:], table[:, 0].astype(np.int64)
    return table, None


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
