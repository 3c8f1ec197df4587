"""generate: the proto and the generator's own source in, the JSON Schemas and the allow-list out.

Up to date while neither the proto nor the generator changed and every generated file still holds
the bytes the last run wrote (a hand edit is undone by the next run), so a second `doit generate`
runs nothing and the reporter says so. A proto that does not compile fails
the task with protoc's own message (file:line:column) and writes nothing.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from majordomus.base.errors import FatalError
from majordomus.base.resources import data_dir
from majordomus.proto import generate as generator
from majordomus.proto import model as protomodel


def default_proto() -> Path:
    """The shipped proto: `schemas/knowledge.v1.proto` of this checkout (or of the installed wheel)."""

    return data_dir("schemas") / generator.PROTO


def sources() -> list[str]:
    """The generator's own source files: a change to either regenerates."""
    return [str(Path(module.__file__ or "").resolve()) for module in (generator, protomodel)]


def write(proto: Path, out_dir: Path, errors: list[str]) -> Any:
    """The action: regenerate, say what changed on stderr, or fail with the toolchain's message."""

    from doit.exceptions import TaskFailed


    try:
        written = generator.generate(proto, out_dir)
    except FatalError as exc:
        errors.append(exc.message)
        return TaskFailed(exc.message)
    for name in written:
        print(f"generated {out_dir / name}", file=sys.stderr)
    if not written:
        print(f"generated files unchanged: {proto.name} compiles to the same bytes", file=sys.stderr)
    return {"digests": digests(out_dir)}


def digests(out_dir: Path) -> dict[str, str]:
    """sha256 of each generated file as it is now ("" when it is missing)."""
    import hashlib  # only a run that may write needs it: `generate --check` does not

    found = {}
    for name in generator.OUTPUTS:
        try:
            found[name] = hashlib.sha256((out_dir / name).read_bytes()).hexdigest()
        except FileNotFoundError:
            found[name] = ""
    return found


def creators(proto: Path | None = None, out_dir: Path | None = None,
             errors: list[str] | None = None) -> dict[str, Callable[[], Any]]:
    proto = (proto or default_proto()).resolve()
    out_dir = (out_dir or proto.parent).resolve()
    failures = errors if errors is not None else []

    def untouched(task: Any, values: dict[str, Any]) -> bool:
        return bool(values.get("digests")) and values["digests"] == digests(out_dir)

    def task_generate() -> dict[str, Any]:
        """Regenerate the JSON Schemas and the allow-list from the proto."""
        return {"uptodate": [untouched], "actions": [(write, (proto, out_dir, failures))],
                "file_dep": [str(proto), *sources()],
                "targets": [str(out_dir / name) for name in generator.OUTPUTS],
                "verbosity": 2,  # its one line per written file is talk, not captured output
                "doc": f"regenerate {', '.join(generator.OUTPUTS)} from {proto.name}"}

    return {"task_generate": task_generate}


def task_generate() -> dict[str, Any]:
    """Regenerate the JSON Schemas and the allow-list from schemas/knowledge.v1.proto."""
    task: dict[str, Any] = creators()["task_generate"]()
    return task
