"""The dispatcher imports what a command needs: the command table names each module's commands,
so one command imports its own module, and no command but a hook imports the hooks."""
from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from conftest import Repo, make_repo
from majordomus.cli.commands.knowledge import VERBS
from majordomus.cli.main import COMMANDS, build_parser, main
from rules_helpers import write_candidate


def test_the_command_table_is_what_each_module_declares() -> None:
    for name, names in COMMANDS.items():
        assert importlib.import_module(f"majordomus.cli.commands.{name}").NAMES == names, name


def _imported(repo: Repo, *args: str) -> set[str]:
    """The modules loaded once `majordomus ARGS` ran (-X importtime does not see importlib's)."""
    code = ("import sys; from majordomus.cli.main import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\nprint('\\n'.join(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=repo.root, capture_output=True, text=True)
    return set(proc.stdout.splitlines())


def test_a_command_imports_its_own_module_only(repo: Repo) -> None:
    commands = {m for m in _imported(repo, "history", "--limit", "1") if m.startswith("majordomus.cli.commands.")}
    assert commands == {"majordomus.cli.commands.history"}
    assert not {m for m in _imported(repo, "knowledge", "candidates") if m.startswith("majordomus.hooks")}
    everything = _imported(repo, "--help")
    assert {f"majordomus.cli.commands.{name}" for name in COMMANDS} <= everything


def test_version_imports_no_command_and_prints_what_the_parser_would(repo: Repo,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert not {m for m in _imported(repo, "--version") if m.startswith("majordomus.cli.commands")}
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    by_parser = capsys.readouterr()
    assert main(["--version"]) == 0 and capsys.readouterr() == by_parser


def _verbs(parser: argparse.ArgumentParser) -> list[str]:
    """The verbs `parser` declares under `knowledge`."""
    (top,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    knowledge = top.choices["knowledge"]
    (verbs,) = (a for a in knowledge._actions if isinstance(a, argparse._SubParsersAction))
    return list(verbs.choices)


def test_the_verb_table_is_what_the_knowledge_parser_declares() -> None:
    assert _verbs(build_parser("knowledge")) == list(VERBS)  # every verb, in the order --help lists them
    for verb in VERBS:  # each verb alone: declared by its own module, with that module's other verbs
        alone = _verbs(build_parser("knowledge", verb))
        assert verb in alone
        if VERBS[verb] == VERBS["candidates"]:  # a reader: its own verb alone (the readers' fixed cost)
            assert alone == [verb]
        else:
            assert set(alone) == {v for v, where in VERBS.items() if where == VERBS[verb]}


def test_a_knowledge_verb_imports_its_own_module_only(repo: Repo) -> None:
    derive = _imported(repo, "knowledge", "derive", "--dry-run")
    assert "majordomus.tasks.derive" in derive
    assert not {"majordomus.cli.commands.export", "majordomus.cli.commands.reviewing",
                "majordomus.cli.commands.review", "majordomus.readers.cli"} & derive
    candidates = _imported(repo, "knowledge", "candidates")
    assert "majordomus.readers.cli" in candidates
    assert not {"majordomus.cli.commands.export", "majordomus.tasks.derive"} & candidates
    openapi = _imported(repo, "openapi")
    assert "majordomus.readers.httpd" not in openapi
    assert "shutil" not in openapi  # argparse's formatter is told the width (shutil brings bz2, lzma)
    assert {"majordomus.cli.commands.export", "majordomus.cli.commands.reviewing"} <= _imported(repo, "knowledge", "--help")
    assert "doit" not in _imported(repo, "drain")  # an empty outbox: no task to run, doit not loaded


# What a reader's command line has no use for (issue 31, docs/PERFORMANCE.md "imports"): the
# dataclasses machinery (`dataclasses` brings `inspect`, `ast`, `dis`, `tokenize`), YAML, templates,
# doit and the hooks. And what only some of its runs need: a git process (`subprocess`, which
# brings `signal`), and dates (`calendar`) for a queue that has entries.
NOT_A_READERS = {"dataclasses", "inspect", "ast", "yaml", "jinja2", "doit", "majordomus.hooks"}
SOME_RUNS = {"subprocess", "signal", "calendar"}


def test_the_candidates_reader_imports_only_what_it_uses(repo: Repo) -> None:
    rid = "e1a2b3c4-0000-4000-a000-000000000001-0123456789ab"
    write_candidate(repo, rid, date="2020-01-01")
    repo.git("add", "--", ".ai")
    repo.commit("a candidate")
    assert rid in repo.mj("knowledge", "candidates", check=True).stdout
    queue = _imported(repo, "knowledge", "candidates")
    assert {"majordomus.readers.cli", "majordomus.knowledge.agenda"} <= queue  # it read the queue
    assert not NOT_A_READERS & queue, NOT_A_READERS & queue
    empty = make_repo(repo.root.parent / "empty")  # nothing to date, no git to ask
    assert "no candidates await review" in empty.mj("knowledge", "candidates", check=True).stderr
    nothing = _imported(empty, "knowledge", "candidates")
    assert "majordomus.readers.cli" in nothing
    assert not (NOT_A_READERS | SOME_RUNS) & nothing, (NOT_A_READERS | SOME_RUNS) & nothing


def _verb_parser(verb: str) -> argparse.ArgumentParser:
    """The parser of `knowledge VERB`."""
    (top,) = (a for a in build_parser("knowledge", verb)._actions if isinstance(a, argparse._SubParsersAction))
    (verbs,) = (a for a in top.choices["knowledge"]._actions if isinstance(a, argparse._SubParsersAction))
    return verbs.choices[verb]  # type: ignore[no-any-return]


def test_a_readers_switches_and_value_are_given_what_the_parser_would_give(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`knowledge candidates --json`, `knowledge record ID` and the like skip the parser
    (`readers.cli.direct`): the arguments given `run` are the parser's, for every reader's verb,
    its switches (the flags that take no value) in any order and a value at any place among them;
    a command line the parser refuses is never run without it; anything else (an option's value,
    an abbreviation, a repeat, help, a value like an option, two values, a verb not a
    capability's) goes to the parser."""
    from itertools import permutations

    from majordomus.readers.cli import direct
    from majordomus.readers.knowledge_base import CAPABILITIES

    tried = 0
    for cap in CAPABILITIES:
        switches = [o for a in _verb_parser(cap.verb)._actions if isinstance(a, argparse._StoreTrueAction)
                    for o in a.option_strings]
        for n in range(len(switches) + 1):
            for flags in permutations(switches, n):
                for value in (None, "batched g\u00eet", "", "json", "1"):
                    places = [list(flags)] if value is None else \
                        [[*flags[:i], value, *flags[i:]] for i in range(len(flags) + 1)]
                    for words in places:
                        found = direct(cap.verb, words)
                        try:
                            parsed = vars(build_parser("knowledge", cap.verb).parse_args(["knowledge", cap.verb, *words]))
                        except SystemExit:
                            capsys.readouterr()
                            assert found is None, (cap.verb, words)
                            continue
                        assert found is not None and found[0] == cap, (cap.verb, words)
                        assert vars(found[1]) == {k: v for k, v in parsed.items()
                                                  if k not in ("command", "verb", "handler", "help_parser")}
                        tried += 1
    assert tried == 33  # candidates and status with their switches, search and record with a value too
    for verb, words in [("candidates", ["--al"]), ("candidates", ["--json", "--json"]), ("candidates", ["--help"]),
                        ("candidates", ["-h"]), ("candidates", ["--"]), ("search", ["text", "more"]),
                        ("search", ["--class", "fact"]), ("search", ["--class=fact"]), ("search", ["-1"]),
                        ("search", ["--", "-x"]), ("status", ["--all"]), ("record", ["--json"]), ("record", []),
                        ("record", ["a", "b"]), ("edges", []), ("nothing", [])]:
        assert direct(verb, words) is None, (verb, words)


def test_the_candidates_reader_builds_no_parser_and_compiles_no_pattern(repo: Repo) -> None:
    """`knowledge candidates` at rest imports neither argparse (with `gettext` and `locale`) nor
    `re` (with `enum`) nor `json`'s modules: its modules keep their patterns uncompiled
    (`lean.pattern`) and decode with `lean.json`, and HEAD's branch is read without a pattern."""
    write_candidate(repo, "e1a2b3c4-0000-4000-a000-000000000003-0123456789ab", date="2020-01-01")
    repo.git("add", "--", ".ai")
    repo.commit("a candidate")
    repo.mj("decision", "add", "A decision", check=True)
    assert "0123456789ab" in repo.mj("knowledge", "candidates", check=True).stdout  # the index built
    for args in (("knowledge", "candidates"), ("knowledge", "candidates", "--json", "--all")):
        assert not {"argparse", "gettext", "locale", "re", "enum", "json"} & _imported(repo, *args), args
    assert "argparse" not in _imported(repo, "knowledge", "record", "e1a2b3c4-0000-4000-a000-000000000003-0123456789ab")
    assert "argparse" in _imported(repo, "knowledge", "candidates", "--al")  # an abbreviation: the parser's


def test_doctor_and_the_context_import_no_dataclasses(repo: Repo) -> None:
    """Doctor's rules and `majordomus context` run on a reader's budget: their records are
    NamedTuples and plain classes, never `dataclasses` (with `inspect`, `dis`, `tokenize`); and
    once doctor's caches hold what it read (the close path's wiring, the records' views), it
    parses no source (`ast`) and loads no OpenSSL (`hashlib`)."""
    write_candidate(repo, "e1a2b3c4-0000-4000-a000-000000000002-0123456789ab", date="2020-01-01")
    heavy = {"dataclasses", "inspect", "ast", "hashlib", "_hashlib"}
    assert "ast" in _imported(repo, "doctor")  # the first run parses the close path
    for args in (("doctor",), ("doctor", "--json"), ("context",)):
        loaded = _imported(repo, *args)
        assert "majordomus.rules.validators" in loaded or args == ("context",)
        assert not heavy & loaded, (args, heavy & loaded)
    # the context reads the active task and the questions beside `done --verify`, which alone runs a command
    assert not {"subprocess", "signal", "threading"} & _imported(repo, "context")
