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


def tree_proto(start: Path | None = None) -> Path | None:
    """`schemas/knowledge.v1.proto` of the tree `start` (default: the working directory) lies in:
    looked for in it and in each parent up to the first that holds `.git` (the tree's root)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        found = folder / "schemas" / generator.PROTO
        if found.is_file():
            return found
        if (folder / ".git").exists():
            break
    return None


def default_proto(start: Path | None = None) -> tuple[Path, str]:
    """The proto to compile and whose it is: the tree's own when it has one (a checkout of this
    project, whatever copy of the package is installed), else the installed package's."""
    found = tree_proto(start)
    if found is not None:
        return found, "this tree's"
    return data_dir("schemas") / generator.PROTO, f"the installed package's: no schemas/{generator.PROTO} here"


def announce(proto: Path, whose: str) -> None:
    """Say which proto a run reads, on stderr: a non-editable install has a copy of its own."""
    print(f"proto: {proto} ({whose})", file=sys.stderr)


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
    proto = (proto or default_proto()[0]).resolve()
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
    """Regenerate the JSON Schemas and the allow-list from schemas/knowledge.v1.proto (this
    tree's when it has one, else the installed package's), as a dodo.py's task creator."""
    proto, whose = default_proto()
    announce(proto, whose)
    task: dict[str, Any] = creators(proto)["task_generate"]()
    return task
