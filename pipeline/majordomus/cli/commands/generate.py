"""majordomus generate: the same doit task as `doit generate`."""
from __future__ import annotations

from pathlib import Path

from majordomus.base.errors import BLOCKING, OK, REFUSED, FatalError
from majordomus.base.output import say
from majordomus.cli.commands import Subparsers
from majordomus.proto import generate as generator
from majordomus.tasks import engine as doitrun
from majordomus.tasks import generate as tasks

NAMES = ("generate",)


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("generate", help="regenerate the JSON Schemas and the allow-list from the proto",
                       description="Compile schemas/knowledge.v1.proto with protoc and regenerate, beside it, "
                       "knowledge.v1.schema.json, policy.v1.schema.json and allowlist.v1.json: the same doit "
                       "task as `doit generate`. A second run over an unchanged proto runs nothing and says "
                       "so. Needs the proto toolchain: pip install 'majordomus[generate]'.")
    p.add_argument("--proto", type=Path, help="the proto to compile (default: schemas/knowledge.v1.proto of the tree the working "
                   "directory is in, else the installed package's)")
    p.add_argument("--out", type=Path, help="where the generated files go (default: beside the proto)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 10 when a generated file differs from what the proto makes")
    p.set_defaults(handler=lambda a: generate(a.proto, a.out, a.check))


def dep_file(out_dir: Path) -> tuple[Path, Path]:
    """The doit dep file and the root it lives under: the workspace's inside an initialised
    repository, else `.doit.db` in the folder above the generated files (this project's root for
    the shipped schemas/)."""

    from majordomus.store.workspace import open_workspace  # a repository is read only to write

    try:
        ws = open_workspace()
        return ws.dep_file, ws.root
    except FatalError:
        return out_dir.parent / ".doit.db", out_dir.parent


def generate(proto: Path | None = None, out: Path | None = None, check: bool = False) -> int:
    """Regenerate (or, with `check`, compare) the generated files; exit 4 when the proto is refused."""

    if proto is None:
        proto, whose = tasks.default_proto()
    else:
        whose = "given with --proto"
    proto = proto.resolve()
    tasks.announce(proto, whose)
    if not proto.is_file():
        raise FatalError(f"no proto at {proto}: give one with --proto PATH", REFUSED)
    out_dir = (out or proto.parent).resolve()
    if check:
        stale = generator.stale(proto, out_dir)
        for name in stale:
            say(f"stale {out_dir / name}: run `majordomus generate` and commit the result")
        if not stale:
            say(f"generated files match {proto.name}")
        return BLOCKING if stale else 0


    errors: list[str] = []
    code, _ = doitrun.run(tasks.creators(proto, out_dir, errors), ["generate"], *dep_file(out_dir))
    if errors:
        raise FatalError(errors[0], REFUSED)
    if code != 0:
        raise FatalError(f"generate failed (doit exit {code}): see the error above, then rerun "
                         "`majordomus generate`")
    return OK
