"""The committed job_pb2.py and common_pb2.py are what protoc makes of the .proto files (`make proto`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from grpc_tools import protoc

PKG = Path(__file__).resolve().parent.parent.parent / "scylla_singa" / "jobconf"


@pytest.mark.parametrize("name", ["job", "common"])
def test_generated_module_matches_the_proto(tmp_path: Path, name: str) -> None:
    rc = protoc.main(["protoc", f"-I{PKG}", f"--python_out={tmp_path}", str(PKG / f"{name}.proto")])
    assert rc == 0
    fresh = (tmp_path / f"{name}_pb2.py").read_text()
    assert fresh == (PKG / f"{name}_pb2.py").read_text(), f"{name}_pb2.py is stale: run `make proto` and commit it"
