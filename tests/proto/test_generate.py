"""`doit generate`: the proto is the single source; the committed schemas and allow-list are what it
makes, byte for byte; a broken proto changes nothing; a second run runs nothing and says so."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MAJORDOMUS, PROJECT

from majordomus.proto import generate
from majordomus.base.errors import FatalError

SCHEMAS = PROJECT / "schemas"
PROTO = SCHEMAS / "knowledge.v1.proto"
DOIT = str(Path(sys.executable).parent / "doit")
VOCABULARY = 'vocabulary: "decision session commit issue file test task"'


def copy_schemas(tmp_path: Path) -> Path:
    folder = tmp_path / "schemas"
    shutil.copytree(SCHEMAS, folder)
    return folder


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {name: ((folder / name).read_bytes(), (folder / name).stat().st_mtime_ns) for name in generate.OUTPUTS}


def test_the_committed_files_are_what_the_proto_generates(tmp_path: Path) -> None:
    written = generate.generate(PROTO, tmp_path)
    assert sorted(written) == sorted(generate.OUTPUTS)
    for name in generate.OUTPUTS:
        assert (tmp_path / name).read_bytes() == (SCHEMAS / name).read_bytes(), (
            f"schemas/{name} is stale: run `doit generate` and commit the result")


def test_each_generated_file_starts_by_naming_its_source(tmp_path: Path) -> None:
    for name in generate.OUTPUTS:
        text = (SCHEMAS / name).read_text(encoding="utf-8")
        assert text.startswith('{\n  "$comment": "generated from knowledge.v1.proto'), name
        assert "never edit it by hand" in json.loads(text)["$comment"]
        assert text.endswith("}\n") and not text.endswith("\n\n")


def test_the_bytes_do_not_depend_on_timezone_or_locale(tmp_path: Path) -> None:
    outputs = []
    for tz, lang in (("UTC", "C"), ("Asia/Kathmandu", "de_DE.UTF-8")):
        out = tmp_path / tz.replace("/", "-")
        env = {**os.environ, "TZ": tz, "LANG": lang, "LC_ALL": lang}
        proc = subprocess.run([MAJORDOMUS, "generate", "--proto", str(PROTO), "--out", str(out)],
                              cwd=tmp_path, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        outputs.append({name: (out / name).read_bytes() for name in generate.OUTPUTS})
    assert outputs[0] == outputs[1]
    assert outputs[0] == {name: (SCHEMAS / name).read_bytes() for name in generate.OUTPUTS}


def test_a_new_prefix_in_the_vocabulary_changes_the_schema_and_admits_it(tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    folder = copy_schemas(tmp_path)
    proto = folder / "knowledge.v1.proto"
    text = proto.read_text(encoding="utf-8")
    assert VOCABULARY in text
    proto.write_text(text.replace(VOCABULARY, VOCABULARY[:-1] + ' adr"'), encoding="utf-8")
    written = generate.generate(proto)
    assert set(written) == {generate.KNOWLEDGE_SCHEMA, generate.ALLOWLIST}
    assert json.loads((folder / generate.ALLOWLIST).read_text())["reference_prefixes"][-1] == "adr"

    before = Draft202012Validator(json.loads((SCHEMAS / generate.KNOWLEDGE_SCHEMA).read_text()))
    after = Draft202012Validator(json.loads((folder / generate.KNOWLEDGE_SCHEMA).read_text()))
    record = {"id": "e1-0123456789ab", "kind": "knowledge/v1", "class": "fact", "status": "candidate",
              "epistemics": "observed", "title": "a fact", "date": "2026-01-02",
              "provenance": {"origin": "extracted", "derived_from": ["session:e1", "adr:0091"]}}
    assert not before.is_valid(record)
    assert after.is_valid(record)
    for bad in ("question:q1", "question:adr", "adr:none", "task:none", "adr:", "adr:x\n"):
        record["provenance"]["derived_from"] = ["session:e1", bad]
        assert not after.is_valid(record), bad
        assert not before.is_valid(record), bad


def test_question_in_the_vocabulary_is_refused_by_the_generator(tmp_path: Path) -> None:
    folder = copy_schemas(tmp_path)
    proto = folder / "knowledge.v1.proto"
    proto.write_text(proto.read_text().replace(VOCABULARY, VOCABULARY[:-1] + ' question"'))
    before = snapshot(folder)
    with pytest.raises(FatalError) as caught:
        generate.generate(proto)
    assert re.search(r"knowledge\.v1\.proto:\d+: the vocabulary admits question", caught.value.message)
    assert snapshot(folder) == before


def test_a_syntax_error_names_file_and_line_and_leaves_the_old_files(tmp_path: Path) -> None:
    folder = copy_schemas(tmp_path)
    proto = folder / "knowledge.v1.proto"
    lines = proto.read_text().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines, 1) if "string title = 6" in line)
    lines[number - 1] = lines[number - 1].replace("string title = 6", "string title = 6 oops")
    proto.write_text("".join(lines))
    before = snapshot(folder)

    proc = subprocess.run([MAJORDOMUS, "generate", "--proto", str(proto)], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 4, proc.stderr
    assert re.search(rf"{re.escape(str(proto))}:{number}:\d+: Expected \";\"", proc.stderr), proc.stderr
    assert "left as they were" in proc.stderr
    assert snapshot(folder) == before


def test_majordomus_generate_twice_runs_nothing_the_second_time(tmp_path: Path) -> None:
    folder = copy_schemas(tmp_path)
    proto = folder / "knowledge.v1.proto"
    argv = [MAJORDOMUS, "generate", "--proto", str(proto)]
    first = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert first.returncode == 0 and "nothing changed" not in first.stdout, first.stderr
    second = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert "nothing changed: 1 task up to date" in second.stdout

    # A hand edit of a generated file is caught by --check and undone by the next run.
    target = folder / generate.ALLOWLIST
    target.write_text(target.read_text().replace('"task"', '"task", "question"'))
    check = subprocess.run([*argv, "--check"], cwd=tmp_path, capture_output=True, text=True)
    assert check.returncode == 10 and f"stale {target}" in check.stderr
    third = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert third.returncode == 0 and f"generated {target}" in third.stderr
    assert target.read_bytes() == (SCHEMAS / generate.ALLOWLIST).read_bytes()
    assert subprocess.run([*argv, "--check"], cwd=tmp_path, capture_output=True).returncode == 0


def test_doit_generate_in_a_copy_of_the_project(tmp_path: Path) -> None:
    """The real `doit generate`, with this project's dodo.py, in a copy (so the checkout is untouched)."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(PROJECT / "dodo.py", project / "dodo.py")
    shutil.copytree(PROJECT / "pipeline", project / "pipeline",
                    ignore=shutil.ignore_patterns("__pycache__", "_data"))
    shutil.copytree(SCHEMAS, project / "schemas")

    # the copy's own package, not the checkout's installed one: its shipped data is the copy's
    env = dict(os.environ, PYTHONPATH=str(project / "pipeline"))

    def doit() -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([DOIT, "generate"], cwd=project, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    first = doit()
    assert "generated files unchanged" in first.stderr and "nothing changed" not in first.stdout
    assert (project / ".doit.db").exists()
    again = doit()
    assert again.stdout == "nothing changed: 1 task up to date\n"

    proto = project / "schemas" / "knowledge.v1.proto"
    proto.write_text(proto.read_text().replace("// The assertion, in one line.", "// One assertion, one line."))
    changed = doit()
    assert f"generated {project / 'schemas' / generate.KNOWLEDGE_SCHEMA}" in changed.stderr
    assert "One assertion, one line." in (project / "schemas" / generate.KNOWLEDGE_SCHEMA).read_text()
    assert doit().stdout == "nothing changed: 1 task up to date\n"

    proto.write_text(proto.read_text().replace("message Relation {", "message Relation {{"))
    before = snapshot(project / "schemas")
    broken = subprocess.run([DOIT, "generate"], cwd=project, capture_output=True, text=True, env=env)
    assert broken.returncode != 0
    assert re.search(r"knowledge\.v1\.proto:\d+:\d+: ", broken.stdout + broken.stderr)
    assert snapshot(project / "schemas") == before


def test_without_the_toolchain_generate_names_the_install(tmp_path: Path) -> None:
    # grpc_tools set to None in sys.modules makes its import fail, as in an install without [generate].
    code = ("import sys; sys.modules['grpc_tools'] = None; from majordomus.cli.main import main; "
            f"sys.exit(main(['generate', '--check', '--proto', {str(PROTO)!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "the proto toolchain is missing: pip install 'majordomus[generate]'" in proc.stderr
