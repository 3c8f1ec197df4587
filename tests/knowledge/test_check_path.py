"""`knowledge check`, whose command module also holds the review acts, imports the acts' module
without `dataclasses`: that module imports `inspect` (with `ast`, `dis` and `tokenize`)."""
from __future__ import annotations

import subprocess
import sys


def test_the_review_acts_module_imports_no_dataclasses_or_inspect() -> None:
    out = subprocess.run([sys.executable, "-c", "import sys, majordomus.cli.commands.review\n"
                          "print(sorted({'dataclasses', 'inspect'} & set(sys.modules)))"],
                         capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"
