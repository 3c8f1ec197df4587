"""A fake Gemini API (generativelanguage v1beta) for Gemini CLI, reached through
GOOGLE_GEMINI_BASE_URL. `:streamGenerateContent?alt=sse` answers from a script, one step per
model turn: `shell(cmd)` (a call of the CLI's `run_shell_command` tool) or `say(text)`. When the
script runs out, the fake says "done". The CLI's side calls (countTokens, and generateContent
for its own checks) get neutral answers and consume no step."""
from __future__ import annotations

import json
from typing import Any

from fakehttp import FakeAPI, Recorded, Reply

SHELL_TOOL = "run_shell_command"


def shell(cmd: str, tokens: int = 110) -> dict[str, Any]:
    return {"shell": cmd, "tokens": tokens}


def say(text: str, tokens: int = 110) -> dict[str, Any]:
    return {"say": text, "tokens": tokens}


class FakeGemini(FakeAPI):
    def __init__(self, script: list[dict[str, Any]] | None = None, deadline: float = 300.0) -> None:
        super().__init__(deadline)
        self.script = list(script or [])

    @property
    def base_url(self) -> str:
        """The value of GOOGLE_GEMINI_BASE_URL."""
        return self.url

    def model_requests(self) -> list[Recorded]:
        return [r for r in self.snapshot() if r.path.endswith(":streamGenerateContent")]

    def answer(self, request: Recorded) -> Reply:
        path = request.path
        if path.endswith(":streamGenerateContent"):
            with self._lock:
                step = self.script.pop(0) if self.script else say("done")
            return Reply(200, {"Content-Type": "text/event-stream"},
                         self.sse([(None, self._chunk(step))]))
        if path.endswith(":countTokens"):
            return Reply(200, {}, [json.dumps({"totalTokens": 100}).encode()])
        if path.endswith(":generateContent"):
            # the CLI's own one-shot checks; its model router asks for a complexity score
            text = "{}"
            if "complexity_score" in request.text():
                text = json.dumps({"complexity_reasoning": "scripted", "complexity_score": 10})
            return Reply(200, {}, [json.dumps(self._chunk(say(text))).encode()])
        return Reply(404, {}, [json.dumps({"error": {"code": 404, "message": f"no {path}",
                                                     "status": "NOT_FOUND"}}).encode()])

    @staticmethod
    def _chunk(step: dict[str, Any]) -> dict[str, Any]:
        if "shell" in step:
            part: dict[str, Any] = {"functionCall": {"name": SHELL_TOOL,
                                                     "args": {"command": step["shell"]}}}
        else:
            part = {"text": step["say"]}
        total = int(step.get("tokens", 110))
        return {"candidates": [{"content": {"role": "model", "parts": [part]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": total - 10, "candidatesTokenCount": 10,
                                  "totalTokenCount": total},
                "modelVersion": "gemini-2.5-flash"}
