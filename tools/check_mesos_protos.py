#!/usr/bin/env python3
"""Compare our Mesos v1 .proto files with the ones of an Apache Mesos source release.

Why: our files (scylla_singa/mesos/api/proto/) are written by hand from Mesos's
published API, and one wrong field number silently corrupts every protobuf
message a real Mesos client sends us. This check compiles both sets and
compares every message, field and enum we declare, by full name: number,
label, type, referenced type, default, deprecation, oneof and map-ness. It
also lists what we left out (upstream messages absent from ours: fine;
fields or enum values absent from a message we keep: an error, since a client
may send them).

    tools/check_mesos_protos.py --mesos-include /path/to/mesos-1.12.0/include

(the directory that holds mesos/v1/mesos.proto). Exits 0 when everything we
declare matches, 1 on a mismatch, 2 on bad input.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from google.protobuf import descriptor_pb2

ROOT = Path(__file__).resolve().parent.parent
OURS = ROOT / "scylla_singa" / "mesos" / "api" / "proto"
Type = descriptor_pb2.FieldDescriptorProto.Type


def compile_set(include_dirs: list[Path], files: list[Path]) -> descriptor_pb2.FileDescriptorSet:
    """Run protoc (grpc_tools) and return the FileDescriptorSet of `files` and their imports."""
    import grpc_tools

    wkt = Path(grpc_tools.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.desc"
        args = [sys.executable, "-m", "grpc_tools.protoc", f"-I{wkt}", *(f"-I{d}" for d in include_dirs),
                "--include_imports", f"--descriptor_set_out={out}", *map(str, files)]
        done = subprocess.run(args, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"error: protoc failed on {files[0].parent}: {done.stderr.strip()}")
        fds = descriptor_pb2.FileDescriptorSet()
        fds.ParseFromString(out.read_bytes())
        return fds


def index(fds: descriptor_pb2.FileDescriptorSet) -> tuple[dict, dict]:
    """Messages and enums of a descriptor set by full name (no leading dot)."""
    messages: dict[str, descriptor_pb2.DescriptorProto] = {}
    enums: dict[str, descriptor_pb2.EnumDescriptorProto] = {}

    def walk(prefix: str, message: descriptor_pb2.DescriptorProto) -> None:
        name = f"{prefix}.{message.name}"
        messages[name] = message
        for enum in message.enum_type:
            enums[f"{name}.{enum.name}"] = enum
        for nested in message.nested_type:
            walk(name, nested)

    for file in fds.file:
        if file.package.startswith("google."):
            continue
        for message in file.message_type:
            walk(file.package, message)
        for enum in file.enum_type:
            enums[f"{file.package}.{enum.name}"] = enum
    return messages, enums


def field_facts(message: descriptor_pb2.DescriptorProto, field: descriptor_pb2.FieldDescriptorProto) -> tuple:
    """What must be equal for two fields to mean the same on the wire and in JSON."""
    oneof = message.oneof_decl[field.oneof_index].name if field.HasField("oneof_index") else None
    return (field.number, field.label, Type.Name(field.type), field.type_name.lstrip("."),
            field.default_value if field.HasField("default_value") else None,
            field.options.deprecated, oneof)


def compare(ours: descriptor_pb2.FileDescriptorSet, upstream: descriptor_pb2.FileDescriptorSet) -> tuple[list, list]:
    """(errors, omissions) of our descriptor set against upstream's."""
    our_messages, our_enums = index(ours)
    up_messages, up_enums = index(upstream)
    errors: list[str] = []
    for name, message in our_messages.items():
        upstream_message = up_messages.get(name)
        if upstream_message is None:
            errors.append(f"message {name}: not in Mesos")
            continue
        up_fields = {f.name: f for f in upstream_message.field}
        our_fields = {f.name: f for f in message.field}
        for field_name, field in our_fields.items():
            if field_name not in up_fields:
                errors.append(f"field {name}.{field_name}: not in Mesos")
                continue
            mine, theirs = field_facts(message, field), field_facts(upstream_message, up_fields[field_name])
            if mine != theirs:
                errors.append(f"field {name}.{field_name}: ours {mine}, Mesos {theirs}")
        for field_name in up_fields.keys() - our_fields.keys():
            errors.append(f"field {name}.{field_name}: missing (Mesos number {up_fields[field_name].number})")
    for name, enum in our_enums.items():
        upstream_enum = up_enums.get(name)
        if upstream_enum is None:
            errors.append(f"enum {name}: not in Mesos")
            continue
        mine = {(v.name, v.number, v.options.deprecated) for v in enum.value}
        theirs = {(v.name, v.number, v.options.deprecated) for v in upstream_enum.value}
        for value in sorted(mine ^ theirs):
            side = "ours only" if value in mine else "Mesos only"
            errors.append(f"enum {name}: value {value[0]} = {value[1]} ({side})")
    omitted = sorted(n for n in up_messages.keys() - our_messages.keys()
                     if not up_messages[n].options.map_entry)
    return errors, omitted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mesos-include", required=True, type=Path,
                        help="a Mesos source tree's include/ directory (holds mesos/v1/mesos.proto)")
    args = parser.parse_args(argv)
    include = args.mesos_include.resolve()
    upstream_files = sorted((include / "mesos" / "v1").rglob("*.proto"))
    if not (include / "mesos" / "v1" / "mesos.proto").is_file():
        print(f"error: {include}/mesos/v1/mesos.proto not found; pass the include/ directory of a Mesos source release",
              file=sys.stderr)
        return 2
    upstream = compile_set([include], upstream_files)
    ours = compile_set([ROOT], sorted(OURS.glob("*.proto")))
    errors, omitted = compare(ours, upstream)
    our_count = len(index(ours)[0])
    print(f"{our_count} messages of ours checked against {len(upstream_files)} Mesos files in {include}")
    print(f"left out on purpose ({len(omitted)}): {', '.join(omitted)}")
    for error in errors:
        print(f"MISMATCH {error}")
    print("OK: every message, field and enum value we declare matches Mesos" if not errors
          else f"{len(errors)} mismatches")
    return 1 if errors else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
