"""The reader module `knowledge_base`: each capability declared ONCE — name, summary,
parameters, result JSON Schema; its handler, named like its verb, is in `readers/answers.py`
(`HANDLERS`, checked against these declarations by a test). The command line (`majordomus
knowledge candidates | record | status`), the HTTP server and its OpenAPI document (`majordomus
serve`, `majordomus openapi`), the MCP server (`majordomus mcp`), the cockpit's pages (`readers.cockpit`) and the
benchmark inventory (`benchmarks/inventory.json`) are generated from `CAPABILITIES`; none of them
restates a parameter, a schema or a handler. Three annotations in the result schemas are for
the cockpit's pages and mean nothing to a validator: `x-link` (this string is the positional
argument of that capability), `x-unit` and `x-heading`; `contentMediaType` is JSON Schema's own.

The module is named `knowledge_base`, not `knowledge`, as in seed 001: a reader module is not
named like the kind it reads. This module imports nothing heavy and nothing that answers: the
command line builds its parsers from it, `majordomus openapi` and the MCP tool list print it.
"""
from __future__ import annotations

from majordomus.base.ids import ID_JSON_PATTERN
from majordomus.base.lean import TYPE_CHECKING
from majordomus.store import records

if TYPE_CHECKING:  # `typing` is not imported on a reader's path (base/lean.py)
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

MODULE = "knowledge_base"
MODULE_SUMMARY = ("Reads the knowledge store (.ai/repo/knowledge/), the ledger and git: the review queue in "
                  "the order a person reviews it, one record with its provenance resolved, and the store's "
                  "status. Read-only.")


class Param(NamedTuple):
    name: str
    summary: str
    schema: dict[str, Any]
    required: bool = False
    positional: bool = False  # a positional argument on the command line (optional unless required)

    @property
    def in_path(self) -> bool:
        """A path segment in HTTP: a required positional parameter (any other is a query one)."""
        return self.positional and self.required


class Capability(NamedTuple):
    """A reader capability; its handler is the function named like its verb in `readers/answers.py`
    (`answers.HANDLERS`), which `answers.call` runs with the declared parameters checked."""

    name: str  # <module>.<verb>
    summary: str  # one line
    description: str
    parameters: tuple[Param, ...]
    result: dict[str, Any]  # JSON Schema (2020-12) of what the handler returns

    @property
    def verb(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def flat_name(self) -> str:
        """The name where a dot is not admitted (MCP tool names for Claude, operationId)."""
        return self.name.replace(".", "_")


# --- schemas ----------------------------------------------------------------------------------
_TEXT = {"type": "string"}
_TEXT_OR_NULL = {"type": ["string", "null"]}
_COUNT = {"type": "integer", "minimum": 0}
_COUNTS = {"type": "object", "additionalProperties": _COUNT}
RECORD_ID = {"type": "string", "pattern": ID_JSON_PATTERN, "not": {"pattern": r"\.\."},
             "description": "a record id: the file name without .md, e.g. e1-0123456789ab"}

_LINKED_ID = {"type": "string", "x-link": f"{MODULE}.record"}
_MINUTES = {"type": ["integer", "null"], "minimum": 0, "x-unit": "minutes", "title": "waiting",
            "description": "how long the queue entry has waited, in whole minutes (null: nothing dates it)"}
_WAITING = {
    "age_minutes": _MINUTES,
    "age_source": {"enum": ["ledger", "commit", "date", None], "x-secondary": True,
                   "description": "what the age is measured from: the oldest knowledge.derived line naming "
                                  "the file, else the commit that added it, else the record's date"},
    "age_detail": {**_TEXT_OR_NULL, "x-secondary": True, "description": "which line, commit or date"},
    "this_branch": {"type": "boolean", "x-secondary": True,
                    "description": "derived by an episode of this checkout's branch"},
}

CANDIDATE = {"type": "object", "additionalProperties": False,
             "required": ["id", "title", "class", "branch", *_WAITING, "episode", "path", "tracked"],
             "properties": {"id": _LINKED_ID, "title": _TEXT, "class": _TEXT, "branch": _TEXT_OR_NULL,
                            **_WAITING, "episode": {**_TEXT_OR_NULL, "x-secondary": True},
                            "path": {**_TEXT, "x-secondary": True},
                            "tracked": {"type": "boolean", "title": "tracked by git"}}}

REFERENCE = {
    "type": "object", "additionalProperties": False,
    "required": ["field", "ref", "kind", "target", "resolved", "label", "record"],
    "properties": {
        "field": {**_TEXT, "description": "derived_from, or the relation's type, or superseded_by"},
        "ref": {**_TEXT, "description": "the reference as written"},
        "kind": {**_TEXT, "x-secondary": True,
                 "description": "its prefix: session, decision, task, commit, file, issue, test, knowledge"},
        "target": {**_TEXT, "x-secondary": True},
        "resolved": {"type": ["boolean", "null"], "x-secondary": True,
                     "description": "false: nothing this checkout knows; null: not looked up (file:, issue:, test:)"},
        "label": {**_TEXT_OR_NULL, "title": "what it names", "description": "what it names, in words: the episode and its branch, the "
                                                  "task's title, the commit's subject, the record's title"},
        "record": {"type": ["string", "null"], "x-link": f"{MODULE}.record", "title": "record",
                   "description": "the record a knowledge: target or superseded_by names"}}}

CURRENCY = {"oneOf": [{"type": "null"}, {
    "type": "object", "additionalProperties": False,
    "required": ["state", "changed", "how", "commits_since", "newest", "anchor_commit", "reason", "dispute"],
    "properties": {
        "state": {"enum": ["current", "may_be_stale", "unknown", "disputed"],
                  "description": "may_be_stale: an anchored file was modified, deleted or renamed after the "
                                 "commit the record was verified at (docs/CURRENCY.md)"},
        "changed": {"type": "array", "items": _TEXT, "description": "the anchored paths changed since"},
        "how": {"type": "object", "additionalProperties": _TEXT, "x-secondary": True,
                "description": "what happened to each changed path (modified, deleted, renamed to …)"},
        "commits_since": {**_COUNT, "description": "commits that changed an anchored path since"},
        "newest": {"oneOf": [{"type": "null"}, {"type": "object", "required": ["sha", "subject"],
                                                "properties": {"sha": _TEXT, "subject": _TEXT}}],
                   "x-secondary": True, "description": "the newest of those commits"},
        "anchor_commit": {**_TEXT_OR_NULL, "x-secondary": True,
                          "description": "the commit of its newest verification this clone has"},
        "reason": {**_TEXT, "description": "the state and why, in words"},
        "dispute": {"oneOf": [{"type": "null"}, {"type": "object", "required": ["by", "reason", "at"],
                                                 "properties": {"by": _TEXT, "reason": _TEXT, "at": _TEXT}}],
                    "x-secondary": True, "description": "the newest knowledge.disputed line since its last review"}}}],
    "description": "for a verified record: whether it is current, may be stale, unknown here or disputed"}

RECORD = {"type": "object", "additionalProperties": False, "x-heading": "/meta/title",
          "required": ["id", "source", "path", "tracked", "meta", "body", "problem", "references", "review",
                       "currency"],
          "properties": {
              "id": _TEXT, "source": {"type": "string", "description": "the source class: candidates | curated"},
              "path": _TEXT, "tracked": {"type": "boolean"},
              "meta": {"type": ["object", "null"], "description": "the front matter as written (knowledge/v1)"},
              "body": {**_TEXT_OR_NULL, "contentMediaType": "text/markdown"},
              "problem": {"type": ["string", "null"], "description": "why the file could not be parsed"},
              "references": {"type": "array", "items": REFERENCE,
                             "description": "every derived_from entry, relation and superseded_by, resolved in words"},
              "review": {"oneOf": [{"type": "null"}, {
                  "type": "object", "additionalProperties": False,
                  "required": [*_WAITING, "branch", "episode"],
                  "properties": {**_WAITING, "branch": _TEXT_OR_NULL, "episode": _TEXT_OR_NULL}}],
                  "description": "for a waiting candidate: its place in the review queue"},
              "currency": CURRENCY}}

STATUS = {
    "type": "object", "additionalProperties": False,
    "required": ["records", "by_status", "by_class", "by_source", "unreadable", "untracked", "queue",
                 "last_derivation", "writer", "currency"],
    "properties": {
        "records": _COUNT, "by_status": _COUNTS, "by_class": _COUNTS, "by_source": _COUNTS,
        "unreadable": {"type": "array", "items": {
            "type": "object", "required": ["id", "path", "problem"],
            "properties": {"id": _TEXT, "path": _TEXT, "problem": _TEXT}}},
        "untracked": {"type": "array", "items": _TEXT,
                      "description": "record files in the tree that git does not track"},
        "queue": {"type": "object", "additionalProperties": False,
                  "required": ["length", "max_files", "over_cap", "max_age_minutes", "oldest", "overdue"],
                  "properties": {
                      "length": _COUNT, "max_files": _COUNT, "over_cap": {"type": "boolean"},
                      "max_age_minutes": _COUNT, "overdue": {"type": "array", "items": _LINKED_ID},
                      "oldest": {"oneOf": [{"type": "null"}, {
                          "type": "object", "required": ["id", "age_minutes", "since", "source", "detail"],
                          "properties": {"id": _LINKED_ID, "age_minutes": {**_COUNT, "x-unit": "minutes"},
                                         "since": _TEXT,
                                         "source": {"enum": ["ledger", "commit", "date"]},
                                         "detail": _TEXT}}]}}},
        "last_derivation": {"oneOf": [{"type": "null"}, {
            "type": "object", "required": ["ts", "episode", "written", "unchanged", "skipped"],
            "properties": {"ts": _TEXT, "episode": _TEXT_OR_NULL, "written": _COUNT,
                           "unchanged": _COUNT, "skipped": _COUNT}}]},
        "writer": {"type": "object", "required": ["judged", "fresh", "reason", "episode", "stale_minutes"],
                   "properties": {"judged": {"type": "boolean"}, "fresh": {"type": "boolean"},
                                  "reason": _TEXT, "episode": _TEXT_OR_NULL, "stale_minutes": _COUNT}},
        "currency": {"type": "object", "additionalProperties": False,
                     "required": ["current", "may_be_stale", "unknown", "disputed", "attention"],
                     "properties": {"current": _COUNT, "may_be_stale": _COUNT, "unknown": _COUNT,
                                    "disputed": _COUNT,
                                    "attention": {"type": "array", "items": _LINKED_ID,
                                                  "description": "the verified records that may be stale or "
                                                                 "are disputed (`majordomus knowledge stale`)"}},
                     "description": "the verified records by currency (docs/CURRENCY.md)"},
    },
}

SEARCH_HIT = {"type": "object", "additionalProperties": False,
              "required": ["id", "source", "status", "class", "title", "date", "path", "tracked", "matched",
                           "currency"],
              "properties": {"id": _LINKED_ID, "source": _TEXT, "status": _TEXT, "class": _TEXT, "title": _TEXT,
                             "date": _TEXT, "path": _TEXT, "tracked": {"type": "boolean"},
                             "matched": {"type": "array", "items": {"enum": ["title", "body"]},
                                         "description": "where the words were found"},
                             "currency": CURRENCY}}

CAPABILITIES: tuple[Capability, ...] = (
    Capability(f"{MODULE}.candidates", "the candidates awaiting review",
               "Every candidate with status candidate under the `candidates` source class, in review order "
               "(this branch first, oldest review age first): id, title, class, branch (of the episode it "
               "names), how long it has waited and measured from what, and whether git tracks the file.",
               (), {"type": "array", "items": CANDIDATE}),
    Capability(f"{MODULE}.record", "one knowledge record, parsed",
               "The record named ID, from candidates/ or curated/: its front matter and body, every "
               "reference resolved in words (episode and branch, task, commit subject, record title), "
               "for a waiting candidate its place in the review queue, and for a verified record its "
               "currency: current, may be stale (which anchored files changed since it was verified, in "
               "how many commits, the newest), unknown on this clone, or disputed.",
               (Param("id", "the record id", RECORD_ID, required=True, positional=True),),
               RECORD),
    Capability(f"{MODULE}.status", "counts, review queue, last derivation, writer freshness",
               "Records by status, class and source; the review queue with its oldest entry's age and "
               "the policy's caps; the last knowledge.derived line; whether the knowledge writer is fresh; the "
               "verified records by currency (current, may be stale, unknown, disputed).",
               (), STATUS),
    Capability(f"{MODULE}.search", "records whose title or body holds every word of a text",
               "Candidates and verified records (and superseded ones, status shown) whose title or body "
               "holds every word of TEXT, case-insensitively; no TEXT matches every record. Those with "
               "every word in the title come first, then by class (constraints first), newest first. A "
               "verified record carries its currency (current, may be stale and why, unknown, disputed).",
               (Param("text", "the words to find (none: every record)", {"type": "string"}, positional=True),
                Param("class", "only records of this class",
                      {"type": "string", "enum": list(records.CLASSES)}),
                Param("status", "only records of this status", {"type": "string", "enum": list(records.STATUSES)})),
               {"type": "array", "items": SEARCH_HIT}),
)


def find(name: str) -> Capability | None:
    """The capability called `name` (dotted or flat), or None."""
    return next((c for c in CAPABILITIES if name in (c.name, c.flat_name)), None)
