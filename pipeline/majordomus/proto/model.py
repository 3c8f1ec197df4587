"""The proto, compiled: protoc (as grpcio-tools ships it) turns `schemas/knowledge.v1.proto` into a
descriptor set with source info, and `Proto` reads its messages, enums, comments and options.

protoc runs in a child process so that its messages (file:line:column) are captured whole; the
custom options (`(rule)`, `(references)`) are decoded through a descriptor pool built from the set
itself, so the proto declares its own options and nothing here is compiled from it.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from majordomus.base.errors import INTERNAL, REFUSED, FatalError

PACKAGE = "majordomus.v1"


def compile_proto(proto: Path) -> bytes:
    """protoc's descriptor set (imports and source info included) for `proto`; a proto that does not
    compile raises with protoc's own message, which names the file, the line and the column."""
    try:
        import grpc_tools
    except ImportError:
        raise FatalError("the proto toolchain is missing: pip install 'majordomus[generate]' "
                         "(grpcio-tools), then rerun", INTERNAL) from None
    include = Path(grpc_tools.__file__).resolve().parent / "_proto"
    with tempfile.TemporaryDirectory(prefix="mj-generate-") as tmp:
        out = Path(tmp) / "descriptor-set.pb"
        proc = subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"--proto_path={proto.parent}",
             f"--proto_path={include}", "--include_imports", "--include_source_info",
             f"--descriptor_set_out={out}", str(proto)],
            capture_output=True, text=True)
        if proc.returncode != 0 or not out.is_file():
            found = proc.stderr.strip() or f"protoc exited {proc.returncode}"
            raise FatalError(f"{found}\nthe proto does not compile: fix {proto} at the line above, then "
                             "rerun `doit generate`; the generated files are left as they were", REFUSED)
        return out.read_bytes()


class Proto:
    """The compiled proto: its messages and enums by full name, its comments, its custom options."""

    def __init__(self, data: bytes, path: Path) -> None:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        files = descriptor_pb2.FileDescriptorSet.FromString(data).file
        pool = descriptor_pool.DescriptorPool()
        for proto_file in files:
            pool.Add(proto_file)
        self.path = path
        self.file = next(f for f in files if f.name == path.name)

        def options(kind: str) -> Any:
            return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"google.protobuf.{kind}"))

        self._field_options, self._file_options = options("FieldOptions"), options("FileOptions")
        located = {tuple(loc.path): loc for loc in self.file.source_code_info.location}
        self.lines = {path: loc.span[0] + 1 for path, loc in located.items()}
        try:
            self._rule = pool.FindExtensionByName(f"{PACKAGE}.rule")
            self._references = pool.FindExtensionByName(f"{PACKAGE}.references")
        except KeyError as exc:
            raise self.error(f"the option {exc} is not declared (extend google.protobuf.FieldOptions with "
                             "Rule rule, FileOptions with References references)") from None
        self.messages: dict[str, Any] = {}
        self.enums: dict[str, Any] = {}
        self.comments: dict[str, str] = {}
        self._index(self.file.message_type, self.file.enum_type, f".{PACKAGE}", (), located)

    def _index(self, messages: Any, enums: Any, scope: str, path: tuple[int, ...], located: Any) -> None:
        msg_tag = 4 if not path else 3  # FileDescriptorProto.message_type / DescriptorProto.nested_type
        for enum in enums:
            self.enums[f"{scope}.{enum.name}"] = enum
        for i, message in enumerate(messages):
            name, here = f"{scope}.{message.name}", (*path, msg_tag, i)
            self.messages[name] = message
            loc = located.get(here)
            self.comments[name] = " ".join(loc.leading_comments.split()) if loc else ""
            for j, field in enumerate(message.field):
                loc = located.get((*here, 2, j))
                self.comments[f"{name}.{field.name}"] = " ".join(loc.leading_comments.split()) if loc else ""
            self._index(message.nested_type, message.enum_type, name, here, located)

    def rule(self, field: Any) -> Any:
        return self._field_options.FromString(field.options.SerializeToString()).Extensions[self._rule]

    @property
    def references_number(self) -> int:
        return int(self._references.number)

    def references(self) -> Any:
        return self._file_options.FromString(self.file.options.SerializeToString()).Extensions[self._references]

    def error(self, message: str, path: tuple[int, ...] = ()) -> FatalError:
        line = f":{self.lines[path]}" if path in self.lines else ""
        return FatalError(f"{self.path}{line}: {message}: fix the proto, then rerun `doit generate`; "
                          "the generated files are left as they were", REFUSED)

    def values(self, enum_name: str) -> list[str]:
        """An enum's admitted names: every value but the zero one (proto3's unset)."""
        return [v.name for v in self.enums[enum_name].value if v.number != 0]
