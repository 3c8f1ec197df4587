"""Doctor, check and watch pause the cycle collector for their run of the rules only: the process
that called them (a test, a server) gets it back as it was, after a finding and after a fatal
error alike."""
from __future__ import annotations

import gc
from typing import Any

import pytest

from conftest import Repo
from majordomus.base.errors import FatalError
from majordomus.cli.commands import doctor
from majordomus.rules import dispatch as rules_dispatch


def test_the_collector_is_paused_for_the_run_of_the_rules_only(repo: Repo, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[bool] = []
    run = rules_dispatch.run

    def observed(ws: Any, command: str, **ahead: Any) -> rules_dispatch.Report:
        seen.append(gc.isenabled())
        return run(ws, command, **ahead)

    monkeypatch.setattr(rules_dispatch, "run", observed)
    monkeypatch.setenv("MAJORDOMUS_ROOT", str(repo.root))
    assert gc.isenabled()
    assert doctor.doctor() == 0 and doctor.check() == 0
    assert seen == [False, False] and gc.isenabled()
    assert "doctor: 5 rule(s), 0 blocking" in capsys.readouterr().err

    def fails(ws: Any, command: str, **ahead: Any) -> rules_dispatch.Report:
        raise FatalError("the index is locked")

    monkeypatch.setattr(rules_dispatch, "run", fails)
    with pytest.raises(FatalError):
        doctor.watch()
    assert gc.isenabled()
    gc.disable()  # a caller that had it off keeps it off
    try:
        monkeypatch.setattr(rules_dispatch, "run", observed)
        doctor.check()
        assert not gc.isenabled()
    finally:
        gc.enable()
