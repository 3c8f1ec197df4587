"""`doit generate`: the proto, compiled by protoc, becomes the JSON Schemas and the allow-list.

`schemas/knowledge.v1.proto` is the single source of the record format and the policy keys. protoc
(as grpcio-tools ships it) compiles it to a descriptor set with source info; this module reads that
set and writes, deterministically, `knowledge.v1.schema.json`, `policy.v1.schema.json` and
`allowlist.v1.json` beside it. Nothing is written unless the proto compiles and every generated
file renders, so a broken proto leaves the old files as they were.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from majordomus.base.fsio import write_if_changed
from majordomus.proto.model import PACKAGE, Proto, compile_proto

PROTO = "knowledge.v1.proto"
KNOWLEDGE_SCHEMA = "knowledge.v1.schema.json"
POLICY_SCHEMA = "policy.v1.schema.json"
ALLOWLIST = "allowlist.v1.json"
OUTPUTS = (KNOWLEDGE_SCHEMA, POLICY_SCHEMA, ALLOWLIST)
DIALECT = "https://json-schema.org/draft/2020-12/schema"
_PREFIX = re.compile(r"^[a-z][a-z0-9_-]*\Z")
# FieldDescriptorProto.Type -> whether it is unsigned (a JSON integer >= 0)
_INTEGERS = {3: False, 5: False, 15: False, 16: False, 17: False, 18: False, 4: True, 6: True, 7: True, 13: True}
_SCALARS = {9: "string", 8: "boolean", 1: "number", 2: "number"}
_MESSAGE, _ENUM, _REPEATED = 11, 14, 3


def comment(source: str) -> str:
    return (f"generated from {source} (beside this file) by `doit generate` (pipeline/majordomus/proto/generate.py); "
            "never edit it by hand: change the proto and run `doit generate` or `majordomus generate`")


def vocabulary(proto: Proto) -> dict[str, list[str]]:
    refs = proto.references()
    found = {"reference_prefixes": refs.vocabulary.split(), "refused_prefixes": refs.refused_prefixes.split(),
             "refused_targets": refs.refused_targets.split()}
    where = (8, proto.references_number)
    if not found["reference_prefixes"]:
        raise proto.error("option (references).vocabulary is empty", where)
    for word in found["reference_prefixes"] + found["refused_prefixes"]:
        if not _PREFIX.match(word):
            raise proto.error(f"{word!r} is not a reference prefix (lowercase letters, digits, _ or -)", where)
    for key, words in found.items():
        if len(set(words)) != len(words):
            raise proto.error(f"(references).{key} names a word twice", where)
    refused = sorted(set(found["reference_prefixes"]) & set(found["refused_prefixes"]))
    if refused:
        raise proto.error(f"the vocabulary admits {', '.join(refused)}, which refused_prefixes refuses "
                          "(seed 001: question: is never a reference)", where)
    return found


def reference_pattern(vocab: dict[str, list[str]]) -> str:
    """PREFIX:TARGET from the vocabulary; a refused prefix or a target naming nothing never matches."""
    refused = "".join(f"(?!{re.escape(p)}:)" for p in vocab["refused_prefixes"])
    nothing = f"(?!(?:{'|'.join(map(re.escape, vocab['refused_targets']))})$)" if vocab["refused_targets"] else ""
    return (f"^{refused}(?:{'|'.join(map(re.escape, vocab['reference_prefixes']))}):{nothing}"
            r"[^\x00-\x1f\x7f]+$(?!\n)")


def _reference_def(vocab: dict[str, list[str]]) -> dict[str, Any]:
    return {"type": "string", "pattern": reference_pattern(vocab),
            "description": "A typed reference, PREFIX:TARGET, PREFIX one of: " + " ".join(vocab["reference_prefixes"])}


def whole(pattern: str) -> str:
    # `$` in Python also matches before a final newline; `(?!\n)` closes that gap (a no-op in ECMA).
    return f"^(?:{pattern})$(?!\\n)"


class _Builder:
    """Walks the compiled messages into JSON Schema, collecting what the allow-list needs."""

    def __init__(self, proto: Proto, vocab: dict[str, list[str]]) -> None:
        self.proto, self.vocab = proto, vocab
        self.enums: dict[str, list[str]] = {}
        self.policy: dict[str, dict[str, Any]] = {}
        self.consts: dict[str, str] = {}
        self.field_prefixes: dict[str, list[str]] = {}  # field key -> prefixes beyond the vocabulary

    def more_prefixes(self, where: str, key: str, text: str) -> str:
        """The `$defs` name of a reference field admitting `text`'s prefixes beyond the vocabulary."""
        words = text.split()
        for word in words:
            if not _PREFIX.match(word):
                raise self.proto.error(f"{where}: {word!r} is not a reference prefix")
            if word in self.vocab["reference_prefixes"] or word in self.vocab["refused_prefixes"]:
                raise self.proto.error(f"{where}: more_prefixes names {word!r}, which the file's "
                                       "vocabulary already admits or refuses")
        if len(set(words)) != len(words):
            raise self.proto.error(f"{where}: more_prefixes names a word twice")
        self.field_prefixes[key] = words
        return "reference_" + "_".join(words)

    def message(self, name: str, key: str = "", policy: bool = False) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for field in self.proto.messages[name].field:
            here = f"{key}.{field.name}" if key else field.name
            properties[field.name] = self.field(name, field, here, policy)
            if field.label != _REPEATED and not field.proto3_optional:
                required.append(field.name)
        schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": properties}
        if required:
            schema["required"] = required
        return schema

    def field(self, owner: str, field: Any, key: str, policy: bool) -> dict[str, Any]:
        proto, rule = self.proto, self.proto.rule(field)
        where = f"{owner[1:]}.{field.name}"
        item: dict[str, Any]
        if field.type == _MESSAGE:
            item = self.message(field.type_name, key, policy)
        elif field.type == _ENUM:
            item = {"enum": proto.values(field.type_name)}
            self.enums[key] = item["enum"]
        elif field.type in _INTEGERS:
            item = {"type": "integer", "minimum": 0} if _INTEGERS[field.type] else {"type": "integer"}
        elif field.type in _SCALARS:
            item = {"type": _SCALARS[field.type]}
        else:
            raise proto.error(f"{where}: field type {field.type} has no JSON mapping here (use a string, "
                              "an integer, a bool, an enum or a message)")
        if rule.reference:
            if item.get("type") != "string":
                raise proto.error(f"{where}: (rule).reference is for string fields")
            name = self.more_prefixes(where, key, rule.more_prefixes) if rule.more_prefixes else "reference"
            item = {"$ref": f"#/$defs/{name}"}
        elif rule.more_prefixes:
            raise proto.error(f"{where}: (rule).more_prefixes is for a reference field")
        for option, keyword, value in (("pattern", "pattern", whole(rule.pattern)), ("const", "const", rule.const),
                                       ("format", "format", rule.format), ("min_length", "minLength", rule.min_length)):
            if getattr(rule, option):
                item[keyword] = value
        if rule.const:
            self.consts[key] = rule.const
        if policy and field.type != _MESSAGE:
            item["default"] = self.policy_key(where, field, key, item, rule.default)
        if field.label == _REPEATED:
            item = {"type": "array", "items": item}
            if rule.min_items:
                item["minItems"] = rule.min_items
        text = proto.comments.get(f".{where}", "")
        if text:
            item["description"] = text
        return item

    def policy_key(self, where: str, field: Any, key: str, item: dict[str, Any], text: str) -> Any:
        if not text:
            raise self.proto.error(f"{where}: a policy key declares its default with [(rule).default = \"…\"]")
        entry: dict[str, Any]
        if "enum" in item:
            if text not in item["enum"]:
                raise self.proto.error(f"{where}: default {text!r} is not one of {', '.join(item['enum'])}")
            switch = field.type_name == f".{PACKAGE}.Switch"
            entry = {"type": "switch" if switch else "enum", "default": text, "values": item["enum"]}
        elif item.get("type") == "integer":
            if not re.fullmatch(r"-?[0-9]+", text) or int(text) < item.get("minimum", int(text)):
                raise self.proto.error(f"{where}: default {text!r} is not a whole number this type admits")
            entry = {"type": "integer", "default": int(text)}
            if "minimum" in item:
                entry["minimum"] = item["minimum"]
        elif item.get("type") == "boolean" and text in ("true", "false"):
            entry = {"type": "boolean", "default": text == "true"}
        elif item.get("type") == "string":
            entry = {"type": "string", "default": text}
        else:
            raise self.proto.error(f"{where}: default {text!r} does not fit the field's type")
        self.policy[key] = entry
        return entry["default"]


def build(proto: Proto) -> dict[str, dict[str, Any]]:
    """The three generated documents, by file name."""
    if proto.file.package != PACKAGE:
        raise proto.error(f"the package is {proto.file.package!r}, not {PACKAGE!r}")
    for root in ("Knowledge", "Policy"):
        if f".{PACKAGE}.{root}" not in proto.messages:
            raise proto.error(f"message {root} is missing; the generator reads Knowledge and Policy")
    vocab = vocabulary(proto)
    note = comment(proto.path.name)
    records = _Builder(proto, vocab)
    body = records.message(f".{PACKAGE}.Knowledge")
    defs = {"reference": _reference_def(vocab)}
    for words in records.field_prefixes.values():
        more = {**vocab, "reference_prefixes": vocab["reference_prefixes"] + words}
        defs["reference_" + "_".join(words)] = _reference_def(more)
    knowledge = {"$comment": note, "$schema": DIALECT, "$id": f"urn:{PACKAGE}:knowledge",
                 "title": "knowledge/v1 record front matter",
                 "description": proto.comments[f".{PACKAGE}.Knowledge"],
                 **body, "$defs": defs}
    settings = _Builder(proto, vocab)
    policy = {"$comment": note, "$schema": DIALECT, "$id": f"urn:{PACKAGE}:policy",
              "title": "the policy (.ai/repo/policy.yaml)", "description": proto.comments[f".{PACKAGE}.Policy"],
              **settings.message(f".{PACKAGE}.Policy", policy=True)}
    allowlist = {"$comment": note, **vocab, "field_prefixes": records.field_prefixes,
                 "kind": records.consts.get("kind", ""), "enums": records.enums, "policy": settings.policy}
    return {KNOWLEDGE_SCHEMA: knowledge, POLICY_SCHEMA: policy, ALLOWLIST: allowlist}


def dump(document: dict[str, Any]) -> bytes:
    """Deterministic bytes: sorted keys, two-space indent, UTF-8, one trailing newline."""
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def render(proto_path: Path) -> dict[str, bytes]:
    """Compile `proto_path` and render every generated file, writing nothing."""
    proto = Proto(compile_proto(proto_path), proto_path)
    return {name: dump(document) for name, document in build(proto).items()}


def generate(proto_path: Path, out_dir: Path | None = None) -> list[str]:
    """Regenerate the schemas and the allow-list from `proto_path` into `out_dir` (default: beside
    it); returns the names of the files whose bytes changed. All or nothing: a proto that does not
    compile, or that the generator refuses, leaves every old file untouched."""

    out_dir = out_dir or proto_path.parent
    rendered = render(proto_path)
    out_dir.mkdir(parents=True, exist_ok=True)  # a developer's own folder, named on the command line
    return [name for name, data in rendered.items() if write_if_changed(out_dir / name, data, root=out_dir)]


def stale(proto_path: Path, out_dir: Path | None = None) -> list[str]:
    """The generated files in `out_dir` that differ from what `proto_path` generates."""
    out_dir = out_dir or proto_path.parent
    found = []
    for name, data in render(proto_path).items():
        try:
            same = (out_dir / name).read_bytes() == data
        except FileNotFoundError:
            same = False
        if not same:
            found.append(name)
    return found
