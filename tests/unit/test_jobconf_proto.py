"""The committed job_pb2.py is what protoc makes of job.proto (regenerate with `make proto`)."""

from __future__ import annotations

from pathlib import Path

from grpc_tools import protoc

PKG = Path(__file__).resolve().parent.parent.parent / "scylla_singa" / "jobconf"


def test_generated_module_matches_the_proto(tmp_path: Path) -> None:
    rc = protoc.main(["protoc", f"-I{PKG}", f"--python_out={tmp_path}", str(PKG / "job.proto")])
    assert rc == 0
    fresh = (tmp_path / "job_pb2.py").read_text()
    assert fresh == (PKG / "job_pb2.py").read_text(), "job_pb2.py is stale: run `make proto` and commit it"
