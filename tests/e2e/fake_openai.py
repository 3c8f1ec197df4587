"""A fake OpenAI Responses API for Codex CLI and Copilot CLI (BYOK): `POST /v1/responses`
answered over SSE from a script, one step per model turn. A step is `shell(cmd)` (a call of the
client's shell tool: Codex's `exec_command` with `{"cmd": ...}`, Copilot's `bash` with
`{"command": ..., "description": ...}`) or `say(text)` (a final assistant message). When the
script runs out, the fake says "done". Codex's compaction requests (its summary prompt, sent with
no tools) get a fixed summary and take no step. The stream ends with the item's text done and
the whole output in `response.completed`: Codex reads the items, Copilot CLI the output (without
it, Copilot says "No response was returned" and exits 1)."""
from __future__ import annotations

import itertools
import json
from typing import Any

from fakehttp import FakeAPI, Recorded, Reply

SHELL_TOOL = "exec_command"
COMPACTION_SUMMARY = "FAKE-COMPACTION-SUMMARY"
# the shell tool of each client: its name, and the arguments of one command
SHELLS = {"codex": (SHELL_TOOL, lambda cmd: {"cmd": cmd}),
          "copilot": ("bash", lambda cmd: {"command": cmd, "description": "scripted"})}


def shell(cmd: str, tokens: int = 110) -> dict[str, Any]:
    """A call of the shell tool; `tokens` is the total usage the fake reports for the turn (a
    large number makes Codex compact its history before the next request)."""
    return {"shell": cmd, "tokens": tokens}


def say(text: str, tokens: int = 110) -> dict[str, Any]:
    return {"say": text, "tokens": tokens}


class FakeOpenAI(FakeAPI):
    def __init__(self, script: list[dict[str, Any]] | None = None, deadline: float = 300.0,
                 client: str = "codex") -> None:
        super().__init__(deadline)
        self.script = list(script or [])
        self._ids = itertools.count(1)
        self.shell_tool, self._shell_args = SHELLS[client]

    @property
    def base_url(self) -> str:
        """What goes in `[model_providers.X] base_url`: Codex appends /responses."""
        return self.url + "/v1"

    def model_requests(self) -> list[Recorded]:
        return [r for r in self.snapshot() if r.method == "POST" and r.path == "/v1/responses"]

    @staticmethod
    def is_compaction(request: Recorded) -> bool:
        return not (request.body or {}).get("tools")

    def answer(self, request: Recorded) -> Reply:
        if request.method == "POST" and request.path == "/v1/responses":
            if not (request.body or {}).get("tools"):
                # Codex's compaction turn (its summary prompt, no tools): answered without
                # taking a step of the script
                return Reply(200, {"Content-Type": "text/event-stream"},
                             self._stream(say(COMPACTION_SUMMARY)))
            with self._lock:
                step = self.script.pop(0) if self.script else say("done")
            return Reply(200, {"Content-Type": "text/event-stream"}, self._stream(step))
        if request.path.endswith("/models"):
            return Reply(200, {}, [json.dumps({"object": "list", "data": [], "models": []}).encode()])
        return Reply(404, {}, [json.dumps({"error": {"message": f"no {request.path}"}}).encode()])

    def _stream(self, step: dict[str, Any]) -> list[bytes]:
        n = next(self._ids)
        response_id = f"resp_{n}"
        if "shell" in step:
            item: dict[str, Any] = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                                    "name": self.shell_tool, "status": "completed",
                                    "arguments": json.dumps(self._shell_args(step["shell"]))}
        else:
            item = {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": step["say"], "annotations": []}]}
        total = int(step.get("tokens", 110))
        usage = {"input_tokens": total - 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": total}
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created",
                                  "response": {"id": response_id, "status": "in_progress"}}),
            ("response.output_item.added", {"type": "response.output_item.added",
                                            "output_index": 0, "item": item}),
        ]
        if "say" in step:
            events.append(("response.output_text.delta", {"type": "response.output_text.delta",
                                                          "item_id": item["id"], "output_index": 0,
                                                          "content_index": 0, "delta": step["say"]}))
            events.append(("response.output_text.done", {"type": "response.output_text.done",
                                                         "item_id": item["id"], "output_index": 0,
                                                         "content_index": 0, "text": step["say"]}))
        events += [
            ("response.output_item.done", {"type": "response.output_item.done",
                                           "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed",
                                    "response": {"id": response_id, "status": "completed",
                                                 "output": [item], "usage": usage}}),
        ]
        return self.sse(events)
