"""The fake Messages API on its own: what the clients rely on, and that it stops by itself."""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from fake_anthropic import FakeAnthropic, Step, after_tool, bash, main_turn, text


def post(fake: FakeAnthropic, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    request = urllib.request.Request(fake.base_url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", "x-api-key": "dummy"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.headers["content-type"], answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read()


def events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for chunk in raw.decode().strip().split("\n\n"):
        name, data = chunk.split("\n")
        assert name.startswith("event: ") and data.startswith("data: "), chunk
        found.append((name[len("event: "):], json.loads(data[len("data: "):])))
    return found


BASH_TOOL = [{"name": "Bash", "input_schema": {"type": "object"}}]


def test_scripted_replies_stream_and_not_and_every_request_is_logged(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    script = [Step(main_turn, bash("majordomus decision add x"), name="call"),
              Step(after_tool, text("done"), name="done")]
    with FakeAnthropic(script, log_path=log) as fake:
        status, kind, raw = post(fake, "/v1/messages?beta=true", {
            "model": "m", "stream": True, "tools": BASH_TOOL,
            "messages": [{"role": "user", "content": "go"}]})
        assert (status, kind) == (200, "text/event-stream")
        streamed = events(raw)
        assert [name for name, _ in streamed] == [
            "message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop",
            "message_delta", "message_stop"]
        start, delta = streamed[2][1]["content_block"], streamed[3][1]["delta"]
        assert (start["type"], start["name"], start["input"]) == ("tool_use", "Bash", {})
        assert json.loads(delta["partial_json"]) == {"command": "majordomus decision add x",
                                                      "description": "Run a command"}
        assert streamed[5][1]["delta"]["stop_reason"] == "tool_use"

        status, kind, raw = post(fake, "/v1/messages", {
            "model": "m", "tools": BASH_TOOL, "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant",
                 "content": [{"type": "tool_use", "id": start["id"], "name": "Bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": start["id"], "content": "ok"}]}]})
        message = json.loads(raw)
        assert (status, message["content"], message["stop_reason"]) == (
            200, [{"type": "text", "text": "done"}], "end_turn")

        # A request no step takes (a side request of the client) gets harmless text.
        status, _, raw = post(fake, "/v1/messages",
                              {"model": "haiku", "messages": [{"role": "user", "content": "title?"}]})
        assert (status, json.loads(raw)["stop_reason"]) == (200, "end_turn")
        status, _, raw = post(fake, "/v1/messages/count_tokens", {"model": "m", "messages": []})
        assert (status, json.loads(raw)) == (200, {"input_tokens": 100})
        status, _, raw = post(fake, "/api/anything", {})
        assert (status, json.loads(raw)["type"]) == (404, "error")

    assert [r.reply for r in fake.requests] == ["call", "done", "default", None, None]
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(line["index"], line["path"]) for line in logged] == [
        (0, "/v1/messages?beta=true"), (1, "/v1/messages"), (2, "/v1/messages"),
        (3, "/v1/messages/count_tokens"), (4, "/api/anything")]
    assert logged[0]["body"]["messages"] == [{"role": "user", "content": "go"}]


@pytest.mark.parametrize("deadline_s, idle_s, reason", [(60, 0.5, "idle"), (0.5, 60, "deadline")])
def test_it_stops_by_itself(deadline_s: float, idle_s: float, reason: str) -> None:
    fake = FakeAnthropic(deadline_s=deadline_s, idle_s=idle_s).start()
    url = fake.base_url
    try:
        for _ in range(100):
            if fake.stopped_by:
                break
            time.sleep(0.1)
        assert fake.stopped_by is not None and fake.stopped_by.startswith(reason)
        with pytest.raises(OSError):  # refused or reset: nobody serves it any more
            urllib.request.urlopen(url + "/v1/messages", data=b"{}", timeout=2)
    finally:
        fake.stop()
