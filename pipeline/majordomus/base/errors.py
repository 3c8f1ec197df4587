"""The one error type, and the exit codes of DESIGN.md §5."""
from __future__ import annotations

OK = 0
INTERNAL = 1
USAGE = 2
UNKNOWN = 3  # unknown id or episode
REFUSED = 4  # refused input: empty evidence, transcript marker, bad id, wrong status
NOT_INITIALISED = 5
BLOCKING = 10  # a blocking finding (doctor, check, watch)
ADVISORY = 11  # advisory drift under watch
INTERRUPTED = 130  # Ctrl-C: the shell's convention, 128 + SIGINT


class FatalError(Exception):
    """Raised where the cause is known; the message says what and the command that fixes it."""

    def __init__(self, message: str, code: int = INTERNAL) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class Busy(FatalError):
    """A lock another process held past the wait bound: the work was not done, and can be
    done again once that process finishes (or is stopped)."""

    def __init__(self, lock: str, waited: float) -> None:
        super().__init__(f"{lock} was held by another process for over {waited:g} s (a stopped or slow "
                         "majordomus run?): nothing was done; rerun once it finishes, or stop it", INTERNAL)
        self.lock = lock


def refused(message: str) -> FatalError:
    return FatalError(message, REFUSED)


def unknown(message: str) -> FatalError:
    return FatalError(message, UNKNOWN)
