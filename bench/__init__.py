"""Benchmarks: scylla-singa measured side by side against its anchors.

`python -m bench.run [--size quick|full] [--only NAME]` runs them (`make bench`),
writes raw results to bench/results/<name>.json and regenerates
docs/benchmarks.md with its plots (`python -m bench.report` redoes only the
report). One module per benchmark, each with `run(size) -> dict` (raw data,
JSON-able) and `section(data) -> report.Section` (tables, plots, headline).
"""
