"""Our job.proto and common.proto are Apache SINGA 0.3.0's: compiled side by side, the descriptors agree.

SINGA's own src/proto/*.proto come from the release tarball at test time
(tests/unit/singa_source.py: SINGA_SOURCE_TARBALL, else the vendored copy;
missing, the test fails and says where it looked). Both
sides go through the same protoc (grpcio-tools), so defaults are spelled
alike. job.proto must declare exactly SINGA's messages and enums; our
common.proto declares a subset of SINGA's (the file records), each identical.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

from tests.unit.singa_source import singa_files, singa_tarball

JOBCONF = Path(__file__).resolve().parents[2] / "scylla_singa" / "jobconf"
PROTO_FILES = ("job.proto", "common.proto", "singa.proto")
OUR_FILES = ("job.proto", "common.proto")


def compile_protos(include: Path, names: tuple[str, ...]) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """`names` under `include` compiled by grpcio-tools' protoc, by file name."""
    descriptor_set = include / "descriptors.pb"
    rc = protoc.main(["protoc", f"-I{include}", f"--descriptor_set_out={descriptor_set}",
                      *(str(include / n) for n in names)])
    assert rc == 0, f"protoc could not compile {names} in {include}"
    files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set.read_bytes())
    return {f.name: f for f in files.file}


@pytest.fixture(scope="module")
def singa_protos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """SINGA's own src/proto files, straight from the release tarball."""
    out = tmp_path_factory.mktemp("singa-proto")
    files = singa_files("src/proto", ".proto")
    missing = [n for n in PROTO_FILES if f"src/proto/{n}" not in files]
    assert not missing, f"the tarball has no src/proto/{missing}"
    for name in PROTO_FILES:
        (out / name).write_bytes(files[f"src/proto/{name}"])
    return compile_protos(out, PROTO_FILES)


@pytest.fixture(scope="module")
def our_protos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """Our .proto files through the same protoc (the generated modules are checked against them elsewhere)."""
    out = tmp_path_factory.mktemp("our-proto")
    for name in OUR_FILES:
        (out / name).write_bytes((JOBCONF / name).read_bytes())
    return compile_protos(out, OUR_FILES)


def shape_of(file: descriptor_pb2.FileDescriptorProto) -> dict[str, Any]:
    """Every message and enum of `file` by full name, reduced to what a conf or a record depends on."""
    found: dict[str, Any] = {}

    def enum(prefix: str, e: descriptor_pb2.EnumDescriptorProto) -> None:
        found[f"enum {prefix}{e.name}"] = {v.name: v.number for v in e.value}

    def message(prefix: str, m: descriptor_pb2.DescriptorProto) -> None:
        name = prefix + m.name
        found[f"message {name}"] = {
            "fields": {f.name: {"number": f.number,
                                "label": descriptor_pb2.FieldDescriptorProto.Label.Name(f.label),
                                "type": descriptor_pb2.FieldDescriptorProto.Type.Name(f.type),
                                "type_name": f.type_name,
                                "default": f.default_value if f.HasField("default_value") else None,
                                "packed": f.options.packed if f.options.HasField("packed") else None}
                       for f in m.field},
            "extension_ranges": sorted((r.start, r.end) for r in m.extension_range),
            "oneofs": [o.name for o in m.oneof_decl],
        }
        for nested in m.nested_type:
            message(name + ".", nested)
        for e in m.enum_type:
            enum(name + ".", e)

    prefix = f"{file.package}." if file.package else ""
    for m in file.message_type:
        message(prefix, m)
    for e in file.enum_type:
        enum(prefix, e)
    return found


def differences(theirs: dict[str, Any], mine: dict[str, Any], names: set[str]) -> list[str]:
    """One line per name whose definitions differ, or that only one side has."""
    lines = []
    for name in sorted(names):
        if name not in theirs:
            lines.append(f"{name}: only in ours")
        elif name not in mine:
            lines.append(f"{name}: only in SINGA's")
        elif theirs[name] != mine[name]:
            lines.append(f"{name}: " + "; ".join(_detail(theirs[name], mine[name])))
    return lines


Files = dict[str, descriptor_pb2.FileDescriptorProto]


def _detail(theirs: dict[str, Any], mine: dict[str, Any]) -> list[str]:
    """What differs inside one definition, key by key (fields one by one)."""
    if "fields" not in theirs:
        return [f"values SINGA's {theirs} ours {mine}"]
    out = []
    for key in sorted(set(theirs) | set(mine)):
        a, b = theirs.get(key), mine.get(key)
        if key == "fields":
            for field in sorted(set(a) | set(b)):
                if a.get(field) != b.get(field):
                    out.append(f"field {field}: SINGA's {a.get(field)} ours {b.get(field)}")
        elif a != b:
            out.append(f"{key}: SINGA's {a} ours {b}")
    return out


def test_job_proto_is_singas(singa_protos: Files, our_protos: Files) -> None:
    theirs, mine = shape_of(singa_protos["job.proto"]), shape_of(our_protos["job.proto"])
    assert len(theirs) > 50, "SINGA's job.proto compiled to suspiciously few definitions"
    problems = differences(theirs, mine, set(theirs) | set(mine))
    assert not problems, "job.proto differs from SINGA 0.3.0's:\n" + "\n".join(problems)


def test_common_proto_is_a_part_of_singas(singa_protos: Files, our_protos: Files) -> None:
    theirs, mine = shape_of(singa_protos["common.proto"]), shape_of(our_protos["common.proto"])
    assert {"message singa.RecordProto", "message singa.Record", "message singa.BlobProtos"} <= set(mine)
    problems = differences(theirs, mine, set(mine))
    assert not problems, "common.proto differs from SINGA 0.3.0's:\n" + "\n".join(problems)


def test_the_package_is_singas(singa_protos: Files, our_protos: Files) -> None:
    """Full names matter: extensions in a conf are written [singa.name]."""
    for name in OUR_FILES:
        assert our_protos[name].package == singa_protos[name].package == "singa"


def test_the_comparison_notices_a_difference(singa_protos: Files) -> None:
    """A renumbered field, a changed default and a missing extension range are all caught."""
    altered = descriptor_pb2.FileDescriptorProto()
    altered.CopyFrom(singa_protos["job.proto"])
    layer = next(m for m in altered.message_type if m.name == "LayerProto")
    next(f for f in layer.field if f.name == "store_conf").number = 51
    del layer.extension_range[:]
    cluster = next(m for m in altered.message_type if m.name == "ClusterProto")
    next(f for f in cluster.field if f.name == "start_port").default_value = "6724"
    theirs, changed = shape_of(singa_protos["job.proto"]), shape_of(altered)
    problems = differences(theirs, changed, set(theirs))
    assert [p.split(":")[0] for p in problems] == ["message singa.ClusterProto", "message singa.LayerProto"]


def test_a_missing_tarball_fails_loudly(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv("SINGA_SOURCE_TARBALL", "/nonexistent/apache-singa-0.3.0-src.tar.gz")
    with pytest.raises(pytest.fail.Exception, match="tarball is needed .*not found .*/nonexistent/"):
        singa_tarball()
    assert "set SINGA_SOURCE_TARBALL" in capsys.readouterr().out
