"""Numeric options: each refuses what it cannot mean (argparse's usage error, exit 2), rather
than reading `-5` as "no limit", `nan` as "never" or `1e999` as a number of seconds."""
from __future__ import annotations

import argparse
import math


def count(text: str) -> int:
    """A number of things: a whole number, 1 or more."""
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give 1 or more")
    return value


def port(text: str) -> int:
    """A TCP port, 0 (any free one) to 65535."""
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: give 0-65535 (0 picks a free one)")
    return value


def seconds(text: str) -> float:
    """A length of time in seconds: finite and above zero (at most a day)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0, at most 86400")
    return value
