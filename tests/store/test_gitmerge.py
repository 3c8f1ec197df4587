"""The merge driver's command names this interpreter as `shlex.quote` writes its path, whether
or not the path needs quoting (a plain one is written without importing `shlex`)."""
from __future__ import annotations

import shlex
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from majordomus.store import gitmerge


@given(st.text(alphabet="az09_@%+=:,./- '\"$\\\u00fc\t\n", max_size=12))
@example("/usr/bin/python3")
@example("")
@example("/opt/my python/bin/python")
@example("/x/it's/python")
def test_the_driver_command_quotes_the_interpreter_as_shlex_does(executable: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "executable", executable)
        assert gitmerge.driver_command() == f"{shlex.quote(executable)} -m majordomus merge-driver %O %A %B %P"
