"""doit entry point for this repository: `doit derive`, `doit generate`, `doit drain`.

The task creators live in `pipeline.tasks`; the `majordomus` command runs the same creators
through doit's API, so an adopter needs no dodo.py of its own.
"""
from __future__ import annotations

from majordomus.tasks.dodo import DOIT_CONFIG, task_derive, task_drain, task_move, task_render
from majordomus.tasks.generate import task_generate
