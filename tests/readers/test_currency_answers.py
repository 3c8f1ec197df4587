"""Every reader of verified knowledge says its currency: `knowledge record`, `search` and
`status` (and so the HTTP and MCP projections, which serve the same answers), human and JSON."""
from __future__ import annotations

import json

import jsonschema
from conftest import Repo
from kbstore import anchored

from majordomus.readers.knowledge_base import find


def history(repo: Repo) -> tuple[str, str]:
    at = repo.commit("code", {"src/a.py": "a = 1\n", "src/b.py": "b = 1\n"})
    anchored(repo, "r-stale", ("src/a.py",), at, title="Tokens are ASCII")
    anchored(repo, "r-fine", ("src/b.py",), at, title="Tokens are short")
    repo.git("mv", "src/a.py", "src/lexer.py")
    newest = repo.commit("move the lexer")
    return at, newest


def answer(repo: Repo, verb: str, *args: str) -> object:
    out = repo.mj("knowledge", verb, *args, "--json", check=True)
    result = json.loads(out.stdout)
    cap = find(f"knowledge_base.{verb}")
    assert cap is not None
    jsonschema.validate(result, cap.result)
    return result


def test_record_search_and_status_carry_currency(repo: Repo) -> None:
    at, newest = history(repo)
    rec = answer(repo, "record", "r-stale")
    assert isinstance(rec, dict)
    assert rec["currency"] == {
        "state": "may_be_stale", "changed": ["src/a.py"], "how": {"src/a.py": "renamed to src/lexer.py"},
        "commits_since": 1, "newest": {"sha": newest, "subject": "move the lexer"}, "anchor_commit": at,
        "reason": f'may be stale: src/a.py renamed to src/lexer.py in 1 commit since {at[:7]}, the newest '
                  f'{newest[:7]} "move the lexer"', "dispute": None}
    hits = answer(repo, "search", "tokens")
    assert isinstance(hits, list)
    assert {h["id"]: h["currency"]["state"] for h in hits} == {"r-stale": "may_be_stale", "r-fine": "current"}
    status = answer(repo, "status")
    assert isinstance(status, dict)
    assert status["currency"] == {"current": 1, "may_be_stale": 1, "unknown": 0, "disputed": 0,
                                  "attention": ["r-stale"]}


def test_human_readings_mark_the_stale_record(repo: Repo) -> None:
    at, _ = history(repo)
    record = repo.mj("knowledge", "record", "r-stale", check=True)
    assert (f"may be stale: src/a.py renamed to src/lexer.py in 1 commit since {at[:7]}" in record.stderr
            and "fix: majordomus knowledge reverify r-stale < evidence" in record.stderr)
    search = repo.mj("knowledge", "search", "tokens", check=True).stdout
    assert "verified (may be stale)" in search and "verified (" not in search.split("r-fine")[1].split("\n")[0]
    status = repo.mj("knowledge", "status", check=True).stdout
    assert ("verified: 1 current, 1 may be stale, 0 unknown, 0 disputed (`majordomus knowledge stale` lists "
            "them with the fix)") in status
    stale = repo.mj("knowledge", "stale", check=True)
    assert stale.stdout == (f"r-stale: may be stale: src/a.py renamed to src/lexer.py in 1 commit since {at[:7]}, "
                            f"the newest {stale.stdout.split('the newest ')[1][:7]} \"move the lexer\"; fix: "
                            "majordomus knowledge reverify r-stale < evidence\n")
    listed = json.loads(repo.mj("knowledge", "stale", "--json", check=True).stdout)
    assert [(x["id"], x["changed"], x["commits_since"]) for x in listed] == [("r-stale", ["src/a.py"], 1)]


def test_the_cockpit_record_page_shows_the_currency_text(repo: Repo) -> None:
    import html

    from majordomus.readers import answers, cockpit
    from majordomus.store.workspace import Workspace

    at, _ = history(repo)
    cap = find("knowledge_base.record")
    assert cap is not None
    result = answers.call(Workspace(repo.root), cap, {"id": "r-stale"})
    page = cockpit.capability_page(cap, {"id": "r-stale"}, result)
    assert html.escape(f"may be stale: src/a.py renamed to src/lexer.py in 1 commit since {at[:7]}") in page


def test_agents_md_export_marks_the_stale_record(repo: Repo) -> None:
    at, newest = history(repo)
    repo.mj("knowledge", "export", "--agents-md", check=True)
    text = (repo.root / "AGENTS.md").read_text()
    assert ("- constraint: Tokens are ASCII (`r-stale`) — may be stale: src/a.py renamed to src/lexer.py in 1 "
            f'commit since {at[:7]}, the newest {newest[:7]} "move the lexer"; `majordomus knowledge reverify '
            "r-stale < evidence` re-verifies it\n") in text
    assert "- constraint: Tokens are short (`r-fine`)\n" in text
    assert 'A record marked "may be stale" is about files that changed since a person verified it' in text


def test_one_record_is_judged_as_among_all_and_leaves_their_cache_whole(repo: Repo) -> None:
    """`knowledge record` judges its one record alone, and `search` its verified hits alone: the
    currency every verified record judged together gives each, with the walks' cache kept, missing,
    or behind a HEAD that moved; and neither rewrites that cache to its records' walk."""
    from majordomus.knowledge import currency
    from majordomus.store.workspace import Workspace

    history(repo)
    anchored(repo, "r-later", ("src/lexer.py",), repo.git("rev-parse", "HEAD").strip(), title="Tokens later")
    anchored(repo, "r-other", ("src/b.py",), repo.git("rev-parse", "HEAD").strip(), title="Lexemes later")
    cache = repo.root / ".ai/local/state/currency.cache.json"

    def among_all() -> dict[str, object]:  # every verified record judged, their walks' cache written
        states = currency.verified(Workspace(repo.root))[1]
        return {rid: json.loads(json.dumps(state.as_dict())) for rid, state in states.items() if rid != "r-other"}

    def searched() -> dict[str, object]:
        hits = answer(repo, "search", "tokens")
        assert isinstance(hits, list)
        return {h["id"]: h["currency"] for h in hits}

    def alone(rid: str) -> object:
        rec = answer(repo, "record", rid)
        assert isinstance(rec, dict)
        return rec["currency"]

    everyone = among_all()
    assert {rid: state["state"] for rid, state in everyone.items()} == {  # type: ignore[index]
        "r-stale": "may_be_stale", "r-fine": "current", "r-later": "current"}
    kept = cache.read_bytes()
    assert searched() == everyone and {rid: alone(rid) for rid in everyone} == everyone
    assert cache.read_bytes() == kept
    cache.unlink()
    assert searched() == everyone and {rid: alone(rid) for rid in everyone} == everyone
    assert not cache.exists()
    repo.commit("touch the lexer", {"src/lexer.py": "a = 2\n", "src/b.py": "b = 2\n"})
    moved = {rid: alone(rid) for rid in everyone}
    assert moved == searched() == among_all() and moved != everyone
