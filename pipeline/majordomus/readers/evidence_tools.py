"""The MCP write tools: record a decision, ask and resolve a question, start and finish a task, and
dispute a verified record.

Each is one call of `majordomus.evidence.work`, the code path the command line takes: the same
ledger lines, the same refusals, the same episode stamping (`$MAJORDOMUS_EPISODE`, else the newest
open episode). They write evidence only; promotion and rejection stay a person's acts on the
command line. A finish proven by a command is not offered here: `majordomus finish --verify CMD`
runs CMD, and belongs on the command line, where the client's permission rules see it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from majordomus.base.errors import refused
from majordomus.evidence import work
from majordomus.knowledge import review
from majordomus.store.workspace import Workspace

# Tool annotations (MCP): these add to the ledger and never remove or rewrite anything.
WRITES = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False, "openWorldHint": False}

_TEXT = {"type": "string"}
_TEXT_OR_NULL = {"type": ["string", "null"]}


def _properties(*names: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**{name: _TEXT_OR_NULL for name in names}, **(extra or {})}


LINE = ("ts", "event", "session")  # every ledger line carries these
DECISION = {"type": "object", "required": [*LINE, "task", "text", "why"],
            "properties": _properties(*LINE, "task", "text", "why")}
QUESTION = {"type": "object", "required": ["question", "text", "task", "opened", "episode"],
            "properties": _properties("question", "text", "task", "opened", "episode")}
RESOLVED = {"type": "object", "required": [*LINE, "question", "task", "text", "answer"],
            "properties": _properties(*LINE, "question", "task", "text", "answer")}
TASK = {"type": "object", "required": ["task", "title", "scope", "started", "episode"],
        "properties": _properties("task", "title", "scope", "started", "episode")}
DISPUTED = {"type": "object", "required": ["id", "reason", "by"], "properties": _properties("id", "reason", "by")}
FINISHED = {"type": "object", "required": ["task", "title", "outcome", "note"],
            "properties": _properties("task", "title", "outcome", "note", "reason")}


@dataclass(frozen=True)
class WriteTool:
    name: str
    title: str
    description: str
    input: dict[str, Any]  # JSON Schema of the arguments
    output: dict[str, Any]  # JSON Schema of the structured result
    handler: Callable[..., dict[str, Any]]  # handler(ws, **arguments)

    def listing(self) -> dict[str, Any]:
        """The tool as `tools/list` answers it."""
        return {"name": self.name, "title": self.title, "description": self.description,
                "inputSchema": self.input, "outputSchema": self.output, "annotations": dict(WRITES)}


def _args(required: dict[str, str], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {k: {"type": "string", "description": v} for k, v in required.items()}
    props.update(optional or {})
    return {"type": "object", "additionalProperties": False, "properties": props, "required": list(required)}


def _dispute(ws: Workspace, id: str, reason: str) -> dict[str, Any]:  # noqa: A002 - the tool's parameter
    act = review.dispute(ws, id, reason)
    return {"id": act.id, "reason": reason.strip(), "by": act.by}


def _finish(ws: Workspace, outcome: str, reason: str | None = None) -> dict[str, Any]:
    return work.finish(ws, outcome, reason)


# the files a line is about: the anchors a promotion keeps (a path outside the repository is refused)
_ABOUT = {"about": {"type": "array", "items": {"type": "string"},
                    "description": "the files this is about, repository-relative"}}


# the outcome is stated, never assumed: an outcome nobody stated is not evidence
_FINISH_ARGS = _args({"outcome": "how it ended: completed, blocked (something outside the task stops it), "
                                 "failed (tried; it does not work) or no_match (the premise did not hold: "
                                 "nothing matched what the task looked for)"},
                     {"reason": {"type": "string", "description": "why it ended so (needed unless completed)"}})
_FINISH_ARGS["properties"]["outcome"]["enum"] = list(work.OUTCOMES)


TOOLS: tuple[WriteTool, ...] = (
    WriteTool("record_decision", "record a decision",
              "Record a decision (one assertion a later session could otherwise make differently) under the "
              "active task, or the episode alone; at the episode's end it becomes a candidate for a person to "
              "review. The same as `majordomus decision add TEXT --why WHY`.",
              _args({"text": "what was decided, in one sentence"},
                    {"why": {"type": "string", "description": "the reason for it"}, **_ABOUT}),
              DECISION, lambda ws, text, why=None, about=None: work.decision_add(ws, text, why, about)),
    WriteTool("ask_question", "ask a question",
              "Record an open question (something unknown that blocks or shapes the work), owned by the active "
              "task; its id resolves it. The same as `majordomus question add TEXT`.",
              _args({"text": "the question"}, dict(_ABOUT)), QUESTION,
              lambda ws, text, about=None: work.question_add(ws, text, about)),
    WriteTool("resolve_question", "resolve a question with its answer",
              "Resolve an open question with its answer; the answer becomes a candidate fact at the episode's "
              "end. The same as `majordomus question resolve ID ANSWER`.",
              _args({"id": "the question's id (from ask_question or `majordomus question list`)",
                     "answer": "the answer"}),
              RESOLVED, lambda ws, id, answer: work.question_resolve(ws, id, answer)),
    WriteTool("start_task", "start a task",
              "Start a task (one is active at a time in a checkout). The same as "
              "`majordomus start TITLE --scope PATH`.",
              _args({"title": "what the task is"},
                    {"scope": {"type": "string", "description": "the path the task is about"}, **_ABOUT}),
              TASK, lambda ws, title, scope=None, about=None: work.start(ws, title, scope, about)),
    WriteTool("finish_task", "finish the active task",
              "Finish the active task with its outcome; any outcome but completed needs its reason, which "
              "becomes a candidate lesson. The same as `majordomus finish --outcome O --reason R`. A finish "
              "proven by a command is recorded on the command line: `majordomus finish --verify CMD`.",
              _FINISH_ARGS, FINISHED, _finish),
    WriteTool("dispute_record", "say a verified record looks wrong",
              "Say that a verified record looks wrong, without deciding it: every reader marks it disputed "
              "until a person re-verifies or retires it. For what the code now shows and the record contradicts. "
              "The same as `majordomus knowledge dispute ID --reason WHY`.",
              _args({"id": "the verified record's id", "reason": "what looks wrong, and why"}),
              DISPUTED, _dispute),
)


def find(name: str) -> WriteTool | None:
    return next((t for t in TOOLS if t.name == name), None)


def call(ws: Workspace, tool: WriteTool, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run `tool` with `arguments` checked against its input schema's names, types and enums."""
    props, required = tool.input["properties"], tool.input["required"]
    extra = sorted(set(arguments) - set(props))
    if extra:
        raise refused(f"{tool.name} takes no parameter {', '.join(map(repr, extra))} "
                      f"(its parameters: {', '.join(props) or 'none'})")
    missing = [name for name in required if arguments.get(name) is None]
    if missing:
        raise refused(f"{tool.name} needs the parameter {missing[0]!r}")
    for name, value in arguments.items():
        if props[name].get("type") == "array":
            if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                raise refused(f"{tool.name}: {name} must be a list of strings (repository-relative paths)")
            continue
        if value is not None and not isinstance(value, str):
            raise refused(f"{tool.name}: {name} must be a string, not {value!r}")
        allowed = props[name].get("enum")
        if value is not None and allowed and value not in allowed:
            raise refused(f"{tool.name}: {name} {value!r} refused: use one of {', '.join(allowed)}")
    return tool.handler(ws, **{k: v for k, v in arguments.items() if v is not None})
